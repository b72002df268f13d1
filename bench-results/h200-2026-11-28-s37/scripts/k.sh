#!/bin/bash
# Session 37, run K: 9ff6347 (DeviceBuffer::free_unused shared by TILE's and BCCOO's device builds): gpu_tile, gpu_bccoo.
B=/tmp/mb; export TESSERA_CACHE_DIR=/tmp/tc
echo "bundle $(cat $B/COMMIT)"; nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/k
for t in gpu_tile gpu_bccoo; do $B/t/$t > $OUT/k/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/k/$t.txt)"; grep -E "panicked" $OUT/k/$t.txt | head -3; done
cd $OUT && tar czf k.tgz k && rm -rf k
