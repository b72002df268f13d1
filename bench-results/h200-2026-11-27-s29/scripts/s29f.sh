#!/usr/bin/env bash
# Session 29, run F: a matrix read in place whose check's statistics choose the pieces mode now
# prepares it on a worker (light_build), where the product that started it prepared it inline
# (allocating in tessera_spmv). gpu_pieces' new test counts the caller thread's allocations on
# the way: with the fix (this bundle) and without it (gpu-carry/po.xz: the same tests built over
# the previous check.rs: it must fail there). Then the tests the change touches (gpu_pieces,
# gpu_check, gpu_borrow, gpu_sliced, gpu_background, gpu), memcheck of gpu_pieces.
cd "$(dirname "$0")/../../.."
W=/tmp/f; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
xz -dc gpu-carry/po.xz > /tmp/po && chmod +x /tmp/po
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/f.txt
timeout 100 /tmp/po products_on_the_way > $W/t-old.txt 2>&1; echo "old check.rs: rc=$? $(grep -E 'test result' $W/t-old.txt)" | tee -a $W/f.txt
grep -E "allocations on the caller" $W/t-old.txt | head -2 | tee -a $W/f.txt
for t in gpu_pieces gpu_check gpu_borrow gpu_sliced gpu_background gpu; do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/f.txt; done
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_pieces > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/f.txt
grep -h -E "panicked" -A4 $W/t-gpu*.txt | head -20
tar -czf $OUT/f.tgz -C $W .
