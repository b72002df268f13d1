# Session 34, call 8: is CSR_VECTOR's time on random 4000² (rows of 500, L2 resident) a clock
# effect? SM clock sampled every 50 ms while the bench runs csr_vector and brc steady, then AUTO e2e.
set -u
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_BIN=$B/bin/tessera TESSERA_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,clocks_throttle_reasons.active --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv,noheader -lms 50 > $OUT/clocks.csv &
P=$!
for i in 1 2; do
  TESSERA_TRACE=1 timeout 60 $B/bin/tessera bench gen:random:4000,4000,500,1 --methods csr_vector,brc,auto --precision f64 --out $OUT/b$i > $OUT/b$i.txt 2> $OUT/b$i.trace
  grep -E "csr_vector|brc|auto|ALG" $OUT/b$i.txt | head -12 | cut -c1-150
  grep "e2e run from Device" $OUT/b$i.trace | sed -e 's/first calls.*; then/ then/' | cut -c1-330
done
kill $P
awk -F, '{print $2}' $OUT/clocks.csv | sort | uniq -c | sort -rn | head -8
