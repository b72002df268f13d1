#!/usr/bin/env bash
# Session 13, run D: every GPU test (gpu-bundle/run tests), gpu_faults and gpu_soak, then the
# first products' timelines and the six matrices.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/d.txt
OUT=$W/tests timeout 330 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$?" | tee -a $W/d.txt
tail -25 $W/run-tests.txt | tee -a $W/d.txt
export TESSERA_BIN=$B/bin/tessera
M=$B/matrices
TESSERA_TRACE=2 timeout 60 $B/bin/tessera bench $M/bayer10.mtx.xz $M/watt_2.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?" | tee -a $W/d.txt
grep -E 'from Borrowed|borrow .*queued|outcome read|analyze: |HOLA set-up|check: sound|pointer queries' $W/trace.txt | tail -16 | tee -a $W/d.txt
timeout 120 $B/bin/tessera bench $M/bayer10.mtx.xz $M/as-caida20071105.mtx.xz $M/watt_2.mtx.xz $M/Pd.mtx.xz $M/n1024-l1.mtx.xz gen:lap3d7:160 --methods auto --precision f64 --out $W/b6 > $W/b6.txt 2>&1; echo "bench rc=$?" | tee -a $W/d.txt
grep -E 'auto:|cusparse' $W/b6.txt | grep -v '^\S+ +[0-9]' | cut -c1-200 | tail -18 | tee -a $W/d.txt
tar -czf $OUT/d.tgz -C $W .
