# Session 35, call 11: the cuSPARSE drop-in's GPU check (cusparse-shim/gpu/run.sh: spmv_compare's
# 19 cases, CuPy and PyTorch through the shim, timings once) with the bundle of e791e30.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
REPEAT=1 CONTROL=0 timeout 560 bash cusparse-shim/gpu/run.sh $B/lib/libtessera_cusparse.so $B/matrices > $OUT/shim-run.txt 2>&1
echo "shim run rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^(RESULT|SUMMARY|RUN)" $OUT/shim-run.txt | head -30
