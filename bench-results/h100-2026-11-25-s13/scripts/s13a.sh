#!/usr/bin/env bash
# Session 13, run A: the deferred check's tests (and memcheck), the borrowed/import/HOLA/background
# tests, then the first product of a few matrices read in place, deferred check against TESSERA_CHECK=sync.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/a; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/a.txt
(cd $B/tests && for t in gpu_check gpu_borrow_c gpu_import gpu_borrow gpu_hola gpu_background; do echo "$t: $(timeout 150 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/a.txt
(cd $B/tests && for f in malformed products_right; do echo "gpu_check $f memcheck: $(TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck ./gpu_check $f --test-threads=1 2>&1 | tee $W/mc-$f.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee -a $W/a.txt
M=$B/matrices
for mode in deferred sync; do
  if [ $mode = sync ]; then export TESSERA_CHECK=sync; fi
  timeout 150 $B/bin/tessera bench $M/bayer10.mtx.xz $M/as-caida20071105.mtx.xz $M/watt_2.mtx.xz $M/Pd.mtx.xz $M/n1024-l1.mtx.xz gen:lap3d7:160 --methods auto --precision f64 --out $W/b-$mode > $W/b-$mode.txt 2>&1; echo "bench $mode rc=$?"
done | tee -a $W/a.txt
unset TESSERA_CHECK
tar -czf $OUT/a.tgz -C $W .
