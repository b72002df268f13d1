# Session 34, call 4: BRC/background/trial GPU tests with the threaded plan and the fill on by
# default, memcheck of the fill test, then the fill (default) against TESSERA_BRC_DEVICE_FILL=0,
# AUTO and BRC end to end, both types, two rounds.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
cat $B/COMMIT
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
mkdir -p $OUT/r
for t in gpu_brc gpu_background gpu_trial; do
  timeout 120 $B/tests/$t --test-threads=1 > $OUT/r/$t.log 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/r/$t.log)"
done
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/gpu_brc --test-threads=1 fills_a_plan > $OUT/r/memcheck-fill.log 2>&1; echo "memcheck fill rc=$? $(grep 'ERROR SUMMARY' $OUT/r/memcheck-fill.log)"
M="gen:powerlaw:20,16,1 gen:circuit:1000000,5,4,100000,1 gen:emptyrows:1000000,16,1 gen:random:4000,4000,500,1"
for r in 1 2; do
  for m in $M; do
    for v in on off; do
      e="TESSERA_BRC_DEVICE_FILL=1"; [ $v = off ] && e="TESSERA_BRC_DEVICE_FILL=0"
      n=$(echo $m | tr ':,' '__')
      env $e TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $m --methods auto,brc --precision both --out $OUT/r/$v-$r/$n > $OUT/r/$v-$r-$n.txt 2> $OUT/r/$v-$r-$n.trace
      echo "$v-$r $m rc=$? at $(( $(date +%s) - t0 )) s"
      [ $(( $(date +%s) - t0 )) -gt 500 ] && break 3
    done
  done
done
grep -h "device fill" $OUT/r/on-1-*.trace | sort -u | head -6 | cut -c1-300
python3 - $OUT/r <<'PY'
import csv, glob, sys, os
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*-[12]/*/bench.csv")):
    v = os.path.basename(os.path.dirname(os.path.dirname(f)))
    for r in csv.DictReader(open(f)):
        if r["method"].startswith("cusparse"): continue
        rows.setdefault((r["matrix"][:22], r["type"], r["method"]), {})[v] = r
def f(x):
    try: return float(x)
    except: return float("nan")
print("%-22s %-4s %-5s %-6s %9s %8s  speedup e2e N=1,10,100,1k,10k" % ("matrix", "type", "meth", "run", "analysis", "spmv_us"))
for k in sorted(rows):
    for v, r in sorted(rows[k].items()):
        sp = [f(r["cuspe2e_%s_ms" % n]) / f(r["e2e_%s_ms" % n]) for n in (1, 10, 100, 1000, 10000)]
        print("%-22s %-4s %-5s %-6s %9.2f %8.2f  %s" % (k[0], k[1], k[2][:5], v, f(r["analysis_ms"]), 1000 * f(r["spmv_ms"]), " ".join("%5.2f" % x for x in sp)))
PY
cd $OUT && tar -czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
