#!/usr/bin/env bash
# Session 25, run C (BCCOO's device build: the staged count and facts; the final code): gpu_bccoo; its device tests under
# memcheck, and the AUTO test under racecheck; the build's kernels under ncu (elasticity 48³
# f64); named BCCOO's analyze traced; AUTO end to end on 3D elasticity 24³-56³ f32 and f64
# (device build; 32³ and 48³ also with it off, on this machine); every other test executable;
# the suite in f64 and f32 as time allows.
cd "$(dirname "$0")/../../.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
(cd $B/tests && TESSERA_BIN=$T timeout 240 ./gpu_bccoo --test-threads=1 > $W/t-gpu_bccoo.txt 2>&1; echo "gpu_bccoo rc=$? at $(el)s $(grep -E 'test result' $W/t-gpu_bccoo.txt)") | tee -a $W/c.txt
grep -h -E "panicked|FAILED|assert" -A4 $W/t-gpu_bccoo.txt | head -30
(cd $B/tests && echo "gpu_bccoo device memcheck: $(TESSERA_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck ./gpu_bccoo bccoo_device --test-threads=1 2>&1 | tee $W/memcheck-gpu_bccoo.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/c.txt
(cd $B/tests && echo "gpu_bccoo serves racecheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool racecheck ./gpu_bccoo bccoo_device_build_serves bccoo_device_facts --test-threads=1 2>&1 | tee $W/racecheck-gpu_bccoo.log | grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result' | tr '\n' ' ') at $(el)s") | tee -a $W/c.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size
timeout 100 ncu --clock-control none --kernel-name regex:'bccoo_facts|bccoo_block_count|util_scan|bccoo_fill|bccoo_tiles' -c 8 --csv --page raw --metrics $M $T bench gen:elasticity:48 --methods bccoo --precision f64 > $W/ncu-f64-el48.csv 2>/dev/null
timeout 100 ncu --clock-control none --kernel-name regex:'bccoo_facts|bccoo_block_count|util_scan|bccoo_fill|bccoo_tiles' -c 8 --csv --page raw --metrics $M $T bench gen:elasticity:32 --methods bccoo --precision f32 > $W/ncu-f32-el32.csv 2>/dev/null
for m in gen:elasticity:32 gen:elasticity:48; do for p in f32 f64; do
  TESSERA_TRACE=2 timeout 60 $T bench $m --methods bccoo --precision $p > $W/bccoo-${m//[:,]/_}-$p.txt 2>&1
done; done
echo "named done at $(el)s" | tee -a $W/c.txt
for m in gen:elasticity:24 gen:elasticity:32 gen:elasticity:40 gen:elasticity:48 gen:elasticity:56; do for p in f32 f64; do for d in 1 0; do
  [ $d = 0 ] && [ $m != gen:elasticity:32 ] && [ $m != gen:elasticity:48 ] && continue
  TESSERA_BCCOO_DEVICE_BUILD=$d TESSERA_TRACE=1 timeout 60 $T bench $m --methods auto --precision $p --out $W/e2e-${m//[:,]/_}-$p-dev$d > $W/e2e-${m//[:,]/_}-$p-dev$d.log 2>&1
done; done; done
echo "e2e done at $(el)s" | tee -a $W/c.txt
for t in $(ls $B/tests | grep -v '^gpu_bccoo$'); do (cd $B/tests && TESSERA_BIN=$T timeout 100 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/c.txt; done
for p in f64 f32; do
  [ $(el) -lt 440 ] && { timeout $(( 570-$(el) )) $T bench --suite gen:elasticity:32 gen:elasticity:40 --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$? at $(el)s" | tee -a $W/c.txt; }
done
tar -czf $OUT/c.tgz -C $W .
python3 - $W <<'PY'
import csv, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    print("==", f.split("/")[-1])
    rows = list(csv.DictReader([l for l in open(f) if l.startswith('"')]))
    for r in rows[1:9]:
        print(f"  {r['Kernel Name'][:24]:24} {float(r['gpu__time_duration.sum'].replace(',',''))/1000:8.1f} us grid {r['launch__grid_size']} rd {float(r['dram__bytes_read.sum'].replace(',',''))/1e6:.1f} MB wr {float(r['dram__bytes_write.sum'].replace(',',''))/1e6:.1f} MB")
PY
for f in $W/bccoo-*.txt; do echo "== $(basename $f) $(grep -E "device build of" $f | tail -2 | cut -c40-190 | tr '\n' ' ')"; grep -E "analyze: bccoo in" $f | tail -3 | cut -c1-120 | tr '\n' ' '; echo; done
for f in $W/e2e-*/bench.csv; do d=$(dirname $f); echo "$(basename $d) $(python3 scripts/e2e_summary.py $f | grep 'in place' | sed 's/ (0 below)//g') | $(python3 -c "
import csv,sys
r=[x for x in csv.DictReader(open('$f')) if x['method'].startswith('auto')][0]
print(r['chosen'], round(float(r['spmv_ms'])*1000,1), 'us; cusp', round(float(r['cusparse_best_ms'])*1000,1))")"; done
for p in f64 f32; do ls $W/suite-$p/bench.csv >/dev/null 2>&1 && python3 scripts/e2e_summary.py $W/suite-$p/bench.csv | sed -n '1,/copied/p'; done
