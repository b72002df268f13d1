#!/usr/bin/env bash
# Session 23, run A (TILE's device build, first run): every test executable; gpu_tile's
# device-build test under memcheck; dense 2000² end to end with the host build
# (TESSERA_TILE_DEVICE_BUILD=0) and the device build, alternating, two rounds, f32 and f64;
# a TESSERA_TRACE=2 run of the swap; the suite end to end, f64 and f32, as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
for t in gpu_tile $(ls $B/tests | grep -v '^gpu_tile$'); do [ $(el) -gt 230 ] && { echo "$t not run: time" | tee -a $W/a.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/a.txt; done
grep -h -E "panicked|FAILED|failed" $W/t-*.txt | head -20
(cd $B/tests && echo "gpu_tile device build memcheck: $(TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --leak-check full ./gpu_tile device_build --test-threads=1 2>&1 | tee $W/mc-gpu_tile.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/a.txt
for p in f32 f64; do for r in 1 2; do
  TESSERA_TILE_DEVICE_BUILD=0 timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision $p --out $W/host$p-$r > $W/host$p-$r.txt 2>&1; echo "host build $p $r rc=$? at $(el)s" | tee -a $W/a.txt
  timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision $p --out $W/dev$p-$r > $W/dev$p-$r.txt 2>&1; echo "device build $p $r rc=$? at $(el)s" | tee -a $W/a.txt
done; done
TESSERA_TRACE=2 timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision f32 > $W/trace2.txt 2>&1
for p in f64 f32; do
  [ $(el) -gt 480 ] && break
  timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/a.txt
done
tar -czf $OUT/a.tgz -C $W .
for p in f32 f64; do for r in 1 2; do for k in host dev; do echo "-- $k $p $r"; python3 scripts/e2e_summary.py $W/$k$p-$r/bench.csv | grep -E "in place|host  "; done; done; done
grep -iE "tile|swap|device" $W/trace2.txt | head -12
ls $W/suite-f64 >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-*/bench.csv
