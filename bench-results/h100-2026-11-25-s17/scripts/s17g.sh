#!/usr/bin/env bash
# Session 17, run G (the final code): the test executables the session's changes touch, and
# AUTO per product on the suite in f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
for t in unit gpu gpu_hola gpu_brc gpu_trial gpu_background gpu_check; do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 60 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/g.txt; done
(cd $B/tests && echo "gpu_hola memcheck: $(timeout 60 compute-sanitizer --tool memcheck ./gpu_hola brc_is_right --test-threads=1 2>&1 | tee $W/mc-gpu_hola.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/g.txt
echo "at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
timeout 150 $B/bin/tessera bench --suite --methods auto --precision both --steady --out $W/suite-steady > $W/suite-steady.txt 2>&1; echo "suite steady rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/g.txt
grep geomean $W/suite-steady.txt | cut -c1-200 | tee -a $W/g.txt
tar -czf $OUT/g.tgz -C $W .
