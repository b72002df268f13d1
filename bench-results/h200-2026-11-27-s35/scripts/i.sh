# Session 35, call 9: the final code (e791e30): every GPU test, memcheck (--leak-check full,
# TESSERA_TEST_SMALL=1) of the tests whose background builds copy through the bounce buffer,
# then the suite (AUTO, both types, end to end) and AUTO on three power-law shapes.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT/tests timeout 240 $B/run tests > $OUT/run-tests.txt 2>&1
echo "run tests rc=$? after $(( $(date +%s) - t0 )) s"
sed -n "/^== summary/,\$p" $OUT/run-tests.txt | grep -v " ok " | head -20; grep -c " ok " $OUT/run-tests.txt
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
for t in gpu_background gpu_bccoo gpu; do
  TESSERA_TEST_SMALL=1 timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $B/tests/$t --test-threads=1 > $OUT/memcheck-$t.log 2>&1
  echo "memcheck $t rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-$t.log | tail -1) $(grep 'test result' $OUT/memcheck-$t.log | cut -c1-50)"
done
echo "at $(( $(date +%s) - t0 )) s"
timeout 200 $B/bin/tessera bench --suite --methods auto --precision both --out $OUT/suite > $OUT/suite.txt 2>&1
echo "suite rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^(geomean|end-to-end geomean)" $OUT/suite.txt
for m in powerlaw:16,128,1 powerlaw:18,32,1 circuit:200000,4,10,20000,2; do
  [ $(( $(date +%s) - t0 )) -gt 560 ] && break
  timeout 30 $B/bin/tessera bench gen:$m --methods auto --precision both > $OUT/a-$(echo $m | tr ':,' '__').txt 2>&1
  grep -E "^gen.*auto" $OUT/a-$(echo $m | tr ':,' '__').txt | cut -c1-160
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf i.tgz tests memcheck-* suite suite.txt a-* run-tests.txt && rm -rf tests memcheck-* suite a-*
