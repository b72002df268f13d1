#!/usr/bin/env bash
# Session 20, run C: TESSERA_TRACE=3 (the host time between marks on the first products' path)
# on small matrices, with the working tree's tessera binary (gpu-carry/mini2) and the bundle's
# matrices.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
xz -dc gpu-carry/mini2/tessera.xz > $W/tessera; chmod +x $W/tessera
T=$W/tessera
TESSERA_TRACE=3 timeout 60 $T bench Pd watt_2 --methods auto --precision f64 --out $W/small > $W/small.txt 2> $W/small.err; echo "small rc=$?"
grep -E "\(us\)|create \+ analyze" $W/small.err | grep -E "Borrowed" | head -40 | cut -c1-400
tar -czf $OUT/c.tgz -C $W small small.txt small.err
