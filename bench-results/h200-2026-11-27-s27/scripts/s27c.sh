#!/usr/bin/env bash
# Session 27, run C: the first products from host arrays. (1) The 13 shared matrices, AUTO, f64
# and f32, the default (a host check below 2^18 rows plus entries, the direct upload) against
# TESSERA_HOST_IMPORT=all (every host create uploads the arrays as they are and checks them on
# the device), two rounds alternating. (2) Large generated matrices from host arrays with
# tessera's pool (default) and without (TESSERA_ALLOC_POOL=0), traced (the create's upload and
# import). The CLI is run B's "new" (tnew.xz).
cd "$(dirname "$0")/../../.."
W=/tmp/c; mkdir -p $W; xz -dc gpu-carry/tnew.xz > /tmp/t; chmod +x /tmp/t
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
for r in 1 2; do for v in def all; do A=; [ $v = all ] && A=TESSERA_HOST_IMPORT=all
  env $A timeout 200 /tmp/t bench gpu-carry/m/*.mtx.xz --methods auto --precision both --out $W/small-$v-$r > $W/small-$v-$r.log 2>&1
  echo "small $v $r rc=$? at $(el)s" | tee -a $W/c.txt
done; done
for spec in gen:dense:2000,2000:f64 gen:elasticity:32:f32 gen:uniform:1000000,16,1:f32 gen:powerlaw:20,16,1:f64; do p=${spec##*:}; m=${spec%:*}; for v in def nopool; do
  A=; [ $v = nopool ] && A=TESSERA_ALLOC_POOL=0; n=${m//[:,]/_}-$p-$v
  env $A TESSERA_TRACE=1 timeout 60 /tmp/t bench $m --methods auto --precision $p --out $W/big-$n > $W/big-$n.log 2>&1
done; done
echo "done at $(el)s" | tee -a $W/c.txt
rm -f $W/*/*.svg; tar -czf $OUT/c.tgz -C $W .
python3 - $W <<'PY'
import csv, sys, glob, math, re
W = sys.argv[1]
def rows(f): return [r for r in csv.DictReader(open(f)) if r['method'] == 'auto']
def rat(r, n, a='e2e_host_', b='cuspe2e_host_'): return float(r[f'{b}{n}_ms']) / float(r[f'{a}{n}_ms'])
per = {}
for f in sorted(glob.glob(f'{W}/small-*/bench.csv')):
    tag = f.split('/')[-2]
    for t in ('f64', 'f32'):
        rs = [r for r in rows(f) if r['type'] == t]
        g = [math.exp(sum(math.log(rat(r, n)) for r in rs) / len(rs)) for n in (1, 10, 100)]
        print(f"{tag:12} {t} host N=1/10/100 geomean {' / '.join(f'{x:.2f}' for x in g)}; below 1 at N=1: {sum(rat(r,1)<1 for r in rs)}")
        for r in rs: per.setdefault((r['matrix'][:22], t), []).append(f"{tag[6:]}:{rat(r,1):.2f}/{float(r['e2e_host_1_ms'])*1e3:.0f}us")
for k, v in per.items(): print(f"{k[0]:22} {k[1]} {' '.join(v)}")
for f in sorted(glob.glob(f'{W}/big-*/bench.csv')):
    r = rows(f)[0]; log = open(f.replace('/bench.csv', '.log').replace('big-', 'big-', 1)).read() if False else open(f[:-len('/bench.csv')] + '.log').read()
    up = re.findall(r'from host arrays on the device: upload ([0-9.]+) ms, import ([0-9.]+) ms', log)
    print(f"{f.split('/')[-2]:34} host N=1/10/100/1000 " + ' '.join(f'{rat(r, n):.2f}' for n in (1, 10, 100, 1000)) + f" first {float(r['e2e_host_1_ms']):.2f} ms vs cusparse {float(r['cuspe2e_host_1_ms']):.2f}; upload/import ms {up[-4:]}")
PY
