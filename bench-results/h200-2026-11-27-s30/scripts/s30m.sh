#!/usr/bin/env bash
# Session 30, run M: an ELL tile of width 16 (more bytes than a Dns tile) stored as Dns instead,
# in the device build's census (gpu-carry/kdns/tile.cu, compiled at run time through
# TESSERA_KERNELS_DIR) against the session's start (gpu-carry/korig). Named TILE per product
# (--steady: the bench checks each product against the host's), two rounds alternating.
cd "$(dirname "$0")/../../.."
W=/tmp/m; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
M="gen:random:3000,3000,2900,7 gen:random:3000,3000,1800,7 gen:random:3008,3008,2918,7 gen:dense:3000,3000 gen:dense:2000,2000"
for r in 1 2; do for k in korig kdns; do
  TESSERA_KERNELS_DIR=$PWD/gpu-carry/$k TESSERA_CACHE_DIR=$W/cache-$k timeout 150 $B/bin/tessera bench $M --methods tile,hola --precision both --steady --out $W/$k-$r > $W/$k-$r.txt 2>&1
  echo "$k r$r rc=$?"; python3 -c "
import csv
for r in csv.DictReader(open('$W/$k-$r/bench.csv')):
    if r['method'] in ('tile','hola'): print('  ', r['matrix'], r['type'], r['method'], r['spmv_ms'], r['max_rel_error'], r['status'], r['params'].split(';')[1][:60] if r['method']=='tile' else '')
"
done; done
