#!/usr/bin/env bash
# Session 22, run F (f8c2c8d: the host check's single row pass with integer statistics):
# gpu_import, gpu and the C GPU test; the 13 shared matrices from host arrays, 96aaccf's
# `tessera` against this one, alternating, two rounds, f64 and f32; TESSERA_TRACE=1 on
# as-caida (the check's time).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/f; mkdir -p $W
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
OLD=$B/tessera-96aaccf; chmod +x $OLD
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
for t in gpu_import gpu unit; do (cd $B/tests && timeout 150 ./$t --test-threads=1 > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(el)s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/f.txt; done
# (the C GPU test ran in run E; the lib is not carried this time: the carry limit)
M="Pd watt_2 adder_dcop_05 zenios n1024-l1 bayer10 as-caida20071105 arrow sparse-images-1024_subset Groebner_id2003_aug bcsstk16 cit-HepPh Andrews"
for p in f64 f32; do for r in 1 2; do
  timeout 60 $OLD bench $M --methods auto --precision $p --out $W/ab-old$p-$r > $W/ab-old$p-$r.txt 2>&1; echo "old $p $r rc=$? at $(el)s" | tee -a $W/f.txt
  timeout 60 $B/bin/tessera bench $M --methods auto --precision $p --out $W/ab-new$p-$r > $W/ab-new$p-$r.txt 2>&1; echo "new $p $r rc=$? at $(el)s" | tee -a $W/f.txt
done; done
TESSERA_TRACE=1 timeout 30 $OLD bench as-caida20071105 --methods auto --precision f64 > $W/trace1-old.txt 2>&1
TESSERA_TRACE=1 timeout 30 $B/bin/tessera bench as-caida20071105 --methods auto --precision f64 > $W/trace1-new.txt 2>&1
tar -czf $OUT/f.tgz -C $W .
for p in f64 f32; do echo "== $p from host: old-1 new-1 old-2 new-2"; python3 $B/ab_host.py $W/ab-{old,new}$p-1/bench.csv $W/ab-{old,new}$p-2/bench.csv | grep -E "as-caida|arrow|bayer|geometric"; done
echo "old:"; grep "as they are" $W/trace1-old.txt | head -4 | cut -c1-160
echo "new:"; grep "as they are" $W/trace1-new.txt | head -4 | cut -c1-160
