#!/usr/bin/env bash
# Session 15, run D (final code): every GPU test (gpu-bundle/run tests), gpu_hola and gpu_check
# under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/d.txt
OUT=$W/tests timeout 330 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/d.txt
grep -A30 '== summary' $W/run-tests.txt | tee -a $W/d.txt
export TESSERA_BIN=$B/bin/tessera
for t in gpu_hola gpu_check; do
  (cd $B/tests && echo "$t memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/d.txt
done
tar -czf $OUT/d.tgz -C $W .
