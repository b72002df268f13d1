//! The shim's C declarations against NVIDIA's own `cusparse.h`, without copying that header
//! into the repository: cbindgen writes what the shim's Rust code declares (the functions it
//! exports, and the signatures through which it calls the real library) using cuSPARSE's type
//! names, and a C compiler checks them against the header of the `nvidia-cusparse` wheel
//! (`scripts/cusparse-headers` puts it in `.cusparse-headers/`, or `TESSERA_CUSPARSE_INCLUDE`
//! names the folders): a redeclared function must have the header's type, and each real
//! function must fit the pointer type the shim calls it through. Every constant of
//! `tessera_cusparse::abi` is checked against the header's enumerator of that name.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The include folders of the headers, if set up.
fn include_dirs() -> Option<Vec<PathBuf>> {
    if let Ok(v) = std::env::var("TESSERA_CUSPARSE_INCLUDE") {
        return Some(v.split(':').map(PathBuf::from).collect());
    }
    let d = root().join(".cusparse-headers/include");
    d.join("cusparse.h").exists().then(|| vec![d])
}

/// The cuSPARSE type names of `abi.rs`: the header defines them.
const ABI_TYPES: &[&str] = &[
    "cusparseStatus_t",
    "cusparseHandle_t",
    "cusparseConstSpMatDescr_t",
    "cusparseConstDnVecDescr_t",
    "cusparseDnVecDescr_t",
    "cusparseOperation_t",
    "cusparseSpMVAlg_t",
    "cudaDataType",
    "cusparseIndexType_t",
    "cusparseIndexBase_t",
    "cusparseFormat_t",
    "cusparsePointerMode_t",
    "cudaStream_t",
];

fn declarations() -> String {
    use cbindgen::{Config, ExportConfig, ItemType, Language};
    let config = Config {
        language: Language::C,
        no_includes: true,
        export: ExportConfig {
            item_types: vec![ItemType::Functions, ItemType::Typedefs],
            exclude: ABI_TYPES.iter().map(|s| s.to_string()).collect(),
            include: CALLED_THROUGH.iter().map(|(_, t)| t.to_string()).collect(),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(env!("CARGO_MANIFEST_DIR"))
        .with_config(config)
        .generate()
        .expect("cbindgen reads the shim")
        .write(&mut out);
    String::from_utf8(out).unwrap()
}

/// The real functions the shim calls, and the pointer type it calls each through (real.rs).
const CALLED_THROUGH: &[(&str, &str)] = &[
    ("cusparseSpMV", "SpmvFn"),
    ("cusparseSpMV_preprocess", "SpmvFn"),
    ("cusparseConstCsrGet", "CsrGetFn"),
    ("cusparseConstDnVecGet", "DnVecGetFn"),
    ("cusparseSpMatGetFormat", "GetFormatFn"),
    ("cusparseGetStream", "GetStreamFn"),
    ("cusparseGetPointerMode", "GetPointerModeFn"),
];

#[test]
fn the_shims_declarations_agree_with_nvidias_header() {
    let decls = declarations();
    for f in [
        "cusparseSpMV(",
        "cusparseSpMV_preprocess(",
        "SpmvFn",
        "CsrGetFn",
    ] {
        assert!(decls.contains(f), "cbindgen did not declare {f}:\n{decls}");
    }
    let Some(dirs) = include_dirs() else {
        println!(
            "skipped: NVIDIA's cusparse.h is not set up (scripts/cusparse-headers, or TESSERA_CUSPARSE_INCLUDE)"
        );
        return;
    };
    let mut c = String::from("#include <cusparse.h>\n\n/* The shim's declarations. */\n");
    c += &decls;
    c += "\n/* Each real function fits the pointer type the shim calls it through. */\n";
    for (f, t) in CALLED_THROUGH {
        c += &format!("static {t} check_{f} = {f};\n");
    }
    c += "void *tessera_checks[] = {\n";
    for (f, _) in CALLED_THROUGH {
        c += &format!("    (void *)&check_{f},\n");
    }
    c += "};\n\n/* The constants of abi.rs. */\n";
    for (name, v) in tessera_cusparse::abi::CONSTANTS {
        c += &format!("_Static_assert({name} == {v}, \"{name} is {v} in abi.rs\");\n");
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cusparse-header");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("check.c");
    std::fs::write(&src, &c).unwrap();
    let triple = std::env::consts::ARCH.to_string() + "-unknown-linux-gnu";
    let mut cmd = cc::Build::new()
        .target(&triple)
        .host(&triple)
        .opt_level(0)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler()
        .to_command();
    // Incompatible pointer types are errors; the header's own deprecations are not ours.
    cmd.args([
        "-std=c11",
        "-fsyntax-only",
        "-Wall",
        "-Werror",
        "-Wno-deprecated-declarations",
        "-Werror=incompatible-pointer-types",
    ]);
    for d in &dirs {
        cmd.arg("-I").arg(d);
    }
    let out = cmd.arg(&src).output().expect("a C compiler runs");
    assert!(
        out.status.success(),
        "{} does not compile against NVIDIA's header:\n{}\n--- the file:\n{c}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
