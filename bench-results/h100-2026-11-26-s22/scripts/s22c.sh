#!/usr/bin/env bash
# Session 22, run C (a95b6d1: tessera's pool on by default, the direct host import, the fault
# fix): every test executable; gpu_import and gpu_background under memcheck; the shared
# matrices end to end with TESSERA_ALLOC_POOL=0 and the default, alternating, two rounds, f64;
# dense 2000² f32 traced (TESSERA_TRACE=2: the background build's phases; =3: product calls
# over 200 us); the suite end to end, f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
for t in $(ls $B/tests); do [ $(el) -gt 200 ] && { echo "$t not run: time" | tee -a $W/c.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/c.txt; done
(timeout 30 $B/c/gpu_api > $W/c_gpu_api.txt 2>&1; echo "c_gpu_api rc=$? $(tail -n1 $W/c_gpu_api.txt)") | tee -a $W/c.txt
for t in gpu_import gpu_background; do (cd $B/tests && echo "$t memcheck: $(timeout 100 compute-sanitizer --tool memcheck --leak-check full ./$t --test-threads=1 2>&1 | tee $W/mc-$t.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/c.txt; done
M="Pd watt_2 adder_dcop_05 zenios n1024-l1 bayer10 as-caida20071105 arrow sparse-images-1024_subset Groebner_id2003_aug bcsstk16 cit-HepPh Andrews"
for r in 1 2; do
  TESSERA_ALLOC_POOL=0 timeout 60 $T bench $M --methods auto --precision f64 --out $W/ab-nopool-$r > $W/ab-nopool-$r.txt 2>&1; echo "nopool $r rc=$? at $(el)s" | tee -a $W/c.txt
  timeout 60 $T bench $M --methods auto --precision f64 --out $W/ab-pool-$r > $W/ab-pool-$r.txt 2>&1; echo "pool $r rc=$? at $(el)s" | tee -a $W/c.txt
done
TESSERA_TRACE=2 timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision f32 > $W/trace2-dense.txt 2>&1
TESSERA_TRACE=3 timeout 60 $T bench gen:dense:2000,2000 --methods auto --precision f32 > $W/trace3-dense.txt 2>&1
echo "traces at $(el)s" | tee -a $W/c.txt
for p in f64 f32; do
  timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/c.txt
done
cp $B/../scripts/e2e_summary.py $W/ 2>/dev/null
tar -czf $OUT/c.tgz -C $W .
for f in host copy; do echo "== from $f: nopool-1 pool-1 nopool-2 pool-2"; python3 $B/ab_host.py --from $f $W/ab-{nopool,pool}-1/bench.csv $W/ab-{nopool,pool}-2/bench.csv | tail -n 1; done
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
