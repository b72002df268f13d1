#!/usr/bin/env bash
# Session 18, run D (run C's bundle): CSR_VECTOR's best configuration (EXHAUSTIVE) on the
# random-gather matrices, and every method on the 3D elasticity family.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
timeout 240 $T bench gen:emptyrows:1000000,16,1 gen:uniform:1000000,16,1 gen:powerlaw:20,16,1 --methods csr_vector --tuning exhaustive --precision both --steady --csv $W/cv-exh.csv > $W/cv-exh.txt 2>&1; echo "cv exhaustive rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/d.txt
python3 -c "
import csv
for r in csv.DictReader(open('$W/cv-exh.csv')):
  print(r['matrix'][:24], r['type'], r['method'], round(float(r['spmv_ms'])*1000,1), r['params'][:120])
" | tee -a $W/d.txt
timeout 200 $T bench gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48 gen:elasticity:56 --methods all --precision both --steady --csv $W/elast.csv > $W/elast.txt 2>&1; echo "elasticity rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/d.txt
python3 -c "
import csv
for r in csv.DictReader(open('$W/elast.csv')):
  print(r['matrix'][:24], r['type'], r['method'], round(float(r['spmv_ms'])*1000,1), r['params'][:70])
" | tee -a $W/d.txt
tar -czf $OUT/d.tgz -C $W .
