#!/usr/bin/env bash
# Session 13, run C: gpu_background three times (a capture invalidated once in run B), gpu_check,
# the first products' timelines (TESSERA_TRACE=2), and the six matrices.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/c; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/c.txt
(cd $B/tests && for t in gpu_background gpu_background gpu_background gpu_check; do echo "$t: $(timeout 150 ./$t 2>&1 | tee -a $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/c.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/bayer10.mtx.xz $M/Pd.mtx.xz $M/as-caida20071105.mtx.xz $M/watt_2.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?" | tee -a $W/c.txt
grep -E 'from Borrowed|borrow .*queued|outcome read|analyze: hola in|HOLA set-up|check: sound|pointer queries' $W/trace.txt | tail -40 | tee -a $W/c.txt
timeout 150 $B/bin/tessera bench $M/bayer10.mtx.xz $M/as-caida20071105.mtx.xz $M/watt_2.mtx.xz $M/Pd.mtx.xz $M/n1024-l1.mtx.xz gen:lap3d7:160 --methods auto --precision f64 --out $W/b6 > $W/b6.txt 2>&1; echo "bench rc=$?" | tee -a $W/c.txt
grep -E 'auto:|cusparse' $W/b6.txt | grep -v '^\S+ +[0-9]' | cut -c1-200 | tail -18 | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
