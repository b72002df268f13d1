#!/usr/bin/env bash
# Session 28, run L: TILE's lane ranges (the census's, and the fill's where it has none kept)
# search only between the bounds a row without repeated columns puts on the first column of a
# tile (one entry for a dense row), the answer checked against its neighbours ("n"), against
# 38432d8's CLI ("k"). Tests (gpu_tile: the device build against the host's arrays, matrices
# with repeated columns among them; gpu_background; gpu), memcheck of the device build;
# tile_census and tile_fill under ncu; named TILE's analyze from device arrays, two rounds.
cd "$(dirname "$0")/../../.."
W=/tmp/l; B=/tmp/lb; mkdir -p $W $B; tar -xJf gpu-carry/l.tar.xz -C $B
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tn
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/l.txt
for t in gpu_tile gpu_background gpu; do timeout 150 $B/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/l.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
timeout 120 compute-sanitizer --tool memcheck $B/gpu_tile tile_gpu_device_build > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/l.txt
for v in k n; do for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do set -- $spec
  timeout 90 ncu --clock-control none -k regex:"tile_(census|fill)" --launch-count 4 --metrics gpu__time_duration.sum $B/t$v bench $1 --methods tile --precision $2 > $W/ncu.txt 2>&1
  echo "ncu $v $1 $2: $(grep -E 'tile_(census|fill)|gpu__time_duration' $W/ncu.txt | paste - - | awk '{print $1, $NF}' | tr '\n' ' ')" | tee -a $W/l.txt
done; done; rm -f $W/ncu.txt
for r in 1 2; do for v in k n; do
  for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do set -- $spec
    TESSERA_TRACE=2 timeout 60 $B/t$v bench $1 --methods tile --precision $2 >> $W/named-${1//[:,]/_}-$2-$v.txt 2>&1
  done
done; echo "named round $r at $(el)s" | tee -a $W/l.txt; done
for f in $W/named-*.txt; do grep -h "device build of" $f > ${f%.txt}-builds.txt; rm $f; done
tar -czf $OUT/l.tgz -C $W .
echo "== named TILE analyze from device arrays: the device build's done time (us)"
for f in $W/named-*-builds.txt; do echo "$(basename $f -builds.txt) $(grep -oE 'done at [0-9.]+' $f | cut -d' ' -f3 | sort -n | awk '{a[NR]=$1} END {print "n="NR, "q1="a[int(NR/4)+1], "median="(a[int(NR/2)]+a[int(NR/2)+1])/2, "q3="a[int(3*NR/4)]}')"; done
