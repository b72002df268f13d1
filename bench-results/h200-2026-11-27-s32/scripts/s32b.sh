#!/usr/bin/env bash
# Session 32, run B: a sample that a product on another stream interrupts is given up without
# touching that stream (run A's gpu_background segfault: a closing sample recorded its end
# event on a stream the test's thread had destroyed). Every GPU test executable, the C GPU test,
# gpu_background, gpu_threads and gpu_trial three times more, memcheck of gpu_trial and
# gpu_background; then the suite in f64 and f32 (as session 31's run D) and its summary.
cd "$(dirname "$0")/../../.."
W=/tmp/b; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/b.txt
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/b.txt; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?" | tee -a $W/b.txt; }
for r in 2 3 4; do for t in gpu_background gpu_threads gpu_trial; do timeout 200 $B/tests/$t > $W/t-$t-$r.txt 2>&1; echo "$t round $r rc=$? $(grep -E 'test result' $W/t-$t-$r.txt)" | tee -a $W/b.txt; done; done
for t in gpu_trial gpu_background; do timeout 250 compute-sanitizer --tool memcheck $B/tests/$t > $W/memcheck-$t.txt 2>&1; echo "memcheck $t rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck-$t.txt | tr '\n' ' ')" | tee -a $W/b.txt; done
grep -h -E "panicked|Segmentation" -A4 $W/t-*.txt | head -20
for p in f64 f32; do timeout 280 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/b.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/b.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
