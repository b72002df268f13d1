#!/usr/bin/env bash
# Session 32, run J (the final code): run I's samples (closed when the GPU ran dry, without
# touching a stream) and the margin from the median sample's products, not the fewest (run I
# kept TILE on random 3000² at 53% f64 in the steady instance: one sample closed at one product
# widened the margin to one call's). gpu_trial, gpu_background, gpu_threads, the C GPU test,
# memcheck of gpu_trial; AUTO on the short-product matrices and rows of 400-500, both types;
# the suite.
cd "$(dirname "$0")/../../.."
W=/tmp/j; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/j.txt
for t in gpu_trial gpu_background gpu_threads; do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/j.txt; done
[ -x $B/c/gpu_api ] && { timeout 60 $B/c/gpu_api > $W/c-gpu_api.txt 2>&1; echo "c/gpu_api rc=$?" | tee -a $W/j.txt; }
timeout 200 compute-sanitizer --tool memcheck $B/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/j.txt
grep -h -E "panicked|Segmentation" -A4 $W/t-*.txt | head -20
M="gen:band:3000,900,900 gen:band:2000,700,700 gen:random:3000,3000,1600,7 gen:grid2d:725 gen:dense:2000,2000 gen:elasticity:32 gen:random:4000,4000,0.125,3 gen:random:20000,20000,0.02,3"
for p in f64 f32; do
  timeout 250 $B/bin/tessera bench $M --methods auto --precision $p --out $W/short-$p > $W/short-$p.txt 2>&1
  echo "short $p rc=$? at $(el)s" | tee -a $W/summary.txt
  python3 -c "
import csv
for r in csv.DictReader(open('$W/short-$p/bench.csv')):
  if r['method'].startswith('auto'):
    pr=r['params']; i=pr.find('trial on this')
    t=pr[i+33:pr.find('(medians')] if i>=0 else '-'
    sp=pr[pr.find('samples of',i)+11:pr.find(' products)',i)] if i>=0 else ''
    k=pr[pr.find(':',pr.find('(medians'))+2:pr.find(';',i)] if i>=0 else ''
    print('  %-24s %-10s steady %5s us (x%.2f)  1/10/100/1k/10k %s  trial %s x%s %s' % (r['matrix'].replace('gen:',''), r['chosen'], round(float(r['spmv_ms'])*1e3,1), float(r['speedup_vs_cusparse']), '/'.join('%.2f'%(float(r['cuspe2e_%d_ms'%n])/float(r['e2e_borrow_%d_ms'%n])) for n in (1,10,100,1000,10000)), t.strip(), sp, k))
" | tee -a $W/summary.txt
done
for p in f64 f32; do timeout 280 $B/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s"; done
rm -f $W/*/*.svg; tar -czf $OUT/j.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
