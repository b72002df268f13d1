//! Step 2 of the format: the blocks laid out in the arrays the kernel reads.
#![forbid(unsafe_code)]

use super::{word_index, Bccoo, Blocked, ColArrays};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::methods::bccoo::params::{ColMode, FormatParams, WARP};
use crate::scalar::Scalar;

/// Lays `blk` out for `fp` (its shape and slices must match): tiles, bit flags, the column
/// arrays, the transposed values and the value map, padded to whole groups of `pad_threads`
/// threads (a multiple of 32: the workgroup size, or the largest one the tuner will try).
pub fn layout<T: Scalar>(
    a: &Csr<T>,
    blk: &Blocked,
    fp: &FormatParams,
    pad_threads: usize,
) -> Result<Bccoo<T>> {
    layout_with(a, blk, blk.slot.clone(), fp, pad_threads)
}

/// [`layout`], turning `slot` (a copy of `blk.slot`, or the vector itself) into the value map
/// in place.
pub(super) fn layout_with<T: Scalar>(
    a: &Csr<T>,
    blk: &Blocked,
    mut slot: Vec<u32>,
    fp: &FormatParams,
    pad_threads: usize,
) -> Result<Bccoo<T>> {
    if fp.shape != blk.shape || fp.slices != blk.slices || !fp.is_valid() {
        return Err(Error::Internal(format!(
            "BCCOO layout {fp:?} for blocks of {} with {} slices",
            blk.shape, blk.slices
        )));
    }
    if pad_threads == 0 || pad_threads % WARP != 0 {
        return Err(Error::Internal(format!(
            "BCCOO padding to {pad_threads} threads: not a multiple of {WARP}"
        )));
    }
    if fp.col == ColMode::U16 && blk.cols.div_ceil(fp.shape.bw as usize) >= 65535 {
        return Err(Error::Internal(format!(
            "BCCOO u16 column indices for {} block columns",
            blk.cols.div_ceil(fp.shape.bw as usize)
        )));
    }
    let tile = fp.tile as usize;
    let (bw, bh) = (fp.shape.bw as usize, fp.shape.bh as usize);
    let area = bw * bh;
    let blocks = blk.blocks();
    let threads = blocks.div_ceil(tile).div_ceil(pad_threads) * pad_threads;
    let padded = threads * tile;
    if padded * area > u32::MAX as usize {
        return Err(Error::NotSupported(format!(
            "BCCOO with {} blocks of {} values and tile {tile} needs {} value slots, more than 32-bit slots address",
            padded,
            area,
            padded * area
        )));
    }

    // Stored position of every logical block (the warp-wide transpose), without divisions.
    let mut posb = vec![0u32; blocks];
    for (t, chunk) in posb.chunks_mut(tile).enumerate() {
        let base = (t / WARP) * WARP * tile + t % WARP;
        for (j, p) in chunk.iter_mut().enumerate() {
            *p = (base + j * WARP) as u32;
        }
    }

    // Values and the value map.
    let mut values = vec![T::ZERO; padded * area];
    let shift = bw.trailing_zeros();
    let scatter = match area {
        1 => scatter_values::<T, 1>,
        2 => scatter_values::<T, 2>,
        3 => scatter_values::<T, 3>,
        4 => scatter_values::<T, 4>,
        6 => scatter_values::<T, 6>,
        8 => scatter_values::<T, 8>,
        12 => scatter_values::<T, 12>,
        _ => scatter_values::<T, 16>,
    };
    scatter(a.values(), &mut slot, &posb, shift, padded, &mut values);
    let value_slot = slot;

    // Bit flags: all 1, a 0 at every row stop.
    let w = fp.word_bits as usize;
    let words = fp.words_per_thread();
    let wbytes = w / 8;
    let mut bits = vec![0xffu8; threads * words * wbytes];
    for &e in &blk.ends {
        let e = e as usize;
        let (t, j) = (e / tile, e % tile);
        let wi = word_index(t, j / w, words);
        let bit = j % w;
        bits[wi * wbytes + bit / 8] &= !(1u8 << (bit % 8));
    }

    // First-result entries: row stops before each thread's tile (§2.4, Figure 6b).
    let mut res_entry = vec![0u32; threads + 1];
    {
        let mut e = 0usize;
        for (t, r) in res_entry.iter_mut().enumerate() {
            let start = t * tile;
            while e < blk.ends.len() && (blk.ends[e] as usize) < start {
                e += 1;
            }
            *r = e as u32;
        }
    }

    // Column indices.
    let colv = &blk.col;
    let col_at = |b: usize| if b < blocks { colv[b] } else { 0 };
    let mut escapes = 0usize;
    let col = match fp.col {
        ColMode::U16 => {
            let mut v = vec![0u16; padded];
            for (&c, &p) in colv.iter().zip(&posb) {
                v[p as usize] = c as u16;
            }
            ColArrays::U16(v)
        }
        ColMode::U32 => {
            let mut v = vec![0u32; padded];
            for (&c, &p) in colv.iter().zip(&posb) {
                v[p as usize] = c;
            }
            ColArrays::U32(v)
        }
        ColMode::Delta => {
            let mut full = vec![0u32; padded];
            let mut delta = vec![0i16; padded];
            for t in 0..threads {
                let mut prev = 0u32;
                let base = (t / WARP) * WARP * tile + t % WARP;
                for j in 0..tile {
                    let b = t * tile + j;
                    let c = col_at(b);
                    let p = base + j * WARP;
                    full[p] = c;
                    // §2.2: a difference beyond a signed short becomes -1 ("read the original
                    // array"); a true difference of -1 is stored as the escape too, and the
                    // first block of a tile always is one (no inter-thread dependency).
                    let d = c as i64 - prev as i64;
                    delta[p] = if j == 0 {
                        -1
                    } else if d == -1 || !(-32767..=32767).contains(&d) {
                        escapes += 1;
                        -1
                    } else {
                        d as i16
                    };
                    prev = c;
                }
            }
            ColArrays::Delta { delta, full }
        }
    };

    Ok(Bccoo {
        params: *fp,
        rows: blk.rows,
        cols: blk.cols,
        nnz: blk.nnz,
        block_rows: blk.block_rows,
        slice_width: blk.slice_width,
        blocks,
        threads,
        bits,
        col,
        values,
        res_entry,
        value_slot,
        escapes,
    })
}

/// The value scatter of [`layout`] for blocks of `AREA` values (a constant, so that the
/// division by it is a multiplication): each logical slot `b * AREA + i * bw + k` becomes
/// `(i * padded + position(b)) * bw + k`, in place, and the value goes there.
fn scatter_values<T: Scalar, const AREA: usize>(
    csr_values: &[T],
    slot: &mut [u32],
    posb: &[u32],
    shift: u32,
    padded: usize,
    values: &mut [T],
) {
    let mask = (1usize << shift) - 1;
    for (s, &v) in slot.iter_mut().zip(csr_values) {
        let ls = *s as usize;
        let (b, r) = (ls / AREA, ls % AREA);
        let (i, k) = (r >> shift, r & mask);
        let dst = ((i * padded + posb[b] as usize) << shift) + k;
        values[dst] = v;
        *s = dst as u32;
    }
}
