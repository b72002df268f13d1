#!/usr/bin/env bash
# outside.sh SHIM.so [CARRY_DIR]: CuPy's and PyTorch's own SpMV tests, without and with the shim.
#
# CARRY_DIR (default: gpu-carry at the repository root) holds what was brought from outside, never
# committed: outside/cupy (CuPy v14.2.0's tests/conftest.py, pyproject.toml and the two test files)
# and outside/pytorch (PyTorch's test_csr_matvec, see the file's head), and wheels/ (expecttest,
# which torch.testing._internal imports and the image lacks; pytest and its pure-Python needs, used
# only when python3 has no pytest). They are installed with pip --no-index into /tmp/pydeps.
#
# Suites, each run first without the shim, then with LD_PRELOAD=SHIM.so TESSERA_CUSPARSE_LOG=1:
#   cupy_csr      test_csr.py -k 'dot_dense_vector or mul_dense_vector'
#   cupy_spmv     test_cusparse.py -k TestSpmv
#   torch_matvec  test_sparse_csr_matvec.py -k 'test_csr_matvec and cuda'
# pytest runs with --capture=sys, so the shim's log (written to fd 2) reaches the stderr file.
# Prints one OUTSIDE line per suite and way (pytest's counts; the shim's log lines saying it took
# or forwarded, as lines/distinct lines, the shim logging once per matrix), then RESULT ok|FAIL:
# FAIL when a suite fails with the shim, or its counts differ from the run without. Logs go to
# /tmp/tessera_outside/logs; when $OUT is set they are packed into $OUT/outside-logs.tar.gz and the
# summary copied to $OUT/outside.txt.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
  echo "usage: $0 SHIM.so [CARRY_DIR]" >&2
  exit 2
fi
shim=$(realpath "$1")
carry=$(realpath "${2:-$here/../../gpu-carry}")
work=/tmp/tessera_outside
logs=$work/logs
deps=/tmp/pydeps
mkdir -p "$logs"
rm -f "$logs"/*
if [ ! -r "$shim" ] || [ ! -d "$carry/outside" ]; then
  echo "RESULT FAIL: need the shim ($shim) and $carry/outside"
  exit 1
fi

# Wheels: expecttest always; pytest and its needs only when python3 lacks pytest (the image has
# one, with plugins built for it: a second pytest on the path could break them).
wheels=(expecttest)
python3 -c 'import pytest' 2>/dev/null || wheels+=(pytest pluggy iniconfig packaging pygments)
files=()
for w in "${wheels[@]}"; do
  files+=("$carry"/wheels/"$w"-*.whl)
done
if ! python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$deps" "${files[@]}" \
  >"$logs/pip.log" 2>&1; then
  cat "$logs/pip.log"
  echo "RESULT FAIL: pip install of ${wheels[*]}"
  exit 1
fi
export PYTHONPATH=$deps${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
# CuPy's tests skip themselves without SciPy: the INFO line says whether it is there.
python3 - <<'PY'
import importlib
found = []
for name in ("pytest", "expecttest", "scipy", "cupy", "torch"):
    try:
        found.append(f"{name}={getattr(importlib.import_module(name), '__version__', '?')}")
    except Exception as e:  # reported, the suites then show what it costs
        found.append(f"{name}=MISSING({type(e).__name__})")
print("INFO", " ".join(found))
PY

# log_count took|forwarded FILE: the shim's log lines of that kind, as lines/distinct lines.
log_count() {
  echo "$(grep -c "^tessera_cusparse: $1" "$2")/$(grep "^tessera_cusparse: $1" "$2" | sort -u | wc -l)"
}

failed=0
base_failed=0
lines=()
# counts LOG: pytest's final tally as key=value words (passed, failed, skipped, errors, ...).
counts() {
  local tally
  tally=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|deselected|error|errors|xfailed|xpassed)' "$1" | tail -n 1)
  [ -z "$tally" ] && { echo "no-tally"; return; }
  echo "$tally" | grep -oE '[0-9]+ (passed|failed|skipped|error|errors|xfailed|xpassed)' |
    awk '{ sub(/errors/, "error", $2); printf "%s=%s ", $2, $1 }' | sed 's/ $//'
}

# suite NAME DIR PYTEST_ARGS...: the suite without, then with the shim.
suite() {
  local name=$1 dir=$2 w rc out err tally base_tally took fwd preload
  shift 2
  for w in base shim; do
    out=$logs/$name.$w.out
    err=$logs/$name.$w.err
    if [ $w = base ]; then
      preload=(-u LD_PRELOAD)
    else
      preload=(-u TESSERA_CUSPARSE LD_PRELOAD="$shim" TESSERA_CUSPARSE_LOG=1)
    fi
    (cd "$dir" && timeout 300 env "${preload[@]}" python3 -m pytest -p no:cacheprovider --capture=sys -q -rfEs "$@") \
      >"$out" 2>"$err"
    rc=$?
    tally=$(counts "$out")
    took=$(log_count took "$err")
    fwd=$(log_count forwarded "$err")
    if [ $w = base ]; then
      base_tally=$tally
      [ "$rc" = 0 ] || base_failed=1
    else
      grep -q 'cannot be preloaded' "$err" && { tally="$tally (the shim did not load)"; rc=99; }
      # With the shim the tests must pass as well as without, and the same ones.
      if [ "$rc" != 0 ] || [ "$tally" != "$base_tally" ]; then failed=1; fi
    fi
    lines+=("$(printf 'OUTSIDE %-13s %-4s rc=%-3s %-44s took=%-9s forwarded=%s' "$name" "$w" "$rc" "$tally" \
      "$took" "$fwd")")
    echo "${lines[-1]}"
  done
}

suite cupy_csr "$carry/outside/cupy" tests/cupyx_tests/scipy_tests/sparse_tests/test_csr.py \
  -k 'dot_dense_vector or mul_dense_vector'
suite cupy_spmv "$carry/outside/cupy" tests/cupyx_tests/test_cusparse.py -k TestSpmv
suite torch_matvec "$carry/outside/pytorch" test_sparse_csr_matvec.py -k 'test_csr_matvec and cuda'

{
  echo
  echo "== failed tests (first 20)"
  grep -h -E '^(FAILED|ERROR) ' "$logs"/*.out | head -n 20
  echo
  echo "== why the shim forwarded"
  cat "$logs"/*.shim.err | grep '^tessera_cusparse: forwarded' | sed 's/.*: //' | sort | uniq -c | sort -rn |
    head -n 10
  echo
  printf '%s\n' "${lines[@]}"
  if [ $failed = 0 ]; then
    echo "RESULT ok"
  elif [ $base_failed = 1 ]; then
    echo "RESULT FAIL (and a suite fails without the shim too: see its base line)"
  else
    echo "RESULT FAIL"
  fi
} | tee "$logs/summary.txt"

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  tar -czf "$OUT/outside-logs.tar.gz" -C "$work" logs
  cp "$logs/summary.txt" "$OUT/outside.txt"
fi
exit $failed
