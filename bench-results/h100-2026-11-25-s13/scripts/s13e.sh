#!/usr/bin/env bash
# Session 13, run E: the tests that failed in run D (unit, gpu, gpu_faults, gpu_soak) and the
# deferred check's tests with memcheck, then the suite end to end in f64 and f32 (AUTO).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
W=/tmp/e; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/e.txt
(cd $B/tests && for t in unit gpu gpu_faults gpu_soak gpu_check gpu_background; do echo "$t: $(timeout 120 ./$t 2>&1 | tee $W/$t.log | grep -E 'test result|panicked' | tr '\n' ' ')"; done) | tee -a $W/e.txt
(cd $B/tests && echo "gpu_check memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/e.txt
for p in f64 f32; do
  timeout 170 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep 'end-to-end geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
