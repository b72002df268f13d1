#!/bin/bash
# Session 38, run J: gpu_wide, gpu_pieces, gpu_sliced after their shared helper (csr_vector_in_mode).
nvidia-smi --query-gpu=name --format=csv,noheader
for t in gpu_wide gpu_pieces gpu_sliced; do /tmp/mb/t/$t > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/$t.txt)"; done
