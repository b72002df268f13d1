#!/usr/bin/env bash
# Session 15, run G: HOLA's mode forced (TESSERA_HOLA_MODE=own|share) against its rule, per
# product, on multi-wave matrices with long or random rows, f64 and f32, interleaved twice.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/g; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/g.txt
M=$B/matrices
S="gen:lp:4284,1092610,2600,1 gen:lp:4284,1092610,1200,1 gen:emptyrows:1000000,16,1 gen:uniform:1000000,16,1 gen:powerlaw:20,16,1 gen:circuit:1000000,5,4,100000,1 $M/Andrews.mtx.xz gen:elasticity:48"
for round in 1 2; do for mode in rule own share; do
  if [ $mode = rule ]; then unset TESSERA_HOLA_MODE; else export TESSERA_HOLA_MODE=$mode; fi
  timeout 120 $B/bin/tessera bench $S --methods hola --precision both --steady > $W/$mode-$round.txt 2>&1
  echo "$mode round $round rc=$?" | tee -a $W/g.txt
  grep -E ' hola ' $W/$mode-$round.txt | awk '{printf "  %-28s %s %s %s\n",$1,$4,$7,$8}' | tee -a $W/g.txt
done; done
unset TESSERA_HOLA_MODE
tar -czf $OUT/g.tgz -C $W .
