//! Builds tessera's kernels into the library when NVRTC can be found at build time.
//!
//! Every kernel specialisation the fixed rules and tuners can ask for (each kernel file of
//! `src/methods/list.rs`'s methods and of the backend, every value of each define) is compiled
//! to CUBIN for the architectures below and compressed into `$OUT_DIR`; the library embeds them
//! (`src/backend/cuda/builtin.rs`) and loads the device's own architecture from there, so a
//! first product needs neither NVRTC nor a compile. The text and the options are put together
//! by the very code the run-time compiler uses (`src/backend/cuda/kernels/file.rs`).
//!
//! NVRTC is looked for in `$TESSERA_NVRTC_LIB_DIR`, `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64`,
//! `/usr/local/cuda/lib64`, each `$LD_LIBRARY_PATH` folder, then by the loader's own search.
//! Without it (or with `TESSERA_BUILTIN_KERNELS=0`) nothing is built in and the library
//! compiles its kernels at run time, as before. A failed compile is a warning, never a failed
//! build: the CI compile check (`tests/kernel_compile.rs`) is where a kernel that does not
//! compile fails loudly.
//!
//! Architectures (`TESSERA_BUILTIN_ARCHS`): by default the lowest architecture NVRTC supports
//! of each major version (a CUBIN for sm_XY runs on every sm_XZ with Z >= Y: sm_80 code runs on
//! sm_86 and sm_89, sm_120 code on sm_121), which covers every GPU this NVRTC knows at half
//! the size and build time; `all` takes every architecture NVRTC lists; a comma-separated list
//! (`90,100`) takes those.
//!
//! Compiled images are kept in `<target>/tessera-builtin-kernels/`, keyed by text, options and
//! NVRTC version, so the debug, release and check builds compile each kernel once.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[path = "src/backend/cuda/kernels/file.rs"]
#[allow(dead_code)]
mod file;
#[path = "src/backend/cuda/kernels/generic.rs"]
#[allow(dead_code)]
mod generic;

use file::{full_source, nvrtc_options, text_hash, KernelFile};

/// Each method's `kernel.rs`, from the one list of methods.
macro_rules! methods {
    ($($alg:ident => $folder:ident, $host:ident, $gpu:ident;)*) => {
        $(
            #[allow(dead_code)]
            mod $folder {
                include!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/src/methods/",
                    stringify!($folder),
                    "/kernel.rs"
                ));
            }
        )*
        const FILES: &[&KernelFile] =
            &[$(&$folder::KERNELS,)* &generic::TRANSPOSE, &generic::UTIL];
    };
}
include!("src/methods/list.rs");

type Prog = *mut c_void;

/// A compiled job: its cache key and its compressed CUBIN.
type Packed = Option<(String, Vec<u8>)>;

/// The NVRTC entry points used here, from a loaded `libnvrtc`.
struct Nvrtc {
    _lib: libloading::Library,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    num_archs: unsafe extern "C" fn(*mut c_int) -> c_int,
    archs: unsafe extern "C" fn(*mut c_int) -> c_int,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Prog) -> c_int,
}

impl Nvrtc {
    fn load(path: &Path) -> Result<Nvrtc, String> {
        // SAFETY: loading NVIDIA's NVRTC runs its initialisers, which have no preconditions.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol is NVRTC's documented C function of this signature.
                *unsafe { lib.get($name) }.map_err(|e| format!("{}: {e}", stringify!($name)))?
            };
        }
        Ok(Nvrtc {
            version: sym!(b"nvrtcVersion"),
            num_archs: sym!(b"nvrtcGetNumSupportedArchs"),
            archs: sym!(b"nvrtcGetSupportedArchs"),
            create: sym!(b"nvrtcCreateProgram"),
            compile: sym!(b"nvrtcCompileProgram"),
            cubin_size: sym!(b"nvrtcGetCUBINSize"),
            cubin: sym!(b"nvrtcGetCUBIN"),
            log_size: sym!(b"nvrtcGetProgramLogSize"),
            log: sym!(b"nvrtcGetProgramLog"),
            destroy: sym!(b"nvrtcDestroyProgram"),
            _lib: lib,
        })
    }

    fn version(&self) -> (i32, i32) {
        let (mut a, mut b) = (0, 0);
        // SAFETY: valid out-pointers.
        unsafe { (self.version)(&mut a, &mut b) };
        (a, b)
    }

    fn supported_archs(&self) -> Vec<i32> {
        let mut n = 0;
        // SAFETY: valid out-pointer.
        if unsafe { (self.num_archs)(&mut n) } != 0 || n <= 0 {
            return vec![];
        }
        let mut v = vec![0; n as usize];
        // SAFETY: v has room for n entries.
        if unsafe { (self.archs)(v.as_mut_ptr()) } != 0 {
            return vec![];
        }
        v
    }

    /// The CUBIN of `source` compiled with `options`, or NVRTC's log.
    fn compile(&self, source: &str, name: &str, options: &[String]) -> Result<Vec<u8>, String> {
        let src = CString::new(source).map_err(|e| e.to_string())?;
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()).expect("no NUL in options"))
            .collect();
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: valid strings and out-pointer; no headers.
        let r = unsafe {
            (self.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(format!("nvrtcCreateProgram failed ({r})"));
        }
        // SAFETY: prog is live; ptrs holds options.len() valid strings.
        let r = unsafe { (self.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr()) };
        let out = if r != 0 {
            let mut n = 0usize;
            // SAFETY: prog is live; the log buffer has the size NVRTC reported.
            let log = unsafe {
                (self.log_size)(prog, &mut n);
                let mut buf = vec![0u8; n.max(1)];
                (self.log)(prog, buf.as_mut_ptr().cast());
                String::from_utf8_lossy(&buf)
                    .trim_end_matches('\0')
                    .to_string()
            };
            Err(format!("NVRTC could not compile {name} ({r}):\n{log}"))
        } else {
            let mut n = 0usize;
            // SAFETY: prog is compiled; the buffer has the size NVRTC reported.
            unsafe {
                (self.cubin_size)(prog, &mut n);
                let mut buf = vec![0u8; n];
                (self.cubin)(prog, buf.as_mut_ptr().cast());
                Ok(buf)
            }
        };
        // SAFETY: created above, destroyed once.
        unsafe { (self.destroy)(&mut prog) };
        out
    }
}

fn find_nvrtc() -> Option<(PathBuf, Nvrtc)> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = env("TESSERA_NVRTC_LIB_DIR") {
        dirs.push(d.into());
    }
    for k in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(d) = env(k) {
            dirs.push(PathBuf::from(d).join("lib64"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    if let Some(p) = env("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    let mut tried = dirs
        .iter()
        .map(|d| d.join("libnvrtc.so.13"))
        .filter(|p| p.is_file())
        .collect::<Vec<_>>();
    tried.push("libnvrtc.so.13".into());
    tried
        .into_iter()
        .find_map(|p| Nvrtc::load(&p).ok().map(|n| (p, n)))
}

/// Which architectures to build for, from NVRTC's list and `TESSERA_BUILTIN_ARCHS`.
fn choose_archs(supported: &[i32]) -> Vec<i32> {
    let want = std::env::var("TESSERA_BUILTIN_ARCHS").unwrap_or_default();
    let mut archs: Vec<i32> = match want.trim() {
        "" | "major" => {
            let mut lowest: Vec<i32> = Vec::new();
            for &a in supported {
                if !lowest.iter().any(|&l| l / 10 == a / 10 && l <= a) {
                    lowest.retain(|&l| l / 10 != a / 10);
                    lowest.push(a);
                }
            }
            lowest
        }
        "all" => supported.to_vec(),
        list => list
            .split(',')
            .filter_map(|a| a.trim().trim_start_matches("sm_").parse().ok())
            .filter(|a| supported.contains(a))
            .collect(),
    };
    archs.sort_unstable();
    archs.dedup();
    archs
}

struct Job {
    file: &'static KernelFile,
    values: Vec<i64>,
    arch: i32,
}

fn jobs(archs: &[i32]) -> Vec<Job> {
    let mut out = Vec::new();
    for &file in FILES {
        for values in file.value_combinations() {
            for &arch in archs {
                out.push(Job {
                    file,
                    values: values.clone(),
                    arch,
                });
            }
        }
    }
    out
}

fn write_empty(out: &Path, why: &str) {
    std::fs::write(
        out.join("builtin_kernels.rs"),
        format!(
            "/// Why no kernels are built in.\npub const NONE_BECAUSE: &str = {why:?};\n/// NVRTC of the built-in kernels ((0, 0): none).\npub const NVRTC_VERSION: (i32, i32) = (0, 0);\n/// Architectures built in.\npub const ARCHS: &[i32] = &[];\n/// The kernels built in.\npub static ENTRIES: &[Entry] = &[];\n"
        ),
    )
    .expect("write builtin_kernels.rs");
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=src/methods/list.rs");
    println!("cargo:rerun-if-changed=src/backend/cuda/kernels/file.rs");
    println!("cargo:rerun-if-changed=src/backend/cuda/kernels/generic.rs");
    for k in [
        "TESSERA_BUILTIN_KERNELS",
        "TESSERA_BUILTIN_ARCHS",
        "TESSERA_NVRTC_LIB_DIR",
        "CUDA_PATH",
        "CUDA_HOME",
        "LD_LIBRARY_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={k}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    for entry in std::fs::read_dir("src/methods").expect("src/methods") {
        let p = entry.expect("dir entry").path().join("kernel.rs");
        if p.is_file() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    if std::env::var("TESSERA_BUILTIN_KERNELS").as_deref() == Ok("0") {
        write_empty(&out, "TESSERA_BUILTIN_KERNELS=0 at build time");
        return;
    }
    let Some((path, nvrtc)) = find_nvrtc() else {
        println!("cargo:warning=tessera: NVRTC (libnvrtc.so.13) not found at build time: no kernels built in; they compile at run time (set TESSERA_NVRTC_LIB_DIR to build them in)");
        write_empty(&out, "NVRTC was not found at build time");
        return;
    };
    let version = nvrtc.version();
    let archs = choose_archs(&nvrtc.supported_archs());
    if archs.is_empty() {
        println!("cargo:warning=tessera: no architecture to build kernels for (NVRTC {version:?}, TESSERA_BUILTIN_ARCHS)");
        write_empty(&out, "no architecture was chosen at build time");
        return;
    }
    // <target>/<profile>/build/tessera-*/out -> <target>/tessera-builtin-kernels
    let cache = out
        .ancestors()
        .nth(4)
        .map(|t| t.join("tessera-builtin-kernels"))
        .unwrap_or_else(|| out.join("cache"));
    let _ = std::fs::create_dir_all(&cache);
    let jobs = jobs(&archs);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Mutex<Vec<Packed>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let source = full_source(generic::COMMON, j.file.name, j.file.source);
                let names = j.file.defines.iter().map(|(n, _)| *n);
                let options = nvrtc_options(j.arch, false, names.zip(j.values.iter().copied()));
                let key = format!(
                    "{:016x}",
                    text_hash(&format!("{source}\0{}\0{version:?}", options.join("\0")))
                );
                let cached = cache.join(format!("{key}.cubin.z"));
                let packed = match std::fs::read(&cached) {
                    Ok(b) if !b.is_empty() => b,
                    _ => match nvrtc.compile(&source, j.file.name, &options) {
                        Ok(cubin) => {
                            let b = miniz_oxide::deflate::compress_to_vec(&cubin, 9);
                            let tmp = cache.join(format!("{key}.tmp{i}"));
                            if std::fs::write(&tmp, &b).is_ok() {
                                let _ = std::fs::rename(&tmp, &cached);
                            }
                            b
                        }
                        Err(e) => {
                            failures.lock().unwrap().push(format!("sm_{}: {e}", j.arch));
                            continue;
                        }
                    },
                };
                results.lock().unwrap()[i] = Some((key, packed));
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    if !failures.is_empty() {
        println!(
            "cargo:warning=tessera: {} of {} built-in kernel compilations failed with NVRTC {version:?} ({}); no kernels built in. First: {}",
            failures.len(),
            jobs.len(),
            path.display(),
            failures[0].lines().take(4).collect::<Vec<_>>().join(" | ")
        );
        write_empty(&out, "NVRTC failed to compile them at build time");
        return;
    }
    let results = results.into_inner().unwrap();
    let dir = out.join("kernels");
    let _ = std::fs::create_dir_all(&dir);
    let mut code = String::new();
    code.push_str("/// Why no kernels are built in (empty: they are).\npub const NONE_BECAUSE: &str = \"\";\n");
    code.push_str(&format!(
        "/// NVRTC of the built-in kernels.\npub const NVRTC_VERSION: (i32, i32) = ({}, {});\n",
        version.0, version.1
    ));
    code.push_str(&format!(
        "/// Architectures built in.\npub const ARCHS: &[i32] = &{archs:?};\n/// The kernels built in.\npub static ENTRIES: &[Entry] = &[\n"
    ));
    let mut bytes = 0usize;
    for (j, r) in jobs.iter().zip(results) {
        let (key, packed) = r.expect("every job compiled");
        let f = dir.join(format!("{key}.cubin.z"));
        std::fs::write(&f, &packed).expect("write a built-in kernel");
        bytes += packed.len();
        let source = full_source(generic::COMMON, j.file.name, j.file.source);
        code.push_str(&format!(
            "    Entry {{ file: {:?}, values: &{:?}, arch: {}, source_hash: 0x{:016x}, image: include_bytes!({:?}) }},\n",
            j.file.name,
            j.values,
            j.arch,
            text_hash(&source),
            f.display().to_string()
        ));
    }
    code.push_str("];\n");
    std::fs::write(out.join("builtin_kernels.rs"), code).expect("write builtin_kernels.rs");
    println!(
        "cargo:warning=tessera: {} kernels built in for sm_{} with NVRTC {}.{} ({} KiB compressed, {:.0} s)",
        jobs.len(),
        archs
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(" sm_"),
        version.0,
        version.1,
        bytes / 1024,
        started.elapsed().as_secs_f64()
    );
}
