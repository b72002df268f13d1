#!/usr/bin/env bash
# Session 27, run I: the staged upload with its copy threads started once per upload ("new")
# against 79c08b8 ("old", a thread group per 8 MB chunk): gpu_background (its new test of uneven
# sizes), gpu_import, gpu; then host arrays of 4 large matrices, two rounds alternating. The
# bench's cuSPARSE pipeline uploads through the same function, so its times move too.
cd "$(dirname "$0")/../../.."
W=/tmp/i; B=/tmp/ib; mkdir -p $W $B; tar -xJf gpu-carry/i.tar.xz -C $B
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tnew
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/i.txt
for t in gpu_background gpu_import gpu; do timeout 200 $B/$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/i.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
for r in 1 2; do for spec in gen:dense:2000,2000:f64 gen:lap3d7:160:f64 gen:uniform:1000000,16,1:f32 gen:elasticity:32:f32; do p=${spec##*:}; m=${spec%:*}; for v in old new; do
  timeout 60 $B/t$v bench $m --methods auto --precision $p --out $W/e2e-${m//[:,]/_}-$p-$v-$r > /dev/null 2>&1
done; done; done
echo "done at $(el)s" | tee -a $W/i.txt
rm -f $W/*/*.svg; tar -czf $OUT/i.tgz -C $W .
for f in $W/e2e-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
print(f"{sys.argv[1].split('/')[-2][4:]:36} host first: tessera {float(r['e2e_host_1_ms']):6.2f} ms, cuSPARSE pipeline {float(r['cuspe2e_host_1_ms']):6.2f} ms, ratio {float(r['cuspe2e_host_1_ms'])/float(r['e2e_host_1_ms']):.2f}; N=100 {float(r['cuspe2e_host_100_ms'])/float(r['e2e_host_100_ms']):.2f}")
PY
done
