#!/usr/bin/env bash
# Session 11, run M (final commit, in gpu-bundle/COMMIT): every GPU test, memcheck of the new
# tests, and the suite's cold first product (fresh process, empty cache, built-in kernels) for
# AUTO and cuSPARSE, f64. Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/m; mkdir -p $W
OUT=$W/tests timeout 240 $B/run tests > $W/tests.txt 2>&1; echo "tests rc=$?"
sed -n '/== summary/,$p' $W/tests.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && for t in "gpu_borrow_c" "gpu_brc brc_gpu_builds_an_ell" "gpu_import"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck ./$t 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee $W/memcheck.txt
s=$(date +%s); timeout 280 $B/bin/tessera bench --suite --methods auto --precision f64 --steady --cold --out $W/cold > $W/cold.txt 2>&1; echo "cold rc=$? $(( $(date +%s) - s )) s"
tar -czf $OUT/m.tgz -C $W .
