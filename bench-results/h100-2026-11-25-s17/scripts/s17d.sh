#!/usr/bin/env bash
# Session 17, run D: the matrix arrays read with evict-first loads (__ldcs, the kernels as they
# are) against plain __ldg (gpu-carry/v1: brc.cu and hola.cu with every __ldcs replaced, loaded
# through TESSERA_KERNELS_DIR), per product, matrices around the L2's size and large ones.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
M="gen:lap3d7:64 gen:stencil27:48 gen:grid2d:725 gen:uniform:100000,32,1 gen:uniform:200000,16,1 gen:lap3d7:100 gen:powerlaw:18,16,1 gen:elasticity:32 cit-HepPh as-caida20071105 gen:lap3d7:160 gen:uniform:1000000,16,1 gen:stencil27:100 gen:emptyrows:1000000,16,1"
for V in base v1 base2 v1b; do
  case $V in v1|v1b) export TESSERA_KERNELS_DIR=$PWD/gpu-carry/v1 ;; *) unset TESSERA_KERNELS_DIR ;; esac
  ms=auto,brc,hola; [ $V = base2 -o $V = v1b ] && ms=brc,hola,auto
  timeout 130 $B/bin/tessera bench $M --methods $ms --precision both --steady --csv $W/$V.csv > $W/$V.txt 2>&1
  echo "$V ($ms) rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/d.txt
  tar -czf $OUT/d.tgz -C $W .
done
