#!/usr/bin/env python3
"""aijtessera against aijcusparse on a CUDA PETSc: whole solves, side by side.

    plugins/petsc/bench/run.py OUT [--tessera-lib DIR] [--n 128] [--solves 5] [--skip-ex2]
                                   [--ranks 1,2] [--tessera-args "-mat_tessera_algorithm X"]

Needs the PETSc of PETSC_DIR (and PETSC_ARCH) built with CUDA, its MPI on PATH and a GPU:
`eval "$(scripts/petsc-gpu env)"` on the GPU machine selects the one scripts/petsc-gpu builds.
Writes into OUT:
  build/            the plugin, the test programs and tessera_petsc_bench (plugins/petsc/build.sh),
                    and PETSc's own KSP tutorial ex2 built from PETSc's installed examples
  logs/             every run's output and -log_view
  ex2.csv           ex2 with the arguments of its own test block, -vec_type cuda, once per type:
                    are the outputs identical (lines of tessera's own -ksp_view report and the
                    type names removed)?
  solves.csv        tessera_petsc_bench runs: per solve, iterations, residuals, KSPSolve seconds;
                    per run, the first MatMult, the steady MatMult, and from -log_view the
                    MatMult count and the GPU copies counted in MatMult per stage
  summary.md        the table of both
Exits 1 when a run fails or the iteration counts of the two types differ.
"""
import argparse
import csv
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ("aijtessera", "aijcusparse")


def sh(cmd, log, env=None, timeout=600):
    """Runs cmd (a list), writes its output to log, returns (rc, output)."""
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + p.stdout)
    print(f"  [{time.time() - t0:6.1f} s rc={p.returncode}] {os.path.basename(log)}", flush=True)
    return p.returncode, p.stdout


def mpi(np, prog, args):
    return ([prog] if np == 1 else ["mpiexec", "-n", str(np), prog]) + args


def pkg(*args):
    """pkg-config ARGS PETSc, split into words."""
    env = dict(os.environ)
    d = os.environ.get("PETSC_DIR")
    if d:  # as build.sh does
        arch = os.environ.get("PETSC_ARCH", "")
        env["PKG_CONFIG_PATH"] = os.path.join(d, arch, "lib/pkgconfig") + ":" + env.get("PKG_CONFIG_PATH", "")
    return subprocess.run(["pkg-config", *args, "PETSc"], stdout=subprocess.PIPE, text=True, check=True,
                          env=env).stdout.split()


def ex2_cases(src):
    """(suffix, nsize, args) of the tests in ex2.c's test block (a testset's fields apply to the
    tests nested in it), minus those that need a package, name a -mat_type or loop over values."""
    entries, cur = [], None
    for line in src[src.index("/*TEST"):src.index("TEST*/")].splitlines():
        m = re.match(r"^(\s*)(testset|test|build):\s*$", line)
        if m:
            cur = {"kind": m.group(2), "indent": len(m.group(1)), "fields": {}}
            entries.append(cur)
            continue
        m = re.match(r"^\s*(\w+):\s*(.*)$", line)
        if m and cur:
            cur["fields"][m.group(1)] = m.group(2)
    cases, testset = [], None
    for e in entries:
        if testset and e["indent"] <= testset["indent"]:
            testset = None
        if e["kind"] != "test":
            testset = e if e["kind"] == "testset" else None
            continue
        outer = testset["fields"] if testset else {}
        fields = {**outer, **e["fields"]}
        args = (outer.get("args", "") + " " + e["fields"].get("args", "")).strip()
        if "requires" in fields or "-mat_type" in args or "{{" in args:
            continue
        suffix = fields.get("suffix", "1")
        out = fields.get("output_file", f"output/ex2_{suffix}.out")
        cases.append((suffix, int(fields.get("nsize", "1")), shlex.split(args), out))
    return cases


def normalize(lines):
    """The output without tessera's own -ksp_view/-mat_view report lines, with the GPU type
    names in their CPU form (seqaijtessera, seqaijcusparse -> seqaij; seqcuda -> seq)."""
    keep = []
    for line in lines:
        t = line.strip()
        if t.startswith("tessera:") or re.fullmatch(r"\[\d+\] (off-)?diagonal block:", t):
            continue
        keep.append(re.sub(r"(seq|mpi)cuda\b", r"\1", re.sub(r"aij(tessera|cusparse)", "aij", line)))
    return keep


def numbers_match(a, b, rtol=1e-5, atol=1e-12):
    """Same lines and words, numbers equal to rtol relative (or atol absolute)."""
    if len(a) != len(b):
        return False
    for la, lb in zip(a, b):
        wa, wb = la.split(), lb.split()
        if len(wa) != len(wb):
            return False
        for x, y in zip(wa, wb):
            if x == y:
                continue
            try:
                fx, fy = float(x.rstrip(",")), float(y.rstrip(","))
            except ValueError:
                return False
            if abs(fx - fy) > max(rtol * max(abs(fx), abs(fy)), atol):
                return False
    return True


def log_events(path):
    """{stage: {event: (count, c2g_count, g2c_count)}} from a -log_view file."""
    stages, stage = {}, None
    for line in open(path):
        m = re.match(r"--- Event Stage \d+: (.*)$", line)
        if m:
            stage = stages.setdefault(m.group(1).strip(), {})
            continue
        if stage is None:
            continue
        tok = line.split()
        if len(tok) >= 25 and tok[0] in ("MatMult", "MatTesseraSync", "MatCUSPARSCopyTo", "KSPSolve"):
            try:
                stage[tok[0]] = (int(tok[1]), int(float(tok[-5])), int(float(tok[-3])))
            except ValueError:
                pass
    return stages


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tessera-lib")
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--solves", type=int, default=5)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--skip-ex2", action="store_true")
    # PETSC_OPTIONS is cleared for every run (so that a user's options never leak into the
    # comparison); options for the aijtessera runs alone go here, e.g.
    # --tessera-args="-mat_tessera_algorithm csr_vector".
    ap.add_argument("--tessera-args", default="")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    build, logs = os.path.join(out, "build"), os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)
    cmd = ["bash", os.path.join(HERE, "..", "build.sh"), "--out", build]
    if a.tessera_lib:
        cmd += ["--tessera-lib", a.tessera_lib]
    rc, text = sh(cmd, os.path.join(logs, "build.log"))
    if rc:
        print(text)
        sys.exit(1)
    plugin = os.path.join(build, "libtessera_petsc.so")
    env = dict(os.environ)
    env.pop("PETSC_OPTIONS", None)
    env.pop("TESSERA_BACKEND", None)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    common = ["-use_gpu_aware_mpi", "0"]
    failures = []
    summary = []

    # ---- PETSc's ex2 with its own test arguments --------------------------------------------
    if not a.skip_ex2:
        petsc_dir = os.environ["PETSC_DIR"]
        src = os.path.join(petsc_dir, "share/petsc/examples/src/ksp/ksp/tutorials/ex2.c")
        ex2 = os.path.join(build, "ex2")
        cc = pkg("--variable=ccompiler")[0]
        libdir = pkg("--variable=libdir")[0]
        rc, text = sh([cc, "-O2", "-o", ex2, src, *pkg("--cflags"), *pkg("--libs"), f"-Wl,-rpath,{libdir}"],
                      os.path.join(logs, "ex2-build.log"))
        if rc:
            print(text)
            sys.exit(1)
        rows = []
        for suffix, np, args, ref_file in ex2_cases(open(src).read()):
            ref_path = os.path.join(os.path.dirname(src), ref_file)
            ref = normalize(open(ref_path).read().splitlines()) if os.path.exists(ref_path) else None
            outs = {}
            for t in TYPES:
                extra = ["-dll_append", plugin] if t == "aijtessera" else []
                rc, text = sh(mpi(np, ex2, args + ["-mat_type", t, "-vec_type", "cuda"] + common + extra),
                              os.path.join(logs, f"ex2_{suffix}_{t}.log"), env)
                outs[t] = (rc, normalize(text.splitlines()))
            same = outs[TYPES[0]] == outs[TYPES[1]]
            diff = ""
            if not same:
                ta, tb = outs[TYPES[0]][1], outs[TYPES[1]][1]
                for i in range(max(len(ta), len(tb))):
                    la = ta[i] if i < len(ta) else "<end>"
                    lb = tb[i] if i < len(tb) else "<end>"
                    if la != lb:
                        diff = f"line {i + 1}: tessera {la.strip()!r} / cusparse {lb.strip()!r}"
                        break
                if outs[TYPES[0]][0] != outs[TYPES[1]][0]:
                    diff = f"exit codes {outs[TYPES[0]][0]} / {outs[TYPES[1]][0]}; " + diff
            if outs[TYPES[0]][0] or outs[TYPES[1]][0]:
                failures.append(f"ex2 {suffix}: a run failed")
            match = {t: ("-" if ref is None else "yes" if outs[t][0] == 0 and numbers_match(outs[t][1], ref) else "no")
                     for t in TYPES}
            rows.append({"suffix": suffix, "nsize": np, "args": " ".join(args), "identical": "yes" if same else "no",
                         "tessera_matches_petsc_output": match["aijtessera"],
                         "cusparse_matches_petsc_output": match["aijcusparse"], "first_difference": diff})
        with open(os.path.join(out, "ex2.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        n_same = sum(r["identical"] == "yes" for r in rows)
        n_t = sum(r["tessera_matches_petsc_output"] == "yes" for r in rows)
        n_c = sum(r["cusparse_matches_petsc_output"] == "yes" for r in rows)
        summary.append(f"PETSc ex2, the {len(rows)} runs of its own test block that need no extra package, -vec_type cuda: "
                       f"aijtessera and aijcusparse print identical output in {n_same}; PETSc's reference output "
                       f"(output/*.out, numbers to 1e-5 relative) is matched by aijtessera in {n_t}, by aijcusparse in {n_c}\n")
        for r in rows:
            if r["identical"] != "yes":
                summary.append(f"- {r['suffix']} (n={r['nsize']}): {r['first_difference']}")
        summary.append("")

    # ---- whole solves ------------------------------------------------------------------------
    bench = os.path.join(build, "tessera_petsc_bench")
    problems = [
        ("lap3d", ["-ksp_type", "cg", "-pc_type", "jacobi"]),
        ("convdiff3d", ["-conv", "0.5", "-ksp_type", "gmres", "-ksp_gmres_restart", "30", "-pc_type", "jacobi"]),
    ]
    fields = ["problem", "n", "ranks", "type", "solve", "its", "reason", "rnorm", "true_rel", "ksp_s", "reassembly_s",
              "first_mult_ms", "matmult_us", "method", "matmult_count", "matmult_cpu_to_gpu_first_solve",
              "matmult_gpu_to_cpu_first_solve", "matmult_copies_later", "setup_event_count"]
    rows = []
    table = {}
    for problem, kspargs in problems:
        for np in [int(r) for r in a.ranks.split(",")]:
            for t in TYPES:
                name = f"{problem}_n{a.n}_np{np}_{t}"
                logv = os.path.join(logs, name + ".log_view")
                args = ["-problem", problem, "-n", str(a.n), "-solves", str(a.solves), "-mat_type", t, "-ksp_rtol", "1e-8",
                        "-ksp_max_it", "5000", "-log_view", ":" + logv] + kspargs + common
                if t == "aijtessera":
                    args += ["-dll_append", plugin, "-final_mat_view", "::ascii_info"] + shlex.split(a.tessera_args)
                rc, text = sh(mpi(np, bench, args), os.path.join(logs, name + ".log"), dict(env, TESSERA_TRACE="1"))
                if rc:
                    failures.append(f"{name}: exit code {rc}")
                    continue
                res = [dict(kv.split("=", 1) for kv in line.split()[1:]) for line in text.splitlines()
                       if line.startswith("RESULT ")]
                first = next((r["first_mult_ms"] for r in res if "first_mult_ms" in r), "")
                mm = next((r["matmult_us"] for r in res if "matmult_us" in r), "")
                method = ""
                m = re.search(r"algorithm (\w+) \(requested", text)
                if m:
                    method = m.group(1)
                ev = log_events(logv) if os.path.exists(logv) else {}
                count = sum(s.get("MatMult", (0, 0, 0))[0] for s in ev.values())
                fs = ev.get("First solve", {}).get("MatMult", (0, 0, 0))
                later = sum(ev.get(s, {}).get("MatMult", (0, 0, 0))[1] + ev.get(s, {}).get("MatMult", (0, 0, 0))[2]
                            for s in ("Later solves", "MatMult loop"))
                setup = sum(s.get("MatTesseraSync" if t == "aijtessera" else "MatCUSPARSCopyTo", (0, 0, 0))[0]
                            for s in ev.values())
                for r in res:
                    if "solve" not in r:
                        continue
                    row = {"problem": problem, "n": a.n, "ranks": np, "type": t, "solve": r["solve"], "its": r["its"],
                           "reason": r["reason"], "rnorm": r["rnorm"], "true_rel": r["true_rel"], "ksp_s": r["ksp_s"],
                           "reassembly_s": r["reassembly_s"], "first_mult_ms": first, "matmult_us": mm, "method": method,
                           "matmult_count": count, "matmult_cpu_to_gpu_first_solve": fs[1],
                           "matmult_gpu_to_cpu_first_solve": fs[2], "matmult_copies_later": later,
                           "setup_event_count": setup}
                    rows.append(row)
                    table.setdefault((problem, np), {}).setdefault(t, []).append(row)
    with open(os.path.join(out, "solves.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)

    summary.append(f"Whole solves, n = {a.n} (n^3 unknowns), rtol 1e-8, {a.solves} solves with a value-only reassembly "
                   "before each after the first; times in seconds unless marked\n")
    summary.append("| problem | ranks | its (tessera / cusparse) | max rel. diff of true residual | KSPSolve 1 | "
                   "KSPSolve 2.. (mean) | first MatMult ms | MatMult us | MatMult speedup | tessera method | "
                   "copies in MatMult after solve 1 |")
    summary.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for (problem, np), by in table.items():
        if set(by) != set(TYPES):
            continue
        tt, cc = by["aijtessera"], by["aijcusparse"]
        its_t = "/".join(r["its"] for r in tt)
        its_c = "/".join(r["its"] for r in cc)
        if its_t != its_c:
            failures.append(f"{problem} np={np}: iterations differ: tessera {its_t}, cusparse {its_c}")
        rdiff = max(abs(float(x["true_rel"]) - float(y["true_rel"])) / max(float(y["true_rel"]), 1e-300)
                    for x, y in zip(tt, cc))

        def mean_later(rs):
            v = [float(r["ksp_s"]) for r in rs[1:]]
            return sum(v) / len(v) if v else float("nan")

        mt, mc = float(tt[0]["matmult_us"] or "nan"), float(cc[0]["matmult_us"] or "nan")
        summary.append(
            f"| {problem} | {np} | {its_t} / {its_c} | {rdiff:.1e} | {float(tt[0]['ksp_s']):.4f} / {float(cc[0]['ksp_s']):.4f} | "
            f"{mean_later(tt):.4f} / {mean_later(cc):.4f} | {tt[0]['first_mult_ms']} / {cc[0]['first_mult_ms']} | "
            f"{mt:.1f} / {mc:.1f} | {mc / mt:.2f}x | {tt[0]['method']} | {tt[0]['matmult_copies_later']} / "
            f"{cc[0]['matmult_copies_later']} |")
    summary.append("")
    if failures:
        summary.append("FAILURES:\n" + "\n".join("- " + f for f in failures))
    text = "\n".join(summary)
    open(os.path.join(out, "summary.md"), "w").write(text + "\n")
    print(text)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
