#!/bin/bash
# Session 38, run C: the methods over the CSR arrays against BRC on short even rows (steady).
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/c
$B/tessera bench gen:dense:100,100 --methods auto --precision f64 > /dev/null 2>&1
for m in gen:grid2d:725 gen:lap3d7:160 gen:stencil27:100 gen:uniform:1000000,16,1 gen:elasticity:48; do for p in f32 f64; do
  f=$OUT/c/${m//[:,]/_}-$p
  $B/tessera bench $m --methods csr_vector,hola,brc --precision $p --steady --csv $f.csv > $f.txt 2>&1
  python3 - $f.csv "$m $p" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
print(f"{sys.argv[2]:34s}", ' '.join(f"{r['method'].replace('cusparse:','')[:10]}={float(r['spmv_ms'])*1e3:.2f}" for r in rows), '|', [r['params'][:60] for r in rows if r['method']=='csr_vector'])
PY
done; done
cd $OUT && tar czf c.tgz c && rm -rf c
