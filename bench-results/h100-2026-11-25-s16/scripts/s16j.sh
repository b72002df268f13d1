#!/usr/bin/env bash
# Session 16, run J: the check kernel's variants after run I: v4 (the next entry loaded) with 4 loads in flight (v5), without the register cap (v6), both (v7).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/j; mkdir -p $W
V=$PWD/gpu-carry/variants
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/j.txt
for g in gen:lap3d7:160 gen:uniform:1000000,16,1; do
  for v in v4 v5 v6 v7; do
    TESSERA_KERNELS_DIR=$V/$v timeout 100 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section Occupancy $B/bin/tessera bench $g --methods auto --precision f64 > $W/ncu-$v-${g//[:,]/_}.txt 2>&1
    echo "$g $v rc=$? $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy' $W/ncu-$v-${g//[:,]/_}.txt | tr -s ' ' | tr '\n' ';')" | tee -a $W/j.txt
  done
done
tar -czf $OUT/j.tgz -C $W .
