#!/usr/bin/env bash
# Session 30, run N: tile_spmv with a Dns tile's 16 values loaded before x is exchanged
# (gpu-carry/kpre) against the session's start (gpu-carry/korig), both compiled at run time
# through TESSERA_KERNELS_DIR (the product kernels; the formats are the same). Named TILE per
# product, --steady (each product checked against the host's), two rounds alternating; ncu
# duration and registers on dense 3000² and random 3000² at 97%, f64.
cd "$(dirname "$0")/../../.."
W=/tmp/n; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
M="gen:dense:2000,2000 gen:dense:3000,3000 gen:dense:4000,4000 gen:random:3000,3000,2900,7 gen:random:3008,3008,2918,7 gen:random:3000,3000,1600,7 gen:random:4000,4000,2600,3"
for r in 1 2; do for k in korig kpre; do
  TESSERA_KERNELS_DIR=$PWD/gpu-carry/$k TESSERA_CACHE_DIR=$W/cache-$k timeout 200 $B/bin/tessera bench $M --methods tile --precision both --steady --out $W/$k-$r > $W/$k-$r.txt 2>&1
  echo "$k r$r rc=$? $(python3 -c "
import csv
print(' '.join(r['matrix'].replace('gen:','')+'/'+r['type']+'='+r['spmv_ms']+('' if r['status']=='ok' else '!'+r['status']) for r in csv.DictReader(open('$W/$k-$r/bench.csv')) if r['method']=='tile'))
")"
done; done
for k in korig kpre; do for m in gen:dense:3000,3000 gen:random:3000,3000,2900,7; do
  TESSERA_KERNELS_DIR=$PWD/gpu-carry/$k TESSERA_CACHE_DIR=$W/cache-$k timeout 100 ncu --clock-control none -k regex:tile_spmv_f64 --launch-skip 10 --launch-count 1 --metrics gpu__time_duration.sum,launch__registers_per_thread $B/bin/tessera bench $m --methods tile --precision f64 --steady > $W/ncu.txt 2>&1
  echo "ncu $k $m: $(grep -E "gpu__time|registers" $W/ncu.txt | awk '{print $1"="$NF}' | tr '\n' ' ')"
done; done
