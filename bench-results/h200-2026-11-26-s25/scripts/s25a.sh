#!/usr/bin/env bash
# Session 25, run A (BCCOO's device build, first GPU run): gpu_bccoo (the device build against
# format.rs, the device facts against the host's, named BCCOO and AUTO building on the device);
# its device-build tests under memcheck; named BCCOO's analyze traced (device build, and
# TESSERA_BCCOO_DEVICE_BUILD=0: the host build from a downloaded CSR); AUTO end to end on 3D
# elasticity 24³-48³ f32 and f64 with the device build and with it off; every other test
# executable; the suite in f32 as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
(cd $B/tests && TESSERA_BIN=$T timeout 240 ./gpu_bccoo --test-threads=1 > $W/t-gpu_bccoo.txt 2>&1; echo "gpu_bccoo rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu_bccoo.txt)") | tee -a $W/a.txt
grep -h -E "panicked|FAILED|assert" -A4 $W/t-gpu_bccoo.txt | head -30
(cd $B/tests && echo "gpu_bccoo device memcheck: $(TESSERA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck ./gpu_bccoo bccoo_device_facts bccoo_device_build_serves --test-threads=1 2>&1 | tee $W/memcheck-gpu_bccoo.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/a.txt
for m in gen:elasticity:32 gen:elasticity:48; do for p in f32 f64; do for d in 1 0; do
  TESSERA_BCCOO_DEVICE_BUILD=$d TESSERA_TRACE=2 timeout 60 $T bench $m --methods bccoo --precision $p > $W/bccoo-${m//[:,]/_}-$p-dev$d.txt 2>&1
done; done; done
echo "named done at $(el)s" | tee -a $W/a.txt
for m in gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48; do for p in f32 f64; do for d in 1 0; do
  TESSERA_BCCOO_DEVICE_BUILD=$d TESSERA_TRACE=1 timeout 60 $T bench $m --methods auto --precision $p --out $W/e2e-${m//[:,]/_}-$p-dev$d > $W/e2e-${m//[:,]/_}-$p-dev$d.log 2>&1
done; done; done
echo "e2e done at $(el)s" | tee -a $W/a.txt
for t in $(ls $B/tests | grep -v '^gpu_bccoo$'); do [ $(el) -lt 420 ] && (cd $B/tests && TESSERA_BIN=$T timeout 100 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/a.txt; done
grep -h -E "panicked|FAILED" $W/t-*.txt | head -10
tar -czf $OUT/a.tgz -C $W .
for f in $W/bccoo-*.txt; do echo "== $(basename $f) $(grep -E "device build of" $f | tail -2 | cut -c1-190 | tr '\n' ' ')"; grep -E "analyze: bccoo in" $f | tail -3 | cut -c1-120 | tr '\n' ' '; echo; done
for f in $W/bccoo-*.txt; do echo "$(basename $f): $(grep -A3 '^matrix' $f | head -3 | cut -c1-230 | tail -1)"; done
for f in $W/e2e-*/bench.csv; do d=$(dirname $f); echo "$(basename $d) $(python3 scripts/e2e_summary.py $f | grep 'in place') | $(python3 -c "
import csv,sys
r=[x for x in csv.DictReader(open('$f')) if x['method'].startswith('auto')][0]
print(r['chosen'], round(float(r['spmv_ms'])*1000,1), 'us; cusp', round(float(r['cusparse_best_ms'])*1000,1))")"; done
