#!/bin/bash
# Session 36, run I: the review mends (block_offsets shared by plan and layout): gpu_brc, its
# memcheck, gpu_background, gpu_trial; BRC alone on power-law 2^20 x 16, traced.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/i
for t in gpu_brc gpu_background gpu_trial; do $B/t/$t > $OUT/i/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/i/$t.txt)"; done
compute-sanitizer --tool memcheck $B/t/gpu_brc brc_gpu_fills_a_plan > $OUT/i/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|test result' $OUT/i/memcheck.txt | tr '\n' ' ')"
TESSERA_TRACE=2 $B/tessera bench gen:powerlaw:20,16,1 --methods brc --precision f64 > $OUT/i/pl.txt 2> $OUT/i/pl.trace
echo "$(grep -o 'BRC.s device [a-z ]*fill of .*' $OUT/i/pl.trace | head -1)"
cd $OUT && tar czf i.tgz i && rm -rf i
