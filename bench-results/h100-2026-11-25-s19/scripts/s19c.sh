#!/usr/bin/env bash
# Session 19, run C: per product before (a6f817e) and after, the overlap off and on, on the
# matrices whose products run a pair of kernels.
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/c; mkdir -p $W
xz -dc gpu-carry/mini/tessera.xz > $W/old; chmod +x $W/old
T0=$(date +%s)
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/c.txt
S="gen:emptyrows:1000000,16,1 gen:powerlaw:20,16,1 gen:uniform:1000000,16,1 gen:circuit:1000000,5,4,100000,1 gen:dense:2000,2000"
for round in 1 2; do
for v in old new0 new; do
  [ $(( $(date +%s)-T0 )) -gt 500 ] && { echo "$v $round not run: time" | tee -a $W/c.txt; continue; }
  case $v in old) T=$W/old; E=;; new0) T=$B/bin/tessera; E=TESSERA_OVERLAP=0;; new) T=$B/bin/tessera; E=;; esac
  env $E timeout 200 $T bench $S --methods auto,hola,brc,tile --precision both --steady --csv $W/$v-$round.csv > $W/$v-$round.txt 2>&1
  echo "$v round $round rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/c.txt
done
done
tar -czf $OUT/c.tgz -C $W --exclude old .
