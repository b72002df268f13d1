# Session 35, call 7: the suite, AUTO only, both types, end to end (final code); then AUTO on
# the sweep's power-law 2^18 x 32 and random 4000² rows of 500 (traced: the caller's long calls).
set -u
t0=$(date +%s)
rm -rf /tmp/gpu-bundle; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
# gpu_sliced rebuilt after call 6 (its edge-case matrix's long row within 8x the mean).
timeout 60 $B/tests/gpu_sliced_new --test-threads=1 > $OUT/gpu_sliced.log 2>&1; echo "gpu_sliced rc=$? $(grep 'test result' $OUT/gpu_sliced.log | cut -c1-60)"
timeout 450 $B/bin/tessera bench --suite --methods auto --precision both --out $OUT/suite > $OUT/suite.txt 2>&1
echo "suite rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^(geomean|end-to-end geomean)" $OUT/suite.txt
for m in gen:powerlaw:18,32,1 gen:random:4000,4000,500,1; do
  [ $(( $(date +%s) - t0 )) -gt 540 ] && break
  n=$(echo $m | tr ':,' '__')
  TESSERA_TRACE=3 timeout 40 $B/bin/tessera bench $m --methods auto --precision f64 > $OUT/$n.txt 2> $OUT/$n.trace
  grep -E "^gen.*auto" $OUT/$n.txt | cut -c1-200
  grep "e2e run from Borrowed, product" $OUT/$n.trace | grep -o "product [0-9]* ([a-z_]*)\|launched [0-9.]*\|final: later spawned [0-9.]*" | paste -sd' ' | cut -c1-300
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf g.tgz suite suite.txt gen_* gpu_sliced.log && rm -rf suite gen_* gpu_sliced.log
