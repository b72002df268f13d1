#!/usr/bin/env bash
# Session 31, run C: bc0ccef + a Dns tile's values loaded early in f32 too (the kernel built
# in): gpu_tile and its memcheck, named TILE per product on four matrices; then CSR_VECTOR's
# pieces mode for rows longer than its 1,024-entry range (TESSERA_PIECES=128: from a mean of
# 128 with no upper end; TESSERA_PIECE: the most entries of a piece), against HOLA and
# cuSPARSE, per product (--steady), both types.
cd "$(dirname "$0")/../../.."
W=/tmp/c; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
T0=$(date +%s)
show() { python3 -c "
import csv
for t in ('f64','f32'):
  rows=[r for r in csv.DictReader(open('$1/bench.csv')) if r['type']==t]
  if rows: print('  '+t+' '+' '.join(r['matrix'].replace('gen:random:','r').replace('gen:dense:','d')+'/'+r['method'].replace('cusparse:','cu:')+'='+r['spmv_ms']+('' if r['status']=='ok' else '!'+r['status']) for r in rows))
"; }
timeout 120 $B/tests/gpu_tile > $W/t-gpu_tile.txt 2>&1; echo "gpu_tile rc=$? $(grep -E 'test result' $W/t-gpu_tile.txt) [$(( $(date +%s) - T0 ))s]"
timeout 300 compute-sanitizer --tool memcheck --leak-check full $B/tests/gpu_tile > $W/mc-gpu_tile.txt 2>&1; echo "memcheck gpu_tile rc=$? $(grep -E 'ERROR SUMMARY|test result' $W/mc-gpu_tile.txt | tr '\n' ' ') [$(( $(date +%s) - T0 ))s]"
timeout 100 $B/bin/tessera bench gen:dense:2000,2000 gen:dense:4000,4000 gen:random:3000,3000,2900,7 gen:random:4000,4000,2600,3 --methods tile --precision both --steady --out $W/tile > $W/tile.txt 2>&1; echo "tile rc=$?"; show $W/tile
M="gen:dense:2000,2000 gen:dense:1000,8000 gen:random:3000,3000,1600,7 gen:random:3000,3000,2900,7 gen:random:2000,20000,1500,5"
for pc in 2048 1024 512 256; do
  TESSERA_PIECES=128 TESSERA_PIECE=$pc timeout 150 $B/bin/tessera bench $M --methods csr_vector,hola --precision both --steady --out $W/p$pc > $W/p$pc.txt 2>&1
  echo "piece $pc rc=$? [$(( $(date +%s) - T0 ))s]"; show $W/p$pc
done
