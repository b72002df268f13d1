#!/usr/bin/env bash
# Session 23, run I (the review's code): every test executable; gpu_tile under memcheck and its
# device-build test under racecheck; dense 2000² end to end, f32 and f64.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/i; mkdir -p $W
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/i.txt
for t in $(ls $B/tests); do (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/i.txt; done
grep -h -E "panicked|FAILED" $W/t-*.txt | head -20
(cd $B/tests && echo "gpu_tile memcheck: $(TESSERA_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --leak-check full ./gpu_tile --test-threads=1 2>&1 | tee $W/memcheck-gpu_tile.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/i.txt
(cd $B/tests && echo "gpu_tile device build racecheck: $(TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool racecheck ./gpu_tile device_build_writes --test-threads=1 2>&1 | tee $W/racecheck-gpu_tile.log | grep -E 'RACECHECK SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/i.txt
(timeout 30 $B/c/gpu_api > $W/c_gpu_api.txt 2>&1; echo "c_gpu_api rc=$? $(tail -n1 $W/c_gpu_api.txt)") | tee -a $W/i.txt
for p in f32 f64; do timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision $p --out $W/dense-$p > /dev/null 2>&1; done
tar -czf $OUT/i.tgz -C $W .
for p in f32 f64; do echo "dense $p $(python3 scripts/e2e_summary.py $W/dense-$p/bench.csv | grep 'in place')"; done
