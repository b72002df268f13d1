#!/usr/bin/env bash
# Session 24, run F: background builds from tessera's pool (842bff9) against from the default pool
# (f4977c5), the two CLIs alternating on one machine: AUTO end to end on dense 2000² f32 and f64
# and random half-dense 3000² f32, three rounds; one TESSERA_TRACE=2 run of each on dense f32;
# the suite in f64 with each (it failed at once, rc 2: this run carried no shared matrices).
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/cli && tar -xJf gpu-carry/cli.tar.xz -C /tmp/cli
W=/tmp/f; mkdir -p $W
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
for r in 1 2 3; do for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do
  set -- $spec
  for c in f4977c5 842bff9; do
    timeout 60 /tmp/cli/tessera-$c bench $1 --methods auto --precision $2 --out $W/$c-${1//[:,]/_}-$2-$r > /dev/null 2>&1
  done
done; done
for c in f4977c5 842bff9; do TESSERA_TRACE=2 timeout 60 /tmp/cli/tessera-$c bench gen:dense:2000,2000 --methods auto --precision f32 > $W/trace-$c.txt 2>&1; done
for c in f4977c5 842bff9; do timeout 200 /tmp/cli/tessera-$c bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision f64 --out $W/suite-f64-$c > /dev/null 2>&1; echo "suite f64 $c rc=$?" | tee -a $W/f.txt; done
tar -czf $OUT/f.tgz -C $W .
for f in $W/*/bench.csv; do python3 - $f <<'PY'
import csv, sys
p = sys.argv[1]
for r in csv.DictReader(open(p)):
    if r["method"] == "auto":
        ours = [float(r[f"e2e_borrow_{n}_ms"]) for n in (1, 10, 100, 1000, 10000)]
        theirs = [float(r[f"cuspe2e_{n}_ms"]) for n in (1, 10, 100, 1000, 10000)]
        print(p.split("/")[-2], " ".join(f"{t/o:5.2f}" for o, t in zip(ours, theirs)))
PY
done | sort -k1.9
grep -h -E "device build of|cuMemAlloc(Async|FromPool) [0-9]+ bytes for TILE" $W/trace-*.txt | cut -c1-180 | head -40
for c in f4977c5 842bff9; do python3 scripts/e2e_summary.py $W/suite-f64-$c/bench.csv | sed -n '1,/copied/p'; done
