#!/usr/bin/env bash
# Session 19, run F: AUTO end to end over the suite (arrays read in place, copied, from the
# host; against cuSPARSE's best pipeline), f64 then f32.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/f; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
for p in f64 f32; do
  timeout $(( 590-($(date +%s)-T0) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
done
tar -czf $OUT/f.tgz -C $W .
