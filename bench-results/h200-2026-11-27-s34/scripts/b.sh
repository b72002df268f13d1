# Session 34, call 2: TESSERA_BRC_DEVICE_FILL=1 against the default (BRC from a download after
# 4,000 products), AUTO and BRC end to end, both types, two rounds alternating.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
M="gen:powerlaw:20,16,1 gen:circuit:1000000,5,4,100000,1 gen:emptyrows:1000000,16,1 gen:random:4000,4000,500,1 gen:uniform:1000000,16,1 gen:lap3d7:160"
for r in 1 2; do
  for m in $M; do
    for v in default fill; do
      e=""; [ $v = fill ] && e="TESSERA_BRC_DEVICE_FILL=1"
      n=$(echo $m | tr ':,' '__')
      env $e timeout 100 $B/bin/tessera bench $m --methods auto,brc --precision both --out $OUT/$v-$r/$n > $OUT/$v-$r-$n.txt 2>&1
      echo "$v-$r $m rc=$? at $(( $(date +%s) - t0 )) s"
      [ $(( $(date +%s) - t0 )) -gt 500 ] && break 3
    done
  done
done
python3 - $OUT <<'PY'
import csv, glob, sys, os
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(out + "/*-[12]/*/bench.csv")):
    v = os.path.basename(os.path.dirname(os.path.dirname(f)))
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["matrix"][:22], r["type"], r["method"]), {})[v] = r
def f(x):
    try: return float(x)
    except: return float("nan")
print("%-22s %-4s %-6s %-9s %9s %8s  speedup vs cuSPARSE e2e at N=1,10,100,1k,10k" % ("matrix", "type", "method", "variant", "analysis", "spmv_us"))
for k in sorted(rows):
    for v, r in sorted(rows[k].items()):
        sp = [f(r["cuspe2e_%s_ms" % n]) / f(r["e2e_%s_ms" % n]) for n in (1, 10, 100, 1000, 10000)]
        print("%-22s %-4s %-6s %-9s %9.2f %8.2f  %s" % (k + (v, f(r["analysis_ms"]), 1000 * f(r["spmv_ms"]), " ".join("%5.2f" % x for x in sp))))
PY
echo "total $(( $(date +%s) - t0 )) s"
