#!/usr/bin/env bash
# Session 13, run B: the deferred check's tests after the capture fix (and memcheck), the first
# products' timelines (TESSERA_TRACE=2), and the six matrices again.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/b; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/b.txt
(cd $B/tests && for t in gpu_check gpu_borrow_c gpu_background; do echo "$t: $(timeout 150 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/b.txt
(cd $B/tests && for f in a_sound with_every; do echo "gpu_check $f memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_check $f --test-threads=1 2>&1 | tee $W/mc-$f.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee -a $W/b.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/bayer10.mtx.xz $M/Pd.mtx.xz $M/as-caida20071105.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?" | tee -a $W/b.txt
timeout 150 $B/bin/tessera bench $M/bayer10.mtx.xz $M/as-caida20071105.mtx.xz $M/watt_2.mtx.xz $M/Pd.mtx.xz $M/n1024-l1.mtx.xz gen:lap3d7:160 --methods auto --precision f64 --out $W/b6 > $W/b6.txt 2>&1; echo "bench rc=$?" | tee -a $W/b.txt
grep -E 'auto:' $W/b6.txt | cut -c1-200 | tee -a $W/b.txt
tar -czf $OUT/b.tgz -C $W .
