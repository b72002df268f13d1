#!/usr/bin/env bash
# Session 15, run E (final code): the suite end to end in f64 and f32 (AUTO), then the suite
# per product with every method (AUTO's hit rate).
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/e; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/e.txt
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep -E 'geomean' $W/suite-$p.txt | cut -c1-420
done | tee -a $W/e.txt
timeout 250 $B/bin/tessera bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$?" | tee -a $W/e.txt
grep geomean $W/suite-all.txt | cut -c1-300 | tee -a $W/e.txt
tar -czf $OUT/e.tgz -C $W .
