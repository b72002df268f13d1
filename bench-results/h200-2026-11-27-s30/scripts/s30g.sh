#!/usr/bin/env bash
# Session 30, run G (the final code: 9a87cbe's library, built before the commit's formatting):
# the suite in f64 and f32, as session 29's run H ran it.
cd "$(dirname "$0")/../../.."
W=/tmp/g; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/g.txt
for p in f64 f32; do timeout 280 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/g.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/g.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
