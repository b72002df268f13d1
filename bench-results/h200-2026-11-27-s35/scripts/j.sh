# Session 35, call 10: the trial's sample ids (8dff999): gpu_background, gpu_trial, gpu_threads,
# then memcheck (--leak-check full, TESSERA_TEST_SMALL=1) of gpu_background three times and of
# gpu_trial.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/t.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
for t in gpu_background gpu_trial gpu_threads; do
  timeout 120 $B/tests/$t --test-threads=1 > $OUT/$t.log 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/$t.log | cut -c1-60)"
done
for i in 1 2 3; do
  TESSERA_TEST_SMALL=1 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/gpu_background --test-threads=1 > $OUT/memcheck-gpu_background-$i.log 2>&1
  echo "memcheck gpu_background #$i rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-gpu_background-$i.log | tail -1)"
done
TESSERA_TEST_SMALL=1 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/gpu_trial --test-threads=1 > $OUT/memcheck-gpu_trial.log 2>&1
echo "memcheck gpu_trial rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-gpu_trial.log | tail -1)"
echo "total $(( $(date +%s) - t0 )) s"
