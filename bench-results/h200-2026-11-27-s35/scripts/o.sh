# Session 35, call 15: A/B in one machine, alternating: session 34's binary (f6deeeb, "old")
# against this session's (2ceba0a + bounce refactor, "new"), AUTO steady only, on the sweep's
# two readings that moved (dense 4000 x 1000 TILE f64 7.5 -> 10.0 us; random 5000² rows of
# 1000 f32 at 0.90) and the suite's dense 2000².
set -u
t0=$(date +%s)
tar -xJf gpu-carry/ab.tar.xz -C /tmp; A=/tmp/ab
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
for m in gen:dense:4000,1000 gen:random:5000,5000,1000,2 gen:dense:2000,2000; do
  for v in old new old new; do
    timeout 60 $A/tessera-$v bench $m --methods auto --precision both --steady > $OUT/ab.txt 2>&1
    echo "$m $v: $(grep -E '^gen.*auto' $OUT/ab.txt | awk '{print $5, $7, $8, $9}' | paste -sd' ')"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
