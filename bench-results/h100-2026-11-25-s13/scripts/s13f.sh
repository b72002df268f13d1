#!/usr/bin/env bash
# Session 13, run F: the provisional HOLA in the check's slot: tests (and memcheck), the first
# products' timelines, and the suite end to end in f64.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/f; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/f.txt
(cd $B/tests && for t in unit gpu_check gpu_hola gpu_import gpu_borrow_c gpu_borrow gpu_background; do echo "$t: $(timeout 120 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/f.txt
(cd $B/tests && echo "gpu_check memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/f.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 60 $B/bin/tessera bench $M/bayer10.mtx.xz $M/watt_2.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?" | tee -a $W/f.txt
grep -E 'from Borrowed|borrow .*queued|outcome read|analyze: |check: sound' $W/trace.txt | tail -12 | tee -a $W/f.txt
timeout 200 $B/bin/tessera bench --suite --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$?" | tee -a $W/f.txt
grep 'end-to-end geomean' $W/suite-f64.txt | cut -c1-420 | tee -a $W/f.txt
tar -czf $OUT/f.tgz -C $W .
