#!/usr/bin/env bash
# Session 24, run B (the leaner device build): gpu_tile (with the scan test) and its device-build
# and scan tests under memcheck and racecheck; the build's kernels timed with ncu; named TILE's
# analyze alone (TESSERA_TRACE=2); AUTO on dense 2000² f32/f64 and random half-dense 3000² f32
# with the build started after 8, 20, 50 and the default products, alternating, two rounds;
# then the other test executables as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
(cd $B/tests && TESSERA_BIN=$T timeout 200 ./gpu_tile --test-threads=1 > $W/t-gpu_tile.txt 2>&1; echo "gpu_tile rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu_tile.txt)") | tee -a $W/b.txt
grep -h -E "panicked|FAILED" -A3 $W/t-gpu_tile.txt | head -20
for tool in memcheck racecheck; do
  (cd $B/tests && echo "gpu_tile device build+scan $tool: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool ./gpu_tile device_ --test-threads=1 2>&1 | tee $W/$tool-gpu_tile.log | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/b.txt
done
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__registers_per_thread
for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do
  set -- $spec
  timeout 100 ncu --clock-control none --kernel-name regex:'tile_census|util_scan|tile_rows|tile_items|tile_fill' -c 15 --csv --page raw --metrics $M $T bench $1 --methods tile --precision $2 > $W/ncu-$2-${1//[:,]/_}.csv 2>/dev/null
done
for p in f32 f64; do TESSERA_TRACE=2 timeout 60 $T bench gen:dense:2000,2000 --methods tile --precision $p > $W/tile-$p.txt 2>&1; done
TESSERA_TRACE=2 timeout 60 $T bench gen:random:3000,3000,1600,7 --methods tile --precision f32 > $W/tile-random-f32.txt 2>&1
echo "bench start at $(el)s" | tee -a $W/b.txt
for r in 1 2; do for after in 8 20 50 def; do
  for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do
    set -- $spec
    if [ $after = def ]; then unset TESSERA_BACKGROUND_AFTER; else export TESSERA_BACKGROUND_AFTER=$after; fi
    timeout 60 $T bench $1 --methods auto --precision $2 --out $W/e2e-${1//[:,]/_}-$2-a$after-$r > /dev/null 2>&1
  done
done; done
unset TESSERA_BACKGROUND_AFTER
echo "bench done at $(el)s" | tee -a $W/b.txt
for t in $(ls $B/tests | grep -v '^gpu_tile$'); do [ $(el) -gt 480 ] && { echo "$t not run: time" | tee -a $W/b.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 120 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/b.txt; done
grep -h -E "panicked|FAILED" $W/t-*.txt | head -10
tar -czf $OUT/b.tgz -C $W .
python3 - $W <<'PY'
import csv, glob, sys, collections
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    print("==", f.split("/")[-1])
    rows = list(csv.DictReader([l for l in open(f) if l.startswith('"')]))
    agg = collections.OrderedDict()
    for r in rows[1:]:
        agg.setdefault(r["Kernel Name"][:24], []).append(r)
    for k, v in agg.items():
        t = sorted(float(x["gpu__time_duration.sum"].replace(',', '')) for x in v)
        print(f"  {k:24} n={len(v)} med {t[len(t)//2]/1000:7.1f} us  rd {v[0]['dram__bytes_read.sum']:>12} wr {v[0]['dram__bytes_write.sum']:>12} grid {v[0]['launch__grid_size']}")
PY
for f in $W/tile-*.txt; do echo "== $f"; grep -E "device build of" $f | tail -5 | cut -c1-200; grep -E "analyze: tile in" $f | tail -5 | tr '\n' ' '; echo; done
for f in $W/e2e-*/bench.csv; do echo "$(basename $(dirname $f)) $(python3 scripts/e2e_summary.py $f | grep 'in place')"; done | sort
