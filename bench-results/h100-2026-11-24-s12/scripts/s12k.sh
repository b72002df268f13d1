#!/usr/bin/env bash
# Session 12, run K: the first product's timeline on the matrices still far behind at N = 1.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/k; mkdir -p $W
TESSERA_TRACE=2 timeout 200 $B/bin/tessera bench gen:dense:2000,2000 gen:grid2d:725 $B/matrices/adder_dcop_05.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?"
for m in dense grid2d adder; do echo "== $m"; awk -v m="$m" '/loaded/{f=($0 ~ m)} f' $W/trace.txt | grep -v "cuMemAlloc.*cuSPARSE\|cuMemAlloc.*vector" | grep -A7 "pointer queries" | tail -9 | cut -c1-200; done
grep -E "cuSPARSE ALG_DEFAULT (with|without)" $W/trace.txt | tail -4
tar -czf $OUT/k.tgz -C $W .
