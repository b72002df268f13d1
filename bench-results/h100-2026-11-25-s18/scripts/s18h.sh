#!/usr/bin/env bash
# Session 18, run H (final code): every GPU test executable of the bundle, and the touched ones
# under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/h; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
for t in $(ls $B/tests); do [ $(( $(date +%s)-T0 )) -gt 420 ] && { echo "$t not run: time" | tee -a $W/h.txt; continue; }; (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 200 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/h.txt; done
for t in gpu_sliced gpu_hola; do (cd $B/tests && echo "$t memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/h.txt; done
echo "at $(( $(date +%s)-T0 ))s" | tee -a $W/h.txt
tar -czf $OUT/h.tgz -C $W .
