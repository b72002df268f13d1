#!/usr/bin/env bash
# run.sh SHIM.so MATRIX_DIR [N]: the shim's GPU check and timings, on a machine with CUDA, CuPy and
# PyTorch.
#
# Builds spmv_compare (nvcc), then takes every .mtx in MATRIX_DIR (.mtx.xz files are unpacked into
# /tmp/tessera_shim_run/mtx first) plus spmv_compare's built-in edge cases ($SPMV_GEN; empty to
# leave them out) and the large matrices of $EXTRA (default gen:lap3d:128
# gen:uniform:1000000,16,1; empty for none), three ways:
#   base   without the shim
#   shim   LD_PRELOAD=SHIM.so
#   off    LD_PRELOAD=SHIM.so TESSERA_CUSPARSE=off (everything forwarded)
# and runs, in this order:
#   checks    once each way, TESSERA_CUSPARSE_LOG=1 where the shim is: spmv_compare --check (its
#             19 cases, CUDA graphs and 4 threads among them; the EXTRA matrices only
#             default_beta0), cupy_spmv.py and torch_spmv.py
#             (all their checks, with short timings left unused)
#   timings   the shim's log off, checks off (--no-check): spmv_compare --time N, cupy_spmv.py
#             and torch_spmv.py --iters N (median of 5 blocks), every matrix, each program
#             $REPEAT times (default 3), the ways in turn: base, shim, off, base, shim, off, ...
#   overhead  spmv_compare --overhead $OVERHEAD_N (default 500) once with the shim (log off): in
#             one process, cuSPARSE's own cusparseSpMV (real) and the program's, the shim's
#             (linked), in alternating blocks; and once without the shim as a control ($CONTROL,
#             default 1; 0 leaves it out): there both are cuSPARSE's, so its diff is what the
#             method cannot resolve
# and prints: RUN lines (a check run: its SUMMARY, the shim's log lines saying it took or
# forwarded, as lines/distinct lines, the shim logging once per matrix, seconds; a timing program
# and way: rc/seconds of each run; the overhead runs), the reasons for forwarding, a table of times
# (the median of the $REPEAT runs of base, shim and off, shim/base, off/base, and range%: the
# widest (max - min) / median of one way's runs), a table of the shim's own cost per call (real,
# linked, linked - real, the blocks' spread, the control's diff, for one descriptor set and for
# CuPy's pattern, and the host time inside the call; "took" or "fwd" from the shim way's check
# log), the seconds in all, and RESULT ok|FAIL (exit 1 on FAIL: a program failed, or the shim did
# not load). N (default 200) is the calls per timing or block, fewer for a matrix past 2^21
# entries (N 2^21 / nnz, at least 20); OVERHEAD_N likewise. TESSERA_CUSPARSE_LIB, if set, passes
# through to the shim.
#
# About 5 minutes on an H100 for the 13 shared matrices, the 4 small gen: ones and the 2 EXTRA
# (estimated, not yet timed there: most of it is the 24 Python start-ups and their uploads; the two
# overhead runs about 15 s each). REPEAT=2 saves about a minute, CONTROL=0 about 15 s.
#
# Logs (each program's stdout and stderr per way and run, and the tables) go to
# /tmp/tessera_shim_run/logs; when $OUT is set they are also packed into
# $OUT/shim-run-logs.tar.gz and the tables and RUN lines copied to $OUT/shim-run.txt (two files:
# the device tool brings back at most 8).
set -uo pipefail

start=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 SHIM.so MATRIX_DIR [N]" >&2
  exit 2
fi
shim=$(realpath "$1")
mdir=$2
iters=${3:-200}
gen=${SPMV_GEN-gen:empty-rows gen:nnz0 gen:long-row gen:wide}
# shellcheck disable=SC2206 # the built-in names are words
extra=(${EXTRA-gen:lap3d:128 gen:uniform:1000000,16,1})
repeat=${REPEAT:-3}
ovh_n=${OVERHEAD_N:-500}
control=${CONTROL:-1}
for v in "$iters" "$repeat" "$ovh_n"; do
  case $v in
    '' | *[!0-9]* | 0)
      echo "N, REPEAT and OVERHEAD_N must be positive integers" >&2
      exit 2
      ;;
  esac
done
work=/tmp/tessera_shim_run
logs=$work/logs
mkdir -p "$work/mtx" "$logs"
rm -f "$logs"/*
export PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin

if [ ! -r "$shim" ]; then
  echo "RESULT FAIL: no shim at $1"
  exit 1
fi

# The matrices: plain .mtx as they are, .mtx.xz unpacked once (a .mtx of the same name wins).
declare -A seen=()
mats=()
for f in "$mdir"/*.mtx "$mdir"/*.mtx.xz; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  name=${name%.xz}
  [ -n "${seen[$name]:-}" ] && continue
  seen[$name]=1
  if [[ $f == *.xz ]]; then
    if [ ! -s "$work/mtx/$name" ]; then
      xz -dc "$f" >"$work/mtx/$name.tmp" && mv "$work/mtx/$name.tmp" "$work/mtx/$name"
    fi
    f=$work/mtx/$name
  fi
  mats+=("$f")
done
# shellcheck disable=SC2206 # the built-in names are words
mats+=($gen)
if [ ${#mats[@]} = 0 ]; then
  echo "RESULT FAIL: no matrices in $mdir"
  exit 1
fi
echo "== ${#mats[@]} matrices and ${#extra[@]} large (${extra[*]}), N=$iters, REPEAT=$repeat," \
  "OVERHEAD_N=$ovh_n, CONTROL=$control, shim $shim"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU /'

# The toolkit's lib64 as the binary's rpath: libcusparse.so.12 is found without LD_LIBRARY_PATH,
# which is left alone (the Python programs load their own CUDA libraries). -ldl for dlopen and
# -lpthread for the threads case (both part of libc from glibc 2.34 on, where they are empty
# libraries).
cudalib=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/../lib64
if ! nvcc -O2 -o "$work/spmv_compare" "$here/spmv_compare.c" -lcusparse -lcudart -ldl -lpthread \
  -Xlinker -rpath -Xlinker "$cudalib" >"$logs/build.log" 2>&1; then
  cat "$logs/build.log"
  echo "RESULT FAIL: nvcc"
  exit 1
fi

# way WAY COMMAND...: run COMMAND (within 300 s) the given way: base, shim or off with the shim's
# log on (the checks), shim-quiet or off-quiet with it off (the timings). The shim is preloaded
# into COMMAND only, not into timeout.
way() {
  local w=$1
  shift
  case $w in
    base) timeout 300 env -u LD_PRELOAD -u TESSERA_CUSPARSE -u TESSERA_CUSPARSE_LOG "$@" ;;
    shim) timeout 300 env -u TESSERA_CUSPARSE LD_PRELOAD="$shim" TESSERA_CUSPARSE_LOG=1 "$@" ;;
    off) timeout 300 env LD_PRELOAD="$shim" TESSERA_CUSPARSE=off TESSERA_CUSPARSE_LOG=1 "$@" ;;
    shim-quiet) timeout 300 env -u TESSERA_CUSPARSE -u TESSERA_CUSPARSE_LOG LD_PRELOAD="$shim" "$@" ;;
    off-quiet) timeout 300 env -u TESSERA_CUSPARSE_LOG LD_PRELOAD="$shim" TESSERA_CUSPARSE=off "$@" ;;
  esac
}

# log_count took|forwarded FILE: the shim's log lines of that kind, as lines/distinct lines.
log_count() {
  echo "$(grep -c "^tessera_cusparse: $1" "$2")/$(grep "^tessera_cusparse: $1" "$2" | sort -u | wc -l)"
}

# seconds T0 T1: T1 - T0, one decimal.
seconds() {
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'
}

failed=0
runs=()
# checked NAME COMMAND...: the check run, the three ways in a row (so the three see the same
# machine state), the shim's log on; output in $logs/NAME.WAY.out and .err.
checked() {
  local prog=$1 w rc t0 t1 out err summary took fwd
  shift
  for w in base shim off; do
    out=$logs/$prog.$w.out
    err=$logs/$prog.$w.err
    t0=$(date +%s.%N)
    way "$w" "$@" >"$out" 2>"$err"
    rc=$?
    t1=$(date +%s.%N)
    summary=$(grep -h '^SUMMARY' "$out" | tail -n 1)
    took=$(log_count took "$err")
    fwd=$(log_count forwarded "$err")
    if grep -q 'cannot be preloaded' "$err"; then
      summary="$summary (the shim did not load)"
      rc=99
    fi
    [ "$rc" = 0 ] || failed=1
    runs+=("$(printf 'RUN %-12s %-4s rc=%-3s %-22s took=%-9s forwarded=%-9s %6ss' "$prog" "$w" "$rc" \
      "${summary:-no SUMMARY}" "$took" "$fwd" "$(seconds "$t0" "$t1")")")
    echo "${runs[-1]}"
  done
}

# timed NAME COMMAND...: the timing runs, $repeat of each way, the ways in turn, the shim's log
# off; output in $logs/NAME.WAY.tI.out and .err.
timed() {
  local prog=$1 i w rc t0 t1 out err
  local -A done_=()
  shift
  for ((i = 1; i <= repeat; i++)); do
    for w in base shim off; do
      out=$logs/$prog.$w.t$i.out
      err=$logs/$prog.$w.t$i.err
      t0=$(date +%s.%N)
      if [ "$w" = base ]; then way base "$@" >"$out" 2>"$err"; else way "$w-quiet" "$@" >"$out" 2>"$err"; fi
      rc=$?
      t1=$(date +%s.%N)
      grep -q 'cannot be preloaded' "$err" && rc=99
      [ "$rc" = 0 ] || failed=1
      done_[$w]+=" $rc/$(seconds "$t0" "$t1")s"
    done
  done
  for w in base shim off; do
    runs+=("$(printf 'RUN %-12s %-4s timing runs, rc/seconds:%s' "$prog" "$w" "${done_[$w]}")")
    echo "${runs[-1]}"
  done
}

# overhead LABEL WAY: spmv_compare --overhead on every matrix, the given way; $logs/overhead.LABEL.out.
overhead() {
  local label=$1 w=$2 rc t0 t1 out=$logs/overhead.$1.out err=$logs/overhead.$1.err summary
  t0=$(date +%s.%N)
  way "$w" "$work/spmv_compare" --overhead "$ovh_n" "${mats[@]}" "${extra[@]}" >"$out" 2>"$err"
  rc=$?
  t1=$(date +%s.%N)
  summary=$(grep -h '^SUMMARY' "$out" | tail -n 1)
  if grep -q 'cannot be preloaded' "$err"; then
    summary="$summary (the shim did not load)"
    rc=99
  fi
  [ "$rc" = 0 ] || failed=1
  runs+=("$(printf 'RUN %-12s %-4s rc=%-3s %-22s %s %6ss' overhead "$label" "$rc" "${summary:-no SUMMARY}" \
    "$(grep -h '^INFO overhead' "$out" | sed 's/^INFO overhead //')" "$(seconds "$t0" "$t1")")")
  echo "${runs[-1]}"
}

checked spmv_compare "$work/spmv_compare" --check "${mats[@]}" --cases default_beta0 "${extra[@]}"
checked cupy python3 "$here/cupy_spmv.py" --iters 20 --blocks 1 "${mats[@]}" "${extra[@]}"
checked torch python3 "$here/torch_spmv.py" --iters 20 --blocks 1 "${mats[@]}" "${extra[@]}"

timed spmv_compare "$work/spmv_compare" --time "$iters" --no-check "${mats[@]}" "${extra[@]}"
timed cupy python3 "$here/cupy_spmv.py" --iters "$iters" --no-check "${mats[@]}" "${extra[@]}"
timed torch python3 "$here/torch_spmv.py" --iters "$iters" --no-check "${mats[@]}" "${extra[@]}"

overhead shim shim-quiet
if [ "$control" = 1 ]; then
  overhead base base
fi

{
  echo
  echo "== failures (first 20)"
  grep -h -E '^(CASE|TIME|CUPY|TORCH|OVERHEAD|OVERHEAD_PERCALL)\b.*(FAIL|check=FAIL)|^ERROR' "$logs"/*.out |
    head -n 20
  echo
  echo "== why the shim forwarded (shim way, check runs)"
  cat "$logs"/*.shim.err 2>/dev/null | grep '^tessera_cusparse: forwarded' | sed 's/.*: //' | sort | uniq -c |
    sort -rn | head -n 15
  echo
  echo "== times in us per product, median of $repeat runs (c-spmv: cusparseSpMV alone; c-percall:"
  echo "   descriptors per call as CuPy; cupy, torch: median of 5 blocks in each run; range%: the"
  echo "   widest (max - min) / median of one way's runs)"
  for w in base shim off; do
    for prog in spmv_compare cupy torch; do
      for f in "$logs/$prog.$w".t*.out; do
        [ -f "$f" ] || continue
        awk -v w="$w" '
          function val(key,   i, kv) {
            for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return kv[2] }
            return ""
          }
          $1 == "TIME"  { print "c-spmv", $2, $3, w, val("spmv_us"); print "c-percall", $2, $3, w, val("percall_us") }
          $1 == "CUPY"  { print "cupy", $2, $3, w, val("us") }
          $1 == "TORCH" { print "torch-" $4, $2, $3, w, val("us") }' "$f"
      done
    done
  done | awk '
    # med(LIST): the median of the space-separated numbers; sets lo and hi.
    function med(list,   a, m, i, j, x) {
      m = split(list, a, " ")
      for (i = 2; i <= m; i++) {
        x = a[i] + 0
        for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]
        a[j + 1] = x
      }
      lo = a[1] + 0; hi = a[m] + 0
      return m % 2 ? a[(m + 1) / 2] + 0 : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    NF == 5 && $5 + 0 >= 0 {
      key = $1 " " $2 " " $3
      v[key, $4] = ((key, $4) in v) ? v[key, $4] " " $5 : $5
      if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    }
    END {
      fmt = "%-12s %-28s %-4s %10s %10s %10s %9s %9s %7s\n"
      printf fmt, "what", "matrix", "type", "base_us", "shim_us", "off_us", "shim/base", "off/base", "range%"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, " "); range = -1
        for (wi = 1; wi <= 3; wi++) {
          w = wi == 1 ? "base" : wi == 2 ? "shim" : "off"
          if ((k, w) in v) {
            m[w] = med(v[k, w])
            if (m[w] > 0 && (hi - lo) / m[w] > range) range = (hi - lo) / m[w]
            t[w] = sprintf("%.2f", m[w])
          } else { m[w] = 0; t[w] = "-" }
        }
        rs = m["base"] > 0 && m["shim"] > 0 ? sprintf("%.2f", m["shim"] / m["base"]) : "-"
        ro = m["base"] > 0 && m["off"] > 0 ? sprintf("%.2f", m["off"] / m["base"]) : "-"
        printf fmt, p[1], p[2], p[3], t["base"], t["shim"], t["off"], rs, ro, \
          (range < 0 ? "-" : sprintf("%.1f", 100 * range))
      }
    }'
  echo
  echo "== the shim's own cost per call, in us (one process: real = cuSPARSE's cusparseSpMV through"
  echo "   dlsym, linked = the program's, the shim's; 11 blocks of each in turn, medians; diff ="
  echo "   linked - real, iqr the wider of the two blocks' spreads, ctrl the control run's diff, where"
  echo "   both are cuSPARSE's; pc_: CuPy's pattern, descriptors made per call; host_: time inside the"
  echo "   call; shim: took or fwd, from the shim way's check log)"
  files=()
  for f in spmv_compare.shim.out spmv_compare.shim.err overhead.shim.out overhead.base.out; do
    [ -f "$logs/$f" ] && files+=("$logs/$f")
  done
  awk '
    function val(key,   i, kv) {
      for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return kv[2] }
      return ""
    }
    function mark(d, t, how) {
      if (how == "took") took[d, t] = "took"; else if (!((d, t) in took)) took[d, t] = "fwd"
    }
    FILENAME ~ /overhead\.shim\.out$/ && ($1 == "OVERHEAD" || $1 == "OVERHEAD_PERCALL" || $1 == "HOSTCALL") {
      k = $2 " " $3
      if (!(k in seen)) { seen[k] = 1; order[++n] = k }
      r[k, $1] = val("real_us"); l[k, $1] = val("linked_us"); d[k, $1] = val("diff_us"); q[k, $1] = val("iqr_us")
      next
    }
    FILENAME ~ /overhead\.base\.out$/ && $1 == "OVERHEAD" { ctrl[$2 " " $3] = val("diff_us"); next }
    FILENAME ~ /\.out$/ && $1 == "MATRIX" { dims[$2] = val("rows") " " val("cols") " " val("nnz"); next }
    # tessera_cusparse: took|forwarded R x C, nnz N, F64, device 0: ...  (or N: why, for both types)
    FILENAME ~ /\.err$/ && $1 == "tessera_cusparse:" && ($2 == "took" || $2 == "forwarded") && $4 == "x" \
      && $6 == "nnz" {
      c = $5; sub(/,$/, "", c); nz = $7; typed = (nz ~ /,$/); sub(/[,:]$/, "", nz)
      dd = $3 " " c " " nz
      if (typed) { t = tolower($8); sub(/,$/, "", t); mark(dd, t, $2) }
      else { mark(dd, "f64", $2); mark(dd, "f32", $2) }
    }
    END {
      fmt = "%-28s %-4s %-4s %9s %9s %8s %6s %8s %9s %9s %8s %9s %9s\n"
      printf fmt, "matrix", "type", "shim", "real", "linked", "diff", "iqr", "ctrl", "pc_real", "pc_linked", \
        "pc_diff", "host_real", "host_link"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, " ")
        tk = (dims[p[1]], p[2]) in took ? took[dims[p[1]], p[2]] : "?"
        o = "OVERHEAD"; pc = "OVERHEAD_PERCALL"; h = "HOSTCALL"
        printf fmt, p[1], p[2], tk, r[k, o], l[k, o], d[k, o], q[k, o], (k in ctrl ? ctrl[k] : "-"), \
          r[k, pc], l[k, pc], d[k, pc], ((k, h) in r ? r[k, h] : "-"), ((k, h) in l ? l[k, h] : "-")
      }
    }' "${files[@]}" /dev/null
  echo
  printf '%s\n' "${runs[@]}"
  echo "== $(($(date +%s) - start)) s in all"
  if [ $failed = 0 ]; then echo "RESULT ok"; else echo "RESULT FAIL"; fi
} | tee "$logs/table.txt"

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  tar -czf "$OUT/shim-run-logs.tar.gz" -C "$work" logs
  cp "$logs/table.txt" "$OUT/shim-run.txt"
fi
exit $failed
