#!/usr/bin/env bash
# Session 12, run N: where HOLA's set-up spends its time on small matrices (TESSERA_TRACE=2).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/n; mkdir -p $W
M=$B/matrices
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/watt_2.mtx.xz $M/adder_dcop_05.mtx.xz $M/cit-HepPh.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1; echo "rc=$?"
grep -E "^\[|HOLA set-up|analyze: hola|from Borrowed" $W/trace.txt | awk '/^\[/{n=0} {n++; if (n<16) print}' | cut -c1-200
tar -czf $OUT/n.tgz -C $W .
