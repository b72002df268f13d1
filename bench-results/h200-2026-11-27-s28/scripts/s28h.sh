#!/usr/bin/env bash
# Session 28, run H: TILE's device fill issues all 16 rows' loads of a tile before it places
# any entry, where no row has more than 16 entries in the tile ("n"), against run G's CLI ("g").
# Tests (gpu_tile: the device build against the host's arrays, 19 matrices x 5 parameter sets x
# 2 types; gpu_background; gpu), gpu_tile's device-build test under memcheck; tile_fill's time
# under ncu; named TILE's analyze from device arrays, two rounds alternating.
cd "$(dirname "$0")/../../.."
W=/tmp/h; B=/tmp/hb; mkdir -p $W $B; tar -xJf gpu-carry/h.tar.xz -C $B
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tn
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
for t in gpu_tile gpu_background gpu; do timeout 150 $B/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/h.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
timeout 120 compute-sanitizer --tool memcheck $B/gpu_tile tile_gpu_device_build > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/h.txt
for v in g n; do for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do set -- $spec
  timeout 90 ncu --clock-control none -k regex:tile_fill --launch-count 3 --metrics gpu__time_duration.sum $B/t$v bench $1 --methods tile --precision $2 > $W/ncu-${1//[:,]/_}-$2-$v.txt 2>&1
  echo "ncu $v $1 $2: tile_fill us $(grep -E 'gpu__time_duration' $W/ncu-${1//[:,]/_}-$2-$v.txt | awk '{print $NF}' | tr '\n' ' ')" | tee -a $W/h.txt
done; done
for r in 1 2; do for v in g n; do
  for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do set -- $spec
    TESSERA_TRACE=2 timeout 60 $B/t$v bench $1 --methods tile --precision $2 >> $W/named-${1//[:,]/_}-$2-$v.txt 2>&1
  done
done; echo "named round $r at $(el)s" | tee -a $W/h.txt; done
for f in $W/named-*.txt; do grep -h "device build of" $f > ${f%.txt}-builds.txt; rm $f; done
tar -czf $OUT/h.tgz -C $W .
echo "== named TILE analyze from device arrays: the device build's done time (us)"
for f in $W/named-*-builds.txt; do echo "$(basename $f -builds.txt) $(grep -oE 'done at [0-9.]+' $f | cut -d' ' -f3 | sort -n | awk '{a[NR]=$1} END {print "n="NR, "q1="a[int(NR/4)+1], "median="(a[int(NR/2)]+a[int(NR/2)+1])/2, "q3="a[int(3*NR/4)]}')"; done
