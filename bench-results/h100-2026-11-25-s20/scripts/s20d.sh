#!/usr/bin/env bash
# Session 20, run D: (1) elasticity 32³ f32 end to end with TESSERA_TRACE=3 (what stalls a
# product call for a millisecond); (2) small matrices end to end, no trace, bundle binary
# (20f75ec) against the working tree's (the check's drop without a device-wide wait), 2 rounds.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
xz -dc gpu-carry/mini2/tessera.xz > $W/tessera; chmod +x $W/tessera
T=$W/tessera
TESSERA_TRACE=3 timeout 100 $T bench gen:elasticity:32 --methods auto --precision f32 --out $W/el > $W/el.txt 2> $W/el.err; echo "el rc=$?"
grep -E "e2e run from|worker building" $W/el.err | cut -c1-600 | head -60
M="Pd sparse-images-1024_subset watt_2 zenios as-caida20071105 bcsstk16"
for r in 1 2; do for v in old new; do X=$T; [ $v = old ] && X=$B/bin/tessera
  timeout 100 $X bench $M --methods auto --precision f64 --out $W/small-$v-$r > /dev/null 2>&1; echo "small $v $r rc=$?"
done; done
tar -czf $OUT/d.tgz -C $W el el.txt el.err small-old-1 small-new-1 small-old-2 small-new-2
