#!/usr/bin/env bash
# Session 12, run P (final code; again as run Q after the review): the inspection test (aligned and unaligned col_ind) and its
# memcheck, the borrowed tests.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/p; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/p.txt
(cd $B/tests && for t in gpu_import gpu_borrow gpu_borrow_c; do echo "$t: $(timeout 200 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/p.txt
(cd $B/tests && echo "gpu_import the_borrowed memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./gpu_import the_borrowed --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/p.txt
tar -czf $OUT/p.tgz -C $W .
