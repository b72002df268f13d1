#!/usr/bin/env bash
# Session 11, run J: AUTO's BRC against BRC named on grid2d:725 f32 (kernels and their times).
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
T=$B/bin/tessera
$T bench gen:grid2d:725 --methods auto,brc,csr_vector --precision f32 --steady 2>&1 | grep -E '^gen' | awk '{print $5, $7}'
TESSERA_BACKGROUND_BUILD=0 $T bench gen:grid2d:725 --methods auto --precision f32 --steady 2>&1 | grep -E '^gen' | awk '{print "B0", $5, $7}'
for m in auto brc; do
  echo "== $m"
  timeout 100 ncu -k regex:"brc|csr_vector" --launch-skip 20 --launch-count 4 --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size --csv $T bench gen:grid2d:725 --methods $m --precision f32 --steady > /tmp/ncu_$m.csv 2>&1
  python3 gpu-carry/ncu_show.py /tmp/ncu_$m.csv | head -12
done
