#!/usr/bin/env bash
# Session 30, run P (the final code: the trial's short margin = the host's part of a call over
# the product, 1-25%): gpu_trial and gpu_tile; AUTO end to end on the random 3000² at 53% and
# dense 2000², f64.
cd "$(dirname "$0")/../../.."
W=/tmp/p; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
for t in gpu_trial gpu_tile gpu_background; do timeout 100 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/t-$t.txt)"; done
timeout 100 $B/bin/tessera bench gen:random:3000,3000,1600,7 gen:dense:2000,2000 --methods auto --precision f64 --out $W/e2e > $W/e2e.txt 2>&1; echo "e2e rc=$?"
grep -E " auto:" $W/e2e.txt | awk 'NF>20{print $1, $2, $3, "borrow", $17,$18,$19,$20,$21} NF<20 && NF>10{print $1, $4, "steady", $6, $8, $9}'
python3 -c "
import csv
for r in csv.DictReader(open('$W/e2e/bench.csv')):
    if r['method'].startswith('auto'): print(r['matrix'], r['params'][:160])
"
