# Session 34, call 1: every GPU test, then memcheck of the new BRC device-fill test.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT/tests timeout 480 $B/run tests > $OUT/run-tests.txt 2>&1
echo "run tests rc=$? after $(( $(date +%s) - t0 )) s"
sed -n "/^== summary/,$p" $OUT/run-tests.txt | head -40
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
left=$(( 585 - ($(date +%s) - t0) ))
if [ $left -gt 40 ]; then
  timeout $left /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/gpu_brc --test-threads=1 fills_a_plan > $OUT/memcheck-fill.txt 2>&1
  echo "memcheck fill rc=$?"; tail -6 $OUT/memcheck-fill.txt
fi
echo "total $(( $(date +%s) - t0 )) s"
