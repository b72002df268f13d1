#!/usr/bin/env bash
# Session 27, run D: host arrays of int32 base 0 uploaded as they are and inspected on the device
# (one kernel, one read-back) from 2^14 rows plus entries up (Matrix::from_host_inspected).
# gpu_import and gpu_faults; the 13 shared matrices (AUTO, f64 and f32) with the new default
# against TESSERA_HOST_IMPORT=direct (the host check below 2^18, the default before), two
# rounds alternating; the large generated matrices of run C from host arrays, traced.
cd "$(dirname "$0")/../../.."
W=/tmp/d; B=/tmp/cb; mkdir -p $W $B; tar -xJf gpu-carry/c2.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
for t in gpu_import gpu_faults; do timeout 200 $B/$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/d.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
for r in 1 2; do for v in new direct; do A=; [ $v = direct ] && A=TESSERA_HOST_IMPORT=direct
  env $A timeout 200 $B/tessera bench gpu-carry/m/*.mtx.xz --methods auto --precision both --out $W/small-$v-$r > $W/small-$v-$r.log 2>&1
  echo "small $v $r rc=$? at $(el)s" | tee -a $W/d.txt
done; done
for spec in gen:dense:2000,2000:f64 gen:elasticity:32:f32 gen:uniform:1000000,16,1:f32 gen:powerlaw:20,16,1:f64; do p=${spec##*:}; m=${spec%:*}; n=${m//[:,]/_}-$p
  TESSERA_TRACE=1 timeout 60 $B/tessera bench $m --methods auto --precision $p --out $W/big-$n > $W/big-$n.log 2>&1
done
echo "done at $(el)s" | tee -a $W/d.txt
rm -f $W/*/*.svg; tar -czf $OUT/d.tgz -C $W .
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
        gb = [math.exp(sum(math.log(rat(r, n, 'e2e_borrow_', 'cuspe2e_')) for r in rs) / len(rs)) for n in (1, 10, 100)]
        print(f"{tag:14} {t} host N=1/10/100 geomean {' / '.join(f'{x:.2f}' for x in g)}; below 1 at N=1: {sum(rat(r,1)<1 for r in rs)}, N=10: {sum(rat(r,10)<1 for r in rs)}; in place {' / '.join(f'{x:.2f}' for x in gb)}")
        for r in rs: per.setdefault((r['matrix'][:22], t, int(r['rows']) + int(r['nnz'])), []).append(f"{tag[6:]}:{rat(r,1):.2f}/{float(r['e2e_host_1_ms'])*1e3:.0f}us")
for k, v in per.items(): print(f"{k[0]:22} {k[1]} {k[2]:8} {' '.join(v)}")
for f in sorted(glob.glob(f'{W}/big-*/bench.csv')):
    r = rows(f)[0]; log = open(f[:-len('/bench.csv')] + '.log').read()
    up = re.findall(r'from host arrays on the device as they are: upload ([0-9.]+) ms, inspection ([0-9.]+) ms', log)
    print(f"{f.split('/')[-2]:34} host N=1/10/100/1000 " + ' '.join(f'{rat(r, n):.2f}' for n in (1, 10, 100, 1000)) + f" first {float(r['e2e_host_1_ms']):.2f} ms vs cusparse {float(r['cuspe2e_host_1_ms']):.2f}; upload/inspection ms {up[-4:]}")
PY
