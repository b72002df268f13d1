#!/usr/bin/env bash
# Session 11, run O (review commit, in gpu-bundle/COMMIT): every GPU test, memcheck of the
# borrowed, BRC device-build and background tests.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/o; mkdir -p $W
OUT=$W/tests timeout 200 $B/run tests > $W/tests.txt 2>&1; echo "tests rc=$?"
sed -n '/== summary/,$p' $W/tests.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && for t in "gpu_borrow_c" "gpu_brc brc_gpu_builds_an_ell" "gpu_background"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee $W/memcheck.txt
tar -czf $OUT/o.tgz -C $W .
