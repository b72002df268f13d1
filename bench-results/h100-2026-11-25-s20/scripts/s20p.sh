#!/usr/bin/env bash
# Session 20, run P (7fed2c2, HOLA's blocks of 512 for rows longer than a block): every test
# executable of the bundle, then AUTO end to end (and per product) on the long-row matrices.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/p; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/p.txt
for t in $(ls $B/tests); do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/p.txt; done
(cd $B/tests && echo "gpu_hola memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./gpu_hola --test-threads=1 2>&1 | tee $W/mc-gpu_hola.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/p.txt
for p in f64 f32; do
  timeout 200 $T bench gen:dense:2000,2000 gen:lp:1200,4000000,1200,1 gen:lp:1200,2000000,1200,1 gen:lp:4284,1092610,2600,1 gen:uniform:2000,1500,1 --methods auto,hola --precision $p --out $W/long-$p > $W/long-$p.txt 2>&1; echo "long $p rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/p.txt
  grep -E "^gen:" $W/long-$p.txt | cut -c1-100 | tee -a $W/p.txt
done
tar -czf $OUT/p.tgz -C $W .
