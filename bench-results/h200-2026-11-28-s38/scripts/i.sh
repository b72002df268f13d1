#!/bin/bash
# Session 38, run I: the final code (gpu-bundle at HEAD): every GPU test (`run tests`), the
# bundle's sanitizer subset (`run sanitize`).
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
O=$OUT; mkdir -p $O/i
OUT=$O/i/tests timeout 300 $B/run tests > $O/i/run-tests.txt 2>&1; echo "run tests rc=$?"
tail -32 $O/i/run-tests.txt
OUT=$O/i/sanitize timeout 250 $B/run sanitize > $O/i/run-sanitize.txt 2>&1; echo "run sanitize rc=$?"
tail -22 $O/i/run-sanitize.txt
echo "total $(( $(date +%s) - t0 )) s"
cd $O && tar czf i.tgz i && rm -rf i
