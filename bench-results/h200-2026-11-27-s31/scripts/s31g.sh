#!/usr/bin/env bash
# Session 31, run G (the final code: TILE as the trial's candidate between half dense and its
# f64 floor, the first trial favouring the new form as before): every GPU test executable, the
# C GPU test, memcheck of gpu_trial; AUTO end to end on the bands and random 3000² at 53 / 60%,
# f64 and f32.
cd "$(dirname "$0")/../../.."
W=/tmp/g; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)"
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)"; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?"; }
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
timeout 200 compute-sanitizer --tool memcheck $B/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')"
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench gen:band:3000,900,900 gen:band:2000,700,700 gen:random:3000,3000,1600,7 gen:random:3000,3000,1800,7 --methods auto --precision $p --out $W/e2e-$p > $W/e2e-$p.txt 2>&1
  echo "e2e $p rc=$? at $(el)s"
  grep -E " auto:" $W/e2e-$p.txt | awk 'NF>20{print "  ",$1, $3, "borrow N=1..10k", $17,$18,$19,$20,$21} NF<20 && NF>10{print "  ",$1, $5, "spmv_ms", $7, "cusp", $8, "speedup", $9}'
  python3 -c "
import csv
for r in csv.DictReader(open('$W/e2e-$p/bench.csv')):
  if r['method'].startswith('auto'): print('   ', r['matrix'], r['params'][r['params'].find('trial'):][:150])
"
done
rm -f $W/*/*.svg; tar -czf $OUT/g.tgz -C $W .
