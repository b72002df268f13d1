#!/usr/bin/env bash
# Session 16, run L: the check kernel's 16-byte loads: the tests of the borrowed create (memcheck
# on gpu_check and gpu_borrow), ncu on the check (lap3d7 160³, uniform 10^6 x 16, power-law 2^20),
# the suite end to end in f64.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/l; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/l.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_borrow_c gpu_faults gpu_import gpu_threads; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/l.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/l.txt
done
for t in gpu_check gpu_borrow gpu_import; do
  echo "$t memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/l.txt
done
cd - >/dev/null
for g in gen:lap3d7:160 gen:uniform:1000000,16,1 gen:powerlaw:20,16,1; do
  timeout 100 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section Occupancy $B/bin/tessera bench $g --methods auto --precision f64 > $W/ncu-${g//[:,]/_}.txt 2>&1
  echo "ncu $g rc=$? $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy' $W/ncu-${g//[:,]/_}.txt | tr -s ' ' | tr '\n' ';')" | tee -a $W/l.txt
done
timeout 150 $B/bin/tessera bench --suite --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$?" | tee -a $W/l.txt
grep -E 'geomean' $W/suite-f64.txt | cut -c1-420 | tee -a $W/l.txt
tar -czf $OUT/l.tgz -C $W .
