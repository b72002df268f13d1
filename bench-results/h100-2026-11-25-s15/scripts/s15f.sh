#!/usr/bin/env bash
# Session 15, run F (final code after the review commits): unit, gpu, gpu_check, gpu_hola,
# gpu_tile, gpu_background, gpu_borrow, gpu_faults; gpu_check under memcheck; the shared
# matrices and dense 2000² end to end (AUTO, f64).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/f; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/f.txt
cd $B/tests
for t in unit gpu gpu_check gpu_hola gpu_tile gpu_background gpu_borrow gpu_faults; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/f.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/f.txt
done
echo "gpu_check memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/f.txt
cd - >/dev/null
M=$B/matrices
timeout 150 $B/bin/tessera bench $(ls $M/*.mtx.xz) gen:dense:2000,2000 --methods auto --precision f64 --out $W/shared > $W/shared.txt 2>&1; echo "shared rc=$?" | tee -a $W/f.txt
grep 'geomean' $W/shared.txt | cut -c1-400 | tee -a $W/f.txt
tar -czf $OUT/f.tgz -C $W .
