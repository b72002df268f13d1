#!/usr/bin/env bash
# Session 29, run C (ad68957): gpu_background three times (its two allocating tests now hold
# the device lock), gpu_pieces and gpu_sliced (their shared helpers), memcheck of gpu_pieces; then AUTO against CSR_VECTOR named per
# product on the shapes where AUTO's pieces were slower than the named ones in run B (rows of 250,
# LP rows of 1,000 in f64, rows of 500), in both orders, and AUTO without its trials
# (TESSERA_TRIAL=0).
cd "$(dirname "$0")/../../.."
W=/tmp/c; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/c.txt
for i in 1 2 3; do timeout 200 $B/tests/gpu_background > $W/t-gpu_background-$i.txt 2>&1; echo "gpu_background $i rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu_background-$i.txt)" | tee -a $W/c.txt; done
for t in gpu_pieces gpu_sliced; do timeout 100 $B/tests/$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E 'test result' $W/t-$t.txt)" | tee -a $W/c.txt; done
timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu_pieces > $W/memcheck.txt 2>&1; echo "memcheck rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.txt | tr '\n' ' ')" | tee -a $W/c.txt
grep -h -E "panicked" -A4 $W/t-*.txt | head -20
S="gen:random:10000,10000,0.025,3 gen:lp:2000,1600000,1000,1 gen:random:4000,4000,0.125,3"
timeout 150 $B/bin/tessera bench $S --methods auto,csr_vector --precision both --steady --out $W/ac > $W/ac.txt 2>&1; echo "auto,csr_vector rc=$? at $(el)s" | tee -a $W/c.txt
timeout 150 $B/bin/tessera bench $S --methods csr_vector,auto --precision both --steady --out $W/ca > $W/ca.txt 2>&1; echo "csr_vector,auto rc=$? at $(el)s" | tee -a $W/c.txt
TESSERA_TRIAL=0 timeout 150 $B/bin/tessera bench $S --methods auto,csr_vector --precision both --steady --out $W/nt > $W/nt.txt 2>&1; echo "no trial rc=$? at $(el)s" | tee -a $W/c.txt
rm -f $W/*/*.svg; tar -czf $OUT/c.tgz -C $W .
python3 - $W <<'PY'
import csv, sys
W = sys.argv[1]
print("== per product, us: AUTO (its final method) / CSR_VECTOR named / cuSPARSE's better")
for d in ("ac", "ca", "nt"):
    rows = {}
    for r in csv.DictReader(open(f"{W}/{d}/bench.csv")):
        rows.setdefault((r["matrix"], r["type"]), {})[r["method"]] = (float(r["spmv_ms"]) * 1e3, r["chosen"])
    for (m, t), v in rows.items():
        cs = min(x for k, (x, _) in v.items() if k.startswith("cusparse"))
        print(f"{d} {m[:32]:32s} {t} auto({v['auto'][1]}) {v['auto'][0]:7.2f} csr_vector {v['csr_vector'][0]:7.2f} cusparse {cs:7.2f}")
PY
