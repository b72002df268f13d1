# Session 35, call 1: every GPU test (BrcGpu::assemble, the fill's one block table, brc_ell_build
# with brc_pad_column), memcheck of the fill test; then TESSERA_TRACE=3 end-to-end runs of AUTO
# read in place (the long early product calls), and every method on power-law 2^18 x 32 f64.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT/tests timeout 300 $B/run tests > $OUT/run-tests.txt 2>&1
echo "run tests rc=$? after $(( $(date +%s) - t0 )) s"
sed -n "/^== summary/,\$p" $OUT/run-tests.txt | head -40
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/gpu_brc --test-threads=1 fills_a_plan > $OUT/memcheck-fill.txt 2>&1
echo "memcheck fill rc=$?"; tail -3 $OUT/memcheck-fill.txt
mkdir -p $OUT/traces
for spec in "gen:random:4000,4000,500,1 f64" "$B/matrices/as-caida20071105.mtx.xz f32" "$B/matrices/n1024-l1.mtx.xz f32" "$B/matrices/zenios.mtx.xz f64" "gen:lap3d7:160 f32"; do
  set -- $spec; n=$(basename $1 | cut -c1-20)
  TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench $1 --methods auto --precision $2 > $OUT/traces/$n-$2.txt 2> $OUT/traces/$n-$2.trace
  echo "== $n $2"; grep "e2e run from Borrowed" $OUT/traces/$n-$2.trace | cut -c1-400
  grep "e2e run from Borrowed, product" $OUT/traces/$n-$2.trace | cut -c1-600 | head -8
done
timeout 120 $B/bin/tessera bench gen:powerlaw:18,32,1 --methods all --precision f64 --out $OUT/pl18 > $OUT/pl18.txt 2>&1
grep -E "^gen" $OUT/pl18.txt | cut -c1-140
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf traces.tgz traces && rm -rf traces
