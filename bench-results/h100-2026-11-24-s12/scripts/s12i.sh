#!/usr/bin/env bash
# Session 12, run I: the device build after its products (ski rental), the first product's
# timeline, the suite end to end in f64 (AUTO).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/i; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/i.txt
(cd $B/tests && for t in gpu_brc gpu_background gpu_borrow_c; do echo "$t: $(timeout 200 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/i.txt
M=$B/matrices
TESSERA_TRACE=2 timeout 150 $B/bin/tessera bench $M/bayer10.mtx.xz gen:lap3d7:160 --methods auto --precision f64 --out $W/bench > $W/trace.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|from Borrowed|inspection of|pointer queries|borrow " $W/trace.txt | cut -c1-180 | awk '/^\[/{n=0} {n++; if (n<14) print}'
timeout 200 $B/bin/tessera bench --suite --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$?"
grep 'end-to-end geomean' $W/suite-f64.txt | cut -c1-420
sed -n '/end to end/,$p' $W/suite-f64.txt | grep -E "auto:" | cut -c1-30,100-220
tar -czf $OUT/i.tgz -C $W .
