#!/usr/bin/env bash
# Session 16, run H (the final code): every method and AUTO per product, f32 and f64, on the
# suite (issue 19's hit rate after CSR_VECTOR's version 3).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/h; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
timeout 400 $B/bin/tessera bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$?" | tee -a $W/h.txt
grep geomean $W/suite-all.txt | cut -c1-300 | tee -a $W/h.txt
tar -czf $OUT/h.tgz -C $W .
