#!/usr/bin/env bash
# Session 31, run H: the trial reads its pending samples oldest first and stops at the first not
# done (one event query a product, not one per pending sample). prev = run G's bundle
# (e6e7c63), new = this change. gpu_trial and its memcheck (new); AUTO end to end on short-
# product matrices, prev and new alternating, two rounds, both types: the trial's own medians
# (params) against the products' steady times.
cd "$(dirname "$0")/../../.."
W=/tmp/h; mkdir -p $W /tmp/prev; tar -xJf gpu-carry/gb.tar.xz -C /tmp; tar -xJf gpu-carry/prev.tar.xz -C /tmp/prev
N=/tmp/gpu-bundle; O=/tmp/prev/gpu-bundle
export TESSERA_MATRICES=$N/matrices TESSERA_BIN=$N/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) new $(cat $N/COMMIT) prev $(cat $O/COMMIT)"
export LD_LIBRARY_PATH=$N/lib:/usr/local/cuda/lib64
for t in gpu_trial gpu_background; do timeout 200 $N/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)"; done
timeout 200 compute-sanitizer --tool memcheck $N/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')"
M="gen:band:3000,900,900 gen:band:2000,700,700 gen:random:3000,3000,1600,7 gen:grid2d:725 gen:dense:2000,2000 gen:elasticity:32"
for r in 1 2; do for k in prev new; do
  B=$N; [ $k = prev ] && B=$O
  for p in f64 f32; do
    LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 timeout 200 $B/bin/tessera bench $M --methods auto --precision $p --out $W/$k-$p-$r > $W/$k-$p-$r.txt 2>&1
    echo "$k $p r$r rc=$? at $(el)s"
    python3 -c "
import csv
for r in csv.DictReader(open('$W/$k-$p-$r/bench.csv')):
  if r['method'].startswith('auto'):
    pr=r['params']; i=pr.find('trial on this')
    t=pr[i+33:pr.find('(medians')] if i>=0 else '-'
    k=pr[pr.find(':',pr.find('(medians'))+2:pr.find(';',i)] if i>=0 else ''
    print('  %-24s %-14s steady %s us  borrow 1k/10k %s/%s  trial %s %s' % (r['matrix'].replace('gen:',''), r['chosen'], round(float(r['spmv_ms'])*1e3,1), round(float(r['e2e_borrow_1000_ms'] and float(r['cuspe2e_1000_ms'])/float(r['e2e_borrow_1000_ms'])),2), round(float(r['cuspe2e_10000_ms'])/float(r['e2e_borrow_10000_ms']),2), t.strip(), k))
"
  done
done; done
rm -f $W/*/*.svg; tar -czf $OUT/h.tgz -C $W .
