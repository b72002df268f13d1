#!/usr/bin/env bash
# Builds the PETSc plugin libtessera_petsc.so, the test programs of tests/ and the solve benchmark of
# bench/.
#
#   plugins/petsc/build.sh [--tessera-lib DIR] [--out DIR] [--plugin-only]
#
#   --tessera-lib DIR  folder holding libtessera.so (default: target/release, else target/debug)
#   --out DIR          where the outputs go (default: plugins/petsc/build)
#   --plugin-only      build libtessera_petsc.so only
#
# PETSc is found with pkg-config (module PETSc; with $PETSC_DIR set, its
# $PETSC_DIR[/$PETSC_ARCH]/lib/pkgconfig comes first). The compiler is the MPI wrapper PETSc was
# configured with (its ccompiler, mpicc for Debian's PETSc); $MPICC overrides it. Warnings are
# errors (-Wall -Wextra -Werror). The plugin links libtessera.so with an rpath to its folder; the
# test programs link PETSc only and load tessera through -dll_append.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

tlib=""
out="$here/build"
plugin_only=0
while (($#)); do
  case "$1" in
    --tessera-lib) tlib="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --plugin-only) plugin_only=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$tlib" ]; then
  for d in "$root/target/release" "$root/target/debug"; do
    if [ -f "$d/libtessera.so" ]; then tlib="$d"; break; fi
  done
fi
if [ -z "$tlib" ] || [ ! -f "$tlib/libtessera.so" ]; then
  echo "build.sh: libtessera.so not found${tlib:+ in $tlib}; run cargo build (--release) first or pass --tessera-lib DIR" >&2
  exit 1
fi
tlib="$(cd "$tlib" && pwd)"

if [ -n "${PETSC_DIR:-}" ]; then
  export PKG_CONFIG_PATH="$PETSC_DIR/${PETSC_ARCH:+$PETSC_ARCH/}lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists PETSc; then
  echo "build.sh: PETSc not found by pkg-config (module PETSc); install it (plugins/petsc/ci-deps installs Debian's libpetsc-real-dev) or set PETSC_DIR/PETSC_ARCH" >&2
  exit 1
fi
cc="${MPICC:-$(pkg-config --variable=ccompiler PETSc)}"
cc="${cc:-mpicc}"
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build.sh: PETSc's C compiler $cc is not on PATH (Debian: apt-get install libopenmpi-dev)" >&2
  exit 1
fi
petsc_libdir="$(pkg-config --variable=libdir PETSc)"
read -r -a petsc_cflags <<<"$(pkg-config --cflags PETSc)"
read -r -a petsc_libs <<<"$(pkg-config --libs PETSc)"
warn=(-std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 -g -fPIC)
# Only PetscDLLibraryRegister_tessera_petsc and the MatCreate_* functions (PETSC_EXTERN) are exported.
plugin_flags=(-fvisibility=hidden)

mkdir -p "$out"
# What this PETSc's API looks like where versions differ (tessera_petsc.c explains each): a probe
# that compiles defines the feature as 1, one that does not as 0.
probe() {
  local name="$1" code="$2" def=0
  printf '%s\n' "$code" >"$out/probe_$name.c"
  if "$cc" "${warn[@]}" -c -o "$out/probe_$name.o" "$out/probe_$name.c" "${petsc_cflags[@]}" 2>/dev/null; then def=1; fi
  rm -f "$out/probe_$name.c" "$out/probe_$name.o"
  compat+=("-D$name=$def")
}
compat=()
probe TP_OPTION_ITEMS_IS_POINTER '#include <petscsys.h>
int tp_probe(PetscOptionItems p);
int tp_probe(PetscOptionItems p) { return p->count > 0; }'
probe TP_HAVE_CTX_DESTROY '#include <petscsys.h>
static PetscErrorCode tp_free(void *p) { (void)p; return 0; }
PetscErrorCode tp_probe(PetscContainer c);
PetscErrorCode tp_probe(PetscContainer c) { return PetscContainerSetCtxDestroy(c, tp_free); }'
probe TP_HAVE_STREAM_HANDLE '#include <petscdevice.h>
PetscErrorCode tp_probe(PetscDeviceContext d, void **h);
PetscErrorCode tp_probe(PetscDeviceContext d, void **h) { return PetscDeviceContextGetStreamHandle(d, h); }'
echo "build.sh: PETSc $(pkg-config --modversion PETSc): ${compat[*]}"

"$cc" "${warn[@]}" "${compat[@]}" "${plugin_flags[@]}" -shared -o "$out/libtessera_petsc.so" \
  "$here/tessera_petsc.c" "$here/tessera_cuda_dl.c" \
  -I"$root/include" "${petsc_cflags[@]}" \
  -L"$tlib" -ltessera -Wl,-rpath,"$tlib" \
  "${petsc_libs[@]}" -Wl,-rpath,"$petsc_libdir" -ldl -Wl,--no-undefined
# The CUDA-vector path is compiled in only with a CUDA-enabled PETSc; check that it compiles.
"$cc" "${warn[@]}" "${compat[@]}" -DTESSERA_PETSC_CHECK_CUDA_VEC_PATH -c -o "$out/cuda_vec_path_check.o" \
  "$here/tessera_petsc.c" -I"$root/include" "${petsc_cflags[@]}"
rm -f "$out/cuda_vec_path_check.o"
[ "$plugin_only" = 1 ] && exit 0

# PETSc programs (the tests, and the solve benchmark of bench/): PETSc only, tessera comes through
# -dll_append.
for src in "$here"/tests/tessera_petsc_*.c "$here"/bench/tessera_petsc_*.c; do
  exe="$out/$(basename "${src%.c}")"
  "$cc" "${warn[@]}" -o "$exe" "$src" "${petsc_cflags[@]}" \
    "${petsc_libs[@]}" -Wl,-rpath,"$petsc_libdir" -lm
done
# The CUDA staging path of the plugin without PETSc (skips itself without a CUDA driver).
"$cc" "${warn[@]}" -o "$out/cuda_staging" "$here/tests/cuda_staging.c" "$here/tessera_cuda_dl.c" \
  -I"$here" -I"$root/include" -L"$tlib" -ltessera -Wl,-rpath,"$tlib" -ldl -lm
