# Session 35, call 6: every GPU test on the final code (heavy-tail rule, sliced long-row guard,
# page-locked read-backs, spare workers), then compute-sanitizer memcheck (--leak-check full,
# TESSERA_TEST_SMALL=1) of the tests whose paths read back through the new buffer.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT/tests timeout 300 $B/run tests > $OUT/run-tests.txt 2>&1
echo "run tests rc=$? after $(( $(date +%s) - t0 )) s"
sed -n "/^== summary/,\$p" $OUT/run-tests.txt | head -40
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
for t in gpu_import gpu_check gpu_background gpu_bccoo; do
  [ $(( $(date +%s) - t0 )) -gt 480 ] && break
  TESSERA_TEST_SMALL=1 timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/$t --test-threads=1 > $OUT/memcheck-$t.log 2>&1
  echo "memcheck $t rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-$t.log | tail -1) $(grep 'test result' $OUT/memcheck-$t.log | cut -c1-50)"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf f.tgz tests memcheck-* run-tests.txt && rm -rf tests memcheck-*
