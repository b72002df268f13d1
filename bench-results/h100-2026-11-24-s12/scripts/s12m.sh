#!/usr/bin/env bash
# Session 12, run M: PETSc on the GPU with the final code (the device build after 40
# products, kept build threads): the plugin's GPU test, the one-rank first-solve A/B (AUTO,
# CSR_VECTOR alone, aijcusparse; 3 interleaved rounds), and two ranks (AUTO, aijcusparse; 2
# rounds), 3D Laplacian 128^3, CG + Jacobi.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib
W=/tmp/m; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/m.txt
scripts/petsc-gpu unpack .petsc-carry/petsc-cuda.tar.xz > /dev/null && eval "$(scripts/petsc-gpu env)" || echo "petsc unpack failed"
timeout 200 plugins/petsc/tests/gpu.sh --tessera-lib $B/lib > $W/petsc-gpu-test.txt 2>&1; tail -2 $W/petsc-gpu-test.txt | tee -a $W/m.txt
bash plugins/petsc/build.sh --out /tmp/pb --tessera-lib $B/lib > /tmp/build.log 2>&1 || { tail /tmp/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common="-problem lap3d -n 128 -solves 3 -ksp_rtol 1e-8 -ksp_max_it 5000 -ksp_type cg -pc_type jacobi -use_gpu_aware_mpi 0"
pick='first_mult_ms=[0-9.]+|solve=[0-9]+ its=[0-9]+|ksp_s=[0-9.]+|matmult_us=[0-9.]+|algorithm [a-z_]+ \(requested|AUTO[^;]*'
for round in 1 2 3; do
  for mode in auto csr_vector cusparse; do
    case $mode in
      auto) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info";;
      csr_vector) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info -mat_tessera_algorithm csr_vector";;
      cusparse) extra="-mat_type aijcusparse";;
    esac
    timeout 60 /tmp/pb/tessera_petsc_bench $common $extra > /tmp/o.txt 2>&1
    echo "one rank, round $round $mode: $(grep -oE "$pick" /tmp/o.txt | tr '\n' ' ' | cut -c1-400)"
  done
done | tee $W/first-solve.txt
for round in 1 2; do
  for mode in auto cusparse; do
    case $mode in
      auto) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info";;
      cusparse) extra="-mat_type aijcusparse";;
    esac
    timeout 90 mpiexec -n 2 /tmp/pb/tessera_petsc_bench $common $extra > /tmp/o2.txt 2>&1
    echo "two ranks, round $round $mode: $(grep -oE "$pick" /tmp/o2.txt | tr '\n' ' ' | cut -c1-400)"
  done
done | tee $W/two-ranks.txt
tar -czf $OUT/m.tgz -C $W .
