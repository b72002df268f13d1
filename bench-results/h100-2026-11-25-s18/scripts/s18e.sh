#!/usr/bin/env bash
# Session 18, run E: the chained trial (BRC then BCCOO) and the sliced rule on the column
# spread: the touched tests (and memcheck of the trial's), AUTO on the elasticity family, the
# suite per product with every method, f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/e; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/e.txt
for t in gpu_trial gpu_sliced gpu_background gpu_check gpu gpu_bccoo unit; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/e.txt; done
(cd $B/tests && echo "gpu_trial memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_trial auto_tries --test-threads=1 2>&1 | tee $W/mc-gpu_trial.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/e.txt
echo "tests at $(( $(date +%s)-T0 ))s" | tee -a $W/e.txt
timeout 150 $T bench gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48 gen:elasticity:56 --methods auto --precision both --steady --csv $W/elast.csv > $W/elast.txt 2>&1; echo "elasticity rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/e.txt
python3 -c "
import csv
for r in csv.DictReader(open('$W/elast.csv')):
  if r['method']=='auto': print(r['matrix'][:20], r['type'], r['chosen'], round(float(r['spmv_ms'])*1000,1), r['params'][:260])
" | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
timeout 220 $T bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/e.txt
grep geomean $W/suite-all.txt | cut -c1-200 | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
