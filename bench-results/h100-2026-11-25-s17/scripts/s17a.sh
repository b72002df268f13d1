#!/usr/bin/env bash
# Session 17, run A: AUTO's training set on the current code (after CSR_VECTOR's version 3),
# every method per product, f32 and f64; plus two larger elasticity matrices.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
s=$(date +%s)
TESSERA=$B/bin/tessera timeout 300 scripts/auto-training run $W/train; echo "train rc=$? $(( $(date +%s)-s )) s" | tee -a $W/a.txt
grep geomean $W/train/train.txt | cut -c1-200 | tee -a $W/a.txt
s=$(date +%s)
timeout 200 $B/bin/tessera bench gen:elasticity:40 gen:elasticity:56 --methods all --precision both --steady --csv $W/fem.csv > $W/fem.txt 2>&1; echo "fem rc=$? $(( $(date +%s)-s )) s" | tee -a $W/a.txt
tar -czf $OUT/a.tgz -C $W .
