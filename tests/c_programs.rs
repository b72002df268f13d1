//! Builds the C, C++ and Fortran programs of `c-tests/` against `include/tessera.h` (and
//! `include/tessera.f90`), links them to the real `libtessera.so` that cargo built next to this
//! test executable, runs them on the host backend, and asserts that each exits 0.
//!
//! The compilers come from the `cc` crate (configured explicitly: a test has no build-script
//! environment) with the strict flags the project promises: C99 with
//! `-Wall -Wextra -Wpedantic -Werror`, C++17 likewise. Fortran needs `gfortran` (or `$FC`); without
//! it the Fortran test fails unless `TESSERA_SKIP_FORTRAN=1`.
//!
//! Also here: `fortran_module_has_an_interface_for_every_header_function`, which compares the
//! header's functions and `#define TESSERA_*` constants with the module's `bind(c)` names and
//! parameters.

mod common;
use common::{fortran_compiler_or_skip, lib_dir, root, run_checked, strict_cc};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A `cc::Build` set up for this machine without any build-script environment.
fn build(out_dir: &Path, cpp: bool) -> cc::Build {
    let mut b = strict_cc(out_dir, cpp);
    b.include(root().join("include"))
        .include(root().join("c-tests"));
    b
}

/// Linker arguments for the real libtessera.so (with an rpath, so the program runs as is).
fn link_args(lib: &Path) -> Vec<OsString> {
    let mut rpath = OsString::from("-Wl,-rpath,");
    rpath.push(lib);
    vec![
        OsString::from("-L"),
        lib.as_os_str().to_owned(),
        OsString::from("-ltessera"),
        rpath,
        OsString::from("-lm"),
    ]
}

/// Compiles and links one C or C++ program of c-tests/ into `dir`, returning the executable.
fn compile_c(dir: &Path, source: &str, cpp: bool, extra_flags: &[&str]) -> PathBuf {
    compile_c_with_libs(dir, source, cpp, extra_flags, &[])
}

/// [`compile_c`] with extra linker arguments after the library's (such as `-ldl`).
fn compile_c_with_libs(
    dir: &Path,
    source: &str,
    cpp: bool,
    extra_flags: &[&str],
    extra_libs: &[&str],
) -> PathBuf {
    let lib = lib_dir();
    let mut b = build(dir, cpp);
    for f in extra_flags {
        b.flag(f);
    }
    let exe = dir.join(Path::new(source).file_stem().unwrap());
    let mut cmd = b.get_compiler().to_command();
    // A relative name is a program of c-tests/; an absolute path is used as it is.
    cmd.arg(root().join("c-tests").join(source))
        .arg("-o")
        .arg(&exe)
        .args(link_args(&lib))
        .args(extra_libs);
    run_checked(cmd, &format!("compiling c-tests/{source}"));
    exe
}

/// Runs a test program with the library on LD_LIBRARY_PATH; asserts exit 0 and an "ok:" line.
fn run_program(exe: &Path, envs: &[(&str, &str)], remove_env: &[&str]) -> String {
    let lib = lib_dir();
    let mut cmd = Command::new(exe);
    let mut ld_path = OsString::from(&lib);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        ld_path.push(":");
        ld_path.push(old);
    }
    cmd.env("LD_LIBRARY_PATH", ld_path);
    for k in remove_env {
        cmd.env_remove(k);
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    let out = run_checked(cmd, &format!("running {name}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.lines().any(|l| l.starts_with("ok: ")),
        "{name} exited 0 but did not print its \"ok: N checks\" line:\n{stdout}"
    );
    print!("{name}: {stdout}");
    stdout
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("tessera-c-tests-")
        .tempdir()
        .expect("c_programs: cannot create a temporary folder")
}

#[test]
fn c_program_gets_correct_products_on_the_host_backend() {
    let dir = temp_dir();
    let exe = compile_c(
        dir.path(),
        "api_basic.c",
        false,
        &["-D_POSIX_C_SOURCE=200112L"],
    );
    run_program(&exe, &[("TESSERA_BACKEND", "host")], &[]);
}

#[test]
fn bad_argument_program_gets_the_documented_status_for_each_argument() {
    let dir = temp_dir();
    let exe = compile_c(
        dir.path(),
        "bad_args.c",
        false,
        &["-D_POSIX_C_SOURCE=200112L"],
    );
    // Without a GPU device node, tessera_create must answer NO_DEVICE (the program then checks
    // it strictly); with one, it may also succeed.
    let no_gpu = !Path::new("/dev/nvidia0").exists() && !Path::new("/dev/nvidiactl").exists();
    let envs: &[(&str, &str)] = if no_gpu {
        &[("TESSERA_TEST_EXPECT_NO_DEVICE", "1")]
    } else {
        &[]
    };
    run_program(
        &exe,
        envs,
        &["TESSERA_BACKEND", "TESSERA_TEST_EXPECT_NO_DEVICE"],
    );
}

#[test]
fn c_gpu_program_checks_device_memory_products_or_skips_without_a_gpu() {
    let dir = temp_dir();
    // The program dlopen()s libcuda.so.1 itself: no CUDA headers or runtime at build time.
    let exe = compile_c_with_libs(dir.path(), "gpu_api.c", false, &[], &["-ldl"]);
    let lib = lib_dir();
    let mut ld_path = OsString::from(&lib);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        ld_path.push(":");
        ld_path.push(old);
    }
    let mut cmd = Command::new(&exe);
    cmd.env("LD_LIBRARY_PATH", ld_path)
        .env_remove("TESSERA_BACKEND");
    let out = run_checked(cmd, "running gpu_api");
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("gpu_api: {stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    if stdout.contains("skipped: no CUDA device") {
        assert_eq!(
            lines.len(),
            1,
            "gpu_api skipped but printed more than its one skip line:\n{stdout}"
        );
        // No GPU here (or no usable driver or NVRTC): the line says why.
        return;
    }
    assert!(
        !stdout.contains("FAIL") && lines.iter().any(|l| l.starts_with("ok ")),
        "gpu_api exited 0 but its output has a FAIL line or no \"ok <case>\" line:\n{stdout}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("ok ")).count(),
        8,
        "gpu_api should report 8 cases:\n{stdout}"
    );
}

/// Runs `exe` as [`run_program`] does, under AddressSanitizer with LeakSanitizer on (the exit
/// code is forced to 23 on a report). Returns the problem, with the output, if any.
fn sanitized_problem(exe: &Path, envs: &[(&str, &str)], remove_env: &[&str]) -> Option<String> {
    let lib = lib_dir();
    let mut cmd = Command::new(exe);
    let mut ld_path = OsString::from(&lib);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        ld_path.push(":");
        ld_path.push(old);
    }
    let supp = root().join("c-tests/lsan.supp");
    cmd.env("LD_LIBRARY_PATH", ld_path)
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:exitcode=23:abort_on_error=0:detect_stack_use_after_return=1:\
             strict_string_checks=1:check_initialization_order=1",
        )
        .env(
            "LSAN_OPTIONS",
            format!("suppressions={}:print_suppressions=0", supp.display()),
        );
    for k in remove_env {
        cmd.env_remove(k);
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("could not run {name}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success()
        && !stderr.contains("Sanitizer")
        && stdout.lines().any(|l| l.starts_with("ok: "))
    {
        print!("{name} (asan+lsan): {stdout}");
        return None;
    }
    Some(format!(
        "{name} under AddressSanitizer/LeakSanitizer: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        out.status
    ))
}

/// [`sanitized_problem`], failing the test on a problem.
fn run_sanitized(exe: &Path, envs: &[(&str, &str)], remove_env: &[&str]) {
    if let Some(p) = sanitized_problem(exe, envs, remove_env) {
        panic!("{p}");
    }
}

/// The C and C++ programs again, built with `-fsanitize=address` (AddressSanitizer, whose
/// LeakSanitizer checks at exit) and linked to the same libtessera.so: no out-of-bounds access
/// or use-after-free in what the library does with the caller's memory, and nothing allocated
/// by the library left unfreed after the programs destroy their handles and matrices. The Rust
/// side uses the system allocator, so its allocations are tracked as well. One-time globals of
/// the library's dependencies that are never freed by design go in `c-tests/lsan.supp`, each with
/// the reason.
#[test]
fn c_programs_run_clean_under_address_and_leak_sanitizer() {
    let dir = temp_dir();
    let asan = ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        asan.iter().chain(extra.iter()).copied().collect()
    };
    let no_gpu = !Path::new("/dev/nvidia0").exists() && !Path::new("/dev/nvidiactl").exists();
    let basic = compile_c(
        dir.path(),
        "api_basic.c",
        false,
        &with(&["-D_POSIX_C_SOURCE=200112L"]),
    );
    run_sanitized(&basic, &[("TESSERA_BACKEND", "host")], &[]);
    let bad = compile_c(
        dir.path(),
        "bad_args.c",
        false,
        &with(&["-D_POSIX_C_SOURCE=200112L"]),
    );
    run_sanitized(
        &bad,
        if no_gpu {
            &[("TESSERA_TEST_EXPECT_NO_DEVICE", "1")]
        } else {
            &[]
        },
        &["TESSERA_BACKEND", "TESSERA_TEST_EXPECT_NO_DEVICE"],
    );
    let cpp = compile_c(dir.path(), "api_cpp.cpp", true, &with(&[]));
    run_sanitized(&cpp, &[], &[]);

    // The check itself: a program that leaks one malloc must fail it, so a machine where
    // LeakSanitizer cannot run (it stops the world with ptrace) does not pass silently.
    let canary = dir.path().join("lsan_canary.c");
    std::fs::write(
        &canary,
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"tessera.h\"\n\
         int main(void) {\n  void *volatile p = malloc(77);\n  int major, minor, patch;\n  \
         tessera_get_version(&major, &minor, &patch);\n  printf(\"ok: %p\\n\", p);\n  \
         p = NULL;\n  return 0;\n}\n",
    )
    .unwrap();
    let exe = compile_c(dir.path(), canary.to_str().unwrap(), false, &with(&[]));
    let msg = sanitized_problem(&exe, &[], &[])
        .expect("a program leaking 77 bytes passed the AddressSanitizer/LeakSanitizer check");
    assert!(
        msg.contains("LeakSanitizer: detected memory leaks") && msg.contains("77 byte"),
        "the leaking canary failed, but not with LeakSanitizer's report: {msg}"
    );
}

#[test]
fn header_included_twice_gives_version_macros_equal_to_the_library_version() {
    let dir = temp_dir();
    let expect = format!("-DEXPECT_VERSION=\"{}\"", env!("CARGO_PKG_VERSION"));
    // The header must also stay clean under warnings applications commonly enable.
    let exe = compile_c(
        dir.path(),
        "header_twice.c",
        false,
        &[
            &expect,
            "-Wstrict-prototypes",
            "-Wmissing-prototypes",
            "-Wconversion",
            "-Wsign-conversion",
            "-Wshadow",
            "-Wundef",
            "-Wcast-qual",
        ],
    );
    run_program(&exe, &[], &[]);
}

#[test]
fn cpp_program_includes_the_header_twice_and_gets_correct_products() {
    let dir = temp_dir();
    let exe = compile_c(
        dir.path(),
        "api_cpp.cpp",
        true,
        &[
            "-Wold-style-cast",
            "-Wzero-as-null-pointer-constant",
            "-Wconversion",
            "-Wshadow",
        ],
    );
    run_program(&exe, &[], &[]);
}

#[test]
fn fortran_program_uses_the_module_with_one_based_indices_and_gets_correct_products() {
    let Some(fc) = fortran_compiler_or_skip("the Fortran test") else {
        return;
    };
    let dir = temp_dir();
    let moddir = dir.path().join("mod");
    std::fs::create_dir_all(&moddir).unwrap();
    let flags = ["-Wall", "-Wextra", "-Werror", "-fimplicit-none"];

    // The module alone, as Fortran 2003.
    let mut cmd = Command::new(&fc);
    cmd.args(["-std=f2003"])
        .args(flags)
        .arg("-c")
        .arg(root().join("include/tessera.f90"))
        .arg("-J")
        .arg(&moddir)
        .arg("-o")
        .arg(moddir.join("tessera.o"));
    run_checked(cmd, "compiling include/tessera.f90");

    // The program, linked with -ltessera only (the module needs no object code of its own).
    let lib = lib_dir();
    let exe = dir.path().join("api_fortran");
    let mut cmd = Command::new(&fc);
    cmd.args(["-std=f2008"])
        .args(flags)
        .arg("-I")
        .arg(&moddir)
        .arg(root().join("c-tests/api_fortran.f90"))
        .arg("-o")
        .arg(&exe)
        .args(link_args(&lib));
    run_checked(cmd, "compiling c-tests/api_fortran.f90");
    run_program(&exe, &[], &[]);
}

// ---- header <-> Fortran module comparison ----

/// Removes C comments (`/* */` and `//`).
fn strip_c_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                match rest[b + 2..].find("*/") {
                    Some(e) => rest = &rest[b + 2 + e + 2..],
                    None => break,
                }
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                match rest[l..].find('\n') {
                    Some(e) => rest = &rest[l + e..],
                    None => break,
                }
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Names `tessera_*` directly followed (after blanks) by `(`: the header's function declarations.
fn header_functions(header: &str) -> Vec<String> {
    let code = strip_c_comments(header);
    let mut names = Vec::new();
    let mut i = 0;
    while let Some(pos) = code[i..].find("tessera_") {
        let start = i + pos;
        let boundary = start == 0 || !is_ident(code[..start].chars().next_back().unwrap());
        let end = start
            + code[start..]
                .find(|c: char| !is_ident(c))
                .unwrap_or(code.len() - start);
        if boundary && code[end..].trim_start().starts_with('(') {
            let name = code[start..end].to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        i = end;
    }
    names
}

/// Parses an integer written as C or Fortran: `42`, `-3`, `(42)`, `42_c_int32_t`, `INT32_C(42)`.
fn parse_int(text: &str) -> Option<i64> {
    let t = text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    let t = t.split('_').next()?.trim();
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    t.parse().ok()
}

/// `#define TESSERA_NAME value` lines with an integer value (the include guard has none).
fn header_constants(header: &str) -> BTreeMap<String, i64> {
    let code = strip_c_comments(header);
    let mut out = BTreeMap::new();
    for line in code.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let Some(name) = words.next() else { continue };
        if !name.starts_with("TESSERA_") || name.contains('(') {
            continue; // not ours, or a function-like macro
        }
        let value: String = words.collect::<Vec<_>>().join(" ");
        if value.is_empty() {
            continue;
        }
        let v = parse_int(&value).unwrap_or_else(|| {
            panic!("tessera.h: #define {name} {value}: the value is not an integer literal")
        });
        out.insert(name.to_string(), v);
    }
    out
}

/// Fortran source without `!` comments (outside strings), lower-cased, continuation lines joined.
fn fortran_statements(src: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    for raw in src.lines() {
        let mut line = String::new();
        let mut quote: Option<char> = None;
        for c in raw.chars() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c == '!' => break,
                None => {}
            }
            line.push(c);
        }
        let mut line = line.trim().to_string();
        if let Some(rest) = line.strip_prefix('&') {
            line = rest.trim_start().to_string();
        }
        if let Some(body) = line.strip_suffix('&') {
            current.push_str(body);
            current.push(' ');
            continue;
        }
        current.push_str(&line);
        if !current.trim().is_empty() {
            statements.push(current.trim().to_lowercase());
        }
        current.clear();
    }
    statements
}

/// The `name="..."` of every `bind(c, name="...")` in the module.
fn fortran_bind_names(statements: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for s in statements {
        let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut rest = compact.as_str();
        while let Some(p) = rest.find("bind(c,name=") {
            let after = &rest[p + "bind(c,name=".len()..];
            let q = after.chars().next().unwrap_or(' ');
            if q == '"' || q == '\'' {
                if let Some(end) = after[1..].find(q) {
                    names.push(after[1..1 + end].to_string());
                }
            }
            rest = after;
        }
    }
    names
}

/// `integer(...), parameter :: name = value[, name = value]` declarations (names lower-cased).
fn fortran_parameters(statements: &[String]) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for s in statements {
        let Some((decl, list)) = s.split_once("::") else {
            continue;
        };
        if !decl.contains("parameter") || !decl.trim_start().starts_with("integer") {
            continue;
        }
        for item in list.split(',') {
            if let Some((name, value)) = item.split_once('=') {
                if let Some(v) = parse_int(value) {
                    out.insert(name.trim().to_string(), v);
                }
            }
        }
    }
    out
}

/// Field names of `typedef struct tessera_matrix_info { ... }` in the header.
fn header_info_fields(header: &str) -> Vec<String> {
    let code = strip_c_comments(header);
    let start = code
        .find("tessera_matrix_info {")
        .or_else(|| code.find("typedef struct {"))
        .expect("tessera.h: no tessera_matrix_info struct");
    let body_start = start + code[start..].find('{').unwrap() + 1;
    let body_end = body_start + code[body_start..].find('}').unwrap();
    code[body_start..body_end]
        .split(';')
        .filter_map(|decl| {
            let decl = decl.trim();
            let last = decl.split_whitespace().last()?;
            Some(last.split('[').next().unwrap().to_string())
        })
        .collect()
}

#[test]
fn fortran_module_has_an_interface_for_every_header_function() {
    let header = std::fs::read_to_string(root().join("include/tessera.h"))
        .expect("include/tessera.h is missing");
    let module = std::fs::read_to_string(root().join("include/tessera.f90"))
        .expect("include/tessera.f90 is missing");
    let statements = fortran_statements(&module);

    let functions = header_functions(&header);
    assert!(
        functions.len() >= 14,
        "parsed only {} functions from tessera.h ({functions:?}); the parser is out of date",
        functions.len()
    );
    let binds = fortran_bind_names(&statements);
    let missing: Vec<_> = functions.iter().filter(|f| !binds.contains(f)).collect();
    assert!(
        missing.is_empty(),
        "include/tessera.f90 has no bind(c, name=\"...\") interface for: {missing:?}"
    );
    let stale: Vec<_> = binds
        .iter()
        .filter(|b| b.starts_with("tessera_") && !functions.contains(b))
        .collect();
    assert!(
        stale.is_empty(),
        "include/tessera.f90 binds functions the header does not declare: {stale:?}"
    );

    let constants = header_constants(&header);
    assert!(
        constants.len() >= 38,
        "parsed only {} #define TESSERA_* constants from tessera.h",
        constants.len()
    );
    let params = fortran_parameters(&statements);
    let mut problems = Vec::new();
    for (name, value) in &constants {
        match params.get(&name.to_lowercase()) {
            None => problems.push(format!("{name} is missing")),
            Some(v) if v != value => {
                problems.push(format!("{name} = {v} in the module, {value} in the header"))
            }
            Some(_) => {}
        }
    }
    assert!(
        problems.is_empty(),
        "include/tessera.f90 constants differ from tessera.h:\n  {}",
        problems.join("\n  ")
    );

    // The derived type mirrors the struct, field by field, in order.
    let fields = header_info_fields(&header);
    let type_start = statements
        .iter()
        .position(|s| s.starts_with("type, bind(c) :: tessera_matrix_info"))
        .expect("include/tessera.f90 has no `type, bind(c) :: tessera_matrix_info`");
    let type_fields: Vec<String> = statements[type_start + 1..]
        .iter()
        .take_while(|s| !s.starts_with("end type"))
        .filter_map(|s| s.split_once("::"))
        .map(|(_, rest)| {
            let name = rest.split(['=', '(']).next().unwrap().trim().to_string();
            name
        })
        .collect();
    let c_fields: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
    assert_eq!(
        type_fields, c_fields,
        "tessera_matrix_info: Fortran fields (left) differ from the C struct's (right)"
    );
}

#[test]
fn header_parsers_used_by_the_module_check_find_what_they_should() {
    let h = "/* tessera_fake(int) in a comment */\n#define TESSERA_A 3\n#define TESSERA_H\n\
             #define TESSERA_B (-2)\ntessera_status tessera_one(int x);\n\
             const char *tessera_two (void); // tessera_three(\ntypedef struct tessera_s *tessera_h;\n";
    assert_eq!(header_functions(h), vec!["tessera_one", "tessera_two"]);
    let c = header_constants(h);
    assert_eq!(c.get("TESSERA_A"), Some(&3));
    assert_eq!(c.get("TESSERA_B"), Some(&-2));
    assert!(!c.contains_key("TESSERA_H"));
    let f = "  integer(c_int32_t), parameter :: TESSERA_A = 3_c_int32_t ! x = 9\n\
             function f(a) bind(c, &\n  name=\"tessera_one\") result(s) ! bind(c, name=\"no\")\n";
    let st = fortran_statements(f);
    assert_eq!(fortran_bind_names(&st), vec!["tessera_one"]);
    assert_eq!(fortran_parameters(&st).get("tessera_a"), Some(&3));
}

#[test]
fn readme_c_example_compiles_and_prints_the_documented_product() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme.find("```c\n").expect("README has a ```c block") + 5;
    let len = readme[start..].find("```").expect("the ```c block ends");
    let dir = temp_dir();
    let src = dir.path().join("readme_example.c");
    std::fs::write(&src, &readme[start..start + len]).unwrap();
    let exe = compile_c(dir.path(), src.to_str().unwrap(), false, &[]);
    let mut cmd = Command::new(&exe);
    cmd.env("LD_LIBRARY_PATH", lib_dir());
    let out = run_checked(cmd, "running the README example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim(), "TESSERA_STATUS_SUCCESS: y = 6 6 17");
}
