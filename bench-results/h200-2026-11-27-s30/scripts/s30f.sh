#!/usr/bin/env bash
# Session 30, run F (the trial's wait on the predicted form, 889db8d + the change): every GPU
# test executable and the C GPU test; memcheck of gpu_trial.
cd "$(dirname "$0")/../../.."
W=/tmp/f; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/f.txt
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/f.txt; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?" | tee -a $W/f.txt; }
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/f.txt
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
tar -czf $OUT/f.tgz -C $W .
