#!/usr/bin/env bash
# Session 27, run F (the final code, output only): where the first product from host arrays goes
# on dense 2000² f64 and grid2d 725² f64 (TESSERA_TRACE=3: the create's upload and inspection, the
# e2e first product's create + analyze / product call / synchronize, for tessera and cuSPARSE).
cd "$(dirname "$0")/../../.."
B=/tmp/fb; mkdir -p $B; tar -xJf gpu-carry/gb.tar.xz -C $B; T=$B/gpu-bundle/bin/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/gpu-bundle/lib
for m in gen:dense:2000,2000 gen:grid2d:725; do
  TESSERA_TRACE=3 timeout 60 $T bench $m --methods auto --precision f64 --out /tmp/f-$m > /tmp/f.log 2>&1
  echo "== $m"; grep -E "from host arrays|e2e first product from Host|e2e first product of cuSPARSE|analyze: |aw: |tessera: create" /tmp/f.log | grep -v "from device arrays\|Borrowed\|Device)" | cut -c1-330 | head -30
  grep -E "^gen" /tmp/f.log | tail -3 | cut -c1-200
done
