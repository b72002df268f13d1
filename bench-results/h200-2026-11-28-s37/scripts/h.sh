#!/bin/bash
# Session 37, run H: the final code (gpu-bundle at HEAD): every GPU test (`run tests`), the
# bundle's sanitizer subset (`run sanitize`).
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
O=$OUT; mkdir -p $O/h
OUT=$O/h/tests timeout 280 $B/run tests > $O/h/run-tests.txt 2>&1; echo "run tests rc=$?"
tail -30 $O/h/run-tests.txt
OUT=$O/h/sanitize timeout 240 $B/run sanitize > $O/h/run-sanitize.txt 2>&1; echo "run sanitize rc=$?"
tail -15 $O/h/run-sanitize.txt
echo "total $(( $(date +%s) - t0 )) s"
cd $O && tar czf h.tgz h && rm -rf h
