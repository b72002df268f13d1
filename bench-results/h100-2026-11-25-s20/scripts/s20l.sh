#!/usr/bin/env bash
# Session 20, run L: small matrices end to end (read in place), A = 5642f5b, B = + the
# provisional analyze records no event in the slot and looks CSR_VECTOR up after the first launch;
# alternating, 2 rounds, f64 and f32; then TESSERA_TRACE=3 on two matrices with B.
cd "$(dirname "$0")/.."
[ -d gpu-bundle/matrices ] || tar -xJf gpu-carry/matrices.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/l; mkdir -p $W
xz -dc gpu-carry/mini2/tessera-a.xz > $W/tessera-a; xz -dc gpu-carry/mini2/tessera.xz > $W/tessera-b; chmod +x $W/tessera-*
M="Pd sparse-images-1024_subset watt_2 zenios as-caida20071105 bcsstk16 Andrews arrow n1024-l1 bayer10"
for r in 1 2; do for p in f64 f32; do for v in a b; do
  timeout 100 $W/tessera-$v bench $M --methods auto --precision $p --out $W/$v-$p-$r > /dev/null 2>&1; echo "$v $p $r rc=$?"
done; done; done
TESSERA_TRACE=3 timeout 60 $W/tessera-b bench Pd watt_2 --methods auto --precision f64 --out $W/trace > /dev/null 2> $W/trace.err
grep -E "e2e first from Borrowed|first product from Borrowed" $W/trace.err | cut -c1-500 | head -12
tar -czf $OUT/l.tgz -C $W a-f64-1 a-f64-2 a-f32-1 a-f32-2 b-f64-1 b-f64-2 b-f32-1 b-f32-2 trace.err
