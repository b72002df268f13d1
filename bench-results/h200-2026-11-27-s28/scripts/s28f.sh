#!/usr/bin/env bash
# Session 28, run F (run D's bundle): named TILE's and BCCOO's analyze of matrices kept on the
# device (TESSERA_TRACE=2: the device build's own trace line, from the end-to-end part's creates
# from device arrays; run E's --steady benches analyzed a host copy, which builds on the host),
# new (one-launch scans) against 5e0b798's CLI ("old"), two rounds alternating.
cd "$(dirname "$0")/../../.."
W=/tmp/f; B=/tmp/fb; mkdir -p $W $B; tar -xJf gpu-carry/d.tar.xz -C $B; xz -dc gpu-carry/tnew.xz > $B/to; chmod +x $B/to
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
for r in 1 2; do for v in o n; do
  for spec in "gen:dense:2000,2000 f32 tile" "gen:dense:2000,2000 f64 tile" "gen:elasticity:32 f32 bccoo" "gen:elasticity:48 f64 bccoo"; do set -- $spec
    for k in 1; do TESSERA_TRACE=2 timeout 60 $B/t$v bench $1 --methods $3 --precision $2 --repeat 7 >> $W/named-${1//[:,]/_}-$2-$v.txt 2>&1; done
  done
done; echo "named round $r at $(el)s" | tee -a $W/f.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/f.tgz -C $W .
echo "== named analyze: each device build's done time (us)"
for f in $W/named-*.txt; do echo "$(basename $f .txt): $(grep -oE "device build of .*done at [0-9.]+" $f | grep -oE 'done at [0-9.]+' | cut -d' ' -f3 | sort -n | tr '\n' ' ')"; done
