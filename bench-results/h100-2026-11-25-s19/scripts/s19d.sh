#!/usr/bin/env bash
# Session 19, run D: BRC before (a6f817e) and after its wait moved; then the suite (every method
# and AUTO, both types, per product) and AUTO's training set on the final kernels.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/d; mkdir -p $W
xz -dc gpu-carry/mini/tessera.xz > $W/old; chmod +x $W/old
T0=$(date +%s)
T=$B/bin/tessera
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/d.txt
S="gen:emptyrows:1000000,16,1 gen:powerlaw:20,16,1 gen:circuit:1000000,5,4,100000,1 gen:dense:2000,2000"
for round in 1 2; do for v in old new; do
  case $v in old) X=$W/old;; new) X=$T;; esac
  timeout 100 $X bench $S --methods brc --precision both --steady --csv $W/brc-$v-$round.csv > $W/brc-$v-$round.txt 2>&1
  echo "brc $v round $round rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/d.txt
done; done
timeout 200 $T bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite-all rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/d.txt
grep -i geomean $W/suite-all.txt | tee -a $W/d.txt
mkdir -p $W/train; TESSERA=$T timeout $(( 590-($(date +%s)-T0) )) bash gpu-carry/auto-training run $W/train; echo "train rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/d.txt
tar -czf $OUT/d.tgz -C $W --exclude old .
