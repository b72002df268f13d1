#!/usr/bin/env bash
# Session 32, run D: samples of at most 4 products reading 128 MB (was 8 and 256 MB in runs A-B).
# gpu_trial, gpu_background, memcheck of gpu_trial; AUTO end to end on the short-product
# matrices and two shapes of rows of 400-500 (session 29's run C: the trial kept BRC at 11.2 us
# over the pieces' 9.3), TESSERA_TRIAL_SPAN=1 (one product a sample, as before session 32),
# =8 (every sample 8, about runs A-B's spans here) and the default, two rounds, both types;
# then the suite in f64 and f32 and its summary.
cd "$(dirname "$0")/../../.."
W=/tmp/d; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)"
for t in gpu_trial gpu_background; do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)"; done
timeout 200 compute-sanitizer --tool memcheck $B/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')"
M="gen:band:3000,900,900 gen:band:2000,700,700 gen:random:3000,3000,1600,7 gen:grid2d:725 gen:dense:2000,2000 gen:elasticity:32 gen:random:4000,4000,0.125,3 gen:random:20000,20000,0.02,3"
for r in 1 2; do for k in s1 s8 def; do
  for p in f64 f32; do
    case $k in s1) export TESSERA_TRIAL_SPAN=1;; s8) export TESSERA_TRIAL_SPAN=8;; def) unset TESSERA_TRIAL_SPAN;; esac
    timeout 250 $B/bin/tessera bench $M --methods auto --precision $p --out $W/$k-$p-$r > $W/$k-$p-$r.txt 2>&1
    echo "$k $p r$r rc=$? at $(el)s" | tee -a $W/summary.txt
    python3 -c "
import csv
for r in csv.DictReader(open('$W/$k-$p-$r/bench.csv')):
  if r['method'].startswith('auto'):
    pr=r['params']; i=pr.find('trial on this')
    t=pr[i+33:pr.find('(medians')] if i>=0 else '-'
    sp=pr[pr.find('samples of',i)+11:pr.find(' products)',i)] if i>=0 else ''
    k=pr[pr.find(':',pr.find('(medians'))+2:pr.find(';',i)] if i>=0 else ''
    print('  %-24s %-10s steady %5s us  1/10/100/1k/10k %s  trial %s x%s %s' % (r['matrix'].replace('gen:',''), r['chosen'], round(float(r['spmv_ms'])*1e3,1), '/'.join('%.2f'%(float(r['cuspe2e_%d_ms'%n])/float(r['e2e_borrow_%d_ms'%n])) for n in (1,10,100,1000,10000)), t.strip(), sp, k))
" | tee -a $W/summary.txt
  done
done; done
unset TESSERA_TRIAL_SPAN
for p in f64 f32; do timeout 280 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s"; done
rm -f $W/*/*.svg; tar -czf $OUT/d.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
