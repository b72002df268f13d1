#!/usr/bin/env bash
# Session 18, run I (after the review): the touched test files on the GPU, gpu_sliced under
# memcheck, and the LP generator per product (the staging loop rewritten).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/i; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/i.txt
for t in gpu_sliced gpu_trial gpu_check gpu_background gpu_hola gpu unit; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/i.txt; done
(cd $B/tests && echo "gpu_sliced memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_sliced --test-threads=1 2>&1 | tee $W/mc-gpu_sliced.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/i.txt
timeout 100 $T bench gen:lp:4284,1092610,2600,1 gen:lp:20000,200000,500,1 --methods auto,csr_vector --precision both --steady --tuning quick --csv $W/lp-quick.csv > $W/lp-quick.txt 2>&1; echo "lp quick rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/i.txt
timeout 100 $T bench gen:lp:4284,1092610,2600,1 --methods auto --precision both --steady --csv $W/lp.csv > $W/lp.txt 2>&1; echo "lp rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/i.txt
grep -hE "auto|csr_vector|cusparse" $W/lp.txt $W/lp-quick.txt | grep "gen:" | cut -c1-150 | tee -a $W/i.txt
tar -czf $OUT/i.tgz -C $W .
