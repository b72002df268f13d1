#!/bin/bash
# Session 38, run H: the wide mode with TILE kept without a trial on nearly dense matrices:
# gpu_wide, gpu_pieces, gpu_trial, gpu_background, gpu_tile; AUTO end to end on the dense and
# band shapes; the suite (AUTO, both types).
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera TESSERA_MATRICES=$B/matrices
t0=$(date +%s)
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/h
for t in gpu_wide gpu_pieces gpu_trial gpu_background gpu_tile; do $B/t/$t > $OUT/h/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/h/$t.txt)"; grep -E 'panicked' -A3 $OUT/h/$t.txt | head -8; done
echo "-- AUTO end to end (read in place, host arrays)"
for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:band:3000,900,900 f32" "gen:band:3000,900,900 f64" "gen:dense:1000,4000 f64"; do
  set -- $spec; f=$OUT/h/auto-${1//[:,]/_}-$2
  $B/tessera bench $1 --methods auto,tile,csr_vector,hola --precision $2 --csv $f.csv > $f.txt 2>&1
  python3 - $f.csv "$1 $2" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
a=[r for r in rows if r['method']=='auto'][0]
ns=[1,10,100,1000,10000]
named=' '.join(f"{r['method'][:10]}={float(r['spmv_ms'])*1e3:.2f}" for r in rows if r['method'] in ('tile','csr_vector','hola','cusparse:ALG_DEFAULT'))
print(f"{sys.argv[2]:28s} {a['chosen'][:10]:10s} auto={float(a['spmv_ms'])*1e3:.2f} {named} | st {float(a['speedup_vs_cusparse']):.2f} borrow", ' '.join(f"{float(a[f'cuspe2e_{n}_ms'])/float(a[f'e2e_borrow_{n}_ms']):.2f}" for n in ns), "host", ' '.join(f"{float(a[f'cuspe2e_host_{n}_ms'])/float(a[f'e2e_host_{n}_ms']):.2f}" for n in ns))
PY
done
$B/tessera bench --suite --methods auto --precision both --out $OUT/h/suite > $OUT/h/suite.txt 2>&1; echo "suite rc=$?"
grep -i 'geomean' $OUT/h/suite/command.txt | head -4
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf h.tgz h && rm -rf h
