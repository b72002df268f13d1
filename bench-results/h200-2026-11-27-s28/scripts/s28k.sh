#!/usr/bin/env bash
# Session 28, run K (38432d8, the final code): every GPU test executable, then the suite (25
# matrices) in f64 and f32 on the default stream.
cd "$(dirname "$0")/../../.."
W=/tmp/k; B=/tmp/kb; mkdir -p $W $B; tar -xJf gpu-carry/k.tar.xz -C $B
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tn
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/k.txt
for t in $(ls $B | grep -E '^gpu'); do timeout 150 $B/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/k.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
for p in f64 f32; do timeout 200 $B/tn bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/k.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/k.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
