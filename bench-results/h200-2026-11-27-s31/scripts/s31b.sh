#!/usr/bin/env bash
# Session 31, run B (the bundle of run A plus select::tile_min_density: TILE in f64 from 61%):
# 1. a Dns tile's values loaded before x is exchanged in f32 too (gpu-carry/kf32) against the
#    kernels as committed (gpu-carry/kcur), both compiled at run time (TESSERA_KERNELS_DIR),
#    named TILE per product, f32, two rounds alternating;
# 2. named TILE and HOLA per product at 30 and 40% density, both types (the built-in kernels);
# 3. AUTO end to end on random 3000² at 53 / 60 / 97%, 4000² at 65% and dense 2000², both types.
cd "$(dirname "$0")/../../.."
W=/tmp/b; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices
T0=$(date +%s)
show() { python3 -c "
import csv
for t in ('f64','f32'):
  rows=[r for r in csv.DictReader(open('$1/bench.csv')) if r['type']==t and not r['method'].startswith('cusparse')]
  if rows: print('  '+t+' '+' '.join(r['matrix'].replace('gen:random:','r').replace('gen:dense:','d')+'/'+r['method']+'='+r['spmv_ms']+('' if r['status']=='ok' else '!'+r['status']) for r in rows))
"; }
M="gen:dense:2000,2000 gen:dense:3000,3000 gen:dense:4000,4000 gen:random:3000,3000,2900,7 gen:random:3000,3000,1800,7 gen:random:3000,3000,1600,7 gen:random:4000,4000,2600,3"
for r in 1 2; do for k in kcur kf32; do
  TESSERA_KERNELS_DIR=$PWD/gpu-carry/$k TESSERA_CACHE_DIR=$W/cache-$k timeout 150 $B/bin/tessera bench $M --methods tile --precision f32 --steady --out $W/$k-$r > $W/$k-$r.txt 2>&1
  echo "$k r$r rc=$? [$(( $(date +%s) - T0 ))s]"; show $W/$k-$r
done; done
timeout 120 $B/bin/tessera bench gen:random:3000,3000,1200,7 gen:random:3000,3000,900,7 --methods tile,hola --precision both --steady --out $W/low > $W/low.txt 2>&1
echo "low density rc=$? [$(( $(date +%s) - T0 ))s]"; show $W/low
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench gen:random:3000,3000,1600,7 gen:random:3000,3000,1800,7 gen:random:3000,3000,2900,7 gen:random:4000,4000,2600,3 gen:dense:2000,2000 --methods auto --precision $p --out $W/e2e-$p > $W/e2e-$p.txt 2>&1
  echo "e2e $p rc=$? [$(( $(date +%s) - T0 ))s]"
  grep -E " auto:" $W/e2e-$p.txt | awk 'NF>20{print "  ",$1, $3, "borrow N=1..10k", $17,$18,$19,$20,$21} NF<20 && NF>10{print "  ",$1, $5, "spmv_ms", $7, "speedup", $9}'
done
