#!/usr/bin/env bash
# Session 16, run E: the check kernel's batched row pass: tests, memcheck, ncu on the check, the suite.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/e; mkdir -p $W
M=$B/matrices
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/e.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_borrow_c gpu_background gpu_hola gpu_faults gpu_threads gpu_import; do
  [ -x ./$t ] || continue
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/e.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/e.txt
done
echo "gpu_check memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/e.txt
echo "gpu_borrow memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./gpu_borrow --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | tr "\n" " ")" | tee -a $W/e.txt
cd - >/dev/null
for g in gen:lap3d7:160 gen:stencil27:100 gen:uniform:1000000,16,1 gen:powerlaw:20,16,1; do
  timeout 120 ncu --kernel-name regex:util_inspect --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats $B/bin/tessera bench $g --methods auto --precision f64 > $W/ncu-${g//[:,]/_}.txt 2>&1
  echo "ncu $g rc=$? $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Grid Size' $W/ncu-${g//[:,]/_}.txt | tr -s ' ' | tr '\n' ';')" | tee -a $W/e.txt
done
for p in f64 f32; do
  timeout 200 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
