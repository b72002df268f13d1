#!/usr/bin/env bash
# Session 11, run N (commit in gpu-bundle/COMMIT): BRC's device build by the worker. Every GPU
# test, memcheck of the BRC/borrowed/background tests, the suite end to end (f64, f32), and
# PETSc's one-rank first solve (AUTO / CSR_VECTOR / aijcusparse). Outputs tarred.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/n; mkdir -p $W
OUT=$W/tests timeout 200 $B/run tests > $W/tests.txt 2>&1; echo "tests rc=$?"
sed -n '/== summary/,$p' $W/tests.txt | grep -vE ' ok ' 
grep -cE ' ok ' $W/tests.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
(cd $B/tests && for t in "gpu_borrow_c" "gpu_brc brc_gpu_builds_an_ell" "gpu_background"; do echo "$t memcheck: $(TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck ./$t --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"; done) | tee $W/memcheck.txt
for p in f64 f32; do
  timeout 110 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
  grep 'end-to-end geomean' $W/suite-$p.txt | cut -c1-420
done
scripts/petsc-gpu unpack .petsc-carry/petsc-cuda.tar.xz > /dev/null && eval "$(scripts/petsc-gpu env)" || echo "petsc unpack failed"
bash plugins/petsc/build.sh --out /tmp/pb --tessera-lib $B/lib > /tmp/build.log 2>&1 || { tail /tmp/build.log; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common="-problem lap3d -n 128 -solves 3 -ksp_rtol 1e-8 -ksp_max_it 5000 -ksp_type cg -pc_type jacobi -use_gpu_aware_mpi 0"
for round in 1 2 3; do
  for mode in auto csr_vector cusparse; do
    case $mode in
      auto) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info";;
      csr_vector) extra="-mat_type aijtessera -dll_append /tmp/pb/libtessera_petsc.so -final_mat_view ::ascii_info -mat_tessera_algorithm csr_vector";;
      cusparse) extra="-mat_type aijcusparse";;
    esac
    timeout 60 /tmp/pb/tessera_petsc_bench $common $extra > /tmp/o.txt 2>&1
    echo "round $round $mode: $(grep -oE 'first_mult_ms=[0-9.]+|solve=[0-9]+ its=[0-9]+|ksp_s=[0-9.]+|matmult_us=[0-9.]+|algorithm [a-z_]+ \(requested' /tmp/o.txt | tr '\n' ' ')"
  done
done | tee $W/first-solve.txt
tar -czf $OUT/n.tgz -C $W .
