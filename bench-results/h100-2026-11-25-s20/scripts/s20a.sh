#!/usr/bin/env bash
# Session 20, run A: where small matrices' first products and products 2-24 go (TESSERA_TRACE=1:
# create/analyze lines, the end-to-end run's first calls), two rounds; dense 2000² f32 per product.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
M="Pd sparse-images-1024_subset Andrews watt_2 zenios as-caida20071105"
for r in 1 2; do for p in f64 f32; do
  TESSERA_TRACE=1 timeout 120 $T bench $M --methods auto --precision $p --out $W/small-$p-$r > $W/small-$p-$r.txt 2> $W/small-$p-$r.err; echo "small $p round $r rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
done; done
for r in 1 2; do
  timeout 60 $T bench gen:dense:2000,2000 --methods auto,tile,hola,csr_vector,brc --precision f32 --steady > $W/dense-$r.txt 2>&1; echo "dense round $r rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
  grep -E "^gen:" $W/dense-$r.txt | cut -c1-110 | tee -a $W/a.txt
done
TESSERA_TRACE=1 timeout 120 $T bench gen:elasticity:32 gen:dense:2000,2000 --methods auto --precision f32 --out $W/mid-f32 > $W/mid-f32.txt 2> $W/mid-f32.err; echo "mid f32 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
grep "e2e run" $W/*.err | cut -c1-400 | head -60 >> $W/a.txt
tar -czf $OUT/a.tgz -C $W .
