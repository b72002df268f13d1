#!/usr/bin/env bash
# Session 11, run A: the borrowed create's tests (and memcheck), the GPU tests it touches, and
# the suite's end to end in f64 with the new e2e_borrow columns.
cd "$(dirname "$0")/.."
tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices PATH=$PATH:/usr/local/cuda/bin
echo "# commit $(cat $B/COMMIT)" > $OUT/a.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $OUT/a.txt
(cd $B/tests && for t in gpu_borrow_c gpu_borrow gpu gpu_background gpu_import shim_unit; do echo "$t: $(timeout 200 ./$t 2>&1 | grep -E 'test result|panicked' | head -3)"; done
 echo "gpu_borrow_c memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./gpu_borrow_c 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") >> $OUT/a.txt 2>&1
cat $OUT/a.txt
timeout 330 $B/bin/tessera bench --suite --methods auto --precision f64 --out $OUT/suite-f64 > $OUT/suite-f64.txt 2>&1; echo "suite rc=$?"
grep -E 'geomean' $OUT/suite-f64.txt | cut -c1-400
