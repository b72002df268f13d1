#!/usr/bin/env bash
# Session 12, run D: where the large matrices' borrowed create spends its time. The inspection
# kernel under ncu (lap3d7 160^3, bayer10); the timeline of CSR_VECTOR alone (no background
# build, no large frees between iterations) against AUTO's.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
M=$B/matrices
for m in gen:lap3d7:160 $M/bayer10.mtx.xz; do
  timeout 150 ncu --kernel-name regex:"util_inspect" --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis $B/bin/tessera bench $m --methods csr_vector --precision f64 > $W/ncu-$(basename $m).txt 2>&1
  echo "== ncu $m"; grep -E "Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|L2 Hit|L1/TEX Hit|Grid Size|Mem Busy|Max Bandwidth" $W/ncu-$(basename $m).txt | sed 's/  */ /g'
done
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench gen:lap3d7:160 --methods csr_vector --precision f64 > $W/trace-cv.txt 2>&1
echo "== csr_vector alone"; grep -E "inspection of|from Borrowed|borrow |analyze:" $W/trace-cv.txt | tail -8
tar -czf $OUT/d.tgz -C $W .
