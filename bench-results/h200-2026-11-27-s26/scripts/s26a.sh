#!/usr/bin/env bash
# Session 26, run A: a background build's driver calls take their turn ahead of the caller's
# launches, and its stream has the device's greatest priority. A/B on the matrices AUTO builds a
# heavy format for (TESSERA_BACKGROUND_TURN / TESSERA_BACKGROUND_PRIORITY: 00 both off, 11 both
# on, 10 the turn only), two rounds alternating, traced (the swap's product); every test
# executable; the suite in f64 and f32 as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
MS="gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:lap3d7:160:f64 gen:stencil27:100:f32 gen:grid2d:725:f64 gen:elasticity:32:f32"
for r in 1 2; do for spec in $MS; do p=${spec##*:}; m=${spec%:*}; for cfg in 00 11 10; do
  n=${m//[:,]/_}-$p-$cfg-$r
  TESSERA_BACKGROUND_TURN=${cfg:0:1} TESSERA_BACKGROUND_PRIORITY=${cfg:1:1} TESSERA_TRACE=2 timeout 60 $T bench $m --methods auto --precision $p --out $W/e2e-$n > $W/e2e-$n.log 2>&1
done; done; done
echo "A/B done at $(el)s" | tee -a $W/a.txt
for t in $(ls $B/tests); do (cd $B/tests && TESSERA_BIN=$T timeout 100 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/a.txt; done
for p in f64 f32; do
  [ $(el) -lt 420 ] && { timeout $(( 570-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/a.txt; }
done
tar -czf $OUT/a.tgz -C $W .
grep -h -E "panicked|FAILED" -A3 $W/t-*.txt | head -20
for f in $W/e2e-*/bench.csv; do d=$(basename $(dirname $f)); python3 - $f $W/$d.log <<'PY'
import csv, sys, re
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda n: float(r[f'cuspe2e_{n}_ms']) / float(r[f'e2e_borrow_{n}_ms'])
log = open(sys.argv[2]).read()
sw = re.findall(r'swapped in at product (\d+)', log)
hh = [float(x) for x in re.findall(r'worker building \w+: host half done at ([0-9.]+) us', log)]
dd = [float(x) for x in re.findall(r'worker building \w+: device half done at ([0-9.]+) us', log)]
dh = sorted(b - a for a, b in zip(hh, dd))
print(f"{sys.argv[1].split('/')[-2][4:]:34} {r['chosen'][:6]:6} {float(r['spmv_ms'])*1000:6.1f} us; " + ' / '.join(f'{e(n):.2f}' for n in (1, 10, 100, 1000, 10000)) + f"; swaps at {','.join(sw[-6:])}; device half {dh[len(dh)//2] if dh else 0:.0f} us (median of {len(dh)})")
PY
done
for p in f64 f32; do ls $W/suite-$p/bench.csv >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-$p/bench.csv | sed -n '1,/copied/p'; done
