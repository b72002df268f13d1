#!/usr/bin/env bash
# Session 31, run D (the final code, 54c3571's bundle): every GPU test executable, the C GPU
# test; the suite in f64 and f32 (as session 30's run G ran it) and its summary.
cd "$(dirname "$0")/../../.."
W=/tmp/d; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/d.txt
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/d.txt; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?" | tee -a $W/d.txt; }
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
for p in f64 f32; do timeout 280 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/d.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/d.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
