# Session 34, call 3: traces of the BRC device fill (AUTO and BRC), then the sweep (c.sh) in the time left.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
cat $B/COMMIT
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
mkdir -p $OUT/r
for m in gen:random:4000,4000,500,1 gen:powerlaw:20,16,1 gen:circuit:1000000,5,4,100000,1; do
  n=$(echo $m | tr ':,' '__')
  for v in default fill; do
    e=""; [ $v = fill ] && e="TESSERA_BRC_DEVICE_FILL=1"
    env $e TESSERA_TRACE=2 timeout 120 $B/bin/tessera bench $m --methods auto,brc --precision f64 --out $OUT/r/$v-$n > $OUT/r/$v-$n.txt 2> $OUT/r/$v-$n.trace
    echo "$v $m rc=$? at $(( $(date +%s) - t0 )) s"
  done
done
grep -h "device fill" $OUT/r/*.trace | head -8 | cut -c1-400
for f in $OUT/r/*.txt; do echo "== $f"; grep -E "auto:|^gen.* brc " $f | tail -4 | cut -c1-200; done
cd $OUT && tar -czf traces.tgz r && rm -rf r
cd - > /dev/null
LIMIT=$(( 470 - ($(date +%s) - t0) )) bash gpu-carry/c.sh 2>&1 | tail -75
cd $OUT && tar -czf sweep.tgz sweep sweep-*.txt && rm -rf sweep sweep-*.txt
