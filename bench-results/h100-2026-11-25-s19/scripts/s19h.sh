#!/usr/bin/env bash
# Session 19, run H (the sliced mode from 13 entries per slice): touched tests, LP-shaped
# matrices per product, then the suite with every method (both types).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/h; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
for t in unit gpu_sliced gpu_check gpu_trial; do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/h.txt; done
S="gen:lp:4284,1092610,1200,1 gen:lp:4284,2000000,1200,1 gen:lp:4284,4000000,2600,1 gen:lp:2000,200000,600,1"
timeout 150 $T bench $S --methods auto,csr_vector,hola --precision both --steady --csv $W/lp.csv > $W/lp.txt 2>&1; echo "lp steady rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/h.txt
grep -E "gen:" $W/lp.txt | grep -E "auto|csr_vector|hola|ALG_DEF" | cut -c1-110 | tee -a $W/h.txt
timeout $(( 590-($(date +%s)-T0) )) $T bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite-all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/h.txt
grep -i 'geomean.*auto' $W/suite-all.txt | tee -a $W/h.txt
tar -czf $OUT/h.tgz -C $W .
