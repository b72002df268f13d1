#!/usr/bin/env bash
# Session 29, run H (1813aad, the final code): every GPU test executable, the C GPU test, and
# memcheck of gpu_pieces; then the suite in f64 and f32 (read in place and the rest, as run K of
# session 28 ran it) to check that nothing outside the pieces mode's range moved.
cd "$(dirname "$0")/../../.."
W=/tmp/h; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/h.txt
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/h.txt; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?" | tee -a $W/h.txt; }
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_pieces > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/h.txt
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
for p in f64 f32; do timeout 240 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/h.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/h.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
