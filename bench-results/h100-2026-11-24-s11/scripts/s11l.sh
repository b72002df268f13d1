#!/usr/bin/env bash
# Session 11, run L: PETSc on the GPU after the device-built BRC: the plugin's GPU test,
# the one-rank first-solve A/B (AUTO, CSR_VECTOR alone, aijcusparse; 3 interleaved rounds), and
cd "$(dirname "$0")/.."
tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib
scripts/petsc-gpu unpack .petsc-carry/petsc-cuda.tar.xz > /dev/null && eval "$(scripts/petsc-gpu env)" || echo "petsc unpack failed"
timeout 200 plugins/petsc/tests/gpu.sh --tessera-lib $B/lib > $OUT/petsc-gpu-test.txt 2>&1; tail -2 $OUT/petsc-gpu-test.txt
bash plugins/petsc/build.sh --out /tmp/pb --tessera-lib $B/lib > /tmp/build.log 2>&1 || { tail /tmp/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common="-problem lap3d -n 128 -solves 3 -ksp_rtol 1e-8 -ksp_max_it 5000 -ksp_type cg -pc_type jacobi -use_gpu_aware_mpi 0"
for round in 1 2 3; do
  for mode in auto csr_vector cusparse; do
    case $mode in
      auto) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info";;
      csr_vector) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info -mat_tessera_algorithm csr_vector";;
      cusparse) extra="-mat_type aijcusparse";;
    esac
    /tmp/pb/tessera_petsc_bench $common $extra > /tmp/o.txt 2>&1
    echo "round $round $mode: $(grep -oE 'first_mult_ms=[0-9.]+|solve=[0-9]+ its=[0-9]+|ksp_s=[0-9.]+|matmult_us=[0-9.]+|algorithm [a-z_]+ \(requested' /tmp/o.txt | tr '\n' ' ')"
  done
done | tee $OUT/first-solve.txt
