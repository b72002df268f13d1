#!/usr/bin/env bash
# Session 20, run O: HOLA's every compiled configuration on LP shapes (rows of 1,200-2,600
# over 1-4M columns) and 2,000 x 1,500 random rows: whether rows longer than a block prefer
# 512 non-zeros per block (128 x 4) there too.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/o; mkdir -p $W
T=$B/bin/tessera
i=0
for M in gen:lp:4284,1092610,2600,1 gen:lp:1200,2000000,1200,1 gen:lp:1200,4000000,1200,1 gen:uniform:2000,1500,1; do for p in f32 f64; do i=$((i+1))
  TESSERA_LOG_TUNING=1 timeout 120 $T bench $M --methods hola --tuning exhaustive --precision $p --steady > $W/o$i.txt 2> $W/o$i.err; echo "$M $p rc=$?"
  grep -E "^gen:" $W/o$i.txt | cut -c1-120
  python3 - $W/o$i.err <<'PY'
import re,sys,collections
best=collections.defaultdict(list)
for line in open(sys.argv[1]):
    m=re.match(r'tessera tuning: (\S+) (.*) ([0-9.]+) ms',line.strip())
    if m: best[m.group(1)].append((float(m.group(3)),m.group(2)))
for k,v in best.items():
    print(' ',k, len(v), 'timed; fixed rule', f"{v[0][0]*1e3:.1f}us {v[0][1][:30]};", 'fastest:', '; '.join(f"{t*1e3:.1f}us {c[:34]}" for t,c in sorted(v)[:4]))
PY
done; done
tar -czf $OUT/o.tgz -C $W .
