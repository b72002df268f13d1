#!/bin/bash
# Session 36, run H: the final code (gpu-bundle at HEAD): every GPU test (`run tests`), the
# bundle's sanitizer subset (`run sanitize`), then ncu of TILE's and BCCOO's device builds (the
# kernels of part 4's other two formats: where their build time goes, for the next session).
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
O=$OUT; mkdir -p $O/h
OUT=$O/h/tests timeout 240 $B/run tests > $O/h/run-tests.txt 2>&1; echo "run tests rc=$?"
tail -30 $O/h/run-tests.txt
OUT=$O/h/sanitize timeout 200 $B/run sanitize > $O/h/run-sanitize.txt 2>&1; echo "run sanitize rc=$?"
tail -15 $O/h/run-sanitize.txt
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
timeout 100 ncu --kernel-name regex:'bccoo_facts|bccoo_block_count|util_scan|bccoo_fill|bccoo_tiles' --launch-count 6 --section SpeedOfLight $B/bin/tessera bench gen:elasticity:48 --methods bccoo --precision f64 > $O/h/bccoo.ncu 2>&1
echo "== bccoo build kernels (elasticity 48, f64):"; grep -E '^  [a-z_]+[0-9f]* \(|Duration' $O/h/bccoo.ncu | paste - - | sed 's/Context.*Duration/Duration/' | tr -s ' '
timeout 100 ncu --kernel-name regex:'tile_census|tile_rows_census|tile_items|tile_fill|util_scan' --launch-count 7 --section SpeedOfLight $B/bin/tessera bench gen:dense:2000,2000 --methods tile --precision f64 > $O/h/tile.ncu 2>&1
echo "== tile build kernels (dense 2000², f64):"; grep -E '^  [a-z_]+[0-9f]* \(|Duration' $O/h/tile.ncu | paste - - | sed 's/Context.*Duration/Duration/' | tr -s ' '
echo "total $(( $(date +%s) - t0 )) s"
cd $O && tar czf h.tgz h && rm -rf h
