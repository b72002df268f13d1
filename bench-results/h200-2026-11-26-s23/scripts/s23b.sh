#!/usr/bin/env bash
# Session 23, run B: where TILE's device build spends its time beside the products (dense
# 2000² f32, TESSERA_TRACE=2 and =3), and when to start it: the default (after 8 products),
# after 100, and the host build, alternating, two rounds, f32 and f64.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; mkdir -p gpu-bundle/bin gpu-bundle/lib
xz -dc gpu-carry/tessera.xz > gpu-bundle/bin/tessera; chmod +x gpu-bundle/bin/tessera
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
T=$B/bin/tessera
echo "# $($T --version | head -1) $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/b.txt
D=gen:dense:2000,2000
TESSERA_TRACE=2 timeout 60 $T bench $D --methods auto --precision f32 > $W/trace2.txt 2>&1
TESSERA_TRACE=3 timeout 60 $T bench $D --methods auto --precision f32 > $W/trace3.txt 2>&1
for p in f32 f64; do for r in 1 2; do
  timeout 60 $T bench $D --methods auto --precision $p --out $W/d8$p-$r > /dev/null 2>&1
  TESSERA_BACKGROUND_AFTER=100 timeout 60 $T bench $D --methods auto --precision $p --out $W/d100$p-$r > /dev/null 2>&1
  TESSERA_TILE_DEVICE_BUILD=0 timeout 60 $T bench $D --methods auto --precision $p --out $W/host$p-$r > /dev/null 2>&1
done; done
tar -czf $OUT/b.tgz -C $W .
grep -E "device build of|worker building tile|e2e run from" $W/trace2.txt | cut -c1-220
grep -E "over 200|tile" $W/trace3.txt | cut -c1-200 | head -40
for p in f32 f64; do for r in 1 2; do for k in d8 d100 host; do echo "-- $k $p $r $(python3 scripts/e2e_summary.py $W/$k$p-$r/bench.csv | grep -E 'in place')"; done; done; done
