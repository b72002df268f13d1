#!/bin/bash
# Session 38, run F: prototype of long rows with 128-bit loads (proto/long.cu).
cd /tmp/mb/proto && nvcc -O3 -arch=sm_90 -std=c++17 long.cu -o l 2>&1 | head -20 && ./l | tee $OUT/f.txt
