#!/usr/bin/env bash
# Session 27, run H (2fa5462, the copies waited for once): gpu_import, gpu, gpu_faults, gpu_borrow;
# gpu_import under memcheck.
cd "$(dirname "$0")/../../.."
W=/tmp/h; B=/tmp/hb; mkdir -p $W $B; tar -xJf gpu-carry/h.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
for t in gpu_import gpu gpu_faults gpu_borrow; do timeout 200 $B/$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/h.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
timeout 200 compute-sanitizer --tool memcheck --leak-check full $B/gpu_import --test-threads=1 > $W/memcheck-gpu_import.log 2>&1; echo "memcheck gpu_import rc=$? at $(el)s $(grep -E 'ERROR SUMMARY|test result' $W/memcheck-gpu_import.log | tr '\n' ' ')" | tee -a $W/h.txt
tar -czf $OUT/h.tgz -C $W .
