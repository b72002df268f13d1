#!/usr/bin/env bash
# Session 32, run H: later background builds start only once the earlier ones are swapped in
# and their trials are over (Forms::poll). prev = run D's CLI (gpu-carry/prev-cli.xz, d4d4d56's
# code), new = this change. gpu_trial, gpu_background, gpu_bccoo, memcheck of gpu_trial; AUTO end to end,
# prev and new alternating, two rounds, f64 and f32: rows of 500 (random 4000² at 12.5%), rows
# of 400 (random 20000² at 2%), elasticity 32³, 40³, 48³ (BRC then BCCOO); then the suite (new).
cd "$(dirname "$0")/../../.."
W=/tmp/h; mkdir -p $W /tmp/prev/gpu-bundle/bin /tmp/prev/gpu-bundle/lib; tar -xJf gpu-carry/gb.tar.xz -C /tmp
xz -dc gpu-carry/prev-cli.xz > /tmp/prev/gpu-bundle/bin/tessera; chmod +x /tmp/prev/gpu-bundle/bin/tessera; echo d4d4d56 > /tmp/prev/gpu-bundle/COMMIT
N=/tmp/gpu-bundle; O=/tmp/prev/gpu-bundle
export TESSERA_MATRICES=$N/matrices TESSERA_BIN=$N/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) new $(cat $N/COMMIT) prev $(cat $O/COMMIT)"
export LD_LIBRARY_PATH=$N/lib:/usr/local/cuda/lib64
for t in gpu_trial gpu_background gpu_bccoo; do timeout 200 $N/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)"; done
timeout 200 compute-sanitizer --tool memcheck $N/tests/gpu_trial > $W/memcheck.txt 2>&1; echo "memcheck gpu_trial rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')"
M="gen:random:4000,4000,0.125,3 gen:random:20000,20000,0.02,3 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48"
for r in 1 2; do for k in prev new; do
  B=$N; [ $k = prev ] && B=$O
  for p in f64 f32; do
    LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 timeout 250 $B/bin/tessera bench $M --methods auto --precision $p --out $W/$k-$p-$r > $W/$k-$p-$r.txt 2>&1
    echo "$k $p r$r rc=$? at $(el)s" | tee -a $W/summary.txt
    python3 -c "
import csv
for r in csv.DictReader(open('$W/$k-$p-$r/bench.csv')):
  if r['method'].startswith('auto'):
    e=[float(r['e2e_borrow_%d_ms'%n]) for n in (1,10,100,1000,10000)]
    print('  %-24s %-10s steady %6.1f us (x%.2f)  1/10/100/1k/10k %s  per product 100-1k %.1f' % (r['matrix'].replace('gen:',''), r['chosen'], float(r['spmv_ms'])*1e3, float(r['speedup_vs_cusparse']), '/'.join('%.2f'%(float(r['cuspe2e_%d_ms'%n])/float(r['e2e_borrow_%d_ms'%n])) for n in (1,10,100,1000,10000)), (e[3]-e[2])/0.9*1e3/1e3))
" | tee -a $W/summary.txt
  done
done; done
for p in f64 f32; do timeout 280 $N/bin/tessera bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s"; done
rm -f $W/*/*.svg; tar -czf $OUT/h.tgz -C $W .
python3 scripts/e2e_summary.py $W/suite-f64/bench.csv $W/suite-f32/bench.csv
