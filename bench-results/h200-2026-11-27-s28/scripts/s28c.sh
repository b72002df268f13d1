#!/usr/bin/env bash
# Session 28, run C (`tessera bench --stream own`, new this session): AUTO's background builds
# beside a caller that queues on a non-blocking stream of its own (tessera and cuSPARSE both on
# it) against the default stream, with the build started by the rule (BRC after 40 products,
# TILE 100, BCCOO 200) or at once or after 16 (TESSERA_BACKGROUND_AFTER), two rounds. Session
# 27 measured the default stream's side: earlier starts win at N = 1,000 and lose at N = 10-100.
cd "$(dirname "$0")/../../.."
W=/tmp/c; B=/tmp/cb; mkdir -p $W $B; xz -dc gpu-carry/c.xz > $B/tn; chmod +x $B/tn
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
for r in 1 2; do for spec in gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:elasticity:32:f32 gen:elasticity:48:f64; do p=${spec##*:}; m=${spec%:*}; n=${m//[:,]/_}-$p
  timeout 60 $B/tn bench $m --methods auto --precision $p --out $W/$n-legacy-rule-$r > /dev/null 2>&1 || echo "$n legacy rc=$?" | tee -a $W/c.txt
  for a in rule 0 16; do
    if [ $a = rule ]; then unset TESSERA_BACKGROUND_AFTER; else export TESSERA_BACKGROUND_AFTER=$a; fi
    timeout 60 $B/tn bench $m --methods auto --precision $p --stream own --out $W/$n-own-$a-$r > /dev/null 2>&1 || echo "$n own $a rc=$?" | tee -a $W/c.txt
  done; unset TESSERA_BACKGROUND_AFTER
done; echo "round $r at $(el)s" | tee -a $W/c.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/c.tgz -C $W .
for f in $W/*/bench.csv; do python3 - $f <<'PY'
import csv, sys
n = sys.argv[1].split('/')[-2]
for r in csv.DictReader(open(sys.argv[1])):
    if r['method'] != 'auto': continue
    g = lambda k: float(r[k])
    c = [g(f'cuspe2e_{k}_ms') / g(f'e2e_borrow_{k}_ms') for k in (1, 10, 100, 1000, 10000)]
    print(f"{n:34} {r['chosen'][:6]:6} steady x{g('cusparse_best_ms')/g('spmv_ms'):.2f} | in place " + ' '.join(f'{v:.2f}' for v in c))
PY
done
