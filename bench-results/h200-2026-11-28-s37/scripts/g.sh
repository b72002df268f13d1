#!/bin/bash
# Session 37, run G: BCCOO's format allocated from the facts' estimate while the count runs (DeviceBuffer::carve; alloc_parts on it).
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$B/tessera
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/g
for t in gpu_bccoo gpu_background; do $B/t/$t > $OUT/g/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/g/$t.txt)"; grep -E "panicked" $OUT/g/$t.txt | head -3; done
timeout 200 compute-sanitizer --tool memcheck $B/t/gpu_bccoo bccoo_device_build_writes > $OUT/g/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|test result' $OUT/g/memcheck.txt | tr '\n' ' ')"
for m in gen:elasticity:48 gen:elasticity:32; do for p in f64 f32; do
  f=$OUT/g/${m//[:,]/_}-$p
  TESSERA_TRACE=2 $B/tessera bench $m --methods bccoo --precision $p > $f.txt 2> $f.trace
  echo "$m $p: formats allocated $(grep -c "for BCCOO.s format (built" $f.trace) for $(grep -c "device build of" $f.trace) builds; $(grep -o "BCCOO's device build of.*done at [0-9.]*" $f.trace | sed 's/.*done at //' | sort -n | awk '{a[NR]=$1} END {print "n="NR, "q1",a[int(NR/4)+1], "med",a[int(NR/2)+1], "q3",a[int(3*NR/4)+1]}') | $(grep -E '^gen' $f.txt | grep bccoo | head -1 | awk '{print "spmv",$7}')"
done; done
for m in gen:elasticity:32 gen:elasticity:48; do for p in f32 f64; do
  f=$OUT/g/auto-${m//[:,]/_}-$p
  $B/tessera bench $m --methods auto --precision $p --csv $f.csv > $f.txt 2>&1
  python3 - $f.csv "$m $p" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
a=[r for r in rows if r['method'].startswith('auto')][0]
ns=[1,10,100,1000,10000]
print(f"auto {sys.argv[2]:24s} {a['chosen'][:8]:8s} borrow", ' '.join(f"{float(a[f'cuspe2e_{n}_ms'])/float(a[f'e2e_borrow_{n}_ms']):.2f}" for n in ns), " steady", a['speedup_vs_cusparse'], a['params'][:90])
PY
done; done
cd $OUT && tar czf g.tgz g && rm -rf g
