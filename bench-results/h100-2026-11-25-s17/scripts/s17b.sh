#!/usr/bin/env bash
# Session 17, run B: AUTO's trial. Tests that touch it (unit, gpu_trial, gpu_background,
# gpu_brc, gpu_check, gpu_borrow), memcheck on gpu_trial; every method and AUTO per product on
# the suite and on elasticity 24-56 (f32, f64); the suite end to end (f64, f32).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
export TESSERA_BIN=$B/bin/tessera
for t in unit gpu_trial gpu_background gpu_brc gpu_check gpu_borrow; do
  s=$(date +%s)
  (cd $B/tests && timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(( $(date +%s)-s ))s $(grep -E 'test result' $W/t-$t.txt | tr '\n' ' ')") | tee -a $W/b.txt
done
grep -B2 -A12 'panicked' $W/t-*.txt | head -60 | tee -a $W/b.txt
(cd $B/tests && echo "gpu_trial memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_trial --test-threads=1 2>&1 | tee $W/mc-gpu_trial.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/b.txt
s=$(date +%s)
timeout 240 $B/bin/tessera bench --suite gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:56 --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? $(( $(date +%s)-s ))s" | tee -a $W/b.txt
grep geomean $W/suite-all.txt | cut -c1-200 | tee -a $W/b.txt
for p in f64 f32; do
  s=$(date +%s)
  timeout 150 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? $(( $(date +%s)-s ))s"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/b.txt
tar -czf $OUT/b.tgz -C $W .
