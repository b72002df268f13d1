#!/usr/bin/env bash
# Session 23, run D: the random half-dense 3000² in f64, where TILE (padded Dns tiles) loses
# its trial to HOLA: what the device build and the trial cost the first 1,000 products
# (TESSERA_TRACE=2), and the device build against the host one, alternating, three rounds.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/d.txt
M=gen:random:3000,3000,1600,7
TESSERA_TRACE=2 timeout 60 $T bench $M --methods auto --precision f64 > $W/trace2.txt 2>&1
for r in 1 2 3; do
  TESSERA_TILE_DEVICE_BUILD=0 timeout 60 $T bench $M --methods auto --precision f64 --out $W/host-$r > /dev/null 2>&1
  timeout 60 $T bench $M --methods auto --precision f64 --out $W/dev-$r > /dev/null 2>&1
  TESSERA_TRIAL=0 timeout 60 $T bench $M --methods auto --precision f64 --out $W/notrial-$r > /dev/null 2>&1
done
tar -czf $OUT/d.tgz -C $W .
grep -vE "cuSPARSE|e2e first" $W/trace2.txt | grep -E "worker|device build|cuMemAlloc|e2e run|trial|swap" | cut -c1-250 | head -60
for k in host dev notrial; do for r in 1 2 3; do echo "-- $k $r $(python3 scripts/e2e_summary.py $W/$k-$r/bench.csv | grep -E 'in place')"; done; done
