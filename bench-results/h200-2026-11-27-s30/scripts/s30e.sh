#!/usr/bin/env bash
# Session 30, run E: tile_spmv_f64 under ncu on random matrices with and without edge tiles
# (3008 = 188 x 16 columns: every tile full-width; 3000: the last tile column has 8 valid
# columns, stored as ELL at 97%), at 97% and 60% density; and the dense 3000² again.
cd "$(dirname "$0")/../../.."
W=/tmp/e; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
for m in gen:random:3008,3008,2918,7 gen:random:3000,3000,2900,7 gen:random:3008,3008,1800,7 gen:random:3000,3000,1800,7 gen:dense:3000,3000; do
  for p in f64 f32; do
  timeout 120 ncu --clock-control none -k regex:tile_spmv --launch-skip 10 --launch-count 2 --metrics gpu__time_duration.sum,dram__bytes_read.sum,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum $B/bin/tessera bench $m --methods tile --precision $p --steady > $W/ncu.txt 2>&1
  echo "$m $p: $(grep -E "gpu__time|dram__bytes|inst_executed" $W/ncu.txt | awk '{print $(NF-1), $NF}' | tr '\n' ' ') $(grep -o 'tiles/nnz%[^;]*' $W/ncu.txt | head -1)"
  done
done
