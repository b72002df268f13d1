#!/usr/bin/env bash
# Session 24, run A (session 23's final code, bundle of 7a7e685): the TILE device build's kernels
# timed one by one with ncu (--clock-control none: duration and DRAM bytes), dense 2000² f32 and
# f64 and the random half-dense 3000² f32; and named TILE's analyze with TESSERA_TRACE=3.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/a; mkdir -p $W
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed
for spec in "gen:dense:2000,2000 f32" "gen:dense:2000,2000 f64" "gen:random:3000,3000,1600,7 f32"; do
  set -- $spec
  timeout 150 ncu --clock-control none --kernel-name regex:'tile_census|util_scan|tile_rows|tile_items|tile_fill' -c 30 --csv --page raw --metrics $M $T bench $1 --methods tile --precision $2 > $W/ncu-$2-${1//[:,]/_}.csv 2> $W/ncu-$2-${1//[:,]/_}.err
  echo "ncu $spec rc=$?" | tee -a $W/a.txt
done
TESSERA_TRACE=3 timeout 60 $T bench gen:dense:2000,2000 --methods tile --precision f32 > $W/trace3-tile-f32.txt 2>&1
tar -czf $OUT/a.tgz -C $W .
python3 - $W <<'PY'
import csv, glob, sys, collections
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    print("==", f.split("/")[-1])
    lines = [l for l in open(f) if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    agg = collections.OrderedDict()
    for r in rows[1:]:
        k = r.get("Kernel Name", "?")[:40]
        try:
            t = float(r["gpu__time_duration.sum"]); rd = float(r["dram__bytes_read.sum"]); wr = float(r["dram__bytes_write.sum"])
        except Exception:
            continue
        agg.setdefault(k, []).append((t, rd, wr, r.get("launch__grid_size"), r.get("sm__throughput.avg.pct_of_peak_sustained_elapsed")))
    for k, v in agg.items():
        t = sorted(x[0] for x in v)
        print(f"  {k:40} n={len(v)} time med {t[len(t)//2]:>9} min {t[0]:>9} read {v[0][1]:>12} write {v[0][2]:>12} grid {v[0][3]} sm% {v[0][4]}")
PY
grep -E "device build|cuMemAlloc|analyze: tile" $W/trace3-tile-f32.txt | head -30 | cut -c1-220
