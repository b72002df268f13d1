#!/usr/bin/env bash
# Session 19, run E (the graph rule refitted): every test executable, gpu_overlap and gpu_hola
# under memcheck, AUTO's training set and the suite per product (both types).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/e; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/e.txt
for t in $(ls $B/tests); do [ $(( $(date +%s)-T0 )) -gt 250 ] && { echo "$t not run: time" | tee -a $W/e.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/e.txt; done
(cd $B/tests && echo "gpu_hola memcheck: $(timeout 100 compute-sanitizer --tool memcheck ./gpu_hola --test-threads=1 2>&1 | tee $W/mc-gpu_hola.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/e.txt
mkdir -p $W/train; TESSERA=$T timeout 150 bash gpu-carry/auto-training run $W/train; echo "train rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/e.txt
timeout $(( 590-($(date +%s)-T0) )) $T bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite-all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/e.txt
grep -i 'geomean.*auto' $W/suite-all.txt | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
