#!/usr/bin/env bash
# Session 12, run L (final code): the suite end to end in f64 and f32 (AUTO).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/l; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/l.txt
for p in f64 f32; do
  timeout 170 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep 'end-to-end geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/l.txt
tar -czf $OUT/l.tgz -C $W .
