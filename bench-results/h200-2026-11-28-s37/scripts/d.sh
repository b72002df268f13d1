#!/bin/bash
# Session 37, run D: TILE's device build on dense 2000^2 f64, ncu (full set) of the census and the fill; BCCOO's count and fill (full set) on elasticity 48 f64.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/d
ncu --set full -k regex:'tile_(census|fill)' -c 2 $B/tessera bench gen:dense:2000,2000 --methods tile --precision f64 > $OUT/d/tile-full.txt 2>&1
echo "tile ncu rc=$?"
ncu --set full -k regex:'bccoo_(block_count|fill)' -c 2 $B/tessera bench gen:elasticity:48 --methods bccoo --precision f64 > $OUT/d/bccoo-full.txt 2>&1
echo "bccoo ncu rc=$?"
grep -E "^  [a-z_]+ \(|Duration" $OUT/d/*.txt
cd $OUT && tar czf d.tgz d && rm -rf d
