#!/usr/bin/env bash
# Session 12, run C: the tiled inspection. Tests, memcheck, ncu kernel durations (inspection
# against the import's two kernels), the first product's timeline. Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/c.txt
(cd $B/tests && for t in gpu_import gpu_borrow gpu_borrow_c gpu_background; do echo "$t: $(timeout 200 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked|FAILED' | tr '\n' ' ')"; done) | tee -a $W/c.txt
(cd $B/tests && echo "memcheck: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_import the_borrowed_inspection 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/c.txt
M=$B/matrices
for m in gen:lap3d7:160 gen:circuit:1000000,5,4,100000,1 $M/bayer10.mtx.xz; do
  timeout 120 ncu --kernel-name regex:"util_inspect|util_import" --launch-count 6 --metrics gpu__time_duration.sum $B/bin/tessera bench $m --methods csr_vector --precision f64 > $W/ncu-$(basename $m).txt 2>&1
  echo "ncu $m: $(grep -E 'util_(inspect|import)|gpu__time_duration' $W/ncu-$(basename $m).txt | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-900)"
done | tee -a $W/c.txt
TESSERA_TRACE=2 timeout 200 $B/bin/tessera bench $M/bayer10.mtx.xz $M/watt_2.mtx.xz $M/cit-HepPh.mtx.xz gen:lap3d7:160 gen:stencil27:100 gen:circuit:1000000,5,4,100000,1 --methods auto --precision f64 --out $W/bench > $W/trace.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|from Borrowed|inspection of" $W/trace.txt | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<9) print}'
sed -n '/end to end/,$p' $W/trace.txt | grep -E "auto:|matrix" | cut -c1-30,100-220
tar -czf $OUT/c.tgz -C $W .
