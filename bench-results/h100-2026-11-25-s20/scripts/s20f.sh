#!/usr/bin/env bash
# Session 20, run F (da9db77): every test executable of the bundle, gpu_check under memcheck,
# then AUTO end to end over the suite (arrays read in place, copied, from the host; against
# cuSPARSE's best pipeline) in f64.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/f; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
for t in $(ls $B/tests); do [ $(( $(date +%s)-T0 )) -gt 280 ] && { echo "$t not run: time" | tee -a $W/f.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/f.txt; done
(cd $B/tests && echo "gpu_check memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc-gpu_check.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/f.txt
timeout $(( 590-($(date +%s)-T0) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
tar -czf $OUT/f.tgz -C $W .
