#!/usr/bin/env bash
# Session 29, run A: CSR_VECTOR's pieces mode (a warp per piece of a long row). Its GPU tests,
# memcheck, the tests of what AUTO runs around it (background swaps, the check's provisional
# HOLA, the sliced mode); then per product, HOLA against CSR_VECTOR's pieces (TESSERA_PIECES=100:
# from a mean of 100, to see the rows of 150 and 250 too) on long-row shapes, with pieces of 512
# / default / 2,048 (f64's default 1,024, f32's 2,048); then AUTO end to end on the dense 2000²
# with the mode and without it (TESSERA_PIECES=0), two rounds.
cd "$(dirname "$0")/../../.."
W=/tmp/a; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
for t in gpu_pieces gpu_background gpu_check gpu_sliced; do timeout 150 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/a.txt; done
grep -h -E "panicked" -A4 $W/t-*.txt | head -30
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_pieces > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/a.txt
S="gen:random:10000,10000,0.015,3 gen:random:10000,10000,0.025,3 gen:random:20000,20000,0.02,3 gen:random:4000,4000,0.125,3 gen:dense:2000,2000 gen:dense:1000,8000 gen:random:4000,4000,0.5,3 gen:lp:2000,1600000,1000,1 gen:lp:1200,2000000,1200,1 gen:dense:300,2500"
TESSERA_PIECES=100 timeout 240 $B/bin/tessera bench $S --methods hola,csr_vector --precision both --steady --out $W/steady > $W/steady.txt 2>&1; echo "steady rc=$? at $(el)s" | tee -a $W/a.txt
for P in 512 2048; do TESSERA_PIECES=100 TESSERA_PIECE=$P timeout 150 $B/bin/tessera bench $S --methods csr_vector --precision both --steady --out $W/steady-$P > $W/steady-$P.txt 2>&1; echo "steady piece $P rc=$? at $(el)s" | tee -a $W/a.txt; done
for r in 1 2; do for v in on off; do
  if [ $v = off ]; then export TESSERA_PIECES=0; else unset TESSERA_PIECES; fi
  timeout 120 $B/bin/tessera bench gen:dense:2000,2000 --methods auto --precision both --out $W/e2e-$v-$r > $W/e2e-$v-$r.txt 2>&1; echo "e2e $v $r rc=$? at $(el)s" | tee -a $W/a.txt
done; done; unset TESSERA_PIECES
rm -f $W/*/*.svg; tar -czf $OUT/a.tgz -C $W .
python3 - $W <<'PY'
import csv, sys, glob, os
W = sys.argv[1]
rows = {}
for d, tag in (("steady", ""), ("steady-512", " P512"), ("steady-2048", " P2048")):
    for r in csv.DictReader(open(f"{W}/{d}/bench.csv")):
        m = r["method"] + (tag if r["method"] == "csr_vector" else "")
        if tag and r["method"] != "csr_vector":
            continue
        rows.setdefault((r["matrix"], r["type"]), {})[m] = float(r["spmv_ms"]) * 1e3
print("== per product, us (cusparse = the better algorithm; csr_vector = pieces from a mean of 100)")
for (mat, t), v in rows.items():
    cs = min(x for k, x in v.items() if k.startswith("cusparse"))
    print(f"{mat:34s} {t} cusparse {cs:7.2f} " + " ".join(f"{k} {x:7.2f}" for k, x in v.items() if not k.startswith("cusparse")))
print("== AUTO end to end on dense 2000², read in place, over cuSPARSE's best pipeline (N = 1 10 100 1000 10000)")
for f in sorted(glob.glob(f"{W}/e2e-*/bench.csv")):
    for r in csv.DictReader(open(f)):
        if r["method"] != "auto":
            continue
        q = [float(r[f"cuspe2e_{n}_ms"]) / float(r[f"e2e_borrow_{n}_ms"]) for n in (1, 10, 100, 1000, 10000)]
        print(f"{os.path.basename(os.path.dirname(f)):10s} {r['type']} steady {float(r['speedup_vs_cusparse']):.2f} e2e " + " ".join(f"{x:.2f}" for x in q))
PY
