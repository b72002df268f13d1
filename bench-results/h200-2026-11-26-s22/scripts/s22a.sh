#!/usr/bin/env bash
# Session 22, run A (7a87f2e: session 21's code, never run on a GPU before): every test
# executable of the bundle; gpu_import under memcheck with the copy-free host import
# (TESSERA_HOST_IMPORT=direct); `gpu-run ab-host` (the host-array tests with direct, then the
# shared matrices end to end from host arrays, default vs direct, alternating, two rounds); the
# allocation experiment notes/experiments/alloc_reuse.cpp.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
(cd gpu-carry && g++ -O2 -std=c++17 alloc_reuse.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -o /tmp/alloc_reuse && /tmp/alloc_reuse > $W/alloc_reuse.txt 2>&1; echo "alloc_reuse rc=$?" | tee -a $W/a.txt)
for t in $(ls $B/tests); do [ $(( $(date +%s)-T0 )) -gt 250 ] && { echo "$t not run: time" | tee -a $W/a.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/a.txt; done
(cd $B/tests && echo "gpu_import memcheck direct: $(TESSERA_HOST_IMPORT=direct timeout 100 compute-sanitizer --tool memcheck ./gpu_import --test-threads=1 2>&1 | tee $W/mc-gpu_import.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/a.txt
OUT=$W/ab timeout $(( 585-($(date +%s)-T0) )) $B/run ab-host > $W/ab-host.txt 2>&1; echo "ab-host rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
tar -czf $OUT/a.tgz -C $W .
echo; cat $W/alloc_reuse.txt; tail -n 45 $W/ab-host.txt
