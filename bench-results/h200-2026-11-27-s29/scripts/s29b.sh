#!/usr/bin/env bash
# Session 29, run B: the pieces mode kept for rows of 129-1,024 entries on average (HOLA above,
# as before). Every GPU test executable; per product AUTO, HOLA and CSR_VECTOR on shapes in the
# range (one process, cuSPARSE's better algorithm beside); AUTO end to end with the mode and
# without it (TESSERA_PIECES=0), two rounds, on four of them, one half dense (TILE built in the
# background after the pieces mode's products).
cd "$(dirname "$0")/../../.."
W=/tmp/b; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/b.txt
for t in $(ls $B/tests | grep -E '^gpu'); do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/b.txt; done
grep -h -E "panicked" -A4 $W/t-*.txt | head -30
S="gen:random:10000,10000,0.015,3 gen:random:10000,10000,0.025,3 gen:random:20000,20000,0.02,3 gen:random:4000,4000,0.125,3 gen:lp:2000,1600000,1000,1 gen:dense:600,900 gen:dense:2000,1000"
timeout 300 $B/bin/tessera bench $S --methods auto,hola,csr_vector --precision both --steady --out $W/steady > $W/steady.txt 2>&1; echo "steady rc=$? at $(el)s" | tee -a $W/b.txt
E="gen:random:20000,20000,0.02,3 gen:random:4000,4000,0.125,3 gen:dense:2000,1000 gen:lp:2000,1600000,1000,1"
for r in 1 2; do for v in on off; do
  if [ $v = off ]; then export TESSERA_PIECES=0; else unset TESSERA_PIECES; fi
  timeout 200 $B/bin/tessera bench $E --methods auto --precision both --out $W/e2e-$v-$r > $W/e2e-$v-$r.txt 2>&1; echo "e2e $v $r rc=$? at $(el)s" | tee -a $W/b.txt
done; done; unset TESSERA_PIECES
rm -f $W/*/*.svg; tar -czf $OUT/b.tgz -C $W .
python3 - $W <<'PY'
import csv, sys, glob, os
W = sys.argv[1]
rows = {}
for r in csv.DictReader(open(f"{W}/steady/bench.csv")):
    rows.setdefault((r["matrix"], r["type"]), {})[r["method"]] = (float(r["spmv_ms"]) * 1e3, r["chosen"])
print("== per product, us (cusparse = the better algorithm)")
for (mat, t), v in rows.items():
    cs = min(x for k, (x, _) in v.items() if k.startswith("cusparse"))
    print(f"{mat:34s} {t} cusparse {cs:7.2f} " + " ".join(f"{k}{'(' + c + ')' if k == 'auto' else ''} {x:7.2f}" for k, (x, c) in v.items() if not k.startswith("cusparse")))
print("== AUTO end to end, read in place, over cuSPARSE's best pipeline (N = 1 10 100 1000 10000)")
for f in sorted(glob.glob(f"{W}/e2e-*/bench.csv")):
    for r in csv.DictReader(open(f)):
        if r["method"] != "auto":
            continue
        q = [float(r[f"cuspe2e_{n}_ms"]) / float(r[f"e2e_borrow_{n}_ms"]) for n in (1, 10, 100, 1000, 10000)]
        print(f"{os.path.basename(os.path.dirname(f)):9s} {r['matrix'][:30]:30s} {r['type']} {r['chosen']:10s} steady {float(r['speedup_vs_cusparse']):.2f} e2e " + " ".join(f"{x:.2f}" for x in q))
PY
