#!/usr/bin/env bash
# Session 18, run A: the x-staging experiment (exp/staged.cu), and the test executables of
# session 17's last two commits (not run on a GPU then).
cd "$(dirname "$0")/.."
W=/tmp/a; mkdir -p $W
export PATH=$PATH:/usr/local/cuda/bin
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $W/a.txt
(cd gpu-carry/exp && nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/staged staged.cu -lcusparse 2>&1 | tail -5 && timeout 240 /tmp/staged) > $W/staged.txt 2>&1; echo "staged rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
cat $W/staged.txt
if [ -f gpu-carry/gb.tar.xz ]; then
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
echo "# commit $(cat $B/COMMIT)" | tee -a $W/a.txt
for t in unit gpu gpu_hola gpu_brc gpu_trial gpu_background gpu_check; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 90 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/a.txt; done
fi
echo "at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
tar -czf $OUT/a.tgz -C $W .
