#!/usr/bin/env bash
# Session 28, run I (fccee06's CLI, the final code): the suite (25 matrices) in f64 and f32, on
# the default stream (as every earlier suite) and with --stream own (a non-blocking stream).
cd "$(dirname "$0")/../../.."
W=/tmp/i; mkdir -p $W; xz -dc gpu-carry/i.xz > /tmp/t; chmod +x /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/i.txt
for p in f64 f32; do timeout 280 /tmp/t bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/i.txt; done
for p in f64 f32; do timeout 280 /tmp/t bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --stream own --out $W/suite-own-$p > $W/suite-own-$p.txt 2>&1; echo "suite own $p rc=$? at $(el)s" | tee -a $W/i.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/i.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv $W/suite-own-f64/bench.csv $W/suite-own-f32/bench.csv
