#!/usr/bin/env bash
# Session 22, run G (the final code): `gpu-bundle/run tests` (every Rust test executable, the C
# GPU test, bad_args with a GPU, api_basic).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/g; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
OUT=$W/tests timeout 500 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
tail -n 26 $W/run-tests.txt
