#!/usr/bin/env bash
# Session 26, run D (98f0212: background builds free their temporaries in their stream's order;
# AUTO's analyze preloads the kernels of its planned build on a worker): gpu_background, A/B
# against 12a2ecb's CLI run with TESSERA_BACKGROUND_TURN=0 TESSERA_BACKGROUND_PRIORITY=0
# (33abb61's behaviour) on the matrices AUTO builds a heavy format for, two rounds alternating,
# traced, the first round with --cold; every other test executable; the suite in f64 and f32.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
xz -dc gpu-carry/tessera-12a2ecb.xz > /tmp/told; chmod +x /tmp/told
echo "# commit 98f0212 $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
(cd $B/tests && TESSERA_BIN=$T timeout 120 ./gpu_background --test-threads=1 > $W/t-gpu_background.txt 2>&1; echo "gpu_background rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu_background.txt)") | tee -a $W/d.txt
grep -h -E "panicked" -A2 $W/t-gpu_background.txt | head
MS="gen:elasticity:48:f64 gen:elasticity:32:f32 gen:elasticity:48:f32 gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:lap3d7:160:f64 gen:stencil27:100:f32"
for r in 1 2; do for spec in $MS; do p=${spec##*:}; m=${spec%:*}; for v in old new; do
  n=${m//[:,]/_}-$p-$v-$r; C=$T; [ $v = old ] && C=/tmp/told; cold=; [ $r = 1 ] && cold=--cold
  TESSERA_BACKGROUND_TURN=0 TESSERA_BACKGROUND_PRIORITY=0 TESSERA_TRACE=2 timeout 60 $C bench $m --methods auto --precision $p $cold --out $W/e2e-$n > $W/e2e-$n.log 2>&1
done; done; done
echo "A/B done at $(el)s" | tee -a $W/d.txt
for t in $(ls $B/tests | grep -v '^gpu_background$'); do (cd $B/tests && TESSERA_BIN=$T timeout 100 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/d.txt; done
for p in f64 f32; do
  [ $(el) -lt 430 ] && { timeout $(( 575-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/d.txt; }
done
tar -czf $OUT/d.tgz -C $W .
grep -h -E "panicked|FAILED" -A3 $W/t-*.txt | head -20
for f in $W/e2e-*/bench.csv; do d=$(basename $(dirname $f)); python3 - $f $W/$d.log <<'PY'
import csv, sys, re
rows = list(csv.DictReader(open(sys.argv[1])))
r = [x for x in rows if x['method'].startswith('auto')][0]
cold = [x.get('cold_first_ms', '-') for x in rows]
e = lambda n: float(r[f'cuspe2e_{n}_ms']) / float(r[f'e2e_borrow_{n}_ms'])
log = open(sys.argv[2]).read()
sw = re.findall(r'(\w+) swapped in at product (\d+)', log)
hh = [float(x) for x in re.findall(r'worker building \w+: host half done at ([0-9.]+) us', log)]
dd = [float(x) for x in re.findall(r'worker building \w+: device half done at ([0-9.]+) us', log)]
dh = [round(b - a) for a, b in zip(hh, dd)]
print(f"{sys.argv[1].split('/')[-2][4:]:30} {r['chosen'][:6]:6} {float(r['spmv_ms'])*1000:6.1f} us; " + ' / '.join(f'{e(n):.2f}' for n in (1, 10, 100, 1000, 10000)) + f"; swaps {' '.join(a[:2]+b for a, b in sw[-6:])}; dev halves {dh[-6:]}; cold {'/'.join(cold)}")
PY
done
for p in f64 f32; do ls $W/suite-$p/bench.csv >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-$p/bench.csv | sed -n '1,/copied/p'; done
