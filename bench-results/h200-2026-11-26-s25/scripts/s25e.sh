#!/usr/bin/env bash
# Session 25, run E: the grid of BCCOO's count kernel (a thread per block row, grid-stride)
# capped at 1, 2 or 4 blocks of 256 threads per SM against uncapped (TESSERA_BCCOO_COUNT_GRID, a
# knob of this experiment only): run D's ncu read 1.68 GB for elasticity 48³'s 103 MB of
# columns (3.4 blocks per SM: the walks' lines thrash the L1) but 58 MB on 32³ (1 per SM).
# gpu_bccoo's device tests with the cap at 1 per SM (132 blocks on an H200); named BCCOO's
# analyze traced on elasticity 32³ f32, 48³ f32 and f64 with each cap.
cd "$(dirname "$0")/../../.."
W=/tmp/e; mkdir -p $W; B=/tmp/cap; mkdir -p $B; tar -xJf gpu-carry/cap.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T=$B/tessera
SM=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "# $SM" | tee $W/e.txt
(cd $B && TESSERA_BCCOO_COUNT_GRID=132 timeout 120 ./gpu_bccoo bccoo_device --test-threads=1 > $W/t-gpu_bccoo.txt 2>&1; echo "gpu_bccoo device tests, grid 132: rc=$? $(grep -E 'test result' $W/t-gpu_bccoo.txt)") | tee -a $W/e.txt
for r in 1 2; do for cap in 132 264 528 65536; do for spec in "gen:elasticity:32 f32" "gen:elasticity:48 f32" "gen:elasticity:48 f64"; do
  set -- $spec
  TESSERA_BCCOO_COUNT_GRID=$cap TESSERA_TRACE=2 timeout 60 $T bench $1 --methods bccoo --precision $2 > $W/bccoo-${1//[:,]/_}-$2-g$cap-$r.txt 2>&1
done; done; done
tar -czf $OUT/e.tgz -C $W .
for f in $W/bccoo-*.txt; do echo "$(basename $f .txt): $(grep -E 'device build of' $f | sed -E 's/.*read back at ([0-9.]+) us.*done at ([0-9.]+) us/\1 \2/' | tr '\n' ';') | $(grep -E 'analyze: bccoo in' $f | sed -E 's/.*in ([0-9.]+) us/\1/' | tr '\n' ' ')"; done
