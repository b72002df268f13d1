#!/usr/bin/env bash
# Session 12, run E: every GPU test (gpu-bundle/run tests), memcheck of the background, borrowed
# and inspection tests, the inspection kernel under ncu, the first product's timeline.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/e; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/e.txt
OUT=$W/tests timeout 300 $B/run tests > $W/tests.txt 2>&1; echo "tests rc=$?" | tee -a $W/e.txt
sed -n '/== summary/,$p' $W/tests.txt | grep -vE ' ok ' | tee -a $W/e.txt
echo "steps ok: $(sed -n '/== summary/,$p' $W/tests.txt | grep -cE ' ok ')" | tee -a $W/e.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && for t in "gpu_import the_borrowed" "gpu_background" "gpu_borrow_c"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee -a $W/e.txt
M=$B/matrices
for m in gen:lap3d7:160 $M/bayer10.mtx.xz; do
  timeout 100 ncu --kernel-name regex:"util_inspect" --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy $B/bin/tessera bench $m --methods csr_vector --precision f64 > $W/ncu-$(basename $m).txt 2>&1
  echo "ncu $m: $(grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Grid Size" $W/ncu-$(basename $m).txt | sed 's/  */ /g' | tr '\n' ';')"
done | tee -a $W/e.txt
TESSERA_TRACE=2 timeout 150 $B/bin/tessera bench $M/bayer10.mtx.xz $M/cit-HepPh.mtx.xz gen:lap3d7:160 gen:stencil27:100 --methods auto --precision f64 --out $W/bench > $W/trace.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|from Borrowed|inspection of|analyze:" $W/trace.txt | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<9) print}'
sed -n '/end to end/,$p' $W/trace.txt | grep -E "auto:|matrix" | cut -c1-30,100-220
tar -czf $OUT/e.tgz -C $W .
