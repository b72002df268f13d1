#!/usr/bin/env bash
# The plugin on a CUDA PETSc and a GPU: products and KSP solves of aijtessera with CUDA vectors
# against aijcusparse (tests/tessera_petsc_test.c with -ref_mat_type aijcusparse), on one and two
# processes, with value updates and pattern changes; every product must take the CUDA-vector path
# (-expect_path device). Also host vectors on the CUDA backend (-expect_path staged) and
# -mat_view ::ascii_info.
#
#   plugins/petsc/tests/gpu.sh [--tessera-lib DIR]     (default: target/release, else target/debug)
#
# PETSc is the one PETSC_DIR (and PETSC_ARCH) name; scripts/petsc-gpu builds a CUDA one and
# `eval "$(scripts/petsc-gpu env)"` selects it. Without a CUDA PETSc or without a GPU this prints
# one line saying it skipped and exits 0. Prints "ok: N runs" or the failing runs' output.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlib=()
[ "${1:-}" = "--tessera-lib" ] && tlib=(--tessera-lib "$2")

conf="${PETSC_DIR:-}/${PETSC_ARCH:+$PETSC_ARCH/}include/petscconf.h"
if [ -z "${PETSC_DIR:-}" ] || ! grep -qs "define PETSC_HAVE_CUDA 1" "$conf"; then
  echo "skipped: no CUDA PETSc (PETSC_DIR=${PETSC_DIR:-unset} has no PETSC_HAVE_CUDA; scripts/petsc-gpu builds one)"
  exit 0
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no GPU (nvidia-smi -L fails)"
  exit 0
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bash "$here/../build.sh" "${tlib[@]}" --out "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
grep "^build.sh:" "$out/build.log" || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
unset PETSC_OPTIONS TESSERA_BACKEND

runs=0
failed=0
# run NP EXPECT_IN_OUTPUT ARGS...: the test program on NP processes; it must exit 0 and print
# the extended regular expression EXPECT_IN_OUTPUT.
run() {
  local np="$1" expect="$2"
  shift 2
  local cmd=("$out/tessera_petsc_test")
  [ "$np" -gt 1 ] && cmd=(mpiexec -n "$np" "${cmd[@]}")
  runs=$((runs + 1))
  local log="$out/run$runs.log"
  if "${cmd[@]}" -dll_append "$out/libtessera_petsc.so" -use_gpu_aware_mpi 0 "$@" >"$log" 2>&1 &&
    grep -Eq "$expect" "$log"; then
    echo "== ok ($np process(es)): $*"
    grep -E "^(ok|product paths|tessera counters)" "$log" | sed 's/^/   /'
  else
    failed=$((failed + 1))
    echo "== FAILED ($np process(es)): $*"
    cat "$log"
  fi
}

gpu=(-mat_type aijtessera -ref_mat_type aijcusparse -expect_path device)
run 1 '^ok:' "${gpu[@]}" -expect_type seqaijtessera -problem laplace2d -n 64 -check_updates -ksp_type cg -pc_type jacobi
run 1 '^ok:' "${gpu[@]}" -expect_type seqaijtessera -problem convdiff2d -n 48 -ksp_type gmres -pc_type jacobi
run 1 '^ok:' "${gpu[@]}" -expect_type seqaijtessera -problem laplace2d -n 40 -check_convert -ksp_type cg -pc_type jacobi
run 2 '^ok:' "${gpu[@]}" -expect_type mpiaijtessera -problem laplace2d -n 64 -check_updates -ksp_type cg -pc_type jacobi
run 2 '^ok:' "${gpu[@]}" -expect_type mpiaijtessera -problem convdiff2d -n 48 -ksp_type gmres -pc_type jacobi
# host vectors on the CUDA backend (reference: plain aij)
run 1 '^ok:' -mat_type aijtessera -expect_type seqaijtessera -expect_path staged -problem laplace2d -n 48 -ksp_type cg -pc_type jacobi
# what tessera reports for the matrix
run 1 'tessera: backend cuda \(device [0-9]+\), algorithm [a-z_]+ \(requested auto' "${gpu[@]}" -problem laplace2d -n 32 \
  -solve 0 -mat_view ::ascii_info

if [ "$failed" -gt 0 ]; then
  echo "FAILED: $failed of $runs runs"
  exit 1
fi
echo "ok: $runs runs"
