#!/usr/bin/env bash
# Session 17, run C (the trial with the short-product margin): gpu-bundle/run tests (every Rust
# and C GPU test), memcheck on gpu_trial and gpu_background; the suite end to end (AUTO, f64 and
# f32, plus elasticity 32 and 40); every method and AUTO per product on the suite; the training set.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
OUT=$W/tests timeout 200 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
grep -A30 '== summary' $W/run-tests.txt | tee -a $W/c.txt
export TESSERA_BIN=$B/bin/tessera
for t in gpu_trial gpu_background; do
  (cd $B/tests && echo "$t memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/c.txt
done
echo "at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
for p in f64 f32; do
  timeout 110 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(( $(date +%s)-T0 ))s"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
timeout 130 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
grep geomean $W/suite-all.txt | cut -c1-200 | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
left=$(( 575 - ($(date +%s)-T0) ))
TESSERA=$B/bin/tessera timeout $left scripts/auto-training run $W/train; echo "train rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
grep geomean $W/train/train.txt | cut -c1-200 | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
