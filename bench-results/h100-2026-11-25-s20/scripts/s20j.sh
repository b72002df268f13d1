#!/usr/bin/env bash
# Session 20, run J: background builds allocate stream-ordered (working tree, gpu-carry/mini2):
# the matrices whose products stalled in runs F-H, end to end, with TESSERA_TRACE=3 once
# (calls over 200 us) and twice without trace.
cd "$(dirname "$0")/.."
[ -d gpu-bundle/matrices ] || tar -xJf gpu-carry/matrices.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
W=/tmp/j; mkdir -p $W
xz -dc gpu-carry/mini2/tessera.xz > $W/tessera; chmod +x $W/tessera
T=$W/tessera
TESSERA_TRACE=3 timeout 100 $T bench gen:grid2d:725 --methods auto --precision f32 --out $W/trace > /dev/null 2> $W/trace.err; echo "trace rc=$?"
grep -hE "e2e run from .*product|cuMemAlloc.*BRC|e2e run from .*at N" $W/trace.err | cut -c1-250 | head -20
for r in 1 2; do
timeout 100 $T bench gen:grid2d:725 sparse-images-1024_subset gen:elasticity:48 --methods auto --precision f32 --out $W/f32-$r > /dev/null 2>&1; echo "f32 $r rc=$?"
timeout 100 $T bench gen:elasticity:40 gen:lp:4284,1092610,2600,1 gen:lap3d7:160 --methods auto --precision f64 --out $W/f64-$r > /dev/null 2>&1; echo "f64 $r rc=$?"
done
tar -czf $OUT/j.tgz -C $W trace.err f32-1 f32-2 f64-1 f64-2
