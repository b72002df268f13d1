#!/usr/bin/env bash
# Session 27, run E (the final code): every test executable, gpu_import under compute-sanitizer
# memcheck, and the suite (25 matrices) in f64 and f32.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/e; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
echo "# commit $(git log -1 --format=%h 2>/dev/null) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/e.txt
for t in $(ls $B/tests); do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/e.txt; done
grep -h -E "panicked|FAILED" -A3 $W/t-*.txt | head -20
(cd $B/tests && timeout 200 compute-sanitizer --tool memcheck --leak-check full ./gpu_import --test-threads=1 > $W/memcheck-gpu_import.log 2>&1; echo "memcheck gpu_import rc=$? at $(el)s $(grep -E 'ERROR SUMMARY|test result' $W/memcheck-gpu_import.log | tr '\n' ' ')") | tee -a $W/e.txt
for p in f64 f32; do
  [ $(el) -lt 430 ] && { timeout $(( 575-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/e.txt; }
done
rm -f $W/*/*.svg; tar -czf $OUT/e.tgz -C $W .
for p in f64 f32; do ls $W/suite-$p/bench.csv >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-$p/bench.csv | head -40; done
