#!/usr/bin/env bash
# Session 27, run A: when should AUTO's background build start, now that a build no longer waits
# for the caller's queued products (session 26)? The CLI at afaab94 (code of 05c3293) with
# TESSERA_BACKGROUND_AFTER unset (the rule: BRC after 40 products, TILE 100, BCCOO 200), 0 and 16,
# on the matrices AUTO builds a heavy format for, two rounds alternating, traced.
cd "$(dirname "$0")/../../.."
W=/tmp/a; mkdir -p $W; T=/tmp/tessera; xz -dc gpu-carry/tessera.xz > $T; chmod +x $T
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
MS="gen:dense:2000,2000:f64 gen:dense:2000,2000:f32 gen:lap3d7:160:f64 gen:lap3d7:160:f32 gen:stencil27:100:f32 gen:elasticity:32:f32 gen:grid2d:725:f64 gen:uniform:1000000,16,1:f64"
for r in 1 2; do for spec in $MS; do p=${spec##*:}; m=${spec%:*}; for v in def 0 16; do
  [ $(el) -gt 540 ] && break 3
  n=${m//[:,]/_}-$p-$v-$r; A=; [ $v != def ] && A="TESSERA_BACKGROUND_AFTER=$v"
  env $A TESSERA_TRACE=2 timeout 60 $T bench $m --methods auto --precision $p --out $W/e2e-$n > $W/e2e-$n.log 2>&1
done; done; done
echo "done at $(el)s" | tee -a $W/a.txt
for f in $W/e2e-*.log; do grep -v -E 'cuMemAlloc|e2e pointer queries|e2e first product|deferred inspection|borrow .* check queued|create .* from|HOLA set-up|analyze: hola in' $f > $f.tmp && mv $f.tmp $f; done; rm -f $W/e2e-*/*.svg
tar -czf $OUT/a.tgz -C $W .
for f in $W/e2e-*/bench.csv; do d=$(basename $(dirname $f)); python3 - $f $W/$d.log <<'PY'
import csv, sys, re
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda a, b, n: float(r[f'{b}{n}_ms']) / float(r[f'{a}{n}_ms'])
log = open(sys.argv[2]).read()
sw = re.findall(r'(\w+) swapped in at product (\d+)', log)
print(f"{sys.argv[1].split('/')[-2][4:]:34} st {float(r['speedup_vs_cusparse']):.2f} | in place " + ' '.join(f"{e('e2e_borrow_','cuspe2e_',n):.2f}" for n in (1,10,100,1000,10000)) + " | dev " + ' '.join(f"{e('e2e_','cuspe2e_',n):.2f}" for n in (1,10,100,1000)) + " | host " + ' '.join(f"{e('e2e_host_','cuspe2e_host_',n):.2f}" for n in (1,10,100,1000)) + f" | swaps {' '.join(a[:2]+b for a, b in sw[1:])}")
PY
done
