#!/usr/bin/env bash
# Session 32, run E: what AUTO's end-to-end instance ran on random 4000² at 12.5% (rows of 500)
# in f64, where its products from N = 1,000 took 12.5-12.8 us against 11.2 after
# finish_background (run D). The CLI alone (this tree's, whose trace line now ends with the
# e2e matrix's method and params), TESSERA_TRACE=1; every method named, both types.
cd "$(dirname "$0")/../../.."
W=/tmp/e; mkdir -p $W; xz -dc gpu-carry/cli/tessera.xz > $W/tessera; chmod +x $W/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader)"
M=gen:random:4000,4000,0.125,3
for p in f64 f32; do
  TESSERA_TRACE=1 timeout 200 $W/tessera bench $M --methods auto --precision $p --out $W/auto-$p > $W/auto-$p.txt 2> $W/auto-$p.err; echo "auto $p rc=$?"
  grep -E "e2e run from" $W/auto-$p.err | sed -E 's/first calls \(us:method\) [^;]*;//' | cut -c1-900
  timeout 200 $W/tessera bench $M --methods all --precision $p --out $W/all-$p > $W/all-$p.txt 2>&1; echo "all $p rc=$?"
  python3 -c "
import csv
for r in csv.DictReader(open('$W/all-$p/bench.csv')):
  print('  %-22s %-12s %7.2f us  %s' % (r['method'], r['chosen'], float(r['spmv_ms'])*1e3, r['params'][:150]))
"
done
tar -czf $OUT/e.tgz -C $W --exclude=tessera .
