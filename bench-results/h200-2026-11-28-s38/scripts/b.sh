#!/bin/bash
# Session 38, run B: CSR_VECTOR's pieces by piece length on long rows (steady), against HOLA and cuSPARSE.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/b
$B/tessera bench gen:dense:100,100 --methods auto --precision f64 > /dev/null 2>&1
show() { python3 - "$@" <<'PY'
import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{sys.argv[2]:44s} {r['method'][:22]:22s} {float(r['spmv_ms'])*1e3:7.2f} us")
PY
}
for m in gen:dense:2000,2000 gen:dense:4000,1000 gen:band:3000,900,900 gen:random:20000,20000,400,1 gen:random:4000,4000,500,1; do for p in f32 f64; do
  f=$OUT/b/${m//[:,]/_}-$p
  $B/tessera bench $m --methods hola --precision $p --steady --csv $f-hola.csv > /dev/null 2>&1; show $f-hola.csv "$m $p"
  for pc in 128 256 512 1024 2048; do
    TESSERA_PIECES=100 TESSERA_PIECE=$pc $B/tessera bench $m --methods csr_vector --precision $p --steady --csv $f-p$pc.csv > /dev/null 2>&1; show $f-p$pc.csv "$m $p piece=$pc" | grep -v cusparse
  done
done; done
cd $OUT && tar czf b.tgz b && rm -rf b
