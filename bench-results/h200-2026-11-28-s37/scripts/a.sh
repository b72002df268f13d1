#!/bin/bash
# Session 37, run A: BCCOO's device build at HEAD (9f8b5ba): ncu detail of the count and fill kernels; traced builds.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/a
ncu --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats --section SpeedOfLight -k regex:'bccoo_(block_count|fill)' -c 2 $B/tessera-old bench gen:elasticity:48 --methods bccoo --precision f64 > $OUT/a/ncu-old.txt 2>&1
echo "ncu rc=$?"
for m in gen:elasticity:48 gen:elasticity:32; do for p in f64 f32; do
  TESSERA_TRACE=2 $B/tessera-old bench $m --methods bccoo --precision $p > $OUT/a/old-${m//[:,]/_}-$p.txt 2> $OUT/a/old-${m//[:,]/_}-$p.trace
  echo "old $m $p: $(grep -o 'BCCOO.s device build of .*' $OUT/a/old-${m//[:,]/_}-$p.trace | sed 's/.*done at/done at/' | tr '\n' ' ')"
done; done
cd $OUT && tar czf a.tgz a && rm -rf a
