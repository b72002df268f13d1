#!/usr/bin/env bash
# Session 12, run A: the first product's timeline (TESSERA_TRACE=2) of AUTO from device arrays
# read in place, against cuSPARSE's, on small and large matrices. Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
M=$B/matrices
TESSERA_TRACE=2 timeout 250 $B/bin/tessera bench $M/bayer10.mtx.xz $M/watt_2.mtx.xz $M/cit-HepPh.mtx.xz $M/arrow.mtx.xz $M/n1024-l1.mtx.xz gen:lap3d7:160 gen:stencil27:100 gen:emptyrows:1000000,16,1 gen:dense:2000,2000 gen:circuit:1000000,5,4,100000,1 --methods auto --precision f64 --out $W/bench > $W/trace.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|e2e first|inspect|cuMemAlloc|analyze:|borrow " $W/trace.txt | grep -vE "from (Device|Host)\b" | awk '/^\[/{n=0} {n++; if (n<60) print}' | cut -c1-200 | head -300
tar -czf $OUT/a.tgz -C $W .
