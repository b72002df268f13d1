#!/usr/bin/env bash
# Session 19, run G (AUTO's sliced check by value type): the touched tests, and AUTO against
# CSR_VECTOR and HOLA per product on LP-shaped matrices, end to end read in place.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
for t in unit gpu_sliced gpu_check gpu_background gpu_brc gpu_trial gpu_borrow gpu; do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/g.txt; done
S="gen:lp:4284,1092610,1200,1 gen:lp:2000,200000,600,1 gen:lp:4284,1092610,2600,1 gen:lp:500,50000,200,1"
timeout 150 $T bench $S --methods auto,csr_vector,hola --precision both --steady --csv $W/lp.csv > $W/lp.txt 2>&1; echo "lp steady rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
grep -E "gen:" $W/lp.txt | grep -E "auto|csr_vector|hola" | cut -c1-120 | tee -a $W/g.txt
timeout 200 $T bench gen:lp:4284,1092610,1200,1 --methods auto --precision both --csv $W/lp-e2e.csv > $W/lp-e2e.txt 2>&1; echo "lp e2e rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
