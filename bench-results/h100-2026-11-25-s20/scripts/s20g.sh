#!/usr/bin/env bash
# Session 20, run G (da9db77): AUTO end to end over the suite in f32 (as run F's f64), then
# the cold first product (fresh process, empty kernel cache) of seven matrices in f64.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
timeout 480 $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision f32 --out $W/suite-f32 > $W/suite-f32.txt 2>&1; echo "suite f32 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
timeout $(( 590-($(date +%s)-T0) )) $T bench Pd watt_2 Andrews cit-HepPh gen:lap3d7:160 gen:dense:2000,2000 gen:powerlaw:20,16,1 --methods auto --precision f64 --steady --cold --out $W/cold > $W/cold.txt 2>&1; echo "cold rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
