#!/usr/bin/env bash
# Session 22, run E (96aaccf: tessera_release_cached_memory): `gpu-bundle/run tests` (every
# Rust test executable, the C GPU test, bad_args with a GPU present, api_basic), the new pool
# test also with TESSERA_ALLOC_POOL=0 and under memcheck; TESSERA_TRACE=3 on three small
# matrices from host arrays (where the first product's time goes).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/e; mkdir -p $W
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/e.txt
OUT=$W/tests timeout 400 $B/run tests > $W/run-tests.txt 2>&1; echo "run tests rc=$? at $(el)s" | tee -a $W/e.txt
P=a_destroyed_matrix_leaves_its_memory_in_the_pool_until_it_is_released
(cd $B/tests && echo "pool test: $(timeout 60 ./gpu $P --test-threads=1 --nocapture 2>&1 | grep -E 'free:|test result' | tr '\n' ' ')") | tee -a $W/e.txt
(cd $B/tests && echo "pool test, TESSERA_ALLOC_POOL=0: $(TESSERA_ALLOC_POOL=0 timeout 60 ./gpu $P --test-threads=1 --nocapture 2>&1 | grep -E 'free:|test result' | tr '\n' ' ')") | tee -a $W/e.txt
(cd $B/tests && echo "pool test memcheck: $(timeout 120 compute-sanitizer --tool memcheck --leak-check full ./gpu $P --test-threads=1 2>&1 | tee $W/mc-pool.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/e.txt
TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench zenios watt_2 as-caida20071105 --methods auto --precision f64 > $W/trace3-host.txt 2>&1; echo "trace rc=$? at $(el)s" | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
tail -n 32 $W/run-tests.txt
grep "e2e first from Host to the synchronize" $W/trace3-host.txt | tail -n 3 | cut -c1-900
