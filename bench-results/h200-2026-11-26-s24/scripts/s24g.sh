#!/usr/bin/env bash
# Session 24, run G (background builds from tessera's pool; the final code):
# gpu_tile and its device-build and scan tests under memcheck; the C GPU test; the build's
# kernels timed with ncu (dense 2000² f32); named TILE's analyze alone (TESSERA_TRACE=2, dense
# f32 and f64, random half-dense 3000² f32); AUTO end to end on those three, three rounds; the
# suite in f64 and f32 as time allows; every other test executable.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
(cd $B/tests && TESSERA_BIN=$T timeout 200 ./gpu_tile --test-threads=1 > $W/t-gpu_tile.txt 2>&1; echo "gpu_tile rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu_tile.txt)") | tee -a $W/g.txt
grep -h -E "panicked|FAILED" -A3 $W/t-gpu_tile.txt | head -20
(cd $B/tests && echo "gpu_tile device build+scan memcheck: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_tile device_ --test-threads=1 2>&1 | tee $W/memcheck-gpu_tile.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/g.txt
(cd $B/tests && echo "gpu_background memcheck: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_background --test-threads=1 2>&1 | tee $W/memcheck-gpu_background.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/g.txt
(timeout 30 $B/c/gpu_api > $W/c_gpu_api.txt 2>&1; echo "c_gpu_api rc=$? $(tail -n1 $W/c_gpu_api.txt)") | tee -a $W/g.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size
timeout 100 ncu --clock-control none --kernel-name regex:'tile_census|util_scan|tile_rows|tile_items|tile_fill' -c 10 --csv --page raw --metrics $M $T bench gen:dense:2000,2000 --methods tile --precision f32 > $W/ncu-f32-dense.csv 2>/dev/null
for p in f32 f64; do TESSERA_TRACE=2 timeout 60 $T bench gen:dense:2000,2000 --methods tile --precision $p > $W/tile-$p.txt 2>&1; done
TESSERA_TRACE=2 timeout 60 $T bench gen:random:3000,3000,1600,7 --methods tile --precision f32 > $W/tile-random-f32.txt 2>&1
for r in 1 2; do for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32" "gen:random:3000,3000,1600,7 f64"; do
  set -- $spec
  timeout 60 $T bench $1 --methods auto --precision $2 --out $W/e2e-${1//[:,]/_}-$2-$r > /dev/null 2>&1
done; done
echo "e2e done at $(el)s" | tee -a $W/g.txt
for t in $(ls $B/tests | grep -v '^gpu_tile$'); do (cd $B/tests && TESSERA_BIN=$T timeout 120 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/g.txt; done
grep -h -E "panicked|FAILED" $W/t-*.txt | head -10
for p in f64 f32; do
  [ $(el) -lt 400 ] && { timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/g.txt; }
done
tar -czf $OUT/g.tgz -C $W .
python3 - $W <<'PY'
import csv, glob, sys, collections
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    print("==", f.split("/")[-1])
    rows = list(csv.DictReader([l for l in open(f) if l.startswith('"')]))
    for r in rows[1:7]:
        print(f"  {r['Kernel Name'][:24]:24} {float(r['gpu__time_duration.sum'].replace(',',''))/1000:7.1f} us grid {r['launch__grid_size']}")
PY
for f in $W/tile-*.txt; do echo "== $f"; grep -E "device build of" $f | tail -4 | cut -c1-200; grep -E "analyze: tile in" $f | tail -8 | tr '\n' ' '; echo; done
for f in $W/e2e-*/bench.csv; do echo "$(basename $(dirname $f)) $(python3 scripts/e2e_summary.py $f | grep 'in place')"; done | sort
for p in f64 f32; do ls $W/suite-$p/bench.csv >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-$p/bench.csv | sed -n '1,/copied/p'; done
