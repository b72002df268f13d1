#!/usr/bin/env bash
# Session 12, run G: util_inspect_i32 with __launch_bounds__(256, 8), under ncu, and its test.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/g.txt
(cd $B/tests && echo "gpu_import: $(timeout 200 ./gpu_import 2>&1 | grep -E 'test result|panicked' | tr '\n' ' ')") | tee -a $W/g.txt
M=$B/matrices
for m in gen:lap3d7:160 gen:stencil27:100 gen:circuit:1000000,5,4,100000,1 $M/bayer10.mtx.xz $M/cit-HepPh.mtx.xz; do
  timeout 100 ncu --kernel-name regex:"util_inspect" --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy $B/bin/tessera bench $m --methods csr_vector --precision f64 > $W/ncu-$(basename $m).txt 2>&1
  echo "ncu $m: $(grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Grid Size" $W/ncu-$(basename $m).txt | sed 's/  */ /g' | tr '\n' ';')"
done | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
