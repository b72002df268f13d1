#!/usr/bin/env bash
# Session 20, run M (the final code, bd02d3b): every test executable of the bundle, gpu_check,
# gpu_borrow and gpu_background under memcheck, then AUTO end to end over the suite, f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/m; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/m.txt
for t in $(ls $B/tests); do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/m.txt; done
for t in gpu_check gpu_borrow gpu_background; do (cd $B/tests && echo "$t memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/m.txt; done
for p in f64 f32; do
  timeout $(( 590-($(date +%s)-T0) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/m.txt
done
tar -czf $OUT/m.tgz -C $W .
