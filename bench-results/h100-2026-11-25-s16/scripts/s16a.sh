#!/usr/bin/env bash
# Session 16, run A: the first product's host path (start after launch, big workspaces, HOLA
# in the check's workspace): tests, gpu_check under memcheck, a first-product trace, and an ncu
# look at the check's kernel on two large matrices.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/a; mkdir -p $W
M=$B/matrices
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/a.txt
cd $B/tests
for t in unit gpu gpu_check gpu_hola gpu_background gpu_borrow; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/a.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/a.txt
done
echo "gpu_check memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/a.txt
cd - >/dev/null
TESSERA_TRACE=2 timeout 150 $B/bin/tessera bench $M/as-caida20071105.mtx.xz $M/cit-HepPh.mtx.xz $M/watt_2.mtx.xz gen:lap3d7:160 gen:uniform:1000000,16,1 gen:circuit:1000000,5,4,100000,1 --methods auto --precision f64 --out $W/trace > $W/trace.txt 2>&1
echo "trace rc=$?" | tee -a $W/a.txt
grep -E "^\| |first product from Borrowed|queued in" $W/trace.txt | tail -60 | tee -a $W/a.txt
for g in gen:lap3d7:160 gen:uniform:1000000,16,1; do
  timeout 120 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats $B/bin/tessera bench $g --methods auto --precision f64 > $W/ncu-${g//[:,]/_}.txt 2>&1
  echo "ncu $g rc=$?" | tee -a $W/a.txt
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Grid Size|Stall|Warp Cycles Per Issued" $W/ncu-${g//[:,]/_}.txt | head -20 | tee -a $W/a.txt
done
tar -czf $OUT/a.tgz -C $W .
