#!/usr/bin/env bash
# Session 26, run G (the preload of BCCOO's product kernels): gpu_bccoo and gpu_background; A/B of
# the CLI before (98f0212, "old") and after ("new") on 3D elasticity 32³ f32 and 48³ f64 / f32,
# two rounds alternating, traced.
cd "$(dirname "$0")/../../.."
W=/tmp/g; mkdir -p $W; B=/tmp/cap; mkdir -p $B; tar -xJf gpu-carry/g.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/g.txt
for t in gpu_bccoo gpu_background; do (cd $B && timeout 150 ./$t --skip shared_matrix --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/t-$t.txt)") | tee -a $W/g.txt; done
grep -h panicked -A2 $W/t-*.txt | head
for r in 1 2; do for spec in gen:elasticity:32:f32 gen:elasticity:48:f64 gen:elasticity:48:f32; do p=${spec##*:}; m=${spec%:*}; for v in old new; do
  n=${m//[:,]/_}-$p-$v-$r
  TESSERA_TRACE=2 timeout 60 $B/t$v bench $m --methods auto --precision $p --out $W/e2e-$n > $W/e2e-$n.log 2>&1
done; done; done
for f in $W/e2e-*.log; do grep -v -E 'cuMemAlloc|e2e pointer queries|e2e first product|deferred inspection|borrow .* check queued' $f > $f.tmp && mv $f.tmp $f; done; rm -f $W/e2e-*/*.svg
tar -czf $OUT/g.tgz -C $W .
for f in $W/e2e-*/bench.csv; do d=$(basename $(dirname $f)); python3 - $f $W/$d.log <<'PY'
import csv, sys, re
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda a, b, n: float(r[f'{b}{n}_ms']) / float(r[f'{a}{n}_ms'])
log = open(sys.argv[2]).read()
sw = re.findall(r'bccoo swapped in at product (\d+)', log)
hh = [float(x) for x in re.findall(r'worker building bccoo: host half done at ([0-9.]+) us', log)]
dd = [float(x) for x in re.findall(r'worker building bccoo: device half done at ([0-9.]+) us', log)]
pre = re.findall(r'bccoo.cu \[(\d), (\d)\] preloaded in ([0-9.]+) us', log)
print(f"{sys.argv[1].split('/')[-2][4:]:28} steady {float(r['speedup_vs_cusparse']):.2f}; N=1000 in place {e('e2e_borrow_','cuspe2e_',1000):.2f} device {e('e2e_','cuspe2e_',1000):.2f} host {e('e2e_host_','cuspe2e_host_',1000):.2f}; N=1 in place {e('e2e_borrow_','cuspe2e_',1):.2f}; bccoo swaps {sw}; device halves {[round(b-a) for a, b in zip(hh, dd)]}; preloaded {pre}")
PY
done
