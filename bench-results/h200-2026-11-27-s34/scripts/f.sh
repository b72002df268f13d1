# Session 34, call 5 (e5af504 + test tidy): every GPU test with the fill on by default, memcheck
# of the background, trial, import and BRC tests (TESSERA_TEST_SMALL=1), then AUTO on the
# sweep's late shapes and four suite matrices, both types.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"
OUT=$OUT/tests timeout 300 $B/run tests > $OUT/run-tests.txt 2>&1
echo "run tests rc=$? after $(( $(date +%s) - t0 )) s"
sed -n '/^== summary/,$p' $OUT/run-tests.txt | head -30
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
mkdir -p $OUT/r
for t in gpu_background gpu_trial gpu_import gpu_brc; do
  left=$(( 330 - ($(date +%s) - t0) )); [ $left -lt 30 ] && break
  TESSERA_TEST_SMALL=1 timeout $left /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/$t --test-threads=1 > $OUT/r/memcheck-$t.log 2>&1
  echo "memcheck $t rc=$? $(grep 'test result' $OUT/r/memcheck-$t.log | tail -1 | cut -c1-60) $(grep 'ERROR SUMMARY' $OUT/r/memcheck-$t.log | tail -1)"
done
for m in gen:uniform:100000,128,2 gen:uniform:200000,64,2 gen:powerlaw:18,32,3 gen:dense:500,500 gen:powerlaw:20,16,1 gen:emptyrows:1000000,16,1; do
  [ $(( $(date +%s) - t0 )) -gt 520 ] && break
  n=$(echo $m | tr ':,' '__')
  timeout 60 $B/bin/tessera bench $m --methods auto --precision both --out $OUT/r/$n > $OUT/r/$n.txt 2>&1
  echo "$m rc=$? at $(( $(date +%s) - t0 )) s"
done
python3 - $OUT/r <<'PY'
import csv, glob, sys
def f(x):
    try: return float(x)
    except: return float("nan")
for fn in sorted(glob.glob(sys.argv[1] + "/*/bench.csv")):
    for r in csv.DictReader(open(fn)):
        if r["method"] != "auto": continue
        sp = [f(r["cuspe2e_%s_ms" % n]) / f(r["e2e_%s_ms" % n]) for n in (1, 10, 100, 1000, 10000)]
        print("%-30s %-4s %-11s %7.1f %7.1f %5.2f  %s" % (r["matrix"][4:34], r["type"], r["chosen"][:11], 1000*f(r["spmv_ms"]), 1000*f(r["cusparse_best_ms"]), f(r["speedup_vs_cusparse"]), " ".join("%5.2f" % x for x in sp)))
PY
cd $OUT && tar -czf all.tgz tests r run-tests.txt && rm -rf tests r
echo "total $(( $(date +%s) - t0 )) s"
