#!/usr/bin/env bash
# Session 18, run C: the sliced mode with 16-byte staging loads and the coop rule of run B:
# its tests and memcheck, the variants on two LP shapes, the suite per product with every
# method, and AUTO end to end on the LP generator.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
for t in gpu_sliced unit; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 120 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/c.txt; done
(cd $B/tests && echo "gpu_sliced memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_sliced --test-threads=1 2>&1 | tee $W/mc-gpu_sliced.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/c.txt
T=$B/bin/tessera
LP="gen:lp:4284,1092610,2600,1"; NARROW="gen:lp:20000,200000,500,1"
for v in "" "block=1024" "kib=64" "kib=64,block=1024" "coop=32" "kib=112"; do
  TESSERA_CSR_SLICES=$v timeout 60 $T bench $LP $NARROW --methods csr_vector --precision both --steady --csv $W/v-$v.csv > $W/v-$v.txt 2>&1
  echo "variant '$v' rc=$? at $(( $(date +%s)-T0 ))s: $(python3 -c "
import csv,sys
for r in csv.DictReader(open('$W/v-$v.csv')):
  if r['method']=='csr_vector': print(r['matrix'][7:30], r['type'], round(float(r['spmv_ms'])*1000,1), end=' | ')
")" | tee -a $W/c.txt
done
timeout 150 $T bench $LP --methods auto --precision both --out $W/e2e-lp > $W/e2e-lp.txt 2>&1; echo "e2e lp rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
timeout 200 $T bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
grep geomean $W/suite-all.txt | cut -c1-200 | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
