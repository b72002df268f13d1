#!/usr/bin/env bash
# Session 14, run F (final code): every GPU test (gpu-bundle/run tests), gpu_hola and gpu_check
# under memcheck, then the suite end to end in f64 and f32 (AUTO).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/f; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/f.txt
OUT=$W/tests timeout 260 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/f.txt
grep -A30 '== summary' $W/run-tests.txt | tee -a $W/f.txt
export TESSERA_BIN=$B/bin/tessera
for t in gpu_hola gpu_check; do
  (cd $B/tests && echo "$t memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/f.txt
done
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/f.txt
tar -czf $OUT/f.tgz -C $W .
