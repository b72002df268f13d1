# Session 35, call 2: (1) TESSERA_TRACE=3 of AUTO read in place on random 4000² rows of 500 with
# spans inside the product (swap poll, trial, launch) and AUTO's start after the check; twice.
# (2) HOLA against BRC, steady, both types, on R-MAT power-law shapes whose empty-row fractions
# fall inside the training gap of select::GRAPH_EMPTY_ROWS (1% to 37%), plus circuit and the
# empty-row generator as references.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
mkdir -p $OUT/r
for i in 1 2; do
  TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench gen:random:4000,4000,500,1 --methods auto --precision f64 > $OUT/r/random-$i.txt 2> $OUT/r/random-$i.trace
  grep "e2e run from Borrowed, product\|e2e run from Borrowed:" $OUT/r/random-$i.trace | cut -c1-420
  grep "worker's device half\|preloaded" $OUT/r/random-$i.trace | tail -4 | cut -c1-300
done
for m in powerlaw:15,32,1 powerlaw:16,64,1 powerlaw:16,128,1 powerlaw:17,64,1 powerlaw:18,64,1 powerlaw:19,32,1 powerlaw:18,32,1 circuit:1000000,5,4,100000,1 emptyrows:1000000,16,1; do
  n=$(echo $m | tr ':,' '__')
  timeout 90 $B/bin/tessera bench gen:$m --methods hola,brc --steady --precision both --out $OUT/g/$n > $OUT/g-$n.txt 2>&1
  echo "$m rc=$? at $(( $(date +%s) - t0 )) s"
  grep -E "^gen.*(hola|brc) " $OUT/g-$n.txt | awk '{print $4, $5, $7, $8, $9}'
  [ $(( $(date +%s) - t0 )) -gt 500 ] && break
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf r.tgz r g g-*.txt && rm -rf r g g-*.txt
