#!/usr/bin/env bash
# Session 23, run H (a0b7a94's tessera alone): the methods over the CSR arrays on the matrices
# AUTO gives TILE, which run their first 100 products: HOLA and CSR_VECTOR (and TILE) per
# product against cuSPARSE, dense 2000² and random half-dense 3000², f32 and f64, two rounds.
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/h/bin; xz -dc gpu-carry/tessera.xz > /tmp/h/bin/tessera; chmod +x /tmp/h/bin/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
W=/tmp/h; T=$W/bin/tessera
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/h.txt
for r in 1 2; do for p in f32 f64; do
  timeout 90 $T bench gen:dense:2000,2000 gen:random:3000,3000,1600,7 --methods hola,csr_vector,tile --precision $p --out $W/m-$p-$r > $W/m-$p-$r.txt 2>&1
done; done
rm -rf $W/bin; tar -czf $OUT/h.tgz -C $W .
for f in $W/m-*/bench.csv; do python3 -c "
import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    print(sys.argv[1].split('/')[-2], r['matrix'][:18].ljust(18), r['method'][:22].ljust(22), r['spmv_ms'], r['params'][:90])
" $f; done
