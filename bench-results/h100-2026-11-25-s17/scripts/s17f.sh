#!/usr/bin/env bash
# Session 17, run F: the plain branch of tessera_matrix_load as __ldg (the code) against __ldcg
# (L2 only, gpu-carry/v2 through TESSERA_KERNELS_DIR), per product, HOLA, BRC and AUTO.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/f; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
M="gen:dense:2000,2000 gen:lap3d7:64 gen:stencil27:48 gen:grid2d:725 gen:uniform:200000,16,1 gen:elasticity:32 Pd n1024-l1 cit-HepPh watt_2 gen:lap3d7:100"
for V in ldg ldcg ldg2 ldcg2; do
  case $V in ldcg*) export TESSERA_KERNELS_DIR=$PWD/gpu-carry/v2 ;; *) unset TESSERA_KERNELS_DIR ;; esac
  timeout 100 $B/bin/tessera bench $M --methods auto,brc,hola --precision both --steady --csv $W/$V.csv > $W/$V.txt 2>&1
  echo "$V rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/f.txt
  tar -czf $OUT/f.tgz -C $W .
done
