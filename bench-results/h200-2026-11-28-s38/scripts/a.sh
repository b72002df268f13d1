#!/bin/bash
# Session 38, run A: traces of first products from host arrays and read in place (AUTO), and TILE's build spans.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/a
$B/tessera bench gen:dense:100,100 --methods auto --precision f64 > /dev/null 2>&1
for spec in "gen:grid2d:725 f32" "gen:grid2d:725 f64" "gen:dense:2000,2000 f64" "gen:stencil27:100 f32" "gen:uniform:1000000,16,1 f64"; do
  set -- $spec; f=$OUT/a/${1//[:,]/_}-$2
  TESSERA_TRACE=3 $B/tessera bench $1 --methods auto --precision $2 --repeat 7 --csv $f.csv > $f.txt 2> $f.trace
  python3 - $f.csv "$1 $2" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
a=[r for r in rows if r['method'].startswith('auto')][0]
ns=[1,10,100]
print(f"{sys.argv[2]:32s} {a['chosen'][:8]:8s} borrow", ' '.join(f"{float(a[f'cuspe2e_{n}_ms'])/float(a[f'e2e_borrow_{n}_ms']):.2f}" for n in ns), " host", ' '.join(f"{float(a[f'cuspe2e_host_{n}_ms'])/float(a[f'e2e_host_{n}_ms']):.2f}" for n in ns), "host1", a['e2e_host_1_ms'], a['cuspe2e_host_1_ms'])
PY
done
TESSERA_TRACE=3 $B/tessera bench gen:dense:2000,2000 --methods tile --precision f64 > $OUT/a/tile.txt 2> $OUT/a/tile.trace
cd $OUT && xz -T4 a/*.trace; tar czf a.tgz a && rm -rf a
