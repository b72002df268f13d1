#!/usr/bin/env bash
# Session 16, run D: AUTO's start left to the product after the outcome; the provisional HOLA
# laid out by the check for every grid: tests (gpu_check under memcheck), timelines, the suite.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/d; mkdir -p $W
M=$B/matrices
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_borrow_c gpu_background gpu_hola gpu_faults gpu_threads gpu_import; do
  [ -x ./$t ] || continue
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/d.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/d.txt
done
echo "gpu_check memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/d.txt
cd - >/dev/null
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/cit-HepPh.mtx.xz $M/adder_dcop_05.mtx.xz gen:stencil27:100 --methods auto --precision f64 --out $W/trace > $W/trace.txt 2>&1
echo "trace rc=$?" | tee -a $W/d.txt
for p in f64 f32; do
  timeout 200 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/d.txt
tar -czf $OUT/d.tgz -C $W .
