#!/usr/bin/env bash
# Session 30, run O (the final code: TILE's early Dns loads in f64 built in): every GPU test
# executable, the C GPU test, memcheck of gpu_tile; AUTO end to end on dense 2000² and the
# random 3000² at 53% (f64, f32).
cd "$(dirname "$0")/../../.."
W=/tmp/o; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/o.txt
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/o.txt; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?" | tee -a $W/o.txt; }
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_tile > $W/memcheck.txt 2>&1; echo "memcheck gpu_tile rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/o.txt
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
timeout 120 $B/bin/tessera bench gen:dense:2000,2000 gen:random:3000,3000,1600,7 --methods auto --precision both --out $W/e2e > $W/e2e.txt 2>&1; echo "e2e rc=$? at $(el)s" | tee -a $W/o.txt
grep -E " auto:" $W/e2e.txt | awk 'NF>20{print $1, $2, $3, "borrow", $17,$18,$19,$20,$21} NF<20 && NF>10{print $1, $4, "steady", $6, $8, $9}' | tee -a $W/o.txt
rm -f $W/*/*.svg; tar -czf $OUT/o.tgz -C $W .
