#!/usr/bin/env bash
# Session 29, run G: gpu_pieces built twice with the allocation test as committed (it holds the
# check's outcome, so that the product path, not analyze, starts the pieces mode): over the
# previous check.rs (po: the pieces prepared inline by a product) and over the fix (pn).
# gpu-carry/pp.tar.xz holds both (stripped). Run as one command:
cd /tmp && tar -xJf "$OLDPWD/gpu-carry/pp.tar.xz" && cd - >/dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 /tmp/po products_on_the_way 2>&1 | grep -E "test result|allocations|panicked|provisional" | head -5
echo "---new"
timeout 100 /tmp/pn 2>&1 | grep -E "test result|panicked" | head -5
timeout 150 compute-sanitizer --tool memcheck /tmp/pn products_on_the_way 2>&1 | grep -E "ERROR SUMMARY|test result"
# Output (H200):
# thread 'products_on_the_way_to_the_pieces_allocate_nothing' panicked at tests/gpu_pieces.rs:200:5:
# assertion `left == right` failed: 1 allocations on the caller's thread in 4 products
# test result: FAILED. 0 passed; 1 failed; ... 5 filtered out
# ---new
# test result: ok. 6 passed; 0 failed
# test result: ok. 1 passed; 0 failed; ... 5 filtered out
# ========= ERROR SUMMARY: 0 errors
