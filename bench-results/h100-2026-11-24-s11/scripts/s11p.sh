#!/usr/bin/env bash
# Session 11, run P (final commit): the BRC GPU tests after the test-helper review.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
echo "commit $(cat $B/COMMIT)"; (cd $B/tests && ./gpu_brc --test-threads=1 2>&1 | grep -E 'test |test result')
