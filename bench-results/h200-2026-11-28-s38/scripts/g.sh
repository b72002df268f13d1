#!/bin/bash
# Session 38, run G: CSR_VECTOR's wide mode (before select::sure_of): gpu_wide, gpu_pieces; steady
# times against HOLA and cuSPARSE; lower means with TESSERA_WIDE=m; AUTO end to end on the dense
# and band shapes. (The "lower means" lines printed nothing: `grep -v ALG` dropped them; the CSVs
# are in run-g-wide/*-low-*.csv and the README reads them.)
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
t0=$(date +%s)
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/g
for t in gpu_wide gpu_pieces; do $B/t/$t > $OUT/g/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/g/$t.txt)"; grep -E 'panicked|FAILED' $OUT/g/$t.txt | head -5; done
show() { python3 - "$@" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
print(f"{sys.argv[2]:46s}", ' '.join(f"{r['method'].replace('cusparse:','')[:10]}={float(r['spmv_ms'])*1e3:.2f}" for r in rows), '|', ' '.join(r['params'][:30] for r in rows if r['method']=='csr_vector'))
PY
}
for m in gen:dense:2000,2000 gen:dense:1000,4000 gen:band:3000,900,900 gen:random:2000,2000,1100,7 gen:random:2000,100000,2000,1 gen:lp:2000,4000000,2000,1 gen:lp:4284,1092610,2600,1; do for p in f32 f64; do
  f=$OUT/g/${m//[:,]/_}-$p
  $B/tessera bench $m --methods hola,csr_vector --precision $p --steady --csv $f.csv > $f.txt 2>&1; show $f.csv "$m $p"
done; done
echo "-- lower means: pieces (default) against wide (TESSERA_PIECES=0 TESSERA_WIDE=256)"
for m in gen:dense:4000,1000 gen:dense:600,900 gen:random:4000,4000,500,1 gen:random:20000,20000,400,1; do for p in f32 f64; do
  f=$OUT/g/${m//[:,]/_}-$p-low
  TESSERA_PIECES=0 TESSERA_WIDE=256 $B/tessera bench $m --methods csr_vector --precision $p --steady --csv $f-w.csv > /dev/null 2>&1
  $B/tessera bench $m --methods csr_vector --precision $p --steady --csv $f-p.csv > /dev/null 2>&1
  show $f-p.csv "$m $p pieces" | grep -v ALG; show $f-w.csv "$m $p wide" | grep -v ALG
done; done
echo "-- AUTO end to end, read in place"
for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:band:3000,900,900 f64"; do
  set -- $spec; f=$OUT/g/auto-${1//[:,]/_}-$2
  $B/tessera bench $1 --methods auto --precision $2 --csv $f.csv > $f.txt 2>&1
  python3 - $f.csv "$1 $2" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
a=[r for r in rows if r['method']=='auto'][0]
ns=[1,10,100,1000,10000]
print(f"{sys.argv[2]:30s} {a['chosen'][:8]:8s} steady {float(a['speedup_vs_cusparse']):.2f} borrow", ' '.join(f"{float(a[f'cuspe2e_{n}_ms'])/float(a[f'e2e_borrow_{n}_ms']):.2f}" for n in ns), "host", ' '.join(f"{float(a[f'cuspe2e_host_{n}_ms'])/float(a[f'e2e_host_{n}_ms']):.2f}" for n in ns))
PY
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf g.tgz g && rm -rf g
