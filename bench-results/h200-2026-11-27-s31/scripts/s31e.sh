#!/usr/bin/env bash
# Session 31, run E (the final code's bundle): where the first ten products of small matrices
# read in place go (n1024-l1 f32 0.83 of cuSPARSE at N = 10 in run D). TESSERA_TRACE=3 of AUTO
# end to end on n1024-l1, zenios and adder_dcop_05, f32 and f64.
cd "$(dirname "$0")/../../.."
W=/tmp/e; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
for p in f32 f64; do
  TESSERA_TRACE=3 timeout 120 $B/bin/tessera bench n1024-l1 zenios adder_dcop_05 --methods auto --precision $p --out $W/e-$p > $W/e-$p.txt 2>&1; echo "$p rc=$?"
done
tar -czf $OUT/e.tgz -C $W .
for p in f32 f64; do grep -E "e2e run from Borrowed|auto:" $W/e-$p.txt | cut -c1-600 | head -12; done
