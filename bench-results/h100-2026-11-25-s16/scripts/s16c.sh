#!/usr/bin/env bash
# Session 16, run C: HOLA in the check's workspace at an analyze that finds the check done, the
# median of 7 first products: tests, gpu_check under memcheck, timelines, the suite end to end.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/c; mkdir -p $W
M=$B/matrices
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_background; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/c.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/c.txt
done
echo "gpu_check memcheck: $(timeout 240 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/c.txt
cd - >/dev/null
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/cit-HepPh.mtx.xz $M/as-caida20071105.mtx.xz gen:stencil27:100 --methods auto --precision f64 --out $W/trace > $W/trace.txt 2>&1
echo "trace rc=$?" | tee -a $W/c.txt
for p in f64 f32; do
  timeout 200 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/c.txt
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
