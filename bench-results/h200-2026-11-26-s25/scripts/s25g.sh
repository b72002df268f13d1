#!/usr/bin/env bash
# Session 25, run G (1d1bfe1: the count ranks a block row's blocks with a warp): gpu_bccoo (no
# shared matrices), its device tests under memcheck and racecheck; the build's kernels under
# ncu (elasticity 48³ f64, 32³ f32); named BCCOO's analyze traced on elasticity 32³ f32 and 48³
# f32 / f64; AUTO end to end on elasticity 32³ and 48³, f32 and f64 (CLI and test executable).
cd "$(dirname "$0")/../../.."
W=/tmp/g; mkdir -p $W; B=/tmp/cap; mkdir -p $B; tar -xJf gpu-carry/final.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T=$B/tessera
echo "# 1d1bfe1 $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/g.txt
(cd $B && timeout 120 ./gpu_bccoo --skip shared_matrix --test-threads=1 > $W/t-gpu_bccoo.txt 2>&1; echo "gpu_bccoo (no shared matrices): rc=$? $(grep -E 'test result' $W/t-gpu_bccoo.txt)") | tee -a $W/g.txt
grep -h -E "panicked|FAILED" -A4 $W/t-gpu_bccoo.txt | head -20
(cd $B && echo "memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./gpu_bccoo bccoo_device --test-threads=1 2>&1 | tee $W/memcheck.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/g.txt
(cd $B && echo "racecheck: $(timeout 90 compute-sanitizer --tool racecheck ./gpu_bccoo bccoo_device_build_serves bccoo_device_facts --test-threads=1 2>&1 | tee $W/racecheck.log | grep -E 'RACECHECK SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/g.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size
timeout 60 ncu --clock-control none --kernel-name regex:'bccoo_facts|bccoo_block_count|bccoo_fill|bccoo_tiles' -c 4 --csv --page raw --metrics $M $T bench gen:elasticity:48 --methods bccoo --precision f64 > $W/ncu-f64-el48.csv 2>/dev/null
for spec in "gen:elasticity:32 f32" "gen:elasticity:48 f32" "gen:elasticity:48 f64"; do set -- $spec
  TESSERA_TRACE=2 timeout 60 $T bench $1 --methods bccoo --precision $2 > $W/bccoo-${1//[:,]/_}-$2.txt 2>&1; done
for spec in "gen:elasticity:32 f32" "gen:elasticity:32 f64" "gen:elasticity:48 f32" "gen:elasticity:48 f64"; do set -- $spec
  timeout 60 $T bench $1 --methods auto --precision $2 --out $W/e2e-${1//[:,]/_}-$2 > /dev/null 2>&1; done
tar -czf $OUT/g.tgz -C $W .
python3 - $W <<'PY'
import csv, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    rows = list(csv.DictReader([l for l in open(f) if l.startswith('"')]))
    for r in rows[1:5]:
        print(f"  {r['Kernel Name'][:20]:20} {float(r['gpu__time_duration.sum'].replace(',',''))/1000:8.1f} us grid {r['launch__grid_size']} rd {float(r['dram__bytes_read.sum'].replace(',',''))/1e6:.1f} MB wr {float(r['dram__bytes_write.sum'].replace(',',''))/1e6:.1f} MB")
PY
for f in $W/bccoo-*.txt; do echo "$(basename $f .txt): analyze $(grep -E 'analyze: bccoo in' $f | sed -E 's/.*in ([0-9.]+) us/\1/' | sort -n | sed -n '5p;12p;20p' | tr '\n' ' ') us (5th/12th/20th of $(grep -c 'analyze: bccoo in' $f)); count read back $(grep -E 'device build of' $f | sed -E 's/.*read back at ([0-9.]+) us.*/\1/' | sort -n | sed -n '12p') us (median)"; done
for f in $W/e2e-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda n: float(r[f'cuspe2e_{n}_ms']) / float(r[f'e2e_borrow_{n}_ms'])
print(sys.argv[1].split('/')[-2], r['chosen'], round(float(r['spmv_ms']) * 1000, 1), 'us;', ' / '.join(f'{e(n):.2f}' for n in (1, 10, 100, 1000, 10000)))
PY
done
