#!/usr/bin/env bash
# Session 32, run G: run F's slow e2e products (rows of 500, f64, AUTO as is), traced: the
# workers' steps (TESSERA_TRACE=2) against the e2e loop's clock.
cd "$(dirname "$0")/../../.."
W=/tmp/g; mkdir -p $W; xz -dc gpu-carry/cli/tessera.xz > $W/tessera; chmod +x $W/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
M=gen:random:4000,4000,0.125,3
TESSERA_TRACE=2 timeout 100 $W/tessera bench $M --methods auto --precision f64 --out $W/t > $W/t.txt 2> $W/t.err; echo "rc=$?"
grep -nE "worker|e2e run|background|swap|trial" $W/t.err | cut -c1-300 | tail -60
tar -czf $OUT/g.tgz -C $W --exclude=tessera .
