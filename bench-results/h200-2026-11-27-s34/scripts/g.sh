# Session 34, call 6: the trial fix (an end event not yet recorded is never read): the
# background, trial and threads tests, then memcheck of each, three times for gpu_background.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
cat $B/COMMIT
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
for t in gpu_background gpu_trial gpu_threads; do
  timeout 120 $B/tests/$t --test-threads=1 > $OUT/$t.log 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/$t.log | cut -c1-60)"
done
for i in 1 2 3; do
  TESSERA_TEST_SMALL=1 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/gpu_background --test-threads=1 > $OUT/memcheck-gpu_background-$i.log 2>&1
  echo "memcheck gpu_background #$i rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-gpu_background-$i.log | tail -1)"
done
for t in gpu_trial gpu_threads; do
  TESSERA_TEST_SMALL=1 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/$t --test-threads=1 > $OUT/memcheck-$t.log 2>&1
  echo "memcheck $t rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-$t.log | tail -1)"
done
echo "total $(( $(date +%s) - t0 )) s"
