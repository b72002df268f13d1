#!/usr/bin/env bash
# Session 30, run K: which edge makes tile_spmv slow (run E), the last tile row (8 rows: its
# tiles ELL of width 16) or the last tile column (8 columns: ELL of width 8)? ncu duration of
# tile_spmv, f64 and f32, random at 97% with 3000 rows x 3008 columns and 3008 x 3000.
cd "$(dirname "$0")/../../.."
W=/tmp/k; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
for m in gen:random:3000,3008,2918,7 gen:random:3008,3000,2910,7 gen:random:3000,3000,2910,7; do for p in f64 f32; do
  timeout 100 ncu --clock-control none -k regex:tile_spmv --launch-skip 10 --launch-count 2 --metrics gpu__time_duration.sum $B/bin/tessera bench $m --methods tile --precision $p --steady --out $W/o > $W/ncu.txt 2>&1
  echo "$m $p: $(grep -E "gpu__time" $W/ncu.txt | awk '{print $NF}' | tr '\n' ' ') us; $(python3 -c "
import csv
for r in csv.DictReader(open('$W/o/bench.csv')):
    if r['method']=='tile': print(r['params'].split(';')[1])
")"
done; done
