#!/usr/bin/env bash
# Session 31, run A: TILE's edge tiles Dns from half their valid cells (format.rs dns_min_nnz,
# the device census alike) against the session's start (gpu-carry/base.tar.xz, b536eb9).
# 1. the new bundle's gpu_tile, gpu_trial, gpu_background (the device build against the host's
#    arrays, the trial's margin of b536eb9, which never ran on a GPU);
# 2. named TILE and HOLA per product (--steady: each product checked against the host's), base
#    and new alternating, two rounds, both types, on random matrices whose size is or is not a
#    multiple of 16 and dense ones;
# 3. AUTO end to end on the random 3000² at 53 / 97% and dense 2000², f64 (new, then base).
cd "$(dirname "$0")/../../.."
W=/tmp/a; mkdir -p $W /tmp/base
tar -xJf gpu-carry/gb.tar.xz -C /tmp; tar -xJf gpu-carry/base.tar.xz -C /tmp/base
N=/tmp/gpu-bundle; O=/tmp/base/gpu-bundle
export TESSERA_MATRICES=$N/matrices
T0=$(date +%s)
for t in gpu_tile gpu_trial gpu_background; do
  LD_LIBRARY_PATH=$N/lib:/usr/local/cuda/lib64 timeout 120 $N/tests/$t > $W/t-$t.txt 2>&1
  echo "$t rc=$? $(grep -E 'test result' $W/t-$t.txt) [$(( $(date +%s) - T0 ))s]"
done
M="gen:random:3000,3000,2900,7 gen:random:3000,3000,1800,7 gen:random:3000,3000,1600,7 gen:random:3008,3008,2918,7 gen:random:4000,4000,2600,3 gen:dense:3000,3000"
for r in 1 2; do for k in base new; do
  B=$N; [ $k = base ] && B=$O
  LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 timeout 150 $B/bin/tessera bench $M --methods tile,hola --precision both --steady --out $W/$k-$r > $W/$k-$r.txt 2>&1
  echo "$k r$r rc=$? [$(( $(date +%s) - T0 ))s]"
  python3 -c "
import csv
for t in ('f64','f32'):
  print('  '+t+' '+' '.join(r['matrix'].replace('gen:random:','r').replace('gen:dense:','d')+'/'+r['method']+'='+r['spmv_ms']+('' if r['status']=='ok' else '!'+r['status']) for r in csv.DictReader(open('$W/$k-$r/bench.csv')) if r['type']==t and not r['method'].startswith('cusparse')))
"
done; done
grep -h "census\|ell\|dns" $W/new-1.txt | grep -i "r3000\|random:3000" | head -4 | cut -c1-300
for k in new base; do
  B=$N; [ $k = base ] && B=$O
  LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 timeout 120 $B/bin/tessera bench gen:random:3000,3000,1600,7 gen:random:3000,3000,2900,7 gen:dense:2000,2000 --methods auto --precision f64 --out $W/e2e-$k > $W/e2e-$k.txt 2>&1
  echo "e2e $k rc=$? [$(( $(date +%s) - T0 ))s]"
  grep -E " auto:" $W/e2e-$k.txt | awk 'NF>20{print "  ",$1, $3, "borrow N=1..10k", $17,$18,$19,$20,$21} NF<20 && NF>10{print "  ",$1, $5, "spmv_ms", $7, "speedup", $9}'
done
