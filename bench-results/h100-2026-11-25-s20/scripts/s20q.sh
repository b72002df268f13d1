#!/usr/bin/env bash
# Session 20, run Q (7fed2c2, the final code): AUTO end to end over the suite, f64 and f32
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/q; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/q.txt
for p in f64 f32; do
  timeout $(( 590-($(date +%s)-T0) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/q.txt
done
tar -czf $OUT/q.tgz -C $W .
