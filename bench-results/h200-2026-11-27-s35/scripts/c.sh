# Session 35, call 3: (1) ptxas resource usage of brc.cu and csr_vector.cu (local memory: a first
# launch that grows the context's local memory waits for the device); (2) AUTO read in place on
# random 4000² rows of 500 with CUDA_MODULE_LOADING=EAGER (does the stall at BRC's first launch
# go?); (3) AUTO end to end with the heavy-tail rule (select::heavy_tailed) on power-law shapes.
set -u
t0=$(date +%s)
tar -xJf gpu-carry/mini.tar.xz -C /tmp; B=/tmp/gpu-bundle
echo "bundle $(cat $B/COMMIT | tr '\n' ' ')"; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc
for f in brc csr_vector; do
  cat kernels/common.cuh kernels/$f.cu > /tmp/$f-all.cu
  /usr/local/cuda/bin/nvcc -arch=sm_90 -cubin -DCOOP=4 -Xptxas -v -o /tmp/$f.cubin /tmp/$f-all.cu > $OUT/ptxas-$f.txt 2>&1
  echo "$f: rc=$?"; grep -B1 -A0 "stack frame" $OUT/ptxas-$f.txt | grep -v "^--" | paste - - | grep -v "0 bytes stack frame, 0 bytes spill stores" | sed 's/ptxas info    : //g' | cut -c1-200 | head -12
done
mkdir -p $OUT/r
for i in 1 2; do
  CUDA_MODULE_LOADING=EAGER TESSERA_TRACE=3 timeout 60 $B/bin/tessera bench gen:random:4000,4000,500,1 --methods auto --precision f64 > $OUT/r/eager-$i.txt 2> $OUT/r/eager-$i.trace
  grep "e2e run from Borrowed, product\|e2e run from Borrowed:" $OUT/r/eager-$i.trace | cut -c1-330
done
for m in powerlaw:16,64,1 powerlaw:17,64,1 powerlaw:18,32,1 powerlaw:18,64,1 powerlaw:16,128,1 powerlaw:19,32,1; do
  n=$(echo $m | tr ':,' '__')
  TESSERA_TRACE=1 timeout 100 $B/bin/tessera bench gen:$m --methods auto --precision both --out $OUT/a/$n > $OUT/a-$n.txt 2> $OUT/a-$n.trace
  echo "$m rc=$? at $(( $(date +%s) - t0 )) s"
  grep -E "^gen.*auto" $OUT/a-$n.txt | cut -c1-200
  [ $(( $(date +%s) - t0 )) -gt 480 ] && break
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf c.tgz r a a-* ptxas-* && rm -rf r a a-* ptxas-*
