#!/usr/bin/env bash
# Session 15, run H (the review commit): the tests of run F, gpu_check under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/h; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/h.txt
cd $B/tests
for t in unit gpu gpu_check gpu_hola gpu_tile gpu_background gpu_borrow gpu_faults; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/h.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/h.txt
done
echo "gpu_check memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/h.txt
cd - >/dev/null
M=$B/matrices
tar -czf $OUT/h.tgz -C $W .
