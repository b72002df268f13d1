#!/usr/bin/env bash
# Session 18, run G (final code): tests, AUTO on the elasticity family per product and end to
# end (both types), and the suite end to end in f64 with elasticity 32³ and 40³.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
for t in gpu_sliced gpu_trial gpu gpu_check unit; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/g.txt; done
timeout 200 $T bench gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48 gen:elasticity:56 --methods auto --precision both --out $W/elast > $W/elast.txt 2>&1; echo "elasticity rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
grep -E "auto:|geomean" $W/elast.txt | cut -c1-250 | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
timeout 200 $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
grep -E 'geomean' $W/suite-f64.txt | cut -c1-420 | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
