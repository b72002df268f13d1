#!/usr/bin/env bash
# Session 13, run H (final code): every GPU test (gpu-bundle/run tests), the deferred check's
# tests under memcheck, then the suite end to end in f64 and f32 (AUTO).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/h; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/h.txt
OUT=$W/tests timeout 250 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/h.txt
grep -A30 '== summary' $W/run-tests.txt | tee -a $W/h.txt
export TESSERA_BIN=$B/bin/tessera
(cd $B/tests && echo "gpu_check memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/h.txt
for p in f64 f32; do
  timeout 160 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep 'end-to-end geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/h.txt
tar -czf $OUT/h.tgz -C $W .
