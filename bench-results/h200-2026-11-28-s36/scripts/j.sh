#!/bin/bash
# Session 36, run J: the duplicate #defines removed from brc.cu: gpu_brc, its
# memcheck, gpu_background, gpu_trial; BRC alone on power-law 2^20 x 16, traced.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/j
for t in gpu_brc gpu_background gpu_trial; do $B/t/$t > $OUT/j/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/j/$t.txt)"; done
compute-sanitizer --tool memcheck $B/t/gpu_brc brc_gpu_fills_a_plan > $OUT/j/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|test result' $OUT/j/memcheck.txt | tr '\n' ' ')"
TESSERA_TRACE=2 $B/tessera bench gen:powerlaw:20,16,1 --methods brc --precision f64 > $OUT/j/pl.txt 2> $OUT/j/pl.trace
echo "$(grep -o 'BRC.s device [a-z ]*fill of .*' $OUT/j/pl.trace | head -1)"
cd $OUT && tar czf j.tgz j && rm -rf j
