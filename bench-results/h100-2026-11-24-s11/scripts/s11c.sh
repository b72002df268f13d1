#!/usr/bin/env bash
# Session 11, run C: why AUTO's swapped-in BRC times slower than BRC named (lap3d7:64,
# stencil27:48), and where a borrowed first product's time goes (TESSERA_TRACE).
cd "$(dirname "$0")/.."
tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
cp gpu-carry/c/tessera $B/bin/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
T=$B/bin/tessera
for i in 1 2; do
$T bench gen:lap3d7:64 gen:stencil27:48 --methods auto,brc,csr_vector --steady --repeat 15 2>/dev/null | grep -E '^gen' | awk "{print \"A\", \$1, \$5, \$7}"
TESSERA_BACKGROUND_BUILD=0 $T bench gen:lap3d7:64 gen:stencil27:48 --methods auto --steady --repeat 15 2>/dev/null | grep -E '^gen' | awk "{print \"B0\", \$1, \$5, \$7}"
TESSERA_BACKGROUND_AFTER=0 $T bench gen:lap3d7:64 gen:stencil27:48 --methods brc,auto --steady --repeat 15 2>/dev/null | grep -E '^gen' | awk "{print \"C\", \$1, \$5, \$7}"
done
TESSERA_TRACE=1 $T bench $B/matrices/bayer10.mtx.xz $B/matrices/cit-HepPh.mtx.xz gen:lap3d7:160 gen:elasticity:48 --methods auto > $OUT/trace.txt 2>&1
grep -E 'borrow|analyze|create' $OUT/trace.txt | sort | uniq -c | sort -rn | head -40
