#!/usr/bin/env bash
# Session 26, run C (4d6a919: background builds on a stream of the device's greatest priority,
# temporaries freed in its order): gpu_background, its new test again with the default priority
# (TESSERA_BACKGROUND_PRIORITY=0: expected to fail, as in run B); A/B of the priority (p1 / p0)
# on the matrices AUTO builds a heavy format for, two rounds alternating, traced. CLI and test
# executable only.
cd "$(dirname "$0")/../../.."
W=/tmp/c; mkdir -p $W; B=/tmp/cap; mkdir -p $B; tar -xJf gpu-carry/c.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T=$B/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# 4d6a919 $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/c.txt
(cd $B && timeout 120 ./gpu_background --test-threads=1 > $W/t-gpu_background.txt 2>&1; echo "gpu_background rc=$? $(grep -E 'test result' $W/t-gpu_background.txt)") | tee -a $W/c.txt
for i in 1 2; do (cd $B && TESSERA_BACKGROUND_PRIORITY=0 timeout 60 ./gpu_background never_waits --test-threads=1 > $W/t-gpu_background-p0-$i.txt 2>&1; echo "never_waits with the default priority rc=$? $(grep -E 'test result|waited' $W/t-gpu_background-p0-$i.txt | cut -c1-200)") | tee -a $W/c.txt; done
for i in 1 2; do (cd $B && timeout 60 ./gpu_background never_waits --test-threads=1 > $W/t-gpu_background-p1-$i.txt 2>&1; echo "never_waits again rc=$? $(grep -E 'test result|waited' $W/t-gpu_background-p1-$i.txt | cut -c1-200)") | tee -a $W/c.txt; done
grep -h -E "panicked" -A2 $W/t-gpu_background.txt | head
MS="gen:elasticity:48:f64 gen:elasticity:48:f32 gen:elasticity:32:f32 gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:lap3d7:160:f64 gen:stencil27:100:f32 gen:grid2d:725:f64"
for r in 1 2; do for spec in $MS; do p=${spec##*:}; m=${spec%:*}; for v in 1 0; do
  n=${m//[:,]/_}-$p-p$v-$r
  TESSERA_BACKGROUND_PRIORITY=$v TESSERA_TRACE=2 timeout 60 $T bench $m --methods auto --precision $p --out $W/e2e-$n > $W/e2e-$n.log 2>&1
done; done; [ $(el) -gt 420 ] && break; done
echo "A/B done at $(el)s" | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
for f in $W/e2e-*/bench.csv; do d=$(basename $(dirname $f)); python3 - $f $W/$d.log <<'PY'
import csv, sys, re
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda n: float(r[f'cuspe2e_{n}_ms']) / float(r[f'e2e_borrow_{n}_ms'])
log = open(sys.argv[2]).read()
sw = re.findall(r'(\w+) swapped in at product (\d+)', log)
hh = [float(x) for x in re.findall(r'worker building \w+: host half done at ([0-9.]+) us', log)]
dd = [float(x) for x in re.findall(r'worker building \w+: device half done at ([0-9.]+) us', log)]
dh = [round(b - a) for a, b in zip(hh, dd)]
print(f"{sys.argv[1].split('/')[-2][4:]:34} {r['chosen'][:6]:6} {float(r['spmv_ms'])*1000:6.1f} us; " + ' / '.join(f'{e(n):.2f}' for n in (1, 10, 100, 1000, 10000)) + f"; swaps {' '.join(a[:2]+b for a, b in sw[-6:])}; device halves {dh[-6:]} us")
PY
done
