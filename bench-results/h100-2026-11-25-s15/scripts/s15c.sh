#!/usr/bin/env bash
# Session 15, run C: GPU tests after the module's function table; A/B of the first products
# on one machine: session 14's final tessera (016fa82, old) against this commit (new), the
# shared matrices, read in place, interleaved; a TESSERA_TRACE=2 timeline of the new one.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
xz -dc gpu-carry/old-tessera.xz > /tmp/old-tessera; chmod +x /tmp/old-tessera
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/c; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/c.txt
cd $B/tests
for t in unit gpu gpu_faults gpu_check gpu_hola gpu_background; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/c.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/c.txt
done
cd - >/dev/null
M=$B/matrices; SM=$(ls $M/*.mtx.xz | tr '\n' ' ')
for round in 1 2; do
  for who in old new; do
    bin=$B/bin/tessera; [ $who = old ] && bin=/tmp/old-tessera
    timeout 150 $bin bench $SM --methods auto --precision f64 --out $W/ab-$who-$round > $W/ab-$who-$round.txt 2>&1
    echo "$who round $round rc=$? $(grep 'end-to-end geomean' $W/ab-$who-$round.txt | sed 's/.*read in place//')" | tee -a $W/c.txt
  done
done
for who in old new; do
  bin=$B/bin/tessera; [ $who = old ] && bin=/tmp/old-tessera
  timeout 150 $bin bench $SM --methods auto --precision f32 --out $W/ab32-$who > $W/ab32-$who.txt 2>&1
  echo "$who f32 rc=$? $(grep 'end-to-end geomean' $W/ab32-$who.txt | sed 's/.*read in place//')" | tee -a $W/c.txt
done
TESSERA_TRACE=2 timeout 100 $B/bin/tessera bench $M/as-caida20071105.mtx.xz $M/watt_2.mtx.xz $M/Groebner_id2003_aug.mtx.xz $M/bayer10.mtx.xz --methods auto --precision f64 > $W/trace.txt 2>&1
echo "trace rc=$?" | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
