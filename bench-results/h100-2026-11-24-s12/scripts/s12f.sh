#!/usr/bin/env bash
# Session 12, run F: the inspection at full occupancy. Its tests and memcheck, the kernel under
# ncu, the first product's timeline, then the suite end to end in f64 (AUTO).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/f; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/f.txt
(cd $B/tests && for t in gpu_import gpu_borrow gpu_borrow_c gpu_background; do echo "$t: $(timeout 200 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked|FAILED' | tr '\n' ' ')"; done) | tee -a $W/f.txt
(cd $B/tests && for t in "gpu_import the_borrowed" "gpu_borrow_c"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | tee $W/memcheck.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee -a $W/f.txt
M=$B/matrices
for m in gen:lap3d7:160 $M/bayer10.mtx.xz; do
  timeout 100 ncu --kernel-name regex:"util_inspect" --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy $B/bin/tessera bench $m --methods csr_vector --precision f64 > $W/ncu-$(basename $m).txt 2>&1
  echo "ncu $m: $(grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Grid Size" $W/ncu-$(basename $m).txt | sed 's/  */ /g' | tr '\n' ';')"
done | tee -a $W/f.txt
TESSERA_TRACE=2 timeout 150 $B/bin/tessera bench $M/bayer10.mtx.xz $M/cit-HepPh.mtx.xz gen:lap3d7:160 gen:stencil27:100 --methods auto --precision f64 --out $W/bench > $W/trace.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|from Borrowed|inspection of" $W/trace.txt | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<6) print}'
timeout 200 $B/bin/tessera bench --suite --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$?"
grep 'end-to-end geomean' $W/suite-f64.txt | cut -c1-420
tar -czf $OUT/f.tgz -C $W .
