#!/usr/bin/env bash
# Session 30, run A (diagnosis, 1813aad's bundle): where AUTO's end-to-end time goes on the BRC
# matrices that fall short at N = 1,000 (read in place): TESSERA_TRACE=2's worker and swap lines.
cd "$(dirname "$0")/../../.."
W=/tmp/a; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
nvidia-smi --query-gpu=name --format=csv,noheader
for m in gen:lap3d7:160 gen:stencil27:100 gen:elasticity:40; do
  TESSERA_TRACE=2 timeout 120 $B/bin/tessera bench $m --methods auto --precision f64 --out $W/$(echo $m|tr ':,' '__') > $W/$(echo $m|tr ':,' '__').txt 2>&1
  echo "== $m rc=$?"; grep -E "swapped in|worker building|e2e run|auto:" $W/$(echo $m|tr ':,' '__').txt | cut -c1-400 | head -60
done
tar -czf $OUT/a.tgz -C $W .
