#!/usr/bin/env bash
# Session 32, run F: random 4000² at 12.5% f64: is AUTO's CSR_VECTOR (pieces) slower than named
# CSR_VECTOR by itself, or beside the background build? AUTO with no build
# (TESSERA_BACKGROUND_AFTER=10000000: CSR_VECTOR throughout), with the build and no trial
# (TESSERA_TRIAL=0), and as is; named CSR_VECTOR and BRC; the e2e products 1,000-10,000.
cd "$(dirname "$0")/../../.."
W=/tmp/f; mkdir -p $W; xz -dc gpu-carry/cli/tessera.xz > $W/tessera; chmod +x $W/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader)"
M=gen:random:4000,4000,0.125,3
for r in 1 2; do for v in nobuild notrial asis named; do
  case $v in
    nobuild) E="TESSERA_BACKGROUND_AFTER=10000000"; ms=auto;;
    notrial) E="TESSERA_TRIAL=0"; ms=auto;;
    asis) E="X=1"; ms=auto;;
    named) E="X=1"; ms=csr_vector,brc;;
  esac
  env $E TESSERA_TRACE=1 timeout 100 $W/tessera bench $M --methods $ms --precision f64 --out $W/$v-$r > $W/$v-$r.txt 2> $W/$v-$r.err; echo "$v r$r rc=$?"
  python3 -c "
import csv
for r in csv.DictReader(open('$W/$v-$r/bench.csv')):
  if r['method'].startswith('cusparse'): continue
  e=[float(r['e2e_borrow_%d_ms'%n]) for n in (1,10,100,1000,10000)]
  print('  %-12s %-12s steady %6.2f us; e2e borrowed per product 100-1k %6.2f, 1k-10k %6.2f us' % (r['method'], r['chosen'], float(r['spmv_ms'])*1e3, (e[3]-e[2])/0.9, (e[4]-e[3])/9))
"
  grep -E "e2e run from Borrowed" $W/$v-$r.err | sed -E 's/first calls \(us:method\) [^;]*;//' | cut -c1-260
done; done
tar -czf $OUT/f.tgz -C $W --exclude=tessera .
