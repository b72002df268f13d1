#!/usr/bin/env bash
# Session 23, run G (Dns tiles staged in shared memory): every test executable; gpu_tile's
# device-build tests under memcheck, racecheck and synccheck; named TILE's analyze alone
# (TESSERA_TRACE=2, --methods tile) on dense 2000² f32 and f64 and the random half-dense 3000²
# f32; dense 2000² end to end, two rounds, f32 and f64; the suite in f32 as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/g.txt
for t in gpu_tile $(ls $B/tests | grep -v '^gpu_tile$'); do [ $(el) -gt 230 ] && { echo "$t not run: time" | tee -a $W/g.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/g.txt; done
grep -h -E "panicked|FAILED" $W/t-*.txt | head -20
for tool in memcheck racecheck synccheck; do
  (cd $B/tests && echo "gpu_tile device build $tool: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool ./gpu_tile device_build_writes --test-threads=1 2>&1 | tee $W/$tool-gpu_tile.log | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/g.txt
done
(timeout 30 $B/c/gpu_api > $W/c_gpu_api.txt 2>&1; echo "c_gpu_api rc=$? $(tail -n1 $W/c_gpu_api.txt)") | tee -a $W/g.txt
for p in f32 f64; do
  TESSERA_TRACE=2 timeout 60 $T bench gen:dense:2000,2000 --methods tile --precision $p > $W/tile-$p.txt 2>&1
done
TESSERA_TRACE=2 timeout 60 $T bench gen:random:3000,3000,1600,7 --methods tile --precision f32 > $W/tile-random-f32.txt 2>&1
for r in 1 2; do for p in f32 f64; do
  timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision $p --out $W/dev$p-$r > /dev/null 2>&1
done; done
[ $(el) -lt 420 ] && { timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision f32 --out $W/suite-f32 > $W/suite-f32.txt 2>&1; echo "suite f32 rc=$? at $(el)s" | tee -a $W/g.txt; }
tar -czf $OUT/g.tgz -C $W .
for f in $W/tile-*.txt; do echo "== $f"; grep -E "device build of|analyze: tile in" $f | tail -6 | cut -c1-200; grep -E "^gen:.*tile " $f | cut -c1-150; done
for f in $W/dev*/bench.csv; do echo "$f $(python3 scripts/e2e_summary.py $f | grep 'in place')"; done
ls $W/suite-f32 >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-f32/bench.csv | sed -n '1,/copied/p'
