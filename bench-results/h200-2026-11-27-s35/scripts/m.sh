# Session 35, call 13: call 12's gpu executable again with TESSERA_BIN set (its two CLI tests
# need the bundle's tessera; call 12 left it unset), and under memcheck.
set -u
tar -xJf gpu-carry/t.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
timeout 120 $B/tests/gpu --test-threads=1 > $OUT/gpu.log 2>&1; echo "gpu rc=$? $(grep 'test result' $OUT/gpu.log | cut -c1-60)"
TESSERA_TEST_SMALL=1 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/gpu --test-threads=1 > $OUT/memcheck-gpu.log 2>&1
echo "memcheck gpu rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-gpu.log | tail -1) $(grep 'test result' $OUT/memcheck-gpu.log | cut -c1-50)"
