#!/usr/bin/env bash
# Session 28, run G: TILE's device build allocates its values while the census runs, sized for
# a format without padding (kept when the census finds none, else freed in the stream's order
# and allocated at the real size after the read-back), on top of run D's one-launch scans.
# Tests (gpu_tile: the device build against the host's arrays on 19 matrices x 5 parameter
# sets, padded and not; gpu_bccoo, gpu_background, gpu_borrow, gpu), gpu_tile's device-build
# test under memcheck; named TILE's analyze from device arrays, "n" (this) against "s" (run D's
# CLI: the scans only), dense 2000² f32 and f64 (no padding) and random half-dense 3000² f32
# (padded tiles), two rounds alternating.
cd "$(dirname "$0")/../../.."
W=/tmp/g; B=/tmp/gb; mkdir -p $W $B; tar -xJf gpu-carry/g.tar.xz -C $B
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tn
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
for t in gpu_tile gpu_bccoo gpu_background gpu_borrow gpu; do timeout 150 $B/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/g.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
timeout 120 compute-sanitizer --tool memcheck $B/gpu_tile tile_gpu_device_build > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/g.txt
for r in 1 2; do for v in s n; do
  for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do set -- $spec
    TESSERA_TRACE=2 timeout 60 $B/t$v bench $1 --methods tile --precision $2 >> $W/named-${1//[:,]/_}-$2-$v.txt 2>&1
  done
done; echo "named round $r at $(el)s" | tee -a $W/g.txt; done
for f in $W/named-*.txt; do grep -h "device build of" $f > ${f%.txt}-builds.txt; rm $f; done
tar -czf $OUT/g.tgz -C $W .
echo "== named TILE analyze from device arrays: the device build's done time (us)"
for f in $W/named-*-builds.txt; do echo "$(basename $f -builds.txt) $(grep -oE 'done at [0-9.]+' $f | cut -d' ' -f3 | sort -n | awk '{a[NR]=$1} END {print "n="NR, "q1="a[int(NR/4)+1], "median="(a[int(NR/2)]+a[int(NR/2)+1])/2, "q3="a[int(3*NR/4)]}')"; done
