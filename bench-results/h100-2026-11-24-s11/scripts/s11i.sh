#!/usr/bin/env bash
# Session 11, run I (commit in gpu-bundle/COMMIT): the BRC and borrowed tests (and memcheck of
# the device ELL build), the suite end to end in f64 and f32, and the training set and the
# suite with every method (per product: AUTO's hit rate in one run). Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/i; mkdir -p $W
(cd $B/tests && for t in gpu_brc gpu_borrow_c gpu_background gpu_import; do echo "$t: $(timeout 120 ./$t --test-threads=1 2>&1 | grep -E 'test result|panicked' | head -3)"; done
 echo "memcheck: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_brc brc_gpu_builds_an_ell 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee $W/tests.txt
for p in f64 f32; do
  timeout 120 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep geomean $W/suite-$p.txt | cut -c1-420
done
TESSERA=$B/bin/tessera timeout 150 scripts/auto-training run $W/train; echo "train rc=$?"
timeout 150 $B/bin/tessera bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$?"
tar -czf $OUT/i.tgz -C $W .
