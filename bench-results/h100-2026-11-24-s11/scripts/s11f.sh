#!/usr/bin/env bash
# Session 11, run F (commit in gpu-bundle/COMMIT): every GPU test, memcheck of the borrowed and
# import tests, and the suite's end to end in f64 (e2e_borrow columns).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
OUT=$OUT/tests timeout 420 $B/run tests > /tmp/tests.txt 2>&1; echo "tests rc=$? in $(( $(date +%s) - start )) s"
mkdir -p $OUT/tests; cp /tmp/tests.txt $OUT/tests/run.txt
sed -n '/summary/,$p' /tmp/tests.txt | tail -30
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && for t in gpu_borrow_c gpu_import; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./$t 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee $OUT/memcheck.txt
