#!/usr/bin/env bash
# Session 20, run K (the final code): every test executable of the bundle, gpu_background and
# gpu_check under memcheck, then AUTO end to end over the suite in f64 (read in place, copied,
# from the host).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/k; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/k.txt
for t in $(ls $B/tests); do [ $(( $(date +%s)-T0 )) -gt 250 ] && { echo "$t not run: time" | tee -a $W/k.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/k.txt; done
for t in gpu_background gpu_check; do (cd $B/tests && echo "$t memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/k.txt; done
timeout $(( 590-($(date +%s)-T0) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/k.txt
tar -czf $OUT/k.tgz -C $W .
