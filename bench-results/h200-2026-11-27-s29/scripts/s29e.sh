#!/usr/bin/env bash
# Session 29, run E: the pieces kernel reading each piece's first entry from a table built at
# analyze (item_lo: one load before the entries' loads, where v1 chained item_row, row_item and
# row_ptr), padding pieces past the real count empty. Tests (gpu_pieces, gpu_sliced,
# gpu_background), memcheck and racecheck-free checks of gpu_pieces; then per product CSR_VECTOR
# named, v1 (ad68957's CLI, gpu-carry/t1.xz) against v2 (this bundle), alternating, two rounds
# each, on the shapes in the mode's range.
cd "$(dirname "$0")/../../.."
W=/tmp/e; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
xz -dc gpu-carry/t1.xz > /tmp/t1 && chmod +x /tmp/t1
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/e.txt
for t in gpu_pieces gpu_sliced gpu_background; do timeout 200 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/e.txt; done
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_pieces > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/e.txt
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
S="gen:random:10000,10000,0.015,3 gen:random:10000,10000,0.025,3 gen:random:20000,20000,0.02,3 gen:random:4000,4000,0.125,3 gen:lp:2000,1600000,1000,1 gen:dense:600,900 gen:dense:2000,1000"
for r in 1 2; do for v in 1 2; do
  if [ $v = 1 ]; then T=/tmp/t1; else T=$B/bin/tessera; fi
  timeout 200 $T bench $S --methods csr_vector --precision both --steady --out $W/v$v-$r > $W/v$v-$r.txt 2>&1; echo "v$v round $r rc=$? at $(el)s" | tee -a $W/e.txt
done; done
rm -f $W/*/*.svg; tar -czf $OUT/e.tgz -C $W .
python3 - $W <<'PY'
import csv, sys
W = sys.argv[1]
t = {}
for v in (1, 2):
    for r in (1, 2):
        for x in csv.DictReader(open(f"{W}/v{v}-{r}/bench.csv")):
            key = (x["matrix"], x["type"])
            if x["method"] == "csr_vector":
                t.setdefault(key, {}).setdefault(f"v{v}", []).append(float(x["spmv_ms"]) * 1e3)
            elif x["method"].startswith("cusparse"):
                t.setdefault(key, {}).setdefault("cus", []).append(float(x["spmv_ms"]) * 1e3)
print("== CSR_VECTOR named per product, us: v1 (two rounds) / v2 (two rounds) / cuSPARSE's better (min over rounds)")
for (m, ty), d in t.items():
    print(f"{m[:32]:32s} {ty} v1 {' '.join(f'{a:6.2f}' for a in d['v1'])}  v2 {' '.join(f'{a:6.2f}' for a in d['v2'])}  cusparse {min(d['cus']):6.2f}")
PY
