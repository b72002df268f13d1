#!/bin/bash
# Session 37, run B: BCCOO's count a warp per block row, the fill's set-up from the tiles' entries and its stage without bank conflicts.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/b
$B/t/gpu_bccoo > $OUT/b/gpu_bccoo.txt 2>&1; echo "gpu_bccoo rc=$? $(grep 'test result' $OUT/b/gpu_bccoo.txt)"
grep -E "panicked|assert" $OUT/b/gpu_bccoo.txt | head -5
timeout 240 compute-sanitizer --tool memcheck $B/t/gpu_bccoo bccoo_device_build_writes > $OUT/b/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|test result' $OUT/b/memcheck.txt | tr '\n' ' ')"
for m in gen:elasticity:48 gen:elasticity:32; do for p in f64 f32; do for v in new; do
  bin=$B/tessera; [ $v = old ] && bin=$B/tessera-old
  f=$OUT/b/$v-${m//[:,]/_}-$p
  TESSERA_TRACE=2 $bin bench $m --methods bccoo --precision $p > $f.txt 2> $f.trace
  echo "$v $m $p: $(grep -o 'BCCOO.s device build of .*' $f.trace | sed 's/.*done at/done at/' | tr '\n' ' ' | cut -c1-200) | $(grep -E '^gen' $f.txt | grep bccoo | head -1 | awk '{print "analysis",$7,"spmv",$8}')"
done; done; done
ncu --section SpeedOfLight -k regex:'bccoo_(block_count|fill|tiles)' -c 3 $B/tessera bench gen:elasticity:48 --methods bccoo --precision f64 > $OUT/b/ncu-new.txt 2>&1
grep -E "^  bccoo|Duration" $OUT/b/ncu-new.txt
timeout 200 compute-sanitizer --tool racecheck $B/t/gpu_bccoo bccoo_device_build_serves > $OUT/b/racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|test result' $OUT/b/racecheck.txt | tr '\n' ' ')"
$B/t/gpu_background > $OUT/b/gpu_background.txt 2>&1; echo "gpu_background rc=$? $(grep 'test result' $OUT/b/gpu_background.txt)"
cd $OUT && tar czf b.tgz b && rm -rf b
