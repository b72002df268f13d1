#!/usr/bin/env bash
# Session 28, run A: TILE's split tile rows combined in one launch (a workspace slot per product,
# the row's last item writes y) against the two-launch form (TESSERA_TILE_ONE_LAUNCH=0, the same
# binary): gpu_tile (a new graph test), gpu_background, gpu; gpu_tile's split-row tests under
# memcheck; kernel times under ncu; then `tessera bench` A/B on the matrices TILE serves, two
# rounds alternating; `tessera overhead` for this machine's launch rate; and the ring of
# workspace slots recording no event per product on the legacy default stream (HOLA's carry
# mode) against 5e0b798's CLI ("old", session 27's final code), two rounds.
cd "$(dirname "$0")/../../.."
W=/tmp/a; B=/tmp/ab; mkdir -p $W $B; tar -xJf gpu-carry/a.tar.xz -C $B; xz -dc gpu-carry/tnew.xz > $B/to; chmod +x $B/to
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_MATRICES=$PWD/gpu-carry/m TESSERA_BIN=$B/tn
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
for t in gpu_tile gpu_background gpu; do timeout 150 $B/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/a.txt; done
grep -h -E "panicked" -A3 $W/t-*.txt | head -20
timeout 150 compute-sanitizer --tool memcheck --leak-check full $B/gpu_tile tile_gpu_products_queued tile_gpu_one_launch tile_gpu_fixed_rule tile_gpu_edge > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/a.txt
for v in 0 1; do TESSERA_TILE_ONE_LAUNCH=$v timeout 60 ncu --clock-control none -k regex:tile_ --launch-skip 40 --launch-count 6 --metrics gpu__time_duration.sum $B/tn bench gen:dense:2000,2000 --methods tile --precision f32 > $W/ncu-$v.txt 2>&1; echo "ncu one_launch=$v rc=$? at $(el)s" | tee -a $W/a.txt; grep -E "tile_(spmv|prescale)|gpu__time_duration" $W/ncu-$v.txt | paste - - | awk '{print "   ", $1, $(NF)}' | head -8 | tee -a $W/a.txt; done
timeout 60 $B/tn overhead > $W/overhead.txt 2>&1; tail -8 $W/overhead.txt | tee -a $W/a.txt
for r in 1 2; do for spec in gen:dense:2000,2000:f32 gen:dense:2000,2000:f64 gen:random:3000,3000,1600,7:f32 bcsstk16:f64 sparse-images-1024_subset:f32; do p=${spec##*:}; m=${spec%:*}; for v in 0 1; do
  TESSERA_TILE_ONE_LAUNCH=$v timeout 90 $B/tn bench $m --methods tile,auto --precision $p --out $W/b-${m//[:,]/_}-$p-$v-$r > /dev/null 2>&1 || echo "bench $m $p $v rc=$?" | tee -a $W/a.txt
done; done; echo "round $r at $(el)s" | tee -a $W/a.txt; done
for r in 1 2; do for spec in adder_dcop_05:f64 arrow:f64 as-caida20071105:f32 gen:dense:2000,2000:f32; do p=${spec##*:}; m=${spec%:*}; for v in o n; do
  timeout 90 $B/t$v bench $m --methods auto --precision $p --out $W/c-${m//[:,]/_}-$p-$v-$r > /dev/null 2>&1 || echo "bench $m $p $v rc=$?" | tee -a $W/a.txt
done; done; echo "ring round $r at $(el)s" | tee -a $W/a.txt; done
rm -f $W/*/*.svg; tar -czf $OUT/a.tgz -C $W .
for f in $W/b-*/bench.csv $W/c-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
n = sys.argv[1].split('/')[-2][2:]
for r in csv.DictReader(open(sys.argv[1])):
    if r['method'] in ('tile', 'auto'):
        g = lambda k: float(r[k]) if r[k] not in ('', '-') else float('nan')
        c = lambda k: g('cuspe2e_' + k) / g('e2e_borrow_' + k)
        print(f"{n:34} {r['method']:4} {r['chosen'][:6]:6} {g('spmv_ms')*1e3:7.2f} us x{g('speedup_vs_cusparse'):.2f} | in place N=1,10,100,1k,10k {c('1_ms'):.2f} {c('10_ms'):.2f} {c('100_ms'):.2f} {c('1000_ms'):.2f} {c('10000_ms'):.2f}")
PY
done
