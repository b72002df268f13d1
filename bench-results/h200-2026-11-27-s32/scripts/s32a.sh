#!/usr/bin/env bash
# Session 32, run A: the trial's samples span several products (trial::span). One bundle;
# TESSERA_TRIAL_SPAN=1 gives the old one-product samples (and their margin) for the A/B.
# gpu_trial (a new test), gpu_background, memcheck of gpu_trial; AUTO end to end on short-
# product matrices, span 1 and the default alternating, two rounds, both types: the trial's
# own medians against the products' steady times, and end to end over cuSPARSE.
cd "$(dirname "$0")/../../.."
W=/tmp/a; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp
N=/tmp/gpu-bundle
export TESSERA_MATRICES=$N/matrices TESSERA_BIN=$N/bin/tessera LD_LIBRARY_PATH=$N/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $N/COMMIT)"
for t in gpu_trial gpu_background; do timeout 200 $N/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)"; done
timeout 200 compute-sanitizer --tool memcheck $N/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')"
M="gen:band:3000,900,900 gen:band:2000,700,700 gen:random:3000,3000,1600,7 gen:grid2d:725 gen:dense:2000,2000 gen:elasticity:32"
for r in 1 2; do for k in s1 auto; do
  for p in f64 f32; do
    if [ $k = s1 ]; then export TESSERA_TRIAL_SPAN=1; else unset TESSERA_TRIAL_SPAN; fi
    timeout 250 $N/bin/tessera bench $M --methods auto --precision $p --out $W/$k-$p-$r > $W/$k-$p-$r.txt 2>&1
    echo "$k $p r$r rc=$? at $(el)s"
    python3 -c "
import csv
for r in csv.DictReader(open('$W/$k-$p-$r/bench.csv')):
  if r['method'].startswith('auto'):
    pr=r['params']; i=pr.find('trial on this')
    t=pr[i+33:pr.find('(medians')] if i>=0 else '-'
    sp=pr[pr.find('samples of',i)+11:pr.find(' products)',i)] if i>=0 else ''
    k=pr[pr.find(':',pr.find('(medians'))+2:pr.find(';',i)] if i>=0 else ''
    print('  %-24s %-10s steady %5s us  1/10/100/1k/10k %s  trial %s x%s %s' % (r['matrix'].replace('gen:',''), r['chosen'], round(float(r['spmv_ms'])*1e3,1), '/'.join('%.2f'%(float(r['cuspe2e_%d_ms'%n])/float(r['e2e_borrow_%d_ms'%n])) for n in (1,10,100,1000,10000)), t.strip(), sp, k))
"
  done
done; done
unset TESSERA_TRIAL_SPAN
rm -f $W/*/*.svg; tar -czf $OUT/a.tgz -C $W .
