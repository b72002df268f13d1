#!/usr/bin/env bash
# Session 11, run B: AUTO's training set (scripts/auto-training run), f32 and f64, per product.
cd "$(dirname "$0")/.."
tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
echo "# commit $(cat $B/COMMIT)" > $OUT/b.txt
start=$(date +%s)
TESSERA=$B/bin/tessera timeout 540 scripts/auto-training run $OUT/train; echo "training rc=$? in $(( $(date +%s) - start )) s" >> $OUT/b.txt
wc -l $OUT/train/train.csv >> $OUT/b.txt; grep -c FAILED $OUT/train/train.csv >> $OUT/b.txt
tail -3 $OUT/train/train.err >> $OUT/b.txt
cat $OUT/b.txt
