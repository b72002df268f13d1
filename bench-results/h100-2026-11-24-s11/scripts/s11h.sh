#!/usr/bin/env bash
# Session 11, run H (commit in gpu-bundle/COMMIT): every GPU test, memcheck of the new BRC
# device build and the borrowed create, the suite end to end in f64 and f32. Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/h; mkdir -p $W
OUT=$W/tests timeout 300 $B/run tests > $W/tests.txt 2>&1; echo "tests rc=$?"
sed -n '/== summary/,$p' $W/tests.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_brc brc_gpu_builds_an_ell 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') | tee $W/memcheck.txt; echo
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep geomean $W/suite-$p.txt | cut -c1-420
done
tar -czf $OUT/h.tgz -C $W .
