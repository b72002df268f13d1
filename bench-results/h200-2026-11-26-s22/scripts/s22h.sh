#!/usr/bin/env bash
# Session 22, run H (the review's commit): `gpu-bundle/run tests` (every Rust test executable,
# the C GPU test, bad_args with a GPU, api_basic); `tessera bench` on three shared matrices
# (the cuSPARSE pipeline's upload as a caller).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/h; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
OUT=$W/tests timeout 400 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/h.txt
OUT=$W/bench timeout 120 $B/run bench Pd as-caida20071105 arrow --methods auto --precision f64 > $W/bench.txt 2>&1; echo "bench rc=$?" | tee -a $W/h.txt
tar -czf $OUT/h.tgz -C $W .
tail -n 26 $W/run-tests.txt; grep -E "auto|end-to-end geomean" $W/bench/bench.log | cut -c1-200 | head -8
