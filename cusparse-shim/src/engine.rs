//! The calls the shim takes: one tessera handle per cuSPARSE handle and device (on the
//! cuSPARSE handle's stream), and one tessera matrix per [`Key`] over the caller's own arrays
//! (`tessera::Matrix::borrow_device`: nothing copied, the arrays read in place by every
//! product), analyzed once and kept in an LRU cache ([`crate::cache`]).

use crate::cache::Lru;
use crate::decide::{rows_fit, Key};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tessera::backend::cuda::import::DeviceCsr;
use tessera::{
    Algorithm, AnyMatrix, BackendKind, BorrowedWrites, Handle, IndexBase, Matrix, Operation,
    Scalar, Tuning, ValueType,
};

/// What the shim decided for a matrix, kept under its key.
#[derive(Debug)]
pub enum Entry {
    /// tessera runs it, on this device.
    Taken(Box<AnyMatrix>, i32),
    /// The real cuSPARSE does, for this reason.
    Refused(String),
}

/// A taken product's arguments.
#[derive(Debug, Clone, Copy)]
pub struct Product {
    /// The cuSPARSE handle (its address: the tessera handle is kept per handle and device).
    pub handle: usize,
    /// The handle's stream (`cudaStream_t`, 0 for the default stream).
    pub stream: usize,
    /// alpha and beta, read from the host as f64 (exact for f32).
    pub alpha: f64,
    /// See `alpha`.
    pub beta: f64,
    /// x and y device addresses.
    pub x: u64,
    /// See `x`.
    pub y: u64,
}

/// tessera handles by cuSPARSE handle (its address) and device.
type Handles = HashMap<(usize, i32), Arc<Mutex<Handle>>>;

struct Engine {
    handles: Mutex<Handles>,
    cache: Mutex<Lru<Key, Arc<Entry>>>,
}

fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| Engine {
        handles: Mutex::new(HashMap::new()),
        cache: Mutex::new(Lru::new(
            std::env::var("TESSERA_CUSPARSE_CACHE")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(1024),
        )),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The cached entry of `key`, if any.
pub fn cached(key: &Key) -> Option<Arc<Entry>> {
    lock(&engine().cache).get(key)
}

/// Forgets what was decided for the matrix of `key` (`cusparseSpMV_preprocess` re-analyzes).
pub fn forget(key: &Key) {
    let old = lock(&engine().cache).remove(key);
    drop(old);
}

/// True with `TESSERA_CUSPARSE_TAKE=all`: every matrix `decide` accepts runs CSR_VECTOR,
/// whatever its rows (for measuring where the rule of [`rows_fit`] should lie; not for use).
fn take_all() -> bool {
    static ALL: OnceLock<bool> = OnceLock::new();
    *ALL.get_or_init(|| std::env::var("TESSERA_CUSPARSE_TAKE").is_ok_and(|v| v.trim() == "all"))
}

/// The tessera handle of cuSPARSE handle `handle` on `device`, made on first use.
fn handle_for(handle: usize, device: i32) -> tessera::Result<Arc<Mutex<Handle>>> {
    let mut hs = lock(&engine().handles);
    if let Some(h) = hs.get(&(handle, device)) {
        return Ok(h.clone());
    }
    let h = Arc::new(Mutex::new(Handle::with_backend(BackendKind::Cuda, device)?));
    // A handle address reused after cusparseDestroy on another device leaves a stale pair:
    // bounded, like the cache.
    if hs.len() >= 256 {
        hs.clear();
    }
    hs.insert((handle, device), h.clone());
    Ok(h)
}

/// Analyzes the matrix of `key` on `device` (validating and measuring its arrays there, on
/// `stream`, and waiting for it) and keeps the decision.
pub fn analyze(key: Key, device: i32, handle: usize, stream: usize) -> Arc<Entry> {
    let entry = Arc::new(match build(key, device, handle, stream) {
        Ok(m) => Entry::Taken(Box::new(m), device),
        Err(why) => Entry::Refused(why),
    });
    let evicted = lock(&engine().cache).insert(key, entry.clone());
    drop(evicted);
    entry
}

fn build(key: Key, device: i32, handle: usize, stream: usize) -> Result<AnyMatrix, String> {
    let text = |e: tessera::Error| e.to_string();
    let h = handle_for(handle, device).map_err(text)?;
    let mut h = lock(&h);
    if h.stream() != stream {
        h.set_stream(stream).map_err(text)?;
    }
    let [rows, cols, nnz] = key.dims.map(|d| d as usize);
    let p = DeviceCsr {
        rows,
        cols,
        nnz,
        row_ptr: key.arrays[0],
        col_ind: key.arrays[1],
        values: key.arrays[2],
        is64: key.index64,
        base: IndexBase::Zero,
    };
    fn borrow<T: Scalar>(h: &Handle, p: &DeviceCsr) -> Result<Matrix<T>, String> {
        let mut m = Matrix::<T>::borrow_device(h, p, BorrowedWrites::Unannounced)
            .map_err(|e| format!("tessera refused the arrays: {e}"))?
            .ok_or("columns not sorted within a row")?;
        if !take_all() {
            rows_fit(m.stats())?;
        }
        m.analyze(h, Algorithm::CsrVector, Tuning::None)
            .map_err(|e| e.to_string())?;
        Ok(m)
    }
    Ok(match key.value_type {
        ValueType::F32 => AnyMatrix::F32(borrow::<f32>(&h, &p)?),
        ValueType::F64 => AnyMatrix::F64(borrow::<f64>(&h, &p)?),
    })
}

/// Runs a taken product on `device`: queued on the handle's stream, y = alpha A x + beta y
/// (beta == 0 never reads y).
pub fn run(device: i32, m: &AnyMatrix, p: &Product) -> tessera::Result<()> {
    let h = handle_for(p.handle, device)?;
    let mut h = lock(&h);
    if h.stream() != p.stream {
        h.set_stream(p.stream)?;
    }
    let op = Operation::NonTranspose;
    match m {
        AnyMatrix::F32(m) => m.spmv_device(&h, op, p.alpha as f32, p.x, p.beta as f32, p.y),
        AnyMatrix::F64(m) => m.spmv_device(&h, op, p.alpha, p.x, p.beta, p.y),
    }
}

/// One line about the matrix of `key` for `TESSERA_CUSPARSE_LOG=1`.
pub fn describe(key: &Key, entry: &Entry) -> String {
    let [r, c, n] = key.dims;
    let what = format!(
        "{r} x {c}, nnz {n}, {:?}{}",
        key.value_type,
        if key.index64 { ", int64" } else { "" }
    );
    match entry {
        Entry::Taken(m, device) => format!("took {what} on device {device}: {}", m.info().params),
        Entry::Refused(why) => format!("forwarded {what}: {why}"),
    }
}
