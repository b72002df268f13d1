#!/usr/bin/env bash
# Session 30, run I: tile_spmv_f64 on random 3000² and 3008² at 97% under ncu's memory and
# warp-state sections (run H's CuPy kernel showed the Dns tiles' alignment is not the cause).
cd "$(dirname "$0")/../../.."
W=/tmp/i; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
for m in gen:random:3008,3008,2918,7 gen:random:3000,3000,2900,7; do
  timeout 150 ncu --clock-control none -k regex:tile_spmv --launch-skip 10 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy $B/bin/tessera bench $m --methods tile --precision f64 --steady > $W/$(echo $m|tr ':,' '__').txt 2>&1
  echo "== $m rc=$?"; grep -E "Duration|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Warp Cycles Per Issued|Stall|Achieved Occupancy|Registers Per|Block Limit|Grid Size|Dynamic Shared|Static Shared" $W/$(echo $m|tr ':,' '__').txt | head -30
  grep -A3 "WRN\|OPT" $W/$(echo $m|tr ':,' '__').txt | head -30
done
tar -czf $OUT/i.tgz -C $W .
