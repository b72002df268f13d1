#!/usr/bin/env bash
# Session 30, run L: tile_spmv with a CSR row's and an ELL/HYB tile's loads issued before their
# sums (TILE_BATCH 16 or 8) against the loop unrolled by 4 (the session's start), each compiled
# at run time from gpu-carry/k16, k8, korig (TESSERA_KERNELS_DIR; the bundle's built-in kernels
# are korig's). Named TILE per product (--steady), then ncu of tile_spmv (registers, duration).
cd "$(dirname "$0")/../../.."
W=/tmp/l; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
M="gen:random:3000,3000,2900,7 gen:random:3000,3000,1600,7 gen:random:3008,3008,2918,7 gen:dense:2000,2000 gen:dense:3000,3000"
for r in 1 2; do for k in korig k16 k8; do
  TESSERA_KERNELS_DIR=$PWD/gpu-carry/$k TESSERA_CACHE_DIR=$W/cache-$k timeout 150 $B/bin/tessera bench $M --methods tile --precision both --steady --out $W/$k-$r > $W/$k-$r.txt 2>&1
  echo "$k r$r rc=$?: $(grep -E " tile " $W/$k-$r.txt | grep -v "^\[" | awk '{print $1"/"$4"="$6}' | tr '\n' ' ')"
done; done
for k in korig k16 k8; do for m in gen:random:3000,3000,2900,7 gen:dense:3000,3000; do
  TESSERA_KERNELS_DIR=$PWD/gpu-carry/$k TESSERA_CACHE_DIR=$W/cache-$k timeout 100 ncu --clock-control none -k regex:tile_spmv_f64 --launch-skip 10 --launch-count 1 --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active $B/bin/tessera bench $m --methods tile --precision f64 --steady > $W/ncu.txt 2>&1
  echo "ncu $k $m: $(grep -E "gpu__time|registers|warps_active" $W/ncu.txt | awk '{print $1"="$NF}' | tr '\n' ' ')"
done; done
