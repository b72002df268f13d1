#!/usr/bin/env bash
# Session 25, run F (the final code, 61dd354: the count at most two blocks per SM): gpu_bccoo's
# device tests and its other tests that need no shared matrices; named BCCOO's analyze traced
# on elasticity 32³ f32 and 48³ f32 / f64; AUTO end to end on elasticity 32³ and 48³, f32 and
# f64 (CLI and test executable only: no suite).
cd "$(dirname "$0")/../../.."
W=/tmp/f; mkdir -p $W; B=/tmp/cap; mkdir -p $B; tar -xJf gpu-carry/final.tar.xz -C $B
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64
T=$B/tessera
echo "# 61dd354 $(nvidia-smi --query-gpu=name --format=csv,noheader)" | tee $W/f.txt
(cd $B && timeout 120 ./gpu_bccoo --skip shared_matrix --test-threads=1 > $W/t-gpu_bccoo.txt 2>&1; echo "gpu_bccoo (no shared matrices): rc=$? $(grep -E 'test result' $W/t-gpu_bccoo.txt)") | tee -a $W/f.txt
for spec in "gen:elasticity:32 f32" "gen:elasticity:48 f32" "gen:elasticity:48 f64"; do set -- $spec
  TESSERA_TRACE=2 timeout 60 $T bench $1 --methods bccoo --precision $2 > $W/bccoo-${1//[:,]/_}-$2.txt 2>&1; done
for spec in "gen:elasticity:32 f32" "gen:elasticity:32 f64" "gen:elasticity:48 f32" "gen:elasticity:48 f64"; do set -- $spec
  timeout 60 $T bench $1 --methods auto --precision $2 --out $W/e2e-${1//[:,]/_}-$2 > /dev/null 2>&1; done
tar -czf $OUT/f.tgz -C $W .
for f in $W/bccoo-*.txt; do echo "$(basename $f .txt): analyze $(grep -E 'analyze: bccoo in' $f | sed -E 's/.*in ([0-9.]+) us/\1/' | sort -n | sed -n '5p;12p;20p' | tr '\n' ' ') us (5th/12th/20th of $(grep -c 'analyze: bccoo in' $f))"; done
for f in $W/e2e-*/bench.csv; do python3 - $f <<'PY'
import csv, sys
r = [x for x in csv.DictReader(open(sys.argv[1])) if x['method'].startswith('auto')][0]
e = lambda n: float(r[f'cuspe2e_{n}_ms']) / float(r[f'e2e_borrow_{n}_ms'])
print(sys.argv[1].split('/')[-2], r['chosen'], round(float(r['spmv_ms']) * 1000, 1), 'us;', ' / '.join(f'{e(n):.2f}' for n in (1, 10, 100, 1000, 10000)))
PY
done
