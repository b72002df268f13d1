#!/usr/bin/env bash
# Session 13, run L (the review commit f0fc862): the deferred check's, background, HOLA, borrowed and
# import tests, and gpu_check under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/l; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/l.txt
(cd $B/tests && for t in unit gpu_check gpu_background gpu_hola gpu_borrow_c gpu_import gpu_borrow gpu gpu_faults gpu_soak; do echo "$t: $(timeout 120 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/l.txt
(cd $B/tests && echo "gpu_check memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/l.txt
tar -czf $OUT/l.tgz -C $W .
