#!/bin/bash
# Session 38, run K: the review's mend (modes_module shared by the pieces and wide modes): gpu_wide,
# gpu_pieces; the wide mode's info line on dense 2000².
nvidia-smi --query-gpu=name --format=csv,noheader
export TESSERA_CACHE_DIR=/tmp/tc
for t in gpu_wide gpu_pieces; do /tmp/mb/t/$t > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep 'test result' $OUT/$t.txt)"; done
/tmp/mb/tessera bench gen:dense:2000,2000 --methods csr_vector --precision f32 --steady --csv $OUT/wide.csv > $OUT/wide.txt 2>&1
python3 -c "
import csv
for r in csv.DictReader(open('$OUT/wide.csv')): print(r['method'], float(r['spmv_ms'])*1e3, 'us', r['params'][:200])"
