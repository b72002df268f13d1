#!/usr/bin/env bash
# Session 16, run I: the check kernel's variants (TESSERA_KERNELS_DIR, util.cu only) timed by
# ncu on the 7-point Laplacian 160³ and uniform 10^6 x 16: v0 as committed, v1 16 loads in
# flight per thread, v2 4, v3 without the 64-register cap, v4 the next entry loaded (no
# shuffle); v0 also with the stall reasons.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/i; mkdir -p $W
V=$PWD/gpu-carry/variants
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/i.txt
timeout 100 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section Occupancy $B/bin/tessera bench gen:lap3d7:160 --methods auto --precision f64 > $W/ncu-v0-full.txt 2>&1
echo "v0 full rc=$?" | tee -a $W/i.txt
for g in gen:lap3d7:160 gen:uniform:1000000,16,1; do
  for v in v0 v1 v2 v3 v4; do
    TESSERA_KERNELS_DIR=$V/$v timeout 100 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section Occupancy $B/bin/tessera bench $g --methods auto --precision f64 > $W/ncu-$v-${g//[:,]/_}.txt 2>&1
    echo "$g $v rc=$? $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy' $W/ncu-$v-${g//[:,]/_}.txt | tr -s ' ' | tr '\n' ';')" | tee -a $W/i.txt
  done
done
tar -czf $OUT/i.tgz -C $W .
