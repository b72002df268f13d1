# Session 35, call 5: small read-backs through a page-locked buffer (readback.rs) against the
# driver's pageable path (TESSERA_PINNED_READBACK=0), AUTO read in place on random 4000² rows
# of 500, f64, alternating, traced: the caller's long launches and N = 10 / 100.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
mkdir -p $OUT/r
for v in on off on2 off2 on3; do
  e="X=1"; case $v in off*) e="TESSERA_PINNED_READBACK=0";; esac
  env $e TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench gen:random:4000,4000,500,1 --methods auto --precision f64 > $OUT/r/$v.txt 2> $OUT/r/$v.trace
  echo "== $v ($e)"; grep "e2e run from Borrowed, product" $OUT/r/$v.trace | grep -o "product [0-9]* ([a-z_]*)\|launched [0-9.]*\|final: later spawned [0-9.]*" | paste -sd' ' | cut -c1-300
  grep "e2e run from Borrowed:" $OUT/r/$v.trace | cut -c1-110
  grep -E "^gen.*auto" $OUT/r/$v.txt | tail -1 | cut -c1-200
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf e.tgz r && rm -rf r
