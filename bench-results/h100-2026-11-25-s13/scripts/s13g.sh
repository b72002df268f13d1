#!/usr/bin/env bash
# Session 13, run G: gpu_check (and memcheck), then the first products' timelines of arrow, Pd
# and dense 2000^2 (TESSERA_TRACE=2).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/g; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/g.txt
(cd $B/tests && for t in gpu_check; do echo "$t: $(timeout 120 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/g.txt
(cd $B/tests && echo "gpu_check memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/g.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/arrow.mtx.xz $M/Pd.mtx.xz gen:dense:2000,2000 --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?" | tee -a $W/g.txt
grep -E 'from Borrowed|borrow .*queued|outcome read|analyze: |check: sound|HOLA set-up|deferred' $W/trace.txt | tail -40 | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
