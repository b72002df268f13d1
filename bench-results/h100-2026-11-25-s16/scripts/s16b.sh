#!/usr/bin/env bash
# Session 16, run B: the check kernel's rewrite: tests, gpu_check under memcheck, ncu on the
# check of three large matrices, then the suite end to end (AUTO, f64 and f32).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/b; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/b.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_faults gpu_hola; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/b.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/b.txt
done
echo "gpu_check memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/b.txt
cd - >/dev/null
for g in gen:lap3d7:160 gen:uniform:1000000,16,1 gen:powerlaw:20,16,1; do
  timeout 120 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats $B/bin/tessera bench $g --methods auto --precision f64 > $W/ncu-${g//[:,]/_}.txt 2>&1
  echo "ncu $g rc=$? $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Grid Size' $W/ncu-${g//[:,]/_}.txt | tr -s ' ' | tr '\n' ';')" | tee -a $W/b.txt
done
for p in f64 f32; do
  timeout 170 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/b.txt
tar -czf $OUT/b.tgz -C $W .
