//! What describes a kernel file, and how its text and NVRTC options are put together. Plain
//! data and std only: `build.rs` compiles this file too, so that the kernels built into the
//! library at build time are compiled exactly as the run-time compiler would compile them.

/// One `.cu` file and the values each of its defines may take.
#[derive(Debug)]
pub struct KernelFile {
    /// File name under `kernels/`.
    pub name: &'static str,
    /// Its text.
    pub source: &'static str,
    /// Each define and its allowed values (the first is the file's own default).
    pub defines: &'static [(&'static str, &'static [i64])],
}

impl KernelFile {
    /// Every specialisation's define values, in the order of `defines`: the cartesian product
    /// of each define's allowed values (one empty list for a file without defines).
    pub fn value_combinations(&self) -> Vec<Vec<i64>> {
        let mut combos: Vec<Vec<i64>> = vec![vec![]];
        for (_, allowed) in self.defines {
            combos = combos
                .iter()
                .flat_map(|c| {
                    allowed.iter().map(move |&v| {
                        let mut c = c.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        combos
    }
}

/// The full text NVRTC compiles: `common.cuh`, then the file, with `#line` so that errors name
/// the right file and line (NVRTC has no include path here).
pub fn full_source(common: &str, name: &str, text: &str) -> String {
    format!("#line 1 \"common.cuh\"\n{common}\n#line 1 \"{name}\"\n{text}")
}

/// NVRTC options for CUBIN on `sm_{arch}` with these define values. `line_info` adds
/// `--generate-line-info`: it costs nothing at run time and lets compute-sanitizer name source
/// lines, but more than doubles the image (the PTX text rides along), so the kernels built into
/// the library go without it and the run-time compiler adds it.
pub fn nvrtc_options<'a>(
    arch: i32,
    line_info: bool,
    defines: impl Iterator<Item = (&'a str, i64)>,
) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture=sm_{arch}"),
        "--std=c++17".to_string(),
    ];
    if line_info {
        o.push("--generate-line-info".to_string());
    }
    for (name, v) in defines {
        o.push(format!("-D{name}={v}"));
    }
    o
}

/// A 64-bit FNV-1a hash of `text`: how a built-in kernel recognises the text it was compiled
/// from (a file replaced through `TESSERA_KERNELS_DIR` no longer matches it).
pub fn text_hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text.as_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
