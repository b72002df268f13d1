# Session 35, call 16: where AUTO's first products go read in place on two small shapes that
# read 0.56-0.57 of cuSPARSE at N = 10 in run N (dense 500² f64, the LP 1000 x 500,000 f64):
# TESSERA_TRACE=3, this session's binary, twice each.
set -u
tar -xJf gpu-carry/ab.tar.xz -C /tmp; A=/tmp/ab
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
for m in gen:dense:500,500 gen:lp:1000,500000,500,2; do
  n=$(echo $m | tr ':,' '__')
  for i in 1 2; do
    TESSERA_TRACE=3 timeout 60 $A/tessera-new bench $m --methods auto --precision f64 > $OUT/$n-$i.txt 2> $OUT/$n-$i.trace
    echo "== $n #$i: $(grep -E '^gen.*auto' $OUT/$n-$i.txt | tail -1 | cut -c1-170)"
    grep "e2e run from Borrowed" $OUT/$n-$i.trace | cut -c1-420
  done
done
cd $OUT && gzip *.trace
