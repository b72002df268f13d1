# Session 35, call 8: background builds copy through the device's page-locked bounce buffer
# both ways, up to 16 MiB (bounce.rs), against the driver's pageable path
# (TESSERA_PINNED_COPIES=0): AUTO read in place, f64, traced (the caller's long launches), on
# random 4000² rows of 500, power-law 2^18 x 32 and 2^20 x 16; alternating, twice.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
mkdir -p $OUT/r
for m in gen:random:4000,4000,500,1 gen:powerlaw:18,32,1 gen:powerlaw:20,16,1; do
  n=$(echo $m | tr ':,' '__')
  for v in on off on2 off2; do
    e="X=1"; case $v in off*) e="TESSERA_PINNED_COPIES=0";; esac
    env $e TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench $m --methods auto --precision f64 > $OUT/r/$n-$v.txt 2> $OUT/r/$n-$v.trace
    echo "== $n $v: $(grep 'e2e run from Borrowed, product' $OUT/r/$n-$v.trace | grep -o 'product [0-9]* ([a-z_]*)\|launched [0-9.]*' | paste -sd' ' | cut -c1-200)"
    grep -E "^gen.*auto" $OUT/r/$n-$v.txt | tail -1 | cut -c1-200
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf h.tgz r && rm -rf r
