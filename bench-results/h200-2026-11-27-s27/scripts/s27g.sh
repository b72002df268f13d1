#!/usr/bin/env bash
# Session 27, run G: the CSR's three host-to-device copies waited for once instead of one by one
# (cuda::copies_waited_once, on the direct path and the inspected device path), "new", against
# e88510c's CLI, "old": the 13 shared matrices from host arrays, AUTO, f64 and f32, three rounds
# alternating; dense 2000² f64 and grid2d 725² f64, two rounds.
cd "$(dirname "$0")/../../.."
W=/tmp/g; mkdir -p $W; tar -xJf gpu-carry/g.tar.xz -C /tmp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
for r in 1 2 3; do for v in old new; do
  timeout 200 /tmp/t$v bench gpu-carry/m/*.mtx.xz --methods auto --precision both --out $W/small-$v-$r > $W/small-$v-$r.log 2>&1
  echo "small $v $r rc=$? at $(el)s" | tee -a $W/g.txt
done; done
for r in 1 2; do for m in gen:dense:2000,2000 gen:grid2d:725; do for v in old new; do
  timeout 60 /tmp/t$v bench $m --methods auto --precision f64 --out $W/big-${m//[:,]/_}-$v-$r > /dev/null 2>&1
done; done; done
echo "done at $(el)s" | tee -a $W/g.txt
rm -f $W/*/*.svg; tar -czf $OUT/g.tgz -C $W .
python3 - $W <<'PY'
import csv, sys, glob, math, statistics as st
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
        for r in rs: per.setdefault((r['matrix'][:22], t), {}).setdefault(tag.split('-')[1], []).append(float(r['e2e_host_1_ms'])*1e3)
print("first product from host arrays, us (median of rounds): old -> new")
for k, v in per.items(): print(f"{k[0]:22} {k[1]} {st.median(v['old']):6.0f} -> {st.median(v['new']):6.0f}   ({' '.join(f'{x:.0f}' for x in v['old'])} | {' '.join(f'{x:.0f}' for x in v['new'])})")
for f in sorted(glob.glob(f'{W}/big-*/bench.csv')):
    r = rows(f)[0]
    print(f"{f.split('/')[-2]:34} host N=1/10/100 " + ' '.join(f'{rat(r, n):.2f}' for n in (1, 10, 100)) + f" first {float(r['e2e_host_1_ms']):.2f} ms vs cusparse {float(r['cuspe2e_host_1_ms']):.2f}")
PY
