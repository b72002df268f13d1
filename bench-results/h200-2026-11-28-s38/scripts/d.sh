#!/bin/bash
# Session 38, run D: prototype of a warp per 32 rows (stream) against coop groups, short rows (proto/stream.cu).
cd /tmp/mb/proto && nvcc -O3 -arch=sm_90 -std=c++17 stream.cu -o s 2>&1 | head -20 && ./s | tee $OUT/d.txt
