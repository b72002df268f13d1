#!/usr/bin/env bash
# Session 28, run B (c076fb2's CLI with the bench's TESSERA_TRACE read once): why small matrices'
# end-to-end loops ran 0.3-0.6 us a product slower than their steady products in run J's suite
# (session 27) but not alone (run A): the same matrices in one process after a large one, in
# one process without it, and each alone; then CSR_VECTOR, HOLA and AUTO on the small matrices
# AUTO gives HOLA, f32 and f64.
cd "$(dirname "$0")/../../.."
W=/tmp/b; B=/tmp/bb; mkdir -p $W $B; xz -dc gpu-carry/b.xz > $B/tn; chmod +x $B/tn
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
S="Pd bayer10 zenios n1024-l1 watt_2"
for r in 1 2; do
  timeout 120 $B/tn bench gen:elasticity:32 $S --methods auto --precision f64 --out $W/big-$r > /dev/null 2>&1; echo "after a large one rc=$? at $(el)s" | tee -a $W/b.txt
  timeout 120 $B/tn bench $S --methods auto --precision f64 --out $W/small-$r > /dev/null 2>&1; echo "small together rc=$? at $(el)s" | tee -a $W/b.txt
  for m in $S; do timeout 60 $B/tn bench $m --methods auto --precision f64 --out $W/alone-$m-$r > /dev/null 2>&1; done; echo "alone at $(el)s" | tee -a $W/b.txt
done
TESSERA_TRACE=1 timeout 120 $B/tn bench gen:elasticity:32 Pd --methods auto --precision f64 --out $W/traced > $W/traced.txt 2>&1; echo "traced rc=$? at $(el)s" | tee -a $W/b.txt
for p in f32 f64; do timeout 200 $B/tn bench adder_dcop_05 arrow as-caida20071105 cit-HepPh Groebner_id2003_aug sparse-images-1024_subset watt_2 --methods csr_vector,hola,auto --precision $p --out $W/methods-$p > /dev/null 2>&1; echo "methods $p rc=$? at $(el)s" | tee -a $W/b.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/b.tgz -C $W .
for f in $W/big-*/bench.csv $W/small-*/bench.csv $W/alone-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
n = sys.argv[1].split('/')[-2]
for r in csv.DictReader(open(sys.argv[1])):
    if r['method'] != 'auto': continue
    g = lambda k: float(r[k])
    b = [g(f'e2e_borrow_{k}_ms') for k in (1, 10, 100, 1000, 10000)]
    st = g('cusparse_best_ms') / g('spmv_ms')
    print(f"{n:18} {r['matrix'][:12]:12} {r['chosen'][:6]:6} steady {g('spmv_ms')*1e3:5.2f} us x{st:.2f} | loop 100-1k {(b[3]-b[2])/0.9:5.2f} 1k-10k {(b[4]-b[3])/9:5.2f} us | x{g('cuspe2e_1000_ms')/b[3]:.2f} x{g('cuspe2e_10000_ms')/b[4]:.2f} at 1k, 10k")
PY
done
grep -E "e2e run from Borrowed" $W/traced.txt | cut -c1-400
for f in $W/methods-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r['method'] in ('csr_vector', 'hola', 'auto'):
        print(f"{r['type']} {r['matrix'][:14]:14} {r['method']:10} {r['chosen'][:10]:10} {float(r['spmv_ms'])*1e3:6.2f} us x{float(r['speedup_vs_cusparse']):.2f}  {r['params'][-60:]}")
PY
done
