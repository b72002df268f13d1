#!/usr/bin/env bash
# Session 23, run F (2c4fb56's tessera alone): when to start TILE's device build. Dense 2000²
# (f32, f64) and the random half-dense 3000² (f32) end to end with the build started after
# 20, 40 and 100 products (TESSERA_BACKGROUND_AFTER), alternating, three rounds.
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/f/bin; xz -dc gpu-carry/tessera.xz > /tmp/f/bin/tessera; chmod +x /tmp/f/bin/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
W=/tmp/f; T=$W/bin/tessera
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/f.txt
for r in 1 2 3; do for p in f32 f64; do for a in 20 40 100; do
  M="gen:dense:2000,2000"; [ $p = f32 ] && M="$M gen:random:3000,3000,1600,7"
  TESSERA_BACKGROUND_AFTER=$a timeout 60 $T bench $M --methods auto --precision $p --out $W/a$a-$p-$r > /dev/null 2>&1
done; done; done
rm -rf $W/bin; tar -czf $OUT/f.tgz -C $W .
python3 /dev/stdin $W/*/bench.csv <<'PY'
import csv,sys,collections
acc=collections.defaultdict(list)
for f in sys.argv[1:]:
    run=f.split('/')[-2]; a,p,r=run.split('-')
    for row in csv.DictReader(open(f)):
        if row['method']!='auto': continue
        cu=[float(row['cuspe2e_%d_ms'%n]) for n in (1,10,100,1000,10000)]
        au=[float(row['e2e_borrow_%d_ms'%n]) for n in (1,10,100,1000,10000)]
        acc[(row['matrix'][:16],p,int(a[1:]))].append(' '.join('%.2f'%(c/x) for x,c in zip(au,cu)))
for k in sorted(acc): print(*k, ' | '.join(acc[k]))
PY
