//! Turning C pointers into Rust references and slices, in one place. Handles and matrices are
//! `Box`es handed to C as opaque pointers and recorded in a registry, so a NULL, destroyed or
//! foreign pointer is INVALID_HANDLE instead of undefined behaviour.

use super::types::{tessera_handle, tessera_matrix};
use crate::backend::cuda::{self, Device, MemKind, PtrInfo};
use crate::csr::try_vec_touched;
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::matrix::AnyMatrix;
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::{Mutex, MutexGuard};

static HANDLES: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
static MATRICES: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn registry(
    r: &'static Mutex<Option<HashSet<usize>>>,
) -> MutexGuard<'static, Option<HashSet<usize>>> {
    // A panic while the lock was held cannot leave the set half-updated (insert/remove are
    // single operations), so a poisoned lock is safe to keep using.
    r.lock().unwrap_or_else(|p| p.into_inner())
}

fn is_live(r: &'static Mutex<Option<HashSet<usize>>>, p: usize) -> bool {
    registry(r).as_ref().is_some_and(|s| s.contains(&p))
}

/// Hands a new handle to C.
pub(crate) fn new_handle(h: Handle) -> tessera_handle {
    let p = Box::into_raw(Box::new(h));
    registry(&HANDLES)
        .get_or_insert_with(HashSet::new)
        .insert(p as usize);
    p.cast()
}

/// Hands a new matrix to C.
pub(crate) fn new_matrix(m: AnyMatrix) -> tessera_matrix {
    let p = Box::into_raw(Box::new(m));
    registry(&MATRICES)
        .get_or_insert_with(HashSet::new)
        .insert(p as usize);
    p.cast()
}

/// The handle behind `h`.
///
/// # Safety
/// No other reference to the same handle may be alive (one thread per handle, as documented).
pub(crate) unsafe fn handle<'a>(h: tessera_handle) -> Result<&'a mut Handle> {
    if h.is_null() {
        return Err(Error::InvalidHandle("handle is NULL".into()));
    }
    if !is_live(&HANDLES, h as usize) {
        return Err(Error::InvalidHandle(format!(
            "handle {h:p} is not a live tessera handle (destroyed, or not made by tessera_create)"
        )));
    }
    // SAFETY: the registry holds exactly the pointers produced by Box::into_raw in new_handle
    // and not yet freed by destroy_handle, so `h` points to a live Handle; exclusivity is the
    // caller's contract.
    Ok(unsafe { &mut *h.cast::<Handle>() })
}

fn check_matrix(a: tessera_matrix) -> Result<()> {
    if a.is_null() {
        return Err(Error::InvalidHandle("matrix A is NULL".into()));
    }
    if !is_live(&MATRICES, a as usize) {
        return Err(Error::InvalidHandle(format!(
            "matrix {a:p} is not a live tessera matrix (destroyed, or not made by tessera_create_csr)"
        )));
    }
    Ok(())
}

/// The matrix behind `a`, shared: several threads may multiply with one matrix at once.
///
/// # Safety
/// No mutable reference to the same matrix may be alive elsewhere.
pub(crate) unsafe fn matrix<'a>(a: tessera_matrix) -> Result<&'a AnyMatrix> {
    check_matrix(a)?;
    // SAFETY: registered pointers are live Boxes of AnyMatrix (see `handle`); only shared
    // references are made here, and mutation is excluded by the caller's contract.
    Ok(unsafe { &*a.cast::<AnyMatrix>() })
}

/// The matrix behind `a`, mutably (analyze, update_values).
///
/// # Safety
/// No other reference to the same matrix may be alive.
pub(crate) unsafe fn matrix_mut<'a>(a: tessera_matrix) -> Result<&'a mut AnyMatrix> {
    check_matrix(a)?;
    // SAFETY: as in `matrix`; exclusivity is the caller's contract.
    Ok(unsafe { &mut *a.cast::<AnyMatrix>() })
}

/// Frees a handle; NULL is a no-op.
pub(crate) fn destroy_handle(h: tessera_handle) -> Result<()> {
    if h.is_null() {
        return Ok(());
    }
    let removed = registry(&HANDLES)
        .as_mut()
        .is_some_and(|s| s.remove(&(h as usize)));
    if !removed {
        return Err(Error::InvalidHandle(format!(
            "handle {h:p} is not a live tessera handle (already destroyed?)"
        )));
    }
    // SAFETY: the pointer was registered by new_handle (a Box<Handle>) and has just been removed
    // from the registry, so this is the only free.
    drop(unsafe { Box::from_raw(h.cast::<Handle>()) });
    Ok(())
}

/// Frees a matrix; NULL is a no-op.
pub(crate) fn destroy_matrix(a: tessera_matrix) -> Result<()> {
    if a.is_null() {
        return Ok(());
    }
    let removed = registry(&MATRICES)
        .as_mut()
        .is_some_and(|s| s.remove(&(a as usize)));
    if !removed {
        return Err(Error::InvalidHandle(format!(
            "matrix {a:p} is not a live tessera matrix (already destroyed?)"
        )));
    }
    // SAFETY: registered by new_matrix (a Box<AnyMatrix>), removed just now: the only free.
    drop(unsafe { Box::from_raw(a.cast::<AnyMatrix>()) });
    Ok(())
}

/// Checks an out-pointer.
pub(crate) fn out<T>(p: *mut T, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::InvalidPointer(format!("{name} is NULL")));
    }
    if (p as usize) % std::mem::align_of::<T>() != 0 {
        return Err(Error::InvalidPointer(format!(
            "{name} = {p:p} is not aligned to {} bytes",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// Writes an out-parameter (checked with [`out`] first).
///
/// # Safety
/// `p` must point to writable memory for a `T` (the C caller's contract).
pub(crate) unsafe fn write<T>(p: *mut T, v: T) {
    // SAFETY: non-NULL and aligned (checked by `out`); writable by the caller's contract.
    unsafe { p.write(v) }
}

/// A read-only slice from a C pointer: `&[]` for length 0 (the pointer may then be NULL), else
/// the pointer must be non-NULL and aligned.
///
/// # Safety
/// For `len > 0`, `p` must point to `len` readable `T`s that nothing writes during the call.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    check_array(p, len, name)?;
    // SAFETY: non-NULL, aligned, and the size fits isize (check_array); readable by contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A writable slice from a C pointer; see [`slice`].
///
/// # Safety
/// For `len > 0`, `p` must point to `len` writable `T`s not otherwise accessed during the call.
pub(crate) unsafe fn slice_mut<'a, T>(p: *mut T, len: usize, name: &str) -> Result<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_array(p, len, name)?;
    // SAFETY: as in `slice`, plus exclusivity by contract (x/y overlap is checked by the caller).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

fn check_array<T>(p: *const T, len: usize, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::InvalidPointer(format!(
            "{name} is NULL but must hold {len} entries"
        )));
    }
    if p.align_offset(std::mem::align_of::<T>()) != 0 {
        return Err(Error::InvalidPointer(format!(
            "{name} = {p:p} is not aligned to {} bytes",
            std::mem::align_of::<T>()
        )));
    }
    match len.checked_mul(std::mem::size_of::<T>()) {
        Some(b) if b <= isize::MAX as usize => Ok(()),
        _ => Err(Error::InvalidSize(format!(
            "{name} would hold {len} entries, more than memory can address"
        ))),
    }
}

/// Reads a scalar argument such as alpha.
///
/// # Safety
/// `p` must point to a readable `T` when non-NULL.
pub(crate) unsafe fn scalar<T: Copy>(p: *const T, name: &str) -> Result<T> {
    // SAFETY: forwarded contract; length 1.
    unsafe { slice(p, 1, name) }.map(|s| s[0])
}

/// A caller's array seen from the host: borrowed when it is host memory, or a copy when a CUDA
/// handle's pointer is device or managed memory.
pub(crate) enum HostArray<'a, T> {
    /// Host memory, read in place.
    Borrowed(&'a [T]),
    /// Copied from device or managed memory.
    Staged(Vec<T>),
}

impl<T> HostArray<'_, T> {
    /// The values.
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            HostArray::Borrowed(s) => s,
            HostArray::Staged(v) => v,
        }
    }
}

/// The device and what the driver knows of `p` when `h` is a CUDA handle and `p` is device or
/// managed memory (to be read through the driver rather than dereferenced on the host).
fn device_memory(h: &Handle, p: *const c_void) -> Result<Option<(&Arc<Device>, PtrInfo)>> {
    match h.cuda() {
        Some(dev) if !p.is_null() => {
            let info = cuda::pointer_info(dev, p as u64)?;
            Ok(
                matches!(info.kind, MemKind::Device { .. } | MemKind::Managed)
                    .then_some((dev, info)),
            )
        }
        _ => Ok(None),
    }
}

/// The device address of the array at `p` of `len` `T`s when `h` is a CUDA handle and `p` is
/// device or managed memory long enough for them (INVALID_SIZE when shorter); `None` for host
/// memory (NULL and misaligned pointers are refused as [`host_array`] does).
pub(crate) fn device_array<T>(
    h: &Handle,
    p: *const T,
    len: usize,
    name: &str,
) -> Result<Option<u64>> {
    check_array(p, len, name)?;
    let Some((_, info)) = device_memory(h, p.cast())? else {
        return Ok(None);
    };
    let bytes = len * std::mem::size_of::<T>();
    if let Some(left) = info.bytes_left.filter(|&left| left < bytes as u64) {
        return Err(Error::InvalidSize(format!(
            "{name} must hold {len} entries ({bytes} bytes) but its device allocation has {left} bytes from {p:p} on"
        )));
    }
    Ok(Some(p as u64))
}

/// True when `h` is a CUDA handle and `p` is device or managed memory.
pub(crate) fn is_device_memory(h: &Handle, p: *const c_void) -> Result<bool> {
    Ok(device_memory(h, p)?.is_some())
}

/// The array at `p` of `len` `T`s as host values: in place for host memory (see [`slice`]),
/// copied through the driver for device or managed memory of a CUDA handle (ordered on its
/// stream; ALLOC_FAILED when the host cannot hold the copy, INVALID_SIZE when the allocation
/// is shorter than `len`).
///
/// # Safety
/// As [`slice`] for host memory; device memory must hold `len` `T`s.
pub(crate) unsafe fn host_array<'a, T: Copy + Default + Send + Sync>(
    h: &Handle,
    p: *const T,
    len: usize,
    name: &str,
) -> Result<HostArray<'a, T>> {
    if len == 0 {
        return Ok(HostArray::Borrowed(&[]));
    }
    check_array(p, len, name)?;
    if let Some((dev, info)) = device_memory(h, p.cast())? {
        let bytes = len * std::mem::size_of::<T>();
        if let Some(left) = info.bytes_left.filter(|&left| left < bytes as u64) {
            return Err(Error::InvalidSize(format!(
                "{name} must hold {len} entries ({bytes} bytes) but its device allocation has {left} bytes from {p:p} on"
            )));
        }
        let mut v = try_vec_touched(len, T::default(), name)?;
        cuda::copy_to_host(dev, h.cuda_stream(), p as u64, &mut v)?;
        return Ok(HostArray::Staged(v));
    }
    // SAFETY: host memory; forwarded contract.
    Ok(HostArray::Borrowed(unsafe { slice(p, len, name) }?))
}
