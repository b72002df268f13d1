#!/usr/bin/env bash
# Session 19, run I (after the review): the tests of the overlapped pairs and their methods,
# gpu_overlap under memcheck, and HOLA/BRC/TILE per product with the overlap off and on.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/i; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/i.txt
for t in gpu_overlap gpu_hola gpu_brc gpu_tile gpu_sliced gpu unit; do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/i.txt; done
(cd $B/tests && echo "gpu_overlap memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_overlap --test-threads=1 2>&1 | tee $W/mc-gpu_overlap.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/i.txt
for v in off on; do E=; [ $v = off ] && E=TESSERA_OVERLAP=0
  env $E timeout 100 $T bench gen:emptyrows:1000000,16,1 gen:dense:2000,2000 --methods hola,brc,tile --precision both --steady --csv $W/pair-$v.csv > $W/pair-$v.txt 2>&1; echo "pairs overlap $v rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/i.txt
  grep -E "^gen:" $W/pair-$v.txt | grep -v CSR_ALG2 | cut -c1-100 | tee -a $W/i.txt
done
tar -czf $OUT/i.tgz -C $W .
