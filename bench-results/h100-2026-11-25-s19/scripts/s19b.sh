#!/usr/bin/env bash
# Session 19, run B: the overlapped pairs (PDL) and HOLA's row-start table: the touched tests,
# gpu_overlap and gpu_hola under memcheck.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
for t in gpu_overlap gpu_hola gpu_brc gpu_tile gpu gpu_trial gpu_background gpu_sliced unit; do [ $(( $(date +%s)-T0 )) -gt 380 ] && { echo "$t not run: time" | tee -a $W/b.txt; continue; }; (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 200 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/b.txt; done
for t in gpu_overlap; do (cd $B/tests && echo "$t memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/b.txt; done
echo "at $(( $(date +%s)-T0 ))s" | tee -a $W/b.txt
tar -czf $OUT/b.tgz -C $W .
