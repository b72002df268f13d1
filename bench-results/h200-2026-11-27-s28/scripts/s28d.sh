#!/usr/bin/env bash
# Session 28, run D: the device builds' scans in one launch (util_scan: single pass, decoupled
# look-back; workspace zeroed with the build's other words) instead of three: TILE's build
# makes 4 fewer submissions, BCCOO's 2. Tests (gpu_tile: the scan against the host's prefix
# sums and the device build array by array; gpu_bccoo; gpu_background; gpu), the scan test under
# memcheck; named TILE's and BCCOO's analyze alone (TESSERA_TRACE=2: the device build's own
# trace line) and AUTO end to end, new against 5e0b798's CLI ("old"), two rounds alternating.
cd "$(dirname "$0")/../../.."
W=/tmp/d; B=/tmp/db; mkdir -p $W $B; tar -xJf gpu-carry/d.tar.xz -C $B; xz -dc gpu-carry/tnew.xz > $B/to; chmod +x $B/to
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
for t in gpu_tile gpu_bccoo gpu_background gpu; do timeout 150 $B/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/d.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
timeout 100 compute-sanitizer --tool memcheck $B/gpu_tile device_scan tile_gpu_device_build_writes > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/d.txt
for r in 1 2; do for v in o n; do
  for spec in gen:dense:2000,2000:f32:tile gen:dense:2000,2000:f64:tile gen:elasticity:32:f32:bccoo gen:elasticity:48:f64:bccoo; do IFS=: read -r _ g a p meth <<< "x:$spec"; m="$g:$a"
    TESSERA_TRACE=2 timeout 60 $B/t$v bench $m --methods $meth --precision $p --steady > $W/named-${m//[:,]/_}-$p-$v-$r.txt 2>&1
  done
  for spec in gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:elasticity:32:f32 gen:elasticity:48:f64; do p=${spec##*:}; m=${spec%:*}
    timeout 60 $B/t$v bench $m --methods auto --precision $p --out $W/e2e-${m//[:,]/_}-$p-$v-$r > /dev/null 2>&1 || echo "e2e $m $p $v rc=$?" | tee -a $W/d.txt
  done
done; echo "round $r at $(el)s" | tee -a $W/d.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/d.tgz -C $W .
echo "== named analyze: the device build's done time (us), per run"
for f in $W/named-*.txt; do echo "$(basename $f .txt): $(grep -oE "device build of .*done at [0-9.]+" $f | grep -oE 'done at [0-9.]+' | head -4 | tr '\n' ' ')"; done
for f in $W/e2e-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
n = sys.argv[1].split('/')[-2][4:]
for r in csv.DictReader(open(sys.argv[1])):
    if r['method'] != 'auto': continue
    g = lambda k: float(r[k])
    c = [g(f'cuspe2e_{k}_ms') / g(f'e2e_borrow_{k}_ms') for k in (1, 10, 100, 1000, 10000)]
    print(f"{n:30} {r['chosen'][:6]:6} steady x{g('cusparse_best_ms')/g('spmv_ms'):.2f} analysis {g('analysis_ms'):.3f} ms | in place " + ' '.join(f'{v:.2f}' for v in c))
PY
done
