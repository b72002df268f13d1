#!/usr/bin/env bash
# Session 20, run H: what stalls a product call for milliseconds in the end-to-end runs
# (TESSERA_TRACE=3: any of the first 1,000 calls over 200 us with its steps, the background
# builds' phases on the same clock), with the working tree's binary (gpu-carry/mini2).
cd "$(dirname "$0")/.."
[ -d gpu-bundle/matrices ] || tar -xJf gpu-carry/matrices.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
W=/tmp/h; mkdir -p $W
xz -dc gpu-carry/mini2/tessera.xz > $W/tessera; chmod +x $W/tessera
T=$W/tessera
TESSERA_TRACE=3 timeout 100 $T bench gen:grid2d:725 sparse-images-1024_subset --methods auto --precision f32 --out $W/f32 > $W/f32.txt 2> $W/f32.err; echo "f32 rc=$?"
TESSERA_TRACE=3 timeout 100 $T bench gen:elasticity:40 gen:lp:4284,1092610,2600,1 --methods auto --precision f64 --out $W/f64 > $W/f64.txt 2> $W/f64.err; echo "f64 rc=$?"
grep -hE "e2e run from .*product|worker building|e2e run from .*at N" $W/f32.err $W/f64.err | cut -c1-330 | head -90
tar -czf $OUT/h.tgz -C $W f32 f64 f32.txt f64.txt f32.err f64.err
