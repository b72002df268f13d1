#!/usr/bin/env bash
# Session 12, run B: the one-kernel inspection. Its tests (and the borrowed and background
# ones), memcheck of the new test, and the first product's timeline. Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/b.txt
(cd $B/tests && for t in gpu_import gpu_borrow gpu_borrow_c gpu_background; do echo "$t: $(timeout 200 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked|FAILED' | tr '\n' ' ')"; done) | tee -a $W/b.txt
(cd $B/tests && echo "memcheck: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_import the_borrowed_inspection 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/b.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 200 $B/bin/tessera bench $M/bayer10.mtx.xz $M/watt_2.mtx.xz $M/cit-HepPh.mtx.xz gen:lap3d7:160 gen:stencil27:100 gen:circuit:1000000,5,4,100000,1 --methods auto --precision f64 --out $W/bench > $W/trace.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|from Borrowed|inspection of|cuSPARSE ALG_DEFAULT" $W/trace.txt | grep -v "^tessera: cuMemAlloc" | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<16) print}'
sed -n '/end to end/,$p' $W/trace.txt | head -30
tar -czf $OUT/b.tgz -C $W .
