#!/usr/bin/env bash
# Session 23, run C (coalesced device build, started after 100 products): every test
# executable; gpu_tile's device-build tests under memcheck; dense 2000² and a random half-dense
# 3000² (TILE's mixed tiles) end to end, the device build against the host build
# (TESSERA_TILE_DEVICE_BUILD=0), alternating, two rounds, f32 and f64, with a TESSERA_TRACE=2
# run; the suite end to end, f64 and f32, as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
for t in gpu_tile $(ls $B/tests | grep -v '^gpu_tile$'); do [ $(el) -gt 230 ] && { echo "$t not run: time" | tee -a $W/c.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/c.txt; done
grep -h -E "panicked|FAILED" $W/t-*.txt | head -20
(cd $B/tests && echo "gpu_tile device build memcheck: $(timeout 150 compute-sanitizer --tool memcheck --leak-check full ./gpu_tile device_build --test-threads=1 2>&1 | tee $W/mc-gpu_tile.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/c.txt
(timeout 30 $B/c/gpu_api > $W/c_gpu_api.txt 2>&1; echo "c_gpu_api rc=$? $(tail -n1 $W/c_gpu_api.txt)") | tee -a $W/c.txt
M="gen:dense:2000,2000 gen:random:3000,3000,1600,7"
for p in f32 f64; do for r in 1 2; do
  TESSERA_TILE_DEVICE_BUILD=0 timeout 60 $T bench $M --methods auto --precision $p --out $W/host$p-$r > $W/host$p-$r.txt 2>&1; echo "host build $p $r rc=$? at $(el)s" | tee -a $W/c.txt
  timeout 60 $T bench $M --methods auto --precision $p --out $W/dev$p-$r > $W/dev$p-$r.txt 2>&1; echo "device build $p $r rc=$? at $(el)s" | tee -a $W/c.txt
done; done
TESSERA_TRACE=2 TESSERA_BACKGROUND_AFTER=0 timeout 60 $T bench $M --methods auto,tile --precision f32 > $W/trace2.txt 2>&1
for p in f64 f32; do
  [ $(el) -gt 470 ] && break
  timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/c.txt
done
tar -czf $OUT/c.tgz -C $W .
for p in f32 f64; do for r in 1 2; do for k in host dev; do echo "-- $k $p $r"; python3 scripts/e2e_summary.py $W/$k$p-$r/bench.csv | grep -E "in place|host  |copied|N="; done; done; done
grep -E "device build of" $W/trace2.txt | cut -c1-200
ls $W/suite-f64 >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-*/bench.csv
