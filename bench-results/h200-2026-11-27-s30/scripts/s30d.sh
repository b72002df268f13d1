#!/usr/bin/env bash
# Session 30, run D: why TILE's product in f64 is 1.5x slower on a random 97%-dense matrix than
# on a dense one of the same tiles (run C: 36.5 against 23.8 us, both 99-100% Dns tiles): ncu on
# tile_spmv and the other launches of a named TILE product, f64, dense 3000², random 3000² at
# 97% and at 100% (gen:random with 3000 per row). (The first try had no -k filter and timed
# cuSPARSE's kernels, which the bench runs first: its output is not a result.)
cd "$(dirname "$0")/../../.."
W=/tmp/d; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
for m in gen:dense:3000,3000 gen:random:3000,3000,2900,7 gen:random:3000,3000,3000,7; do
  timeout 120 ncu --clock-control none -k regex:tile_ --launch-skip 30 --launch-count 6 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active $B/bin/tessera bench $m --methods tile --precision f64 --steady > $W/ncu-$(echo $m|tr ':,' '__').txt 2>&1
  echo "== $m rc=$?"; grep -E "^  [a-z_]+.*\(|gpu__time|dram__bytes|hit_rate|warps_active" $W/ncu-$(echo $m|tr ':,' '__').txt | awk '{print $1, $(NF-1), $NF}' | head -24
  for p in f64 f32; do timeout 60 ncu --clock-control none -k regex:hola_ --launch-skip 30 --launch-count 2 --metrics gpu__time_duration.sum,dram__bytes_read.sum $B/bin/tessera bench $m --methods hola --precision $p --steady 2>&1 | grep -E "^  [a-z_]+.*\(|gpu__time|dram__bytes" | awk '{print "hola '$p'", $1, $(NF-1), $NF}'; done
done
tar -czf $OUT/d.tgz -C $W .
