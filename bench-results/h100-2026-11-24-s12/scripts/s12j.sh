#!/usr/bin/env bash
# Session 12, run J (final code): every GPU test, memcheck of the inspection, borrowed,
# background and HOLA tests, the first product's timeline, the suite end to end in f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/j; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/j.txt
OUT=$W/tests timeout 240 $B/run tests > $W/tests.txt 2>&1; echo "tests rc=$?" | tee -a $W/j.txt
sed -n '/== summary/,$p' $W/tests.txt | grep -vE ' ok ' | tee -a $W/j.txt
echo "steps ok: $(sed -n '/== summary/,$p' $W/tests.txt | grep -cE ' ok ')" | tee -a $W/j.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && for t in "gpu_import the_borrowed" "gpu_background" "gpu_borrow_c" "gpu_hola"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee -a $W/j.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/bayer10.mtx.xz $M/watt_2.mtx.xz gen:lap3d7:160 --methods auto --precision f64 > $W/trace.txt 2>&1; echo "trace rc=$?"
grep -E "^\[|from Borrowed|inspection of|analyze:" $W/trace.txt | grep -v "from Host\|from Device" | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<14) print}' | tail -30
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep 'end-to-end geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/j.txt
tar -czf $OUT/j.tgz -C $W .
