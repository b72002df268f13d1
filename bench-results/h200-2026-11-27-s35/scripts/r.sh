# Session 35, call 18: after workers.rs moved to backend/ (the floor plan; a CUDA handle starts
# the spares unconditionally): gpu, gpu_background, gpu_threads, gpu_trial, gpu_borrow.
set -u
tar -xJf gpu-carry/r.tar.xz -C /tmp; A=/tmp/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSERA_CACHE_DIR=/tmp/tc TESSERA_BIN=$A/tessera
for t in gpu gpu_background gpu_threads gpu_trial gpu_borrow; do
  timeout 100 $A/$t --test-threads=1 > /tmp/$t.log 2>&1; echo "$t rc=$? $(grep 'test result' /tmp/$t.log | cut -c1-60)"
done
