#!/usr/bin/env bash
# Session 20, run B: TESSERA_TRACE=2 on two small matrices (where the borrowed first product's
# create goes), and `tessera overhead`.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
T=$B/bin/tessera
TESSERA_TRACE=2 timeout 60 $T bench Pd watt_2 --methods auto --precision f64 --out $W/small > $W/small.txt 2> $W/small.err; echo "small rc=$?"
timeout 60 $T overhead > $W/overhead.txt 2>&1; echo "overhead rc=$?"; tail -15 $W/overhead.txt
grep -E "borrow|Borrowed|analyze|check" $W/small.err | head -70 | cut -c1-220
tar -czf $OUT/b.tgz -C $W .
