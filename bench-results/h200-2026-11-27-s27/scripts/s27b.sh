#!/usr/bin/env bash
# Session 27, run B: background builds on a reused stream of the device's with the context held
# current through the worker's device half ("new") against afaab94's CLI ("old"): A/B on the
# matrices AUTO builds a heavy format for, two rounds alternating, traced; then the new CLI with
# TESSERA_TRACE=3 (the worker's device half step by step) on dense 2000² f32 and elasticity 32³ f32.
cd "$(dirname "$0")/../../.."
W=/tmp/b; mkdir -p $W; for v in old new; do f=tessera; [ $v = new ] && f=tnew; xz -dc gpu-carry/$f.xz > /tmp/t$v; chmod +x /tmp/t$v; done
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
MS="gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:elasticity:32:f32 gen:lap3d7:160:f32 gen:grid2d:725:f64"
for r in 1 2; do for spec in $MS; do p=${spec##*:}; m=${spec%:*}; for v in old new; do
  n=${m//[:,]/_}-$p-$v-$r
  TESSERA_TRACE=2 timeout 60 /tmp/t$v bench $m --methods auto --precision $p --out $W/e2e-$n > $W/e2e-$n.log 2>&1
done; done; done
echo "A/B done at $(el)s" | tee -a $W/b.txt
for spec in gen:dense:2000,2000:f32 gen:elasticity:32:f32; do p=${spec##*:}; m=${spec%:*}; n=${m//[:,]/_}-$p
  TESSERA_TRACE=3 timeout 60 /tmp/tnew bench $m --methods auto --precision $p --out $W/t3-$n > $W/t3-$n.log 2>&1; done
for f in $W/e2e-*.log; do grep -v -E 'cuMemAlloc|e2e pointer queries|e2e first product|deferred inspection|borrow .* check queued|create .* from|HOLA set-up|analyze: hola in' $f > $f.tmp && mv $f.tmp $f; done; rm -f $W/*/*.svg
tar -czf $OUT/b.tgz -C $W .
for f in $W/e2e-*/bench.csv; do d=$(basename $(dirname $f)); python3 - $f $W/$d.log <<'PY'
import csv, sys, re
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda a, b, n: float(r[f'{b}{n}_ms']) / float(r[f'{a}{n}_ms'])
log = open(sys.argv[2]).read()
sw = re.findall(r'(\w+) swapped in at product (\d+)', log)
st = [float(x) for x in re.findall(r'worker building \w+: start at ([0-9.]+) us', log)]
dd = [float(x) for x in re.findall(r'worker building \w+: device half done at ([0-9.]+) us', log)]
print(f"{sys.argv[1].split('/')[-2][4:]:30} st {float(r['speedup_vs_cusparse']):.2f} | in place " + ' '.join(f"{e('e2e_borrow_','cuspe2e_',n):.2f}" for n in (1,10,100,1000,10000)) + " | dev " + ' '.join(f"{e('e2e_','cuspe2e_',n):.2f}" for n in (1,10,100,1000)) + " | host " + ' '.join(f"{e('e2e_host_','cuspe2e_host_',n):.2f}" for n in (1,10,100,1000)) + f" | swaps {' '.join(a[:2]+b for a, b in sw[1:])} | builds us {[round(b-a) for a, b in zip(st, dd)][-3:]}")
PY
done
grep -h "worker's device half" $W/t3-*.log | cut -c1-420 | tail -12
