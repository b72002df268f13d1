#!/bin/bash
# Session 38, run E: the trial's events made before the build's synchronize: gpu_background,
# gpu_trial, then the suite (AUTO, both types).
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera TESSERA_MATRICES=$B/matrices
t0=$(date +%s)
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/e
for t in gpu_background gpu_trial; do $B/t/$t > $OUT/e/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/e/$t.txt)"; done
$B/tessera bench --suite --methods auto --precision both --out $OUT/e/suite > $OUT/e/suite.txt 2>&1; echo "suite rc=$?"
grep -i 'geomean\|end to end' $OUT/e/suite/command.txt | head -12
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf e.tgz e && rm -rf e
