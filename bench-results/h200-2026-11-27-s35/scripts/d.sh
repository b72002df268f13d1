# Session 35, call 4: AUTO with the heavy-tail rule and the sliced mode's long-row guard on the
# power-law shapes the sliced mode took (2^16 x 128, 2^16 x 64, 2^15 x 32), a matrix with one
# row of 200,000 (heavy-tailed by the rule: does the trial keep HOLA?), circuit (unchanged);
# then random 4000² rows of 500 read in place with the trial off and with PDL off (the stall at
# BRC's first launch).
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
for m in powerlaw:16,128,1 powerlaw:16,64,1 powerlaw:15,32,1 onerow:1000000,1000000,200000 circuit:1000000,5,4,100000,1; do
  n=$(echo $m | tr ':,' '__')
  meth=auto; [ $m = onerow:1000000,1000000,200000 ] && meth=hola,brc,auto
  TESSERA_TRACE=1 timeout 100 $B/bin/tessera bench gen:$m --methods $meth --precision both --out $OUT/a/$n > $OUT/a-$n.txt 2> $OUT/a-$n.trace
  echo "$m rc=$? at $(( $(date +%s) - t0 )) s"
  grep -E "^gen.*(auto|hola|brc)" $OUT/a-$n.txt | cut -c1-200
  grep -o "trial on this matrix's products: [^;]*" $OUT/a-$n.trace | sort | uniq -c | head -4
done
mkdir -p $OUT/r
for v in trial0 overlap0; do
  e="TESSERA_TRIAL=0"; [ $v = overlap0 ] && e="TESSERA_OVERLAP=0"
  env $e TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench gen:random:4000,4000,500,1 --methods auto --precision f64 > $OUT/r/$v.txt 2> $OUT/r/$v.trace
  echo "== $v"; grep "e2e run from Borrowed, product\|e2e run from Borrowed:" $OUT/r/$v.trace | cut -c1-330
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf d.tgz r a a-* && rm -rf r a a-*
