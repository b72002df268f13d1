#!/usr/bin/env bash
# Session 16, run K (the final code: the check kernel's plain next-entry load): gpu-bundle/run tests (every Rust and C GPU test), memcheck
# on gpu_check and gpu_borrow, then the suite end to end (AUTO, f64 and f32).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/k; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/k.txt
OUT=$W/tests timeout 330 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/k.txt
grep -A30 '== summary' $W/run-tests.txt | tee -a $W/k.txt
export TESSERA_BIN=$B/bin/tessera
for t in gpu_check gpu_borrow; do
  (cd $B/tests && echo "$t memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/k.txt
done
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/k.txt
tar -czf $OUT/k.tgz -C $W .
