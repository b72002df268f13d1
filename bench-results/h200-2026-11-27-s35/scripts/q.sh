# Session 35, call 17: worker threads started with a CUDA handle (handle.rs -> workers::top_up):
# gpu, gpu_background, gpu_threads, gpu_trial; then AUTO read in place, traced, the binary before
# ("prev") and with it ("new"), alternating, on dense 500² f64 and random 4000² rows of 500 f64:
# the product that hands the light build over (run P: "final: light spawned" 80-118 us).
set -u
tar -xJf gpu-carry/ab.tar.xz -C /tmp; A=/tmp/ab
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$A/tessera-new
for t in gpu gpu_background gpu_threads gpu_trial; do
  timeout 120 $A/$t --test-threads=1 > $OUT/$t.log 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/$t.log | cut -c1-60)"
done
for m in gen:dense:500,500 gen:random:4000,4000,500,1; do
  n=$(echo $m | tr ':,' '__')
  for v in prev new prev new; do
    TESSERA_TRACE=3 timeout 60 $A/tessera-$v bench $m --methods auto --precision f64 > $OUT/$n-$v.txt 2> $OUT/$n-$v.trace
    echo "$n $v: $(grep -o 'final: light spawned [0-9.]*' $OUT/$n-$v.trace | head -1) | $(grep -E '^gen.*auto' $OUT/$n-$v.txt | tail -1 | awk '{print $5,$6,$7,$8,$9,$10,$11}')"
  done
done
cd $OUT && gzip *.trace
