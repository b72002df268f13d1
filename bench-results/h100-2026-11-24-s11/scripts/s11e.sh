#!/usr/bin/env bash
# Session 11, run E: the held-out check of AUTO's rule: the suite, every method, per product, f32 and f64.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
start=$(date +%s)
timeout 560 $B/bin/tessera bench --suite --methods all --precision both --steady --out $OUT/suite-all > $OUT/suite-all.txt 2>&1; echo "rc=$? in $(( $(date +%s) - start )) s"
grep geomean $OUT/suite-all.txt | cut -c1-300
