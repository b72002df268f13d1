#!/usr/bin/env bash
# link_check.sh SHIM_DIR [MATRIX...]: the shim linked into a program, not preloaded.
#
# Builds spmv_compare a second time, linked with -L SHIM_DIR -ltessera_cusparse -lcusparse -lcudart
# -ldl (the shim before cuSPARSE, so the program's cusparseSpMV and cusparseSpMV_preprocess bind to
# the shim's; the rest of cuSPARSE binds to the real library), rpath SHIM_DIR and the toolkit's
# lib64. Checks with readelf -d that the program NEEDS libtessera_cusparse.so (and prints the
# NEEDED order: the shim must come before libcusparse.so.12), runs it with LD_PRELOAD unset and
# TESSERA_CUSPARSE_LOG=1: spmv_compare --check MATRIX... (all its cases; default matrices: the
# small built-in ones, gen:empty-rows gen:nnz0 gen:long-row gen:wide), and prints the SUMMARY,
# the shim's log lines (took and forwarded, as lines/distinct lines) and
#   LINK ok     the program NEEDS the shim, every check passed (SUMMARY fail=0, exit 0), and the
#               shim's log has at least one "tessera_cusparse: took" line: linking the shim before
#               -lcusparse, with no preload, routes cusparseSpMV through it
#   LINK FAIL   otherwise, with the reasons (exit 1)
#
# SHIM_DIR holds libtessera_cusparse.so (the build's target/release, say). From the environment:
# NVCC (default nvcc), CUDA_LIB (the rpath for libcusparse.so.12 and libcudart, default
# /usr/local/cuda/lib64); TESSERA_CUSPARSE_LIB, if set, passes through to the shim. Logs in
# /tmp/tessera_shim_link; when $OUT is set, $OUT/shim-link.txt (what is printed) and
# $OUT/shim-link-logs.tar.gz. Under a minute for the default matrices.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 SHIM_DIR [MATRIX...]" >&2
  exit 2
fi
shimdir=$(realpath "$1")
shift
if [ $# -gt 0 ]; then
  mats=("$@")
else
  mats=(gen:empty-rows gen:nnz0 gen:long-row gen:wide)
fi
work=/tmp/tessera_shim_link
mkdir -p "$work"
rm -f "$work"/*.log "$work"/*.out "$work"/*.err "$work"/report.txt
export PATH=$PATH:/usr/local/cuda/bin
nvcc=${NVCC:-nvcc}
cudalib=${CUDA_LIB:-/usr/local/cuda/lib64}
bin=$work/spmv_compare_linked
reasons=()

report() {
  echo "$@" | tee -a "$work/report.txt"
}

finish() {
  local status why
  if [ ${#reasons[@]} = 0 ]; then
    report "LINK ok"
    status=0
  else
    why=$(printf '%s; ' "${reasons[@]}")
    report "LINK FAIL: ${why%; }"
    status=1
  fi
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$work/report.txt" "$OUT/shim-link.txt"
    tar -czf "$OUT/shim-link-logs.tar.gz" -C "$work" --exclude spmv_compare_linked .
  fi
  exit $status
}

report "== link check: shim dir $shimdir, ${#mats[@]} matrices (${mats[*]})"
if [ ! -r "$shimdir/libtessera_cusparse.so" ]; then
  reasons+=("no libtessera_cusparse.so in $shimdir")
  finish
fi

# The shim first: the linker binds cusparseSpMV to the first library that defines it, and the
# dynamic loader searches the NEEDED libraries in the order linked.
if ! "$nvcc" -O2 -o "$bin" "$here/spmv_compare.c" -L"$shimdir" -ltessera_cusparse -lcusparse -lcudart -ldl \
  -lpthread -Xlinker -rpath -Xlinker "$shimdir" -Xlinker -rpath -Xlinker "$cudalib" >"$work/build.log" 2>&1; then
  cat "$work/build.log"
  reasons+=("the build failed")
  finish
fi

mapfile -t needed < <(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
report "NEEDED ${needed[*]}"
shim_at=-1
sparse_at=-1
for i in "${!needed[@]}"; do
  case ${needed[$i]} in
    libtessera_cusparse.so) [ "$shim_at" = -1 ] && shim_at=$i ;;
    libcusparse.so*) [ "$sparse_at" = -1 ] && sparse_at=$i ;;
  esac
done
if [ "$shim_at" = -1 ]; then
  reasons+=("the program does not NEED libtessera_cusparse.so")
elif [ "$sparse_at" != -1 ] && [ "$sparse_at" -lt "$shim_at" ]; then
  report "NOTE libcusparse is NEEDED before the shim: cusparseSpMV will be cuSPARSE's"
fi
# Where the loader finds them, with no preload.
env -u LD_PRELOAD ldd "$bin" 2>&1 | grep -E 'tessera|cusparse|not found' | sed 's/^[[:space:]]*/LDD /' |
  tee -a "$work/report.txt"

out=$work/spmv_compare.out
err=$work/spmv_compare.err
t0=$(date +%s)
timeout 300 env -u LD_PRELOAD -u TESSERA_CUSPARSE TESSERA_CUSPARSE_LOG=1 "$bin" --check "${mats[@]}" \
  >"$out" 2>"$err"
rc=$?
t1=$(date +%s)
summary=$(grep -h '^SUMMARY' "$out" | tail -n 1)
took=$(grep -c '^tessera_cusparse: took' "$err")
took_u=$(grep '^tessera_cusparse: took' "$err" | sort -u | wc -l)
fwd=$(grep -c '^tessera_cusparse: forwarded' "$err")
fwd_u=$(grep '^tessera_cusparse: forwarded' "$err" | sort -u | wc -l)
grep -h -E '^(CASE .* FAIL|ERROR)' "$out" | head -n 20 | tee -a "$work/report.txt"
report "${summary:-no SUMMARY} rc=$rc $((t1 - t0))s"
report "LOG took=$took/$took_u forwarded=$fwd/$fwd_u (lines/distinct)"
if [ "$rc" != 0 ] || [ -z "$summary" ] || ! grep -q ' fail=0$' <<<"$summary"; then
  reasons+=("the checks failed (rc=$rc, ${summary:-no SUMMARY})")
fi
if [ "$took" = 0 ]; then
  reasons+=("no 'tessera_cusparse: took' line: cusparseSpMV did not go through the shim")
fi
finish
