#!/usr/bin/env bash
# Session 14, run G (and H: the review commit): HOLA, check, thread and base GPU
# tests; gpu_hola under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/${RUN:-g}; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/g.txt
cd $B/tests
for t in unit gpu gpu_hola gpu_check gpu_threads gpu_background gpu_borrow gpu_import; do
  timeout 120 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/g.txt
done
echo "gpu_hola memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_hola --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/g.txt
tar -czf $OUT/${RUN:-g}.tgz -C $W .
