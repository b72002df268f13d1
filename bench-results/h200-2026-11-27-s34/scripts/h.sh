# Session 34, call 7 (dd4b4f3): the suite, AUTO only, both types, end to end.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
cat $B/COMMIT; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
timeout 530 $B/bin/tessera bench --suite --methods auto --precision both --out $OUT/suite > $OUT/suite.txt 2>&1
echo "suite rc=$? at $(( $(date +%s) - t0 )) s"
grep -E "geomean|^matrix " $OUT/suite.txt | head -8 | cut -c1-250
python3 - $OUT/suite/bench.csv <<'PY'
import csv, sys
def f(x):
    try: return float(x)
    except: return float("nan")
for r in csv.DictReader(open(sys.argv[1])):
    if r["method"] != "auto": continue
    sp = [f(r["cuspe2e_%s_ms" % n]) / f(r["e2e_%s_ms" % n]) for n in (1, 10, 100, 1000, 10000)]
    print("%-28s %-4s %-11s %6.2f  %s" % (r["matrix"][-28:], r["type"], r["chosen"][:11], f(r["speedup_vs_cusparse"]), " ".join("%5.2f" % x for x in sp)))
PY
rm -f $OUT/suite/*.svg
echo "total $(( $(date +%s) - t0 )) s"
