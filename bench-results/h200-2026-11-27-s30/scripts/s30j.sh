#!/usr/bin/env bash
# Session 30, run J: is tile_spmv's slowdown with edge ELL tiles the slowest warps of a grid of
# half a wave (the ELL tiles' dependent index loads on one chain per half-warp)? Named TILE with
# QUICK tuning times tbalance 4 and 16 beside the fixed rule's 8; both random 3000² and 3008² at
# 97%, f64 and f32; params (with the timings) from the CSV.
cd "$(dirname "$0")/../../.."
W=/tmp/j; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
timeout 200 $B/bin/tessera bench gen:random:3000,3000,2900,7 gen:random:3008,3008,2918,7 gen:random:3000,3000,1600,7 --methods tile --tuning quick --precision both --steady --out $W/q > $W/q.txt 2>&1
echo "rc=$?"
python3 -c "
import csv
for r in csv.DictReader(open('$W/q/bench.csv')):
    if r['method']=='tile': print(r['matrix'], r['type'], r['spmv_ms'], r['params'][:700]); print()
"
tar -czf $OUT/j.tgz -C $W .
