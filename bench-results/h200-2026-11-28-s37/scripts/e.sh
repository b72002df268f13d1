#!/bin/bash
# Session 37, run E: BCCOO's count specialised by block height (own window from the first-entry ballot, one search per other row), the fill's middle range first.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/e
$B/t/gpu_bccoo > $OUT/e/gpu_bccoo.txt 2>&1; echo "gpu_bccoo rc=$? $(grep 'test result' $OUT/e/gpu_bccoo.txt)"
grep -E "panicked|assert" $OUT/e/gpu_bccoo.txt | head -5
timeout 240 compute-sanitizer --tool memcheck $B/t/gpu_bccoo bccoo_device_build_writes > $OUT/e/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|test result' $OUT/e/memcheck.txt | tr '\n' ' ')"
timeout 240 compute-sanitizer --tool racecheck $B/t/gpu_bccoo bccoo_device_build_writes > $OUT/e/racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|test result' $OUT/e/racecheck.txt | tr '\n' ' ')"
for m in gen:elasticity:48 gen:elasticity:32; do for p in f64 f32; do
  f=$OUT/e/${m//[:,]/_}-$p
  TESSERA_TRACE=2 $B/tessera bench $m --methods bccoo --precision $p > $f.txt 2> $f.trace
  echo "$m $p: $(grep -o 'BCCOO.s device build of .*' $f.trace | sed 's/.*done at/done at/' | tr '\n' ' ' | cut -c1-200) | $(grep -E '^gen' $f.txt | grep bccoo | head -1 | awk '{print "analysis",$7,"spmv",$8}')"
done; done
ncu --section SpeedOfLight --section InstructionStats -k regex:'bccoo_(facts|block_count|fill|tiles)' -c 4 $B/tessera bench gen:elasticity:48 --methods bccoo --precision f64 > $OUT/e/ncu.txt 2>&1
grep -E "^  bccoo|Duration|Executed Instructions  " $OUT/e/ncu.txt
$B/t/gpu_background > $OUT/e/gpu_background.txt 2>&1; echo "gpu_background rc=$? $(grep 'test result' $OUT/e/gpu_background.txt)"
cd $OUT && tar czf e.tgz e && rm -rf e
