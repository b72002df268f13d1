#!/usr/bin/env bash
# Session 24, run H (842bff9's CLI, background builds from tessera's pool): TILE's background
# build started after 20, 50 and the default 100 products (TESSERA_BACKGROUND_AFTER), AUTO on
# dense 2000² f32 and f64 and random half-dense 3000² f32, alternating, three rounds.
cd "$(dirname "$0")/../../.."
xz -dc gpu-carry/tessera.xz > /tmp/tessera && chmod +x /tmp/tessera
W=/tmp/h; mkdir -p $W
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/h.txt
for r in 1 2 3; do for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do
  set -- $spec
  for after in 20 50 def; do
    if [ $after = def ]; then unset TESSERA_BACKGROUND_AFTER; else export TESSERA_BACKGROUND_AFTER=$after; fi
    timeout 60 /tmp/tessera bench $1 --methods auto --precision $2 --out $W/a$after-${1//[:,]/_}-$2-$r > /dev/null 2>&1
  done
done; done
tar -czf $OUT/h.tgz -C $W .
for f in $W/*/bench.csv; do python3 - $f <<'PY'
import csv, sys
p = sys.argv[1]
for r in csv.DictReader(open(p)):
    if r["method"] == "auto":
        ours = [float(r[f"e2e_borrow_{n}_ms"]) for n in (1, 10, 100, 1000, 10000)]
        theirs = [float(r[f"cuspe2e_{n}_ms"]) for n in (1, 10, 100, 1000, 10000)]
        print(p.split("/")[-2], " ".join(f"{t/o:5.2f}" for o, t in zip(ours, theirs)))
PY
done | sort -t- -k2,4 -k1,1
