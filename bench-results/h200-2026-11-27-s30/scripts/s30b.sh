#!/usr/bin/env bash
# Session 30, run B (1813aad's bundle): (1) HOLA / TILE / CSR_VECTOR per product on random
# 3000² matrices at 53% and 75% density and dense 2000², f64 and f32 (where does TILE's Dns
# tile pay?); (2) TESSERA_TRACE=2 timelines of AUTO on dense 2000² f64 (when TILE swaps in).
cd "$(dirname "$0")/../../.."
W=/tmp/b; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 $B/bin/tessera bench gen:random:3000,3000,1600,7 gen:random:3000,3000,2250,7 gen:random:3000,3000,2700,7 gen:dense:2000,2000 --methods hola,tile,csr_vector --precision both --steady --out $W/steady > $W/steady.txt 2>&1
echo "steady rc=$?"; grep -E "hola|tile|csr_vector|cusparse" $W/steady.txt | grep -v "^\[" | awk '{print $1,$4,$5,$7,$8}'
TESSERA_TRACE=2 timeout 120 $B/bin/tessera bench gen:dense:2000,2000 --methods auto --precision f64 --out $W/dense > $W/dense.txt 2>&1
echo "dense rc=$?"; grep -E "swapped in|worker building|e2e run|auto:" $W/dense.txt | cut -c1-300
tar -czf $OUT/b.tgz -C $W .
