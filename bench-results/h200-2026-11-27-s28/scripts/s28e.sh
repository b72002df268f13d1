#!/usr/bin/env bash
# Session 28, run E (run D's bundle, its named analyze done right): named TILE's and BCCOO's
# analyze alone (TESSERA_TRACE=2: the device build's own trace line, five analyses a run) and
# AUTO end to end, new (one-launch scans) against 5e0b798's CLI ("old"), alternating; then
# gpu_background again (run D's failure) and gpu with TESSERA_BIN set.
cd "$(dirname "$0")/../../.."
W=/tmp/e; B=/tmp/eb; mkdir -p $W $B; tar -xJf gpu-carry/d.tar.xz -C $B; xz -dc gpu-carry/tnew.xz > $B/to; chmod +x $B/to
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/e.txt
for i in 1 2 3; do timeout 100 $B/gpu_background a_background_build_never_waits > $W/t-bg-$i.txt 2>&1; echo "gpu_background never_waits #$i rc=$? $(grep -E 'test result' $W/t-bg-$i.txt)" | tee -a $W/e.txt; done
grep -h "panicked" -A1 $W/t-bg-*.txt | head -6
TESSERA_BIN=$B/tn timeout 150 $B/gpu > $W/t-gpu.txt 2>&1; echo "gpu rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu.txt)" | tee -a $W/e.txt
for r in 1 2; do for v in o n; do
  for spec in "gen:dense:2000,2000 f32 tile" "gen:dense:2000,2000 f64 tile" "gen:elasticity:32 f32 bccoo" "gen:elasticity:48 f64 bccoo"; do set -- $spec
    for k in 1 2; do TESSERA_TRACE=2 timeout 60 $B/t$v bench $1 --methods $3 --precision $2 --steady --repeat 7 >> $W/named-${1//[:,]/_}-$2-$v.txt 2>&1; done
  done
done; echo "named round $r at $(el)s" | tee -a $W/e.txt; done
for r in 3 4; do for v in o n; do
  for spec in gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:elasticity:32:f32; do p=${spec##*:}; m=${spec%:*}
    timeout 60 $B/t$v bench $m --methods auto --precision $p --out $W/e2e-${m//[:,]/_}-$p-$v-$r > /dev/null 2>&1 || echo "e2e $m $p $v rc=$?" | tee -a $W/e.txt
  done
done; echo "e2e round $r at $(el)s" | tee -a $W/e.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/e.tgz -C $W .
echo "== named analyze: each device build's done time (us)"
for f in $W/named-*.txt; do echo "$(basename $f .txt): $(grep -oE "device build of .*done at [0-9.]+" $f | grep -oE 'done at [0-9.]+' | cut -d' ' -f3 | tr '\n' ' ')"; done
for f in $W/e2e-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
n = sys.argv[1].split('/')[-2][4:]
for r in csv.DictReader(open(sys.argv[1])):
    if r['method'] != 'auto': continue
    g = lambda k: float(r[k])
    c = [g(f'cuspe2e_{k}_ms') / g(f'e2e_borrow_{k}_ms') for k in (1, 10, 100, 1000, 10000)]
    print(f"{n:30} {r['chosen'][:6]:6} steady x{g('cusparse_best_ms')/g('spmv_ms'):.2f} | in place " + ' '.join(f'{v:.2f}' for v in c))
PY
done
