#!/usr/bin/env bash
# Session 32, run C: the small shared matrices AUTO gives HOLA (run B: as-caida f64 0.95-0.96 of
# cuSPARSE from N = 10): every method and cuSPARSE per product, both types; then the kernels'
# own times under ncu on as-caida f64 (HOLA, CSR_VECTOR and cuSPARSE's).
cd "$(dirname "$0")/../../.."
W=/tmp/c; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader) $(cat $B/COMMIT)"
M=""; for m in as-caida20071105 cit-HepPh Groebner_id2003_aug adder_dcop_05 arrow sparse-images-1024_subset; do M="$M $B/matrices/$m.mtx.xz"; done
for p in f64 f32; do
  timeout 200 $B/bin/tessera bench $M --methods all --precision $p --out $W/all-$p > $W/all-$p.txt 2>&1; echo "all $p rc=$? at $(el)s"
  python3 - $W/all-$p/bench.csv <<'PY'
import csv, sys, collections
rows = collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])):
    rows[r['matrix'].split('/')[-1][:18]][r['method']] = r
for m, d in rows.items():
    cells = ' '.join('%s %.1f' % (k.replace('cusparse:', 'cu:'), float(r['spmv_ms']) * 1e3) for k, r in d.items() if r['spmv_ms'] not in ('', '-'))
    print('  %-18s %s' % (m, cells))
    a = d.get('auto')
    if a: print('      auto: %s' % a['params'][:160])
PY
done
for k in hola csr_vector; do
  timeout 200 ncu --metrics gpu__time_duration.sum -k regex:'hola|csr|Csr|spmv|SpMV' --launch-skip 40 --launch-count 30 $B/bin/tessera bench $B/matrices/as-caida20071105.mtx.xz --methods $k --precision f64 --repeat 7 > $W/ncu-$k.txt 2>&1; echo "ncu $k rc=$? at $(el)s"
  python3 - $W/ncu-$k.txt <<'PY'
import re, sys, collections
t = collections.defaultdict(list); name = None
for line in open(sys.argv[1]):
    m = re.match(r'\s+(\S.*?) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)', line)
    if m: name = m.group(1)[:60]
    m = re.search(r'gpu__time_duration.sum\s+(\S+)\s+([\d.,]+)', line)
    if m and name:
        v = float(m.group(2).replace(',', '')); v = v / 1000 if m.group(1) == 'ns' else v
        t[name].append(v)
for n, v in t.items():
    v.sort(); print('  %-60s n=%d median %.2f us (min %.2f)' % (n, len(v), v[len(v)//2], v[0]))
PY
done
rm -f $W/*/*.svg; tar -czf $OUT/c.tgz -C $W .
