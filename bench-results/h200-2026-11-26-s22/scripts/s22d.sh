#!/usr/bin/env bash
# Session 22, run D (a5526d1: the direct host import checks beside its upload): every test
# executable; gpu_import under memcheck; the shared matrices end to end from host arrays with
# TESSERA_CHECK_BESIDE_UPLOAD=0 and the default, alternating, two rounds, f64 and f32, with a
# TESSERA_TRACE=1 run of as-caida; the suite end to end, f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
T0=$(date +%s)
T=$B/bin/tessera
el() { echo $(( $(date +%s)-T0 )); }
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
for t in $(ls $B/tests); do [ $(el) -gt 200 ] && { echo "$t not run: time" | tee -a $W/d.txt; continue; }; (cd $B/tests && TESSERA_BIN=$T timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/d.txt; done
(timeout 30 $B/c/gpu_api > $W/c_gpu_api.txt 2>&1; echo "c_gpu_api rc=$? $(tail -n1 $W/c_gpu_api.txt)") | tee -a $W/d.txt
(cd $B/tests && echo "gpu_import memcheck: $(timeout 100 compute-sanitizer --tool memcheck --leak-check full ./gpu_import --test-threads=1 2>&1 | tee $W/mc-gpu_import.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/d.txt
M="Pd watt_2 adder_dcop_05 zenios n1024-l1 bayer10 as-caida20071105 arrow sparse-images-1024_subset Groebner_id2003_aug bcsstk16 cit-HepPh Andrews"
for p in f64 f32; do for r in 1 2; do
  TESSERA_CHECK_BESIDE_UPLOAD=0 timeout 60 $T bench $M --methods auto --precision $p --out $W/ab-serial$p-$r > $W/ab-serial$p-$r.txt 2>&1; echo "serial $p $r rc=$? at $(el)s" | tee -a $W/d.txt
  timeout 60 $T bench $M --methods auto --precision $p --out $W/ab-beside$p-$r > $W/ab-beside$p-$r.txt 2>&1; echo "beside $p $r rc=$? at $(el)s" | tee -a $W/d.txt
done; done
TESSERA_TRACE=1 timeout 30 $T bench as-caida20071105 Groebner_id2003_aug --methods auto --precision f64 > $W/trace1.txt 2>&1
for p in f64 f32; do
  timeout $(( 585-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/d.txt
done
tar -czf $OUT/d.tgz -C $W .
for p in f64 f32; do echo "== $p from host: serial-1 beside-1 serial-2 beside-2"; python3 $B/ab_host.py $W/ab-{serial,beside}$p-1/bench.csv $W/ab-{serial,beside}$p-2/bench.csv | grep -E "as-caida|Groebner|sparse-images|arrow|bayer|geometric"; done
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
grep "as they are" $W/trace1.txt | head -4
