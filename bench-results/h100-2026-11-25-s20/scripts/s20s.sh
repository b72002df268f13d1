#!/usr/bin/env bash
# Session 20, run S: HOLA's every compiled configuration on the random-column generators (what
# a provisional 128 x 8 would cost where columns are not local), both types.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/s; mkdir -p $W
T=$B/bin/tessera
i=0
for M in gen:uniform:1000000,16,1 gen:powerlaw:20,16,1 gen:circuit:1000000,5,4,100000,1 gen:emptyrows:1000000,16,1; do for p in f32 f64; do i=$((i+1))
  TESSERA_LOG_TUNING=1 timeout 120 $T bench $M --methods hola --tuning exhaustive --precision $p --steady > $W/s$i.txt 2> $W/s$i.err; echo "$M $p rc=$?"
  grep -E "^gen:" $W/s$i.txt | cut -c1-120
  python3 - $W/s$i.err <<'PY'
import re,sys,collections
best=collections.defaultdict(list)
for line in open(sys.argv[1]):
    m=re.match(r'tessera tuning: (\S+) (.*) ([0-9.]+) ms',line.strip())
    if m: best[m.group(1)].append((float(m.group(3)),m.group(2)))
for k,v in best.items():
    print(' ',k, len(v), 'timed; fixed rule', f"{v[0][0]*1e3:.1f}us {v[0][1][:30]};", 'fastest:', '; '.join(f"{t*1e3:.1f}us {c[:34]}" for t,c in sorted(v)[:4]))
PY
done; done
tar -czf $OUT/s.tgz -C $W .
