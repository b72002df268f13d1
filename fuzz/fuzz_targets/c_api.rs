//! Fuzz target (c): the C API on the host backend, called in a sequence the fuzz bytes choose,
//! with arbitrary sizes, enum values, NULL pointers, garbage and destroyed handles and
//! matrices, overlapping vectors and misaligned arrays. Every array that is passed non-NULL is
//! as long as the call's contract says (a shorter one would be the caller's undefined
//! behaviour, which no library can detect on the host).
//!
//! Checked after every call: the status is one tessera defines and never INTERNAL_ERROR (a
//! caught panic); a failure leaves `tessera_last_error()` non-empty and out-parameters
//! untouched; a successful product matches the plain f64 CSR product of what was passed.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};
use tessera::api::types::*;
use tessera::api::*;
use tessera::{Csr, IndexBase, Operation, Scalar, Status};
use tessera_fuzz::{assert_product, small_value, RawCsr, ALPHA_BETA};

/// A matrix the sequence created, with what the fuzzer knows of it.
struct Mat {
    a: tessera_matrix,
    /// Its CSR in f64 (the values rounded to the matrix's type), and the caller-order values.
    csr: Csr<f64>,
    f32: bool,
    analyzed: bool,
    live: bool,
}

fn check(what: &str, s: tessera_status) -> tessera_status {
    assert!(
        Status::ALL.iter().any(|&v| v as i32 == s),
        "{what}: status {s} is not a tessera status"
    );
    // SAFETY: tessera_last_error returns a NUL-terminated static or thread-local string.
    let detail = unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert_ne!(
        s, TESSERA_STATUS_INTERNAL_ERROR,
        "{what}: INTERNAL_ERROR (a panic or bug inside tessera): {detail}"
    );
    if s != TESSERA_STATUS_SUCCESS {
        assert!(!detail.is_empty(), "{what}: failed with {s} but no detail");
    }
    s
}

/// A handle to pass: a live or destroyed one, NULL, or a value tessera never made.
fn pick_handle(u: &mut Unstructured<'_>, hs: &[tessera_handle]) -> Result<tessera_handle> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => null_mut(),
        1 => (u.arbitrary::<usize>()? & !7) as tessera_handle,
        _ if !hs.is_empty() => hs[u.choose_index(hs.len())?],
        _ => null_mut(),
    })
}

/// A matrix to pass, with its index in `ms` when it is one of ours.
fn pick_matrix(u: &mut Unstructured<'_>, ms: &[Mat]) -> Result<(tessera_matrix, Option<usize>)> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => (null_mut(), None),
        1 => ((u.arbitrary::<usize>()? & !7) as tessera_matrix, None),
        _ if !ms.is_empty() => {
            let i = u.choose_index(ms.len())?;
            (ms[i].a, Some(i))
        }
        _ => (null_mut(), None),
    })
}

/// An enum value: mostly a defined one (0..=n), sometimes anything.
fn enum_value(u: &mut Unstructured<'_>, n: i32) -> Result<i32> {
    Ok(if u.int_in_range(0u8..=7)? == 0 {
        u.arbitrary::<i32>()?
    } else {
        u.int_in_range(0..=n)?
    })
}

/// Bytes holding `v`'s elements, optionally starting one byte in (misaligned).
struct Buf {
    bytes: Vec<u64>,
    off: usize,
}

impl Buf {
    fn of<T: Copy>(v: &[T], misaligned: bool) -> Buf {
        let n = std::mem::size_of_val(v) + 1;
        let mut bytes = vec![0u64; n.div_ceil(8) + 1];
        let off = misaligned as usize;
        // SAFETY: `bytes` holds at least size_of_val(v) + 1 bytes; copying bytes is always
        // valid.
        unsafe {
            std::ptr::copy_nonoverlapping(
                v.as_ptr().cast::<u8>(),
                bytes.as_mut_ptr().cast::<u8>().add(off),
                std::mem::size_of_val(v),
            )
        };
        Buf { bytes, off }
    }
    fn ptr(&self) -> *const c_void {
        // SAFETY: off is 0 or 1, inside the buffer.
        unsafe { self.bytes.as_ptr().cast::<u8>().add(self.off).cast() }
    }
}

/// An array argument: NULL, or `v` (when `v` is as long as the call will read), sometimes
/// misaligned.
fn array<T: Copy>(u: &mut Unstructured<'_>, v: &[T], needed: Option<usize>) -> Result<Option<Buf>> {
    let fits = needed.is_some_and(|n| n <= v.len());
    Ok(match u.int_in_range(0u8..=15)? {
        0 => None,
        1 if fits => Some(Buf::of(v, true)),
        _ if fits => Some(Buf::of(v, false)),
        _ => None,
    })
}

fn ptr_of(b: &Option<Buf>) -> *const c_void {
    b.as_ref().map_or(null(), Buf::ptr)
}

fn create_csr(u: &mut Unstructured<'_>, hs: &[tessera_handle], ms: &mut Vec<Mat>) -> Result<()> {
    let h = pick_handle(u, hs)?;
    let raw = RawCsr::arbitrary(u)?;
    let it = if u.int_in_range(0u8..=15)? == 0 {
        u.arbitrary::<i32>()?
    } else {
        raw.i64_indices as i32
    };
    let base = if u.int_in_range(0u8..=15)? == 0 {
        u.arbitrary::<i32>()?
    } else {
        raw.base.offset() as i32
    };
    let vt = enum_value(u, 1)?;
    let len = |n: i64| usize::try_from(n).ok();
    let rows1 = len(raw.rows).and_then(|r| r.checked_add(1));
    let nnz = len(raw.nnz);
    // Index arrays in the declared index type (an undefined one reads nothing).
    let narrow = |v: &[i64]| v.iter().map(|&x| x as i32).collect::<Vec<i32>>();
    let (rp, ci) = if it == TESSERA_INDEX_TYPE_I64 {
        (array(u, &raw.row_ptr, rows1)?, array(u, &raw.col_ind, nnz)?)
    } else {
        (
            array(u, &narrow(&raw.row_ptr), rows1)?,
            array(u, &narrow(&raw.col_ind), nnz)?,
        )
    };
    let f32 = vt == TESSERA_VALUE_TYPE_F32;
    let vals32: Vec<f32> = raw.values.iter().map(|&v| v as f32).collect();
    let vals = if f32 {
        array(u, &vals32, nnz)?
    } else {
        array(u, &raw.values, nnz)?
    };
    let out_null = u.int_in_range(0u8..=15)? == 0;
    let sentinel = 0x5eed as tessera_matrix;
    let mut a: tessera_matrix = sentinel;
    // SAFETY: every non-NULL array holds at least the entries the declared sizes make tessera
    // read (see `array`); `a` is writable.
    let s = check("tessera_create_csr", unsafe {
        tessera_create_csr(
            h,
            if out_null { null_mut() } else { &mut a },
            raw.rows,
            raw.cols,
            raw.nnz,
            ptr_of(&rp),
            ptr_of(&ci),
            ptr_of(&vals),
            it,
            base,
            vt,
        )
    });
    if s != TESSERA_STATUS_SUCCESS {
        assert_eq!(a, sentinel, "tessera_create_csr wrote A on failure");
        return Ok(());
    }
    assert!(!out_null && !a.is_null());
    // The library accepted it: so must the same validation here, with the same values and the
    // index type and base actually passed (overridden ones may differ from the raw input's).
    let raw = RawCsr {
        i64_indices: it == TESSERA_INDEX_TYPE_I64,
        base: if base == TESSERA_INDEX_BASE_ONE {
            IndexBase::One
        } else {
            IndexBase::Zero
        },
        ..raw
    };
    let csr = raw.validate().unwrap_or_else(|e| {
        panic!("tessera_create_csr accepted what Csr::from_parts refuses: {e}")
    });
    let csr = if f32 {
        csr.convert::<f32>().convert::<f64>()
    } else {
        csr
    };
    // A destroyed matrix's address may come back for this one: forget the dead entry, so that
    // every entry of `ms` with a live address is that matrix.
    ms.retain(|m| m.live || m.a != a);
    ms.push(Mat {
        a,
        csr,
        f32,
        analyzed: false,
        live: true,
    });
    Ok(())
}

/// One spmv on matrix `m` (when known) with vectors of the right lengths, checked.
fn spmv<T: Scalar>(
    u: &mut Unstructured<'_>,
    h: tessera_handle,
    a: tessera_matrix,
    m: Option<&Mat>,
) -> Result<()> {
    let op = enum_value(u, 1)?;
    let (alpha, beta) = *u.choose(&ALPHA_BETA)?;
    let (al, be) = (T::from_f64(alpha), T::from_f64(beta));
    // Vectors of a matrix with a huge declared size (valid: 2^31-1 columns, few entries) are
    // not allocated here: such a product gets NULL vectors, which tessera must refuse.
    let m = m.filter(|m| m.csr.rows().max(m.csr.cols()) <= 1 << 20);
    let (xl, yl) = match (m, op) {
        (Some(m), TESSERA_OPERATION_NON_TRANSPOSE) => (m.csr.cols(), m.csr.rows()),
        (Some(m), TESSERA_OPERATION_TRANSPOSE) => (m.csr.rows(), m.csr.cols()),
        _ => (0, 0),
    };
    let seed = u.arbitrary::<u8>()?;
    let x: Vec<T> = (0..xl)
        .map(|i| T::from_f64(small_value((i as u8).wrapping_add(seed))))
        .collect();
    let y0: Vec<T> = (0..yl)
        .map(|i| T::from_f64(small_value((i as u8).wrapping_mul(3) ^ seed)))
        .collect();
    let mut y = y0.clone();
    let null_alpha = u.int_in_range(0u8..=15)? == 0;
    let null_beta = u.int_in_range(0u8..=15)? == 0;
    let mode = u.int_in_range(0u8..=15)?;
    // Unknown matrix: NULL vectors (tessera must refuse before reading them).
    let (xp, yp): (*const c_void, *mut c_void) = match mode {
        _ if m.is_none() => (null(), null_mut()),
        0 => (null(), y.as_mut_ptr().cast()),
        1 => (x.as_ptr().cast(), null_mut()),
        // x and y the same memory: must be refused (when both have entries).
        2 if xl == yl => (y.as_ptr().cast(), y.as_mut_ptr().cast()),
        _ => (x.as_ptr().cast(), y.as_mut_ptr().cast()),
    };
    // SAFETY: x and y are NULL or hold the lengths op(A) needs; alpha/beta NULL or one T.
    let s = check("tessera_spmv", unsafe {
        tessera_spmv(
            h,
            op,
            if null_alpha {
                null()
            } else {
                (&al as *const T).cast()
            },
            a,
            xp,
            if null_beta {
                null()
            } else {
                (&be as *const T).cast()
            },
            yp,
        )
    });
    if let Some(m) = m {
        if !m.analyzed && s == TESSERA_STATUS_SUCCESS {
            panic!("tessera_spmv succeeded on a matrix never analyzed");
        }
        if s == TESSERA_STATUS_SUCCESS && mode > 2 {
            let op = if op == 0 {
                Operation::NonTranspose
            } else {
                Operation::Transpose
            };
            assert_product("tessera_spmv", &m.csr, op, alpha, &x, beta, &y0, &y);
        }
    }
    Ok(())
}

fn step(u: &mut Unstructured<'_>, hs: &mut Vec<tessera_handle>, ms: &mut Vec<Mat>) -> Result<()> {
    match u.int_in_range(0u8..=12)? {
        0 => {
            let backend = match enum_value(u, 2)? {
                // CUDA would use a GPU where there is one; this target is the host backend.
                TESSERA_BACKEND_CUDA => TESSERA_BACKEND_HOST,
                b => b,
            };
            let dev = if u.arbitrary::<bool>()? {
                0
            } else {
                u.arbitrary::<i32>()?
            };
            let out_null = u.int_in_range(0u8..=15)? == 0;
            let mut h: tessera_handle = null_mut();
            // SAFETY: h is writable.
            let s = check("tessera_create_with", unsafe {
                tessera_create_with(if out_null { null_mut() } else { &mut h }, backend, dev)
            });
            if s == TESSERA_STATUS_SUCCESS {
                hs.push(h);
            } else {
                assert!(
                    h.is_null(),
                    "tessera_create_with wrote the handle on failure"
                );
            }
        }
        1 => {
            let mut h: tessera_handle = null_mut();
            // SAFETY: h is writable.
            if check("tessera_create", unsafe { tessera_create(&mut h) }) == 0 {
                hs.push(h);
            }
        }
        2 => {
            let h = pick_handle(u, hs)?;
            // SAFETY: any value: tessera checks it against its registry before use.
            check("tessera_destroy", unsafe { tessera_destroy(h) });
        }
        3 => {
            let h = pick_handle(u, hs)?;
            let stream = (u.arbitrary::<usize>()? & 0xffff) as *mut c_void;
            // SAFETY: the host backend only records the stream.
            check("tessera_set_stream", unsafe {
                tessera_set_stream(h, stream)
            });
        }
        4 | 5 => create_csr(u, hs, ms)?,
        6 | 7 => {
            let h = pick_handle(u, hs)?;
            let (a, i) = pick_matrix(u, ms)?;
            let alg = enum_value(u, 6)?;
            let tune = enum_value(u, 4)?;
            // SAFETY: handle and matrix values are checked against the registries.
            let s = check("tessera_analyze", unsafe {
                tessera_analyze(h, a, alg, tune)
            });
            if let (Some(i), TESSERA_STATUS_SUCCESS) = (i, s) {
                ms[i].analyzed = true;
            }
        }
        8 | 9 => {
            let h = pick_handle(u, hs)?;
            let (a, i) = pick_matrix(u, ms)?;
            let m = i.map(|i| &ms[i]).filter(|m| m.live);
            if m.is_some_and(|m| m.f32) {
                spmv::<f32>(u, h, a, m)?
            } else {
                spmv::<f64>(u, h, a, m)?
            }
        }
        10 => {
            let h = pick_handle(u, hs)?;
            let (a, i) = pick_matrix(u, ms)?;
            let m = i.filter(|&i| ms[i].live);
            let n = m.map_or(0, |i| ms[i].csr.nnz());
            let seed = u.arbitrary::<u8>()?;
            let fresh: Vec<f64> = (0..n)
                .map(|k| small_value((k as u8).wrapping_mul(7).wrapping_add(seed)))
                .collect();
            let fresh32: Vec<f32> = fresh.iter().map(|&v| v as f32).collect();
            let is32 = m.is_some_and(|i| ms[i].f32);
            let buf = if is32 {
                array(u, &fresh32, m.map(|_| n))?
            } else {
                array(u, &fresh, m.map(|_| n))?
            };
            // SAFETY: values NULL or holding nnz values of A's type.
            let s = check("tessera_update_values", unsafe {
                tessera_update_values(h, a, ptr_of(&buf))
            });
            if let (Some(i), TESSERA_STATUS_SUCCESS) = (m, s) {
                // Values come in the caller's original order; ours were sorted at creation
                // only when the caller's were, and `csr` was validated from the same arrays.
                ms[i].csr.set_values_from_input(&fresh).unwrap();
            }
        }
        11 => {
            let (a, i) = pick_matrix(u, ms)?;
            let out_null = u.int_in_range(0u8..=15)? == 0;
            // SAFETY: an all-zero tessera_matrix_info is a valid value of the struct.
            let mut info: tessera_matrix_info = unsafe { std::mem::zeroed() };
            info.rows = -7;
            // SAFETY: info is writable.
            let s = check("tessera_matrix_get_info", unsafe {
                tessera_matrix_get_info(a, if out_null { null_mut() } else { &mut info })
            });
            if s == TESSERA_STATUS_SUCCESS {
                let m = &ms[i.expect("get_info succeeded on a matrix tessera never made")];
                assert_eq!(info.rows as usize, m.csr.rows());
                assert_eq!(info.nnz as usize, m.csr.nnz());
                assert!(info.params.contains(&0), "params not NUL-terminated");
            } else {
                assert_eq!(info.rows, -7, "get_info wrote info on failure");
            }
        }
        _ => {
            match u.int_in_range(0u8..=2)? {
                0 => {
                    let (a, i) = pick_matrix(u, ms)?;
                    // SAFETY: checked against the registry.
                    let s = check("tessera_destroy_matrix", unsafe {
                        tessera_destroy_matrix(a)
                    });
                    if let (Some(i), TESSERA_STATUS_SUCCESS) = (i, s) {
                        ms[i].live = false;
                    }
                }
                1 => {
                    let s = u.arbitrary::<i32>()?;
                    for p in [tessera_status_name(s), tessera_status_string(s)] {
                        assert!(!p.is_null());
                        // SAFETY: static NUL-terminated strings.
                        assert!(!unsafe { CStr::from_ptr(p) }.to_bytes().is_empty());
                    }
                }
                _ => {
                    let (mut a, mut b, mut c) = (-1, -1, -1);
                    let mask = u.arbitrary::<u8>()?;
                    let p = |bit: u8, r: &mut i32| -> *mut i32 {
                        if mask & bit != 0 {
                            null_mut()
                        } else {
                            r
                        }
                    };
                    // SAFETY: each pointer NULL or writable.
                    let s = check("tessera_get_version", unsafe {
                        tessera_get_version(p(1, &mut a), p(2, &mut b), p(4, &mut c))
                    });
                    assert_eq!(s == 0, mask & 7 == 0);
                }
            }
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    // SAFETY: set before any thread of this process reads the environment.
    unsafe { std::env::set_var("TESSERA_BACKEND", "host") };
    let mut u = Unstructured::new(data);
    let mut hs: Vec<tessera_handle> = Vec::new();
    let mut ms: Vec<Mat> = Vec::new();
    for _ in 0..64 {
        if u.is_empty() || step(&mut u, &mut hs, &mut ms).is_err() {
            break;
        }
    }
    // Leave nothing behind (the fuzzer's leak check runs between inputs).
    for m in ms.iter().filter(|m| m.live) {
        // SAFETY: a live matrix of ours.
        check("tessera_destroy_matrix", unsafe {
            tessera_destroy_matrix(m.a)
        });
    }
    for h in hs {
        // SAFETY: ours; destroying an already destroyed one is INVALID_HANDLE.
        let _ = unsafe { tessera_destroy(h) };
    }
});
