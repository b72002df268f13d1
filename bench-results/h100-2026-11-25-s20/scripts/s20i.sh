#!/usr/bin/env bash
# Session 20, run I: does an allocation on one thread stall another thread's launches?
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin
nvcc -O2 -arch=sm_90 -o /tmp/alloc_block gpu-carry/exp/alloc_block.cu -lcuda && /tmp/alloc_block | tee $OUT/alloc_block.txt
