#!/usr/bin/env bash
# Session 11, run G (commit in gpu-bundle/COMMIT): the suite end to end (f64, f32; e2e_borrow
# columns), AUTO's new picks on the training set (per product), and a borrowed create's trace.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
T=$B/bin/tessera
for p in f64 f32; do
  timeout 200 $T bench --suite --methods auto --precision $p --out $OUT/suite-$p > $OUT/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep geomean $OUT/suite-$p.txt | cut -c1-420
done
# shellcheck disable=SC2046
timeout 150 $T bench $(scripts/auto-training specs) --methods auto --precision both --steady --csv $OUT/train-auto.csv > /dev/null 2>&1; echo "train auto rc=$?"
TESSERA_TRACE=1 timeout 60 $T bench $B/matrices/bayer10.mtx.xz $B/matrices/cit-HepPh.mtx.xz gen:lap3d7:160 --methods auto > $OUT/trace.txt 2>&1
grep -E 'inspected|analyze:' $OUT/trace.txt | sort | uniq -c | sort -rn | head -20
