#!/usr/bin/env bash
# Session 11, run K (commit in gpu-bundle/COMMIT): the training set and the suite with every
# method, per product, f32 and f64: AUTO's hit rate in one run. Outputs tarred.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/k; mkdir -p $W
s=$(date +%s); TESSERA=$B/bin/tessera timeout 290 scripts/auto-training run $W/train; echo "train rc=$? $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 270 $B/bin/tessera bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? $(( $(date +%s) - s )) s"
grep geomean $W/suite-all.txt | cut -c1-200
tar -czf $OUT/k.tgz -C $W .
