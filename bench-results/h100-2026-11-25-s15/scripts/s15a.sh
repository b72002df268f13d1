#!/usr/bin/env bash
# Session 15, run A: the first product's timeline (TESSERA_TRACE=2) on the small HOLA matrices
# and two large ones, f64, arrays read in place.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/a.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 200 $B/bin/tessera bench $M/as-caida20071105.mtx.xz $M/cit-HepPh.mtx.xz $M/Groebner_id2003_aug.mtx.xz $M/watt_2.mtx.xz $M/bayer10.mtx.xz gen:lap3d7:160 gen:uniform:1000000,16,1 --methods auto --precision f64 > $W/trace.txt 2>&1
echo "rc=$?" | tee -a $W/a.txt
grep -v cuMemAlloc $W/trace.txt | grep -E 'Borrowed|borrow|deferred|outcome|analyze|HOLA set-up|e2e first product of cuSPARSE ALG_DEFAULT without|loaded' | cut -c1-220 | tee -a $W/a.txt | tail -150
tar -czf $OUT/a.tgz -C $W .
