#!/usr/bin/env bash
# Session 18, run B: CSR_VECTOR's sliced mode: its tests (and memcheck), the touched test files,
# and per-product times on LP-shaped matrices with the slicing variants.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
for t in gpu_sliced unit gpu gpu_hola gpu_check gpu_background gpu_trial; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 120 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/b.txt; done
(cd $B/tests && echo "gpu_sliced memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_sliced --test-threads=1 2>&1 | tee $W/mc-gpu_sliced.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/b.txt
echo "tests at $(( $(date +%s)-T0 ))s" | tee -a $W/b.txt
T=$B/bin/tessera
LP="gen:lp:4284,1092610,2600,1"; NARROW="gen:lp:20000,200000,500,1"; WIDE="gen:lp:4284,4000000,2600,1"; SMALL="gen:lp:2000,400000,1000,1"
timeout 200 $T bench $LP $NARROW $WIDE $SMALL --methods auto,csr_vector,hola --precision both --steady --csv $W/base.csv > $W/base.txt 2>&1; echo "base rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/b.txt
grep -E "auto|csr_vector|hola|cusparse" $W/base.txt | cut -c1-160 | tee -a $W/b.txt
for v in force "force,coop=8" "force,coop=16" "force,kib=48" "force,kib=64" "force,block=1024" "force,chunks=1" "force,chunks=8"; do
  [ $(( $(date +%s)-T0 )) -gt 520 ] && break
  TESSERA_CSR_SLICES=$v timeout 60 $T bench $LP $NARROW --methods csr_vector --precision both --steady --csv $W/v-$v.csv > $W/v-$v.txt 2>&1
  echo "variant $v rc=$? at $(( $(date +%s)-T0 ))s: $(python3 -c "
import csv,sys
for r in csv.DictReader(open('$W/v-$v.csv')):
  if r['method']=='csr_vector': print(r['matrix'][7:30], r['type'], round(float(r['spmv_ms'])*1000,1), end=' | ')
")" | tee -a $W/b.txt
done
tar -czf $OUT/b.tgz -C $W .
