#!/usr/bin/env bash
# Session 22, run B: the direct host import as the default, and tessera's memory pool
# (TESSERA_ALLOC_POOL=1, opt-in): every test executable with the default; the tests that
# allocate most with the pool (and gpu_import under memcheck with it); the shared matrices end
# to end with the pool off and on, alternating, two rounds, f64 and f32; TESSERA_TRACE=3 on two
# small matrices both ways; the suite end to end, f64 and f32, with the default.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/b; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/b.txt
for t in $(ls $B/tests); do [ $(el) -gt 200 ] && { echo "$t not run: time" | tee -a $W/b.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/b.txt; done
for t in gpu gpu_import gpu_background gpu_faults gpu_borrow; do (cd $B/tests && TESSERA_ALLOC_POOL=1 TESSERA_BIN=$T timeout 100 ./$t --test-threads=1 > $W/pool-$t.txt 2>&1; echo "pool $t rc=$? at $(el)s $(grep -E "test result" $W/pool-$t.txt | tr "\n" " ")") | tee -a $W/b.txt; done
(TESSERA_ALLOC_POOL=1 timeout 30 $B/c/gpu_api > $W/pool-c_gpu_api.txt 2>&1; echo "pool c_gpu_api rc=$? $(tail -n1 $W/pool-c_gpu_api.txt)") | tee -a $W/b.txt
(cd $B/tests && echo "gpu_import memcheck pool: $(TESSERA_ALLOC_POOL=1 timeout 100 compute-sanitizer --tool memcheck --leak-check full ./gpu_import --test-threads=1 2>&1 | tee $W/mc-gpu_import.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/b.txt
M="Pd watt_2 adder_dcop_05 zenios n1024-l1 bayer10 as-caida20071105 arrow sparse-images-1024_subset Groebner_id2003_aug bcsstk16 cit-HepPh Andrews"
for p in f64 f32; do for r in 1 2; do
  timeout 60 $T bench $M --methods auto --precision $p --out $W/ab-plain$p-$r > $W/ab-plain$p-$r.txt 2>&1; echo "plain $p $r rc=$? at $(el)s" | tee -a $W/b.txt
  TESSERA_ALLOC_POOL=1 timeout 60 $T bench $M --methods auto --precision $p --out $W/ab-pool$p-$r > $W/ab-pool$p-$r.txt 2>&1; echo "pool $p $r rc=$? at $(el)s" | tee -a $W/b.txt
done; done
TESSERA_TRACE=3 timeout 30 $T bench as-caida20071105 zenios --methods auto --precision f64 > $W/trace-plain.txt 2>&1
TESSERA_TRACE=3 TESSERA_ALLOC_POOL=1 timeout 30 $T bench as-caida20071105 zenios --methods auto --precision f64 > $W/trace-pool.txt 2>&1
echo "traces at $(el)s" | tee -a $W/b.txt
for p in f64 f32; do
  timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/b.txt
done
tar -czf $OUT/b.tgz -C $W .
for p in f64 f32; do for f in host copy borrow; do echo "== $p from $f: plain-1 pool-1 plain-2 pool-2"; python3 $B/ab_host.py --from $f $W/ab-{plain,pool}$p-1/bench.csv $W/ab-{plain,pool}$p-2/bench.csv | tail -n 1; done; done
