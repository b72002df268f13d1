#!/bin/bash
# Session 37, run C: AUTO's background start for BRC's plan-and-fill form and BCCOO (TESSERA_BACKGROUND_AFTER), read in place.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/c
$B/tessera bench gen:dense:100,100 --methods auto --precision f64 > /dev/null 2>&1  # warm the kernel cache
run() { # matrix precision after
  local f=$OUT/c/${1//[:,]/_}-$2-${3:-def}
  if [ -n "$3" ]; then TESSERA_BACKGROUND_AFTER=$3 $B/tessera bench $1 --methods auto --precision $2 --csv $f.csv > $f.txt 2>&1
  else $B/tessera bench $1 --methods auto --precision $2 --csv $f.csv > $f.txt 2>&1; fi
  python3 - $f.csv "$1 $2 after=${3:-default}" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
a=[r for r in rows if r['method'].startswith('auto')][0]
c=rows[0]
ns=[1,10,100,1000,10000]
print(f"{sys.argv[2]:50s} {a['chosen'][:8]:8s} borrow", ' '.join(f"{float(c[f'cuspe2e_{n}_ms'])/float(a[f'e2e_borrow_{n}_ms']):.2f}" for n in ns), " steady", f"{float(a['speedup_vs_cusparse']) if a['speedup_vs_cusparse'] not in ('-','') else 0:.2f}")
PY
}
for r in 1; do
for m in gen:powerlaw:20,16,1 gen:emptyrows:1000000,16,1 gen:uniform:1000000,16,1; do for p in f64 f32; do
  run $m $p; run $m $p 200
done; done
run gen:circuit:1000000,5,4,100000,1 f64; run gen:circuit:1000000,5,4,100000,1 f64 200
run gen:elasticity:48 f64; run gen:elasticity:48 f64 100
run gen:elasticity:48 f32; run gen:elasticity:48 f32 100
done
TESSERA_TRACE=2 $B/tessera bench gen:dense:2000,2000 --methods tile --precision f64 > $OUT/c/tile.txt 2> $OUT/c/tile.trace
grep -o "TILE.s device build.*" $OUT/c/tile.trace | head -3
cd $OUT && tar czf c.tgz c && rm -rf c
