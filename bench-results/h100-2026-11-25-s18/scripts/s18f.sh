#!/usr/bin/env bash
# Session 18, run F (final code): tests of the sliced mode and the trial (memcheck), AUTO on
# the elasticity family, AUTO end to end on the LP generator, then the suite end to end in
# $1 (f64 or f32) with elasticity 32³ and 40³ added.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
P=${1:-f64}
W=/tmp/f; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) precision $P" | tee $W/f.txt
if [ "$P" = f64 ]; then
for t in gpu_sliced gpu_trial unit; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/f.txt; done
(cd $B/tests && echo "gpu_sliced memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_sliced --test-threads=1 2>&1 | tee $W/mc-gpu_sliced.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/f.txt
timeout 120 $T bench gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48 gen:elasticity:56 --methods auto --precision both --steady --csv $W/elast.csv > $W/elast.txt 2>&1; echo "elasticity rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
python3 -c "
import csv
for r in csv.DictReader(open('$W/elast.csv')):
  if r['method']=='auto': print(r['matrix'][:20], r['type'], r['chosen'], round(float(r['spmv_ms'])*1000,1))
" | tee -a $W/f.txt
timeout 60 $T bench gen:lp:4284,1092610,2600,1 --methods auto --precision both --out $W/e2e-lp > $W/e2e-lp.txt 2>&1; echo "e2e lp rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
grep -E "auto:" $W/e2e-lp.txt | tail -2 | tee -a $W/f.txt
tar -czf $OUT/f.tgz -C $W .
fi
timeout 200 $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $P --out $W/suite-$P > $W/suite-$P.txt 2>&1; echo "suite $P rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
grep -E 'geomean' $W/suite-$P.txt | cut -c1-420 | tee -a $W/f.txt
if [ "$P" = f32 ]; then
timeout 200 $T bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
grep geomean $W/suite-all.txt | cut -c1-200 | tee -a $W/f.txt
fi
tar -czf $OUT/f.tgz -C $W .
