#!/bin/bash
# Session 36, run G: brc_fill stages every block 8 columns at a time (8 lanes a piece, coalesced
# reads); gpu_brc, its memcheck and racecheck, gpu_background; ncu of the fill on four matrices;
# BRC alone, f64, traced at level 3, once per matrix.
set -u
t0=$(date +%s)
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/g
$B/t/gpu_brc > $OUT/g/gpu_brc.txt 2>&1; echo "gpu_brc rc=$? $(grep 'test result' $OUT/g/gpu_brc.txt)"
grep -E 'panicked' -A3 $OUT/g/gpu_brc.txt | head -8
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool $B/t/gpu_brc brc_gpu_fills_a_plan > $OUT/g/$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $OUT/g/$tool.txt | tr '\n' ' ')"
done
$B/t/gpu_background > $OUT/g/gpu_background.txt 2>&1; echo "gpu_background rc=$? $(grep 'test result' $OUT/g/gpu_background.txt)"
for m in gen:powerlaw:20,16,1 gen:powerlaw:18,32,1 gen:powerlaw:16,128,1 gen:emptyrows:1000000,16,1; do
  n=$(echo $m | tr ':,' '__')
  timeout 110 ncu --kernel-name regex:'brc_fill' --launch-count 1 --section SpeedOfLight --section Occupancy \
      $B/tessera bench $m --methods brc --precision f64 --repeat 7 > $OUT/g/$n.ncu 2>&1
  echo "== $n ncu: $(grep -E 'Duration|DRAM Throughput|Achieved Occupancy' $OUT/g/$n.ncu | tr -s ' ' | tr '\n' ' ')"
done
for m in gen:powerlaw:20,16,1 gen:powerlaw:18,32,1 gen:powerlaw:16,128,1 gen:random:4000,4000,500,1 gen:circuit:1000000,5,4,100000,1 gen:emptyrows:1000000,16,1; do
  n=$(echo $m | tr ':,' '__')
  TESSERA_TRACE=3 timeout 120 $B/tessera bench $m --methods brc --precision f64 --csv $OUT/g/$n.csv > $OUT/g/$n.txt 2> $OUT/g/$n.trace
  echo "== $n: $(grep -o 'BRC.s device [a-z ]*fill of .*' $OUT/g/$n.trace | head -1 | cut -c1-400)"
  python3 -c "
import csv,sys
for r in csv.DictReader(open('$OUT/g/$n.csv')):
  if r['method']=='brc': print('   brc spmv %.1f us, e2e from device arrays N=1 %s ms, N=100 %s, N=1000 %s; cusparse %s %s %s' % (float(r['spmv_ms'])*1e3, r['e2e_1_ms'], r['e2e_100_ms'], r['e2e_1000_ms'], r['cuspe2e_1_ms'], r['cuspe2e_100_ms'], r['cuspe2e_1000_ms']))
"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf g.tgz g && rm -rf g
