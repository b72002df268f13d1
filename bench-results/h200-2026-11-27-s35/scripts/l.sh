# Session 35, call 12: bounce.rs's two copy loops share one chunk loop (in_chunks; a refactor):
# the GPU tests whose background builds copy through it, memcheck of gpu (its 5 MiB round trip)
# and gpu_background, and AUTO on power-law 2^18 x 32 traced (no long launch during the fill).
set -u
t0=$(date +%s)
tar -xJf gpu-carry/t.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc TESSERA_MATRICES=$B/matrices
for t in gpu gpu_background gpu_bccoo gpu_brc; do
  timeout 120 $B/tests/$t --test-threads=1 > $OUT/$t.log 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/$t.log | cut -c1-60)"
done
for t in gpu gpu_background; do
  TESSERA_TEST_SMALL=1 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/$t --test-threads=1 > $OUT/memcheck-$t.log 2>&1
  echo "memcheck $t rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-$t.log | tail -1)"
done
TESSERA_TRACE=3 timeout 40 $B/bin/tessera bench gen:powerlaw:18,32,1 --methods auto --precision f64 > $OUT/pl18.txt 2> $OUT/pl18.trace
echo "long launches: $(grep 'e2e run from Borrowed, product' $OUT/pl18.trace | grep -o 'product [0-9]* ([a-z_]*)\|launched [0-9.]*' | paste -sd' ' | cut -c1-200)"
grep -E "^gen.*auto" $OUT/pl18.txt | cut -c1-200
echo "total $(( $(date +%s) - t0 )) s"
gzip $OUT/pl18.trace
