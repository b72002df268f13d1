# Session 35, call 14: session 34's 30 generated shapes outside the suite with the final code
# (heavy-tail rule, sliced long-row guard, bounce, spare workers, trial ids): AUTO vs cuSPARSE, both types.
set -u
t0=$(date +%s)
rm -rf /tmp/gpu-bundle; tar -xJf gpu-carry/t.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
M="uniform:1000000,1,2 uniform:1000000,2,2 uniform:1000000,4,2 uniform:1000000,8,2 uniform:400000,32,2 uniform:200000,64,2 uniform:100000,128,2
random:100000,100000,8,2 random:20000,20000,100,2 random:5000,5000,1000,2
powerlaw:16,8,2 powerlaw:18,32,3 powerlaw:22,4,4
lap3d7:64 lap3d7:100 stencil27:50 grid2d:2000 grid2d:200 elasticity:16 elasticity:24
band:100000,2,2 band:20000,50,50
circuit:200000,4,10,20000,2 emptyrows:2000000,4,3 lp:1000,500000,500,2
onerow:100000,100000,100000 diag:1000000
dense:500,500 dense:4000,1000 dense:100,50000"
for m in $M; do
  n=$(echo $m | tr ':,' '__')
  timeout 60 $B/bin/tessera bench gen:$m --methods auto --precision both --out $OUT/sweep/$n > $OUT/sweep-$n.txt 2>&1
  echo "$m rc=$? at $(( $(date +%s) - t0 )) s"
  [ $(( $(date +%s) - t0 )) -gt ${LIMIT:-530} ] && break
done
python3 - $OUT <<'PY'
import csv, glob, sys, os
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/sweep/*/bench.csv")):
    rows += list(csv.DictReader(open(f)))
def f(x):
    try: return float(x)
    except: return float("nan")
print("%-28s %-4s %-10s %8s %8s  e2e speedup N=1,10,100,1k,10k" % ("matrix", "type", "chosen", "spmv_us", "cusp_us"))
for r in rows:
    sp = [f(r["cuspe2e_%s_ms" % n]) / f(r["e2e_%s_ms" % n]) for n in (1, 10, 100, 1000, 10000)]
    print("%-28s %-4s %-10s %8.2f %8.2f  %s" % (r["matrix"][:28], r["type"], r["chosen"][:10], 1000 * f(r["spmv_ms"]), 1000 * f(r["cusparse_best_ms"]), " ".join("%5.2f" % x for x in sp)))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f sweep/*/*.svg && tar czf sweep.tgz sweep sweep-*.txt && rm -rf sweep sweep-*.txt
