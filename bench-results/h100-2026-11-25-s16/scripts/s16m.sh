#!/usr/bin/env bash
# Session 16, run M (the review commit): the tests its code touches, gpu_check under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/m; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/m.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_borrow_c gpu_hola gpu_background gpu_faults gpu_threads; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/m.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/m.txt
done
echo "gpu_check memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/m.txt
cd - >/dev/null
tar -czf $OUT/m.tgz -C $W .
