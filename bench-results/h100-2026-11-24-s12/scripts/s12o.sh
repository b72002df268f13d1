#!/usr/bin/env bash
# Session 12, run O: the inspection's 16-byte loads. Its tests and memcheck, ncu, a timeline.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/o; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/o.txt
(cd $B/tests && for t in gpu_import gpu_borrow gpu_borrow_c gpu_background gpu; do echo "$t: $(timeout 200 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/o.txt
(cd $B/tests && for t in "gpu_import the_borrowed" "gpu_borrow_c"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee -a $W/o.txt
M=$B/matrices
for m in gen:lap3d7:160 gen:stencil27:100 gen:circuit:1000000,5,4,100000,1 $M/bayer10.mtx.xz; do
  timeout 100 ncu --kernel-name regex:"util_inspect" --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy $B/bin/tessera bench $m --methods csr_vector --precision f64 > $W/ncu-$(basename $m).txt 2>&1
  echo "ncu $m: $(grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Grid Size" $W/ncu-$(basename $m).txt | sed 's/  */ /g' | tr '\n' ';')"
done | tee -a $W/o.txt
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench gen:lap3d7:160 gen:uniform:1000000,16,1 --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?"
grep -E "^\[|from Borrowed|inspection of" $W/trace.txt | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<8) print}'
sed -n '/end to end/,$p' $W/trace.txt | grep -E "auto:" | cut -c1-30,100-220
tar -czf $OUT/o.tgz -C $W .
