#!/usr/bin/env bash
# Session 20, run N: HOLA's and CSR_VECTOR's every compiled configuration (EXHAUSTIVE, each
# candidate's time logged) on matrices of few long rows: what the light method could do on
# the dense 2000² before TILE arrives.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/n; mkdir -p $W
T=$B/bin/tessera
i=0
for M in gen:dense:2000,2000 gen:uniform:4000,2000,1 gen:uniform:20000,400,1; do for p in f32 f64; do i=$((i+1))
  TESSERA_LOG_TUNING=1 timeout 120 $T bench $M --methods hola,csr_vector --tuning exhaustive --precision $p --steady > $W/n$i.txt 2> $W/n$i.err; echo "$M $p rc=$?"
  grep -E "^gen:" $W/n$i.txt | cut -c1-120
  python3 - $W/n$i.err <<'PY'
import re,sys,collections
best=collections.defaultdict(list)
for line in open(sys.argv[1]):
    m=re.match(r'tessera tuning: (\S+) (.*) ([0-9.]+) ms',line.strip())
    if m: best[m.group(1)].append((float(m.group(3)),m.group(2)))
for k,v in best.items():
    print(' ',k, len(v), 'timed; fixed rule', f"{v[0][0]*1e3:.1f}us {v[0][1][:30]};", 'fastest:', '; '.join(f"{t*1e3:.1f}us {c[:34]}" for t,c in sorted(v)[:4]))
PY
done; done
tar -czf $OUT/n.tgz -C $W .
