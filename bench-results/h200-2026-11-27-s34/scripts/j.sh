# Session 34, call 9: AUTO's CSR_VECTOR against the method alone on random 4000² rows of 500, f64:
# default; the background never started (TESSERA_BACKGROUND_AFTER huge); the trial off.
set -u
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
M=gen:random:4000,4000,500,1
for v in default nobg notrial default2; do
  e="X=1"; [ $v = nobg ] && e="TESSERA_BACKGROUND_AFTER=1000000000"; [ $v = notrial ] && e="TESSERA_TRIAL=0"
  env $e TESSERA_TRACE=1 timeout 60 $B/bin/tessera bench $M --methods csr_vector,brc,auto --precision f64 > $OUT/$v.txt 2> $OUT/$v.trace
  echo "== $v ($e)"; grep -E "^gen.*(csr_vector|brc|auto)" $OUT/$v.txt | head -3 | cut -c1-110
  grep "e2e run from Device" $OUT/$v.trace | grep -o "at N = [^;]*" | head -1
done
timeout 60 $B/bin/tessera overhead 2>&1 | tail -12
