#!/bin/bash
# Session 37, run J: BCCOO's facts kernel with one binary search per earlier row shared by the three widths.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/j
for t in gpu_bccoo gpu_background; do $B/t/$t > $OUT/j/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/j/$t.txt)"; grep -E "panicked" $OUT/j/$t.txt | head -3; done
timeout 200 compute-sanitizer --tool memcheck $B/t/gpu_bccoo bccoo_device_facts > $OUT/j/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|test result' $OUT/j/memcheck.txt | tr '\n' ' ')"
for m in gen:elasticity:48 gen:elasticity:32; do for p in f64 f32; do
  f=$OUT/j/${m//[:,]/_}-$p
  TESSERA_TRACE=2 $B/tessera bench $m --methods bccoo --precision $p > $f.txt 2> $f.trace
  echo "$m $p: $(grep -o "BCCOO's device build of.*done at [0-9.]*" $f.trace | sed 's/.*done at //' | sort -n | awk '{a[NR]=$1} END {print "n="NR, "q1",a[int(NR/4)+1], "med",a[int(NR/2)+1], "q3",a[int(3*NR/4)+1]}') | $(grep -E '^gen' $f.txt | grep bccoo | head -1 | awk '{print "spmv",$7}')"
done; done
for m in gen:elasticity:48 gen:elasticity:32; do
ncu --section SpeedOfLight --section InstructionStats -k regex:'bccoo_facts' -c 1 $B/tessera bench $m --methods bccoo --precision f32 > $OUT/j/ncu-${m//[:,]/_}.txt 2>&1
echo "$m facts: $(grep -E "Duration|Executed Instructions  " $OUT/j/ncu-${m//[:,]/_}.txt | tr -s ' ' | tr '\n' ' ')"
TESSERA_KERNELS_DIR=$B/oldk ncu --section SpeedOfLight --section InstructionStats -k regex:'bccoo_facts' -c 1 $B/tessera bench $m --methods bccoo --precision f32 > $OUT/j/ncu-old-${m//[:,]/_}.txt 2>&1
echo "$m facts (HEAD's kernel): $(grep -E "Duration|Executed Instructions  " $OUT/j/ncu-old-${m//[:,]/_}.txt | tr -s ' ' | tr '\n' ' ')"
done
cd $OUT && tar czf j.tgz j && rm -rf j
