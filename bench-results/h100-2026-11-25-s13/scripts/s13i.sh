#!/usr/bin/env bash
# Session 13, run I: the PETSc plugin's GPU test on the final code (analyze no longer waits for
# its device work), and one first-solve round each (AUTO, aijcusparse), 3D Laplacian 128^3.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib
W=/tmp/i; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/i.txt
scripts/petsc-gpu unpack .petsc-carry/petsc-cuda.tar.xz > /dev/null && eval "$(scripts/petsc-gpu env)" || echo "petsc unpack failed"
timeout 200 plugins/petsc/tests/gpu.sh --tessera-lib $B/lib > $W/petsc-gpu-test.txt 2>&1; echo "plugin gpu test rc=$?" | tee -a $W/i.txt; tail -3 $W/petsc-gpu-test.txt | tee -a $W/i.txt
bash plugins/petsc/build.sh --out /tmp/pb --tessera-lib $B/lib > /tmp/build.log 2>&1 || { tail /tmp/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common="-problem lap3d -n 128 -solves 3 -ksp_rtol 1e-8 -ksp_max_it 5000 -ksp_type cg -pc_type jacobi -use_gpu_aware_mpi 0"
pick='first_mult_ms=[0-9.]+|solve=[0-9]+ its=[0-9]+|ksp_s=[0-9.]+|matmult_us=[0-9.]+|algorithm [a-z_]+ \(requested|AUTO[^;]*'
for mode in auto cusparse; do
  case $mode in
    auto) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info";;
    cusparse) extra="-mat_type aijcusparse";;
  esac
  timeout 60 /tmp/pb/tessera_petsc_bench $common $extra > /tmp/o.txt 2>&1
  echo "one rank $mode: $(grep -oE "$pick" /tmp/o.txt | tr '\n' ' ' | cut -c1-400)"
done | tee $W/first-solve.txt
tar -czf $OUT/i.tgz -C $W .
