#!/usr/bin/env bash
# Session 31, run F: TILE as AUTO's trial candidate between half dense and its f64 floor, and the
# trial's margin favouring the rule's prediction (a candidate must win by it), with the band
# generator; prev = run D's bundle (54c3571's code), new = this change.
# 1. new: gpu_trial, gpu_background, gpu_tile, gpu_bccoo, gpu;
# 2. named TILE and HOLA per product on two bands (51%, 58%), both types (new);
# 3. AUTO end to end, new: the bands and random 3000² at 53 / 60%, f64 and f32;
# 4. AUTO end to end on elasticity 32³ / 40³ / 48³ (the BRC candidate's trial now favours the
#    old form), prev and new alternating, two rounds, both types.
cd "$(dirname "$0")/../../.."
W=/tmp/f; mkdir -p $W /tmp/prev; tar -xJf gpu-carry/gb.tar.xz -C /tmp; tar -xJf gpu-carry/prev.tar.xz -C /tmp/prev
N=/tmp/gpu-bundle; O=/tmp/prev/gpu-bundle
export TESSERA_MATRICES=$N/matrices
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $N/COMMIT)"
for t in gpu_trial gpu_background gpu_tile gpu_bccoo gpu; do LD_LIBRARY_PATH=$N/lib:/usr/local/cuda/lib64 timeout 200 $N/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)"; done
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
show() { python3 -c "
import csv
for t in ('f64','f32'):
  rows=[r for r in csv.DictReader(open('$1/bench.csv')) if r['type']==t]
  if rows: print('  '+t+' '+' '.join(r['matrix'].replace('gen:random:','r').replace('gen:band:','b')+'/'+r['method'].replace('cusparse:','cu:')+'='+r['spmv_ms']+('' if r['status']=='ok' else '!'+r['status']) for r in rows))
"; }
export LD_LIBRARY_PATH=$N/lib:/usr/local/cuda/lib64
timeout 100 $N/bin/tessera bench gen:band:3000,900,900 gen:band:2000,700,700 --methods tile,hola --precision both --steady --out $W/bands > $W/bands.txt 2>&1; echo "bands rc=$? at $(el)s"; show $W/bands
for p in f64 f32; do
  timeout 150 $N/bin/tessera bench gen:band:3000,900,900 gen:band:2000,700,700 gen:random:3000,3000,1600,7 gen:random:3000,3000,1800,7 --methods auto --precision $p --out $W/e2e-$p > $W/e2e-$p.txt 2>&1
  echo "e2e $p rc=$? at $(el)s"
  grep -E " auto:" $W/e2e-$p.txt | awk 'NF>20{print "  ",$1, $3, "borrow N=1..10k", $17,$18,$19,$20,$21} NF<20 && NF>10{print "  ",$1, $5, "spmv_ms", $7, "speedup", $9, $NF}'
  grep -h "trial on this" $W/e2e-$p.txt | head -0
done
for r in 1 2; do for k in prev new; do
  B=$N; [ $k = prev ] && B=$O
  for p in f64 f32; do
    LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 timeout 150 $B/bin/tessera bench gen:elasticity:32 gen:elasticity:40 gen:elasticity:48 --methods auto --precision $p --out $W/el-$k-$p-$r > $W/el-$k-$p-$r.txt 2>&1
    echo "elasticity $k $p r$r rc=$? at $(el)s"
    grep -E " auto:" $W/el-$k-$p-$r.txt | awk 'NF>20{print "  ",$1, $3, "borrow N=1..10k", $17,$18,$19,$20,$21}'
  done
done; done
rm -f $W/*/*.svg; tar -czf $OUT/f.tgz -C $W .
