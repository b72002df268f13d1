//! CSR_VECTOR on the GPU. The format is the CSR itself (uploaded by
//! `backend::cuda::csr::GpuCsr`); this file holds the compiled kernels (one module per `coop`),
//! the parameters in use, analyze-time tuning (QUICK/EXHAUSTIVE: time candidates on the real
//! matrix) and the run-time tuning of §6 (ONLINE), and launches `csr_vector_spmv_<T>`.
//!
//! Sliced mode (`sliced.rs`): where its rule holds, `prepare` builds the slice bounds on the
//! device (`csr_vector_split`, on the analyze stream) and every product is two launches,
//! `csr_vector_sliced_<T>` (one block per slice and row range, x staged in shared memory,
//! partial sums to a workspace slot) and `csr_vector_combine_<T>`. The workspace is a ring of
//! [`SLICED_RING`] slots ([`SlotRing`]): concurrent products of one matrix never share one.
//! Its shape is the rule's: tuning (any kind) is skipped for a sliced matrix.
//!
//! Pieces mode (`pieces.rs`): where its rule holds (long rows) and the sliced mode's does not,
//! `prepare` builds the piece table on the device (`csr_vector_piece_count`, the scan,
//! `csr_vector_piece_table`; no read-back) and every product is one launch of
//! `csr_vector_pieces_<T>`, a warp per piece, with a slot of a ring of [`PIECES_RING`] for the
//! pieces' partial sums and the rows' counters. Not tuned either.
//!
//! Wide mode (`wide.rs`): where its rule holds and neither of those does, every product is
//! one launch of `csr_vector_wide_<T>`, a block per row with 128-bit loads; nothing is built at
//! analyze. Arrays whose bases are not 16-byte aligned (a caller's, read in place) take the
//! pieces mode instead. Not tuned either.
//!
//! ONLINE (§6): while the tuner is searching, a call first asks (without waiting) whether the
//! previous timed call has finished; if so its time goes to the tuner. If no timed call is in
//! flight, this call runs the tuner's next candidate between two CUDA events on the stream;
//! otherwise it runs the best setting so far, untimed. Nothing waits on the host, nothing is
//! allocated, and while the stream is being captured into a graph no events are recorded (the
//! best setting so far is captured).

use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::scan::{exclusive_scan, workspace_bytes};
use crate::backend::cuda::{
    is_capturing, launch, launch_shared, Device, DeviceBuffer, Event, Function, KernelArgs, Module,
    Stream,
};
use crate::csr::RowStats;
use crate::error::{Error, Result};
use crate::methods::csr_vector::params::{self, OnlineTuner, Params};
use crate::methods::csr_vector::pieces;
use crate::methods::csr_vector::sliced::{self, Slicing};
use crate::methods::csr_vector::wide;
use crate::methods::gpu::{pick_fastest, SlotRing, Tuner};
use crate::methods::Request;
use crate::scalar::Scalar;
use crate::types::{Tuning, ValueType};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

struct Online {
    tuner: OnlineTuner,
    start: Event,
    end: Event,
    /// True while a timed call is in flight.
    pending: bool,
}

struct State {
    params: Params,
    online: Option<Online>,
}

/// CSR_VECTOR ready to run on a device.
pub struct CsrVectorGpu<T> {
    kernels: Vec<(u32, Function)>,
    state: Mutex<State>,
    tuned: String,
    /// The sliced mode, where its rule holds: then every product runs it.
    sliced: Option<Sliced>,
    /// The pieces mode, where its rule holds (and the sliced mode's does not).
    pieces: Option<Pieces>,
    /// The wide mode's kernel, where its rule holds (and neither of the others does).
    wide: Option<Function>,
    _t: PhantomData<T>,
}

/// Workspace slots of the sliced mode: its products that may be in flight at once.
const SLICED_RING: usize = 4;
/// Threads per block of `csr_vector_split` and `csr_vector_combine_<T>` (the latter's
/// CSR_COMBINE_ROWS x CSR_COMBINE_WAYS).
const AUX_BLOCK: u32 = 256;
/// Rows one block of `csr_vector_combine_<T>` takes (its CSR_COMBINE_ROWS).
const COMBINE_ROWS: usize = 32;

/// The sliced mode on the device: its kernels, the slice bounds and the ring of partial-sum
/// slots (one allocation).
struct Sliced {
    shape: Slicing,
    /// Dynamic shared memory per block of `run`: the slice's x.
    shared: u32,
    run: Function,
    combine: Function,
    /// `(slices + 1) x rows` entry positions: where each row crosses each slice.
    split: DeviceBuffer,
    /// `SLICED_RING` slots of `slices x rows` partial sums.
    part: DeviceBuffer,
    ring: SlotRing,
}

impl Sliced {
    /// Loads the kernels, allocates the bounds and the workspace and queues the bounds' build
    /// on `stream` (asynchronous: the products that follow on any stream are
    /// ordered after analyze by the matrix, as HOLA's row starts are).
    fn prepare<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        shape: Slicing,
    ) -> Result<Self> {
        let val = std::mem::size_of::<T>();
        let rows = csr.rows();
        let m = dev.module(&KernelSpec::new(&params::KERNELS, &[shape.coop as i64])?)?;
        let s = suffix::<T>();
        let shared = u32::try_from(shape.shared_bytes(val))
            .map_err(|_| Error::Internal("a slice larger than 4 GiB".into()))?;
        let run = m
            .function(&format!("csr_vector_sliced_{s}"))?
            .with_shared(dev, shared)?;
        let combine = m.function(&format!("csr_vector_combine_{s}"))?;
        let split_fn = m.function("csr_vector_split")?;
        let [split, part] = DeviceBuffer::alloc_parts(
            dev,
            [
                (shape.slices + 1) * rows * 4,
                SLICED_RING * shape.slices * rows * val,
            ],
            "CSR_VECTOR slice bounds and partial sums",
        )?;
        let (rp, ci, _) = csr.arrays();
        let args = KernelArgs::new()
            .push(rows as i32)
            .push(shape.slices as i32)
            .push(shape.width as i32)
            .push(rp)
            .push(ci)
            .push(split.addr());
        // SAFETY: csr_vector_split(int rows, int slices, int width, const int* row_ptr,
        // const int* col_ind, int* split): the CSR's int32 arrays (rows + 1 and nnz entries,
        // sound: tessera's own or checked), split (slices + 1) x rows ints (allocated above);
        // one thread per entry of split.
        unsafe {
            launch(
                dev,
                &split_fn,
                ((shape.slices + 1) * rows).div_ceil(AUX_BLOCK as usize),
                AUX_BLOCK,
                stream,
                args,
            )?;
        }
        Ok(Sliced {
            shape,
            shared,
            run,
            combine,
            split,
            part,
            ring: SlotRing::new(dev, SLICED_RING)?,
        })
    }

    fn bytes(&self) -> usize {
        self.split.bytes() + self.part.bytes()
    }

    /// y = alpha*A*x + beta*y: the sliced kernel into a workspace slot, then the combine.
    #[allow(clippy::too_many_arguments)]
    fn spmv<T: Scalar>(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        let dev = csr.device();
        let (rows, val) = (csr.rows(), std::mem::size_of::<T>());
        let one = self.shape.slices * rows * val;
        let (_, ci, va) = csr.arrays();
        self.ring.run(dev, stream, 0, |slot| {
            let part = self.part.addr() + (slot * one) as u64;
            let args = KernelArgs::new()
                .push(rows as i32)
                .push(csr.cols() as i32)
                .push(self.shape.width as i32)
                .push(self.shape.chunks as i32)
                .push(self.split.addr())
                .push(ci)
                .push(va)
                .push(x)
                .push(part);
            // SAFETY: csr_vector_sliced_<T>(int rows, int cols, int width, int chunks,
            // const int* split, const int* col_ind, const T* values, const T* x, T* part): a
            // block per work item (slices x chunks of them), split (slices + 1) x rows bounds
            // built at prepare from these arrays, x cols values (checked by the caller), part
            // one slot of slices x rows values; the dynamic shared memory is width values,
            // which the function was allowed at prepare.
            unsafe {
                launch_shared(
                    dev,
                    &self.run,
                    self.shape.items(),
                    self.shape.block,
                    self.shared,
                    stream,
                    args,
                )?;
            }
            let args = KernelArgs::new()
                .push(rows as i32)
                .push(self.shape.slices as i32)
                .push(part)
                .push(y)
                .push(alpha)
                .push(beta);
            // SAFETY: csr_vector_combine_<T>(int rows, int slices, const T* part, T* y,
            // T alpha, T beta): part the slot written above (same stream), y rows values
            // (checked by the caller); a block per COMBINE_ROWS rows.
            unsafe {
                launch(
                    dev,
                    &self.combine,
                    rows.div_ceil(COMBINE_ROWS),
                    AUX_BLOCK,
                    stream,
                    args,
                )
            }
        })
    }
}

/// Workspace slots of the pieces mode: its products that may be in flight at once.
const PIECES_RING: usize = 4;
/// Threads per block of `csr_vector_pieces_<T>` (eight warps: eight pieces).
const PIECES_BLOCK: u32 = 256;

/// The pieces mode on the device (`pieces.rs`): its kernel, the piece table built at analyze and
/// the ring of workspace slots (one allocation).
struct Pieces {
    run: Function,
    /// Most entries of a piece.
    piece: usize,
    /// The bound on the pieces ([`pieces::bound`]): the grid's warps and a slot's values.
    bound: usize,
    /// `rows + 1` u32: each row's first piece (scanned counts), the pieces in all at `rows`.
    row_item: DeviceBuffer,
    /// `bound` u32: each piece's row (`rows` for the padding past the real count).
    item_row: DeviceBuffer,
    /// `bound + 1` u32: each piece's first entry (the non-zeros' count past the last).
    item_lo: DeviceBuffer,
    /// `PIECES_RING` slots of `bound` partial sums.
    part: DeviceBuffer,
    /// `PIECES_RING` slots of `rows` u32 counters (zero between products), then the scan's
    /// total and workspace.
    cnt: DeviceBuffer,
    ring: SlotRing,
}

impl Pieces {
    /// Loads the kernels, allocates the table and the workspace and queues the table's build on
    /// `stream` (asynchronous, as the sliced mode's bounds: the products that follow on any
    /// stream are ordered after analyze by the matrix).
    /// `(piece, bound)`: [`pieces::layout`]'s.
    fn prepare<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        (piece, bound): (usize, usize),
    ) -> Result<Self> {
        let val = std::mem::size_of::<T>();
        let rows = csr.rows();
        let m = modes_module(dev)?;
        let run = m.function(&format!("csr_vector_pieces_{}", suffix::<T>()))?;
        let count_fn = m.function("csr_vector_piece_count")?;
        let table_fn = m.function("csr_vector_piece_table")?;
        let counters = PIECES_RING * rows * 4;
        let [row_item, item_row, item_lo, part, cnt] = DeviceBuffer::alloc_parts(
            dev,
            [
                (rows + 1) * 4,
                bound * 4,
                (bound + 1) * 4,
                PIECES_RING * bound * val,
                counters.next_multiple_of(8) + 8 + workspace_bytes(rows, 1),
            ],
            "CSR_VECTOR piece table, partial sums and counters",
        )?;
        // The counters, the scan's total and its workspace: zero, once.
        cnt.zero(stream)?;
        let total = cnt.addr() + counters.next_multiple_of(8) as u64;
        let (rp, _, _) = csr.arrays();
        let threads = AUX_BLOCK as usize;
        let args = KernelArgs::new()
            .push(rows as i32)
            .push(rp)
            .push(piece as i32)
            .push(row_item.addr());
        // SAFETY: csr_vector_piece_count(int rows, const int* row_ptr, int piece, unsigned*
        // row_item): the CSR's int32 row_ptr (rows + 1, sound: tessera's own or checked),
        // row_item rows + 1 u32 (allocated above); a thread per row.
        unsafe {
            launch(
                dev,
                &count_fn,
                rows.div_ceil(threads),
                AUX_BLOCK,
                stream,
                args,
            )?
        };
        exclusive_scan(dev, stream, (row_item.addr(), rows, 1), total, total + 8)?;
        let args = KernelArgs::new()
            .push(rows as i32)
            .push(rp)
            .push(row_item.addr())
            .push(bound as i64)
            .push(item_row.addr())
            .push(item_lo.addr());
        // SAFETY: csr_vector_piece_table(int rows, const int* row_ptr, const unsigned* row_item,
        // long long bound, unsigned* item_row, unsigned* item_lo): the CSR's sound int32
        // row_ptr, row_item the scanned counts above (same stream), whose total is at most
        // `bound` ([`pieces::bound`], >= rows); item_row holds bound and item_lo bound + 1 u32;
        // a thread per index up to bound.
        unsafe {
            launch(
                dev,
                &table_fn,
                (bound + 1).div_ceil(threads),
                AUX_BLOCK,
                stream,
                args,
            )?
        };
        Ok(Pieces {
            run,
            piece,
            bound,
            row_item,
            item_row,
            item_lo,
            part,
            cnt,
            ring: SlotRing::new(dev, PIECES_RING)?,
        })
    }

    fn bytes(&self) -> usize {
        self.row_item.bytes()
            + self.item_row.bytes()
            + self.item_lo.bytes()
            + self.part.bytes()
            + self.cnt.bytes()
    }

    /// y = alpha*A*x + beta*y: one launch, a warp per piece, with a workspace slot.
    #[allow(clippy::too_many_arguments)]
    fn spmv<T: Scalar>(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        let dev = csr.device();
        let (rows, val) = (csr.rows(), std::mem::size_of::<T>());
        let (_, ci, va) = csr.arrays();
        self.ring.run(dev, stream, 0, |slot| {
            let part = self.part.addr() + (slot * self.bound * val) as u64;
            let cnt = self.cnt.addr() + (slot * rows * 4) as u64;
            let args = KernelArgs::new()
                .push(rows as i32)
                .push(self.bound as i64)
                .push(ci)
                .push(va)
                .push(x)
                .push(y)
                .push(alpha)
                .push(beta)
                .push(self.row_item.addr())
                .push(self.item_row.addr())
                .push(self.item_lo.addr())
                .push(part)
                .push(cnt);
            // SAFETY: csr_vector_pieces_<T>(int rows, long long bound, const int* col_ind,
            // const T* values, const T* x, T* y, T alpha, T beta, const unsigned* row_item,
            // const unsigned* item_row, const unsigned* item_lo, T* part, unsigned* cnt): the
            // CSR's sound int32 arrays, x cols and y rows values (checked by the caller), the
            // piece table built at prepare from this row_ptr (`bound` pieces, padding
            // included: the grid's warps, each reading entries within 0..nnz), part and cnt one
            // slot of `bound` values and `rows` zero counters (the kernel leaves them zero).
            unsafe {
                launch(
                    dev,
                    &self.run,
                    self.bound.div_ceil(PIECES_BLOCK as usize / 32),
                    PIECES_BLOCK,
                    stream,
                    args,
                )
            }
        })
    }
}

/// The module of the pieces and wide modes' kernels: csr_vector.cu built with COOP 32 (they do
/// not depend on COOP, and only that module holds them).
fn modes_module(dev: &Arc<Device>) -> Result<Arc<Module>> {
    dev.module(&KernelSpec::new(&params::KERNELS, &[32])?)
}

/// y = alpha*A*x + beta*y in the wide mode: one launch of `csr_vector_wide_<T>`, a block per
/// row.
#[allow(clippy::too_many_arguments)]
fn run_wide<T: Scalar>(
    f: &Function,
    csr: &GpuCsr<T>,
    stream: Stream,
    alpha: T,
    x: u64,
    beta: T,
    y: u64,
) -> Result<()> {
    let (rp, ci, va) = csr.arrays();
    let args = KernelArgs::new()
        .push(rp)
        .push(ci)
        .push(va)
        .push(x)
        .push(y)
        .push(alpha)
        .push(beta);
    // SAFETY: csr_vector_wide_<T>(const int* row_ptr, const int* col_ind, const T* values,
    // const T* x, T* y, T alpha, T beta): the CSR's sound int32 arrays (tessera's own or
    // checked), col_ind and values 16-byte aligned (checked at prepare, `wide::aligned`), x
    // cols and y rows values (checked by the caller); a block of wide::THREADS threads per
    // row, `rows` blocks (at most i32::MAX: `wide::suits`).
    unsafe { launch(csr.device(), f, csr.rows(), wide::THREADS, stream, args) }
}

impl<T: Scalar> std::fmt::Debug for CsrVectorGpu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CsrVectorGpu({})", self.describe())
    }
}

/// The kernels for `coops`: `csr_vector_spmv_<T>`, or `csr_vector_spmv_i64_<T>` for a CSR of
/// int64 indices (a caller's arrays read in place).
fn load<T: Scalar>(dev: &Device, coops: &[u32], index64: bool) -> Result<Vec<(u32, Function)>> {
    let name = format!(
        "csr_vector_spmv_{}{}",
        if index64 { "i64_" } else { "" },
        suffix::<T>()
    );
    let mut out: Vec<(u32, Function)> = Vec::new();
    for &c in coops {
        if out.iter().any(|(k, _)| *k == c) {
            continue;
        }
        let m = dev.module(&KernelSpec::new(&params::KERNELS, &[c as i64])?)?;
        out.push((c, m.function(&name)?));
    }
    Ok(out)
}

/// One launch of `csr_vector_spmv_<T>` with `p`.
#[allow(clippy::too_many_arguments)]
fn run<T: Scalar>(
    kernels: &[(u32, Function)],
    csr: &GpuCsr<T>,
    p: Params,
    stream: Stream,
    alpha: T,
    x: u64,
    beta: T,
    y: u64,
) -> Result<()> {
    let f = kernels
        .iter()
        .find(|(c, _)| *c == p.coop)
        .map(|(_, f)| f)
        .ok_or_else(|| Error::Internal(format!("no csr_vector module for coop {}", p.coop)))?;
    let (rp, ci, va) = csr.arrays();
    let args = KernelArgs::new()
        .push(csr.rows() as i32)
        .push(rp)
        .push(ci)
        .push(va)
        .push(x)
        .push(y)
        .push(alpha)
        .push(beta)
        .push(p.repeat as i32);
    // SAFETY: csr_vector_spmv_[i64_]<T>(int rows, const I* row_ptr, const I* col_ind,
    // const T* values, const T* x, T* y, T alpha, T beta, int repeat), I int or long long as
    // the kernels were loaded for this CSR: its arrays are tessera's own, or the caller's
    // (validated at create, kept alive by the caller); x holds cols and y rows values (checked
    // by the caller).
    unsafe {
        launch(
            csr.device(),
            f,
            p.grid_size(csr.rows()),
            p.block_size,
            stream,
            args,
        )
    }
}

impl<T: Scalar> CsrVectorGpu<T> {
    /// Chooses the parameters (fixed rule, or by timing with `tuning`) and loads the kernels.
    pub fn prepare(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let (stats, tuning) = (req.stats, req.tuning);
        let fixed = params::fixed_rule(stats, dev.sm_count());
        let rule = format!(
            "Reguly-Giles fixed rule (5.4) for {} SMs: >= {} blocks",
            dev.sm_count(),
            params::min_blocks(dev.sm_count())
        );
        let shape = (!csr.index64() && csr.rows() > 0)
            .then(|| {
                let limits = (
                    dev.max_shared_per_block(),
                    dev.shared_per_sm(),
                    dev.sm_count(),
                );
                sliced::rule(stats, std::mem::size_of::<T>(), limits)
            })
            .flatten();
        let own_arrays = shape.is_none() && !csr.index64() && csr.rows() > 0;
        // The wide mode where its rule holds and the arrays are aligned for its loads; arrays
        // that are not take the pieces mode, the next best for long rows.
        let (_, ci, va) = csr.arrays();
        let wide_rule = own_arrays && wide::suits(stats, dev.sm_count());
        let by_wide = wide_rule && wide::aligned(ci, va);
        // A piece table past int32 (rows near 2^31) keeps the row groups.
        let layout = (own_arrays && !by_wide && (pieces::suits(stats) || wide_rule))
            .then(|| pieces::layout(csr.rows(), csr.nnz(), std::mem::size_of::<T>()))
            .flatten();
        let by_pieces = layout.is_some();
        let (params, kernels, online, tuned) = match tuning {
            // The sliced, pieces and wide modes run every product: the plain kernel is neither
            // loaded nor tuned.
            _ if shape.is_some() || by_pieces || by_wide => (fixed, Vec::new(), None, rule),
            Tuning::None => (
                fixed,
                load::<T>(dev, &[fixed.coop], csr.index64())?,
                None,
                rule,
            ),
            Tuning::Online => {
                let coops: Vec<u32> = params::COOP_VALUES.iter().map(|&c| c as u32).collect();
                let tuner = OnlineTuner::new(fixed, stats.rows, T::VALUE_TYPE == ValueType::F64);
                let online = Online {
                    tuner,
                    start: Event::new(dev)?,
                    end: Event::new(dev)?,
                    pending: false,
                };
                (
                    fixed,
                    load::<T>(dev, &coops, csr.index64())?,
                    Some(online),
                    rule,
                )
            }
            Tuning::Quick | Tuning::Exhaustive => {
                let cands = params::candidates(stats, dev.sm_count(), tuning == Tuning::Exhaustive);
                let coops: Vec<u32> = cands.iter().map(|p| p.coop).collect();
                let kernels = load::<T>(dev, &coops, csr.index64())?;
                let (best, text) = Self::tune(dev, stream, csr, stats, &kernels, &cands)?;
                (best, kernels, None, format!("{rule}; {text}"))
            }
        };
        let sliced = match shape {
            Some(shape) => Some(Sliced::prepare(dev, stream, csr, shape)?),
            None => None,
        };
        let pieces = match layout {
            Some(l) => Some(Pieces::prepare(dev, stream, csr, l)?),
            None => None,
        };
        let wide = if by_wide {
            Some(modes_module(dev)?.function(&format!("csr_vector_wide_{}", suffix::<T>()))?)
        } else {
            None
        };
        Ok(CsrVectorGpu {
            kernels,
            state: Mutex::new(State { params, online }),
            tuned,
            sliced,
            pieces,
            wide,
            _t: PhantomData,
        })
    }

    /// QUICK/EXHAUSTIVE: times every candidate on the matrix ([`pick_fastest`]: the fixed rule,
    /// candidate 0, is kept unless another is at least
    /// [`MIN_GAIN`](crate::methods::gpu::MIN_GAIN) faster).
    fn tune(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        stats: &RowStats,
        kernels: &[(u32, Function)],
        cands: &[Params],
    ) -> Result<(Params, String)> {
        if stats.rows == 0 || stats.nnz == 0 {
            return Ok((cands[0], "nothing to time on an empty matrix".into()));
        }
        let mut tuner = Tuner::new::<T>(dev, stream, stats.rows, stats.cols, "csr_vector")?;
        let picked = pick_fastest(
            &mut tuner,
            None,
            cands.iter().copied(),
            |_| Ok(Some(())),
            |_, &p, x, y| run(kernels, csr, p, stream, T::ONE, x, T::ZERO, y),
        )?
        .ok_or_else(|| Error::Internal("CSR_VECTOR tuning had no candidate".into()))?;
        Ok((
            picked.cand,
            format!(
                "tuned: {} candidates timed on the device, best {:.4} ms vs fixed rule ({}) {:.4} ms",
                cands.len(),
                picked.ms,
                cands[0],
                picked.first_ms
            ),
        ))
    }

    /// y = alpha*A*x + beta*y on `stream` (asynchronous, allocation-free).
    #[allow(clippy::too_many_arguments)]
    pub fn spmv(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        if let Some(sl) = &self.sliced {
            return sl.spmv(csr, stream, alpha, x, beta, y);
        }
        if let Some(pc) = &self.pieces {
            return pc.spmv(csr, stream, alpha, x, beta, y);
        }
        if let Some(f) = &self.wide {
            return run_wide(f, csr, stream, alpha, x, beta, y);
        }
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let params = st.params;
        let Some(on) = st.online.as_mut() else {
            drop(st);
            return run(&self.kernels, csr, params, stream, alpha, x, beta, y);
        };
        if on.tuner.is_done() || is_capturing(csr.device(), stream)? {
            return run(
                &self.kernels,
                csr,
                on.tuner.best(),
                stream,
                alpha,
                x,
                beta,
                y,
            );
        }
        if on.pending && on.end.is_done()? {
            on.tuner.record(on.end.elapsed_ms(&on.start)?);
            on.pending = false;
        }
        match on.tuner.trial() {
            Some(trial) if !on.pending => {
                on.start.record(stream)?;
                run(&self.kernels, csr, trial, stream, alpha, x, beta, y)?;
                on.end.record(stream)?;
                on.pending = true;
                Ok(())
            }
            _ => {
                let best = on.tuner.best();
                if on.tuner.is_done() {
                    st.params = best;
                }
                run(&self.kernels, csr, best, stream, alpha, x, beta, y)
            }
        }
    }

    /// The parameters in use, how they were chosen, and the ONLINE search's state.
    pub fn describe(&self) -> String {
        if let Some(sl) = &self.sliced {
            return format!(
                "{} ({} KiB of x per block; rule: long rows over many columns, >= {} entries per row and slice)",
                sl.shape,
                sl.shared / 1024,
                sliced::MIN_PER_SLICE
            );
        }
        if let Some(pc) = &self.pieces {
            return format!(
                "pieces: rows cut into pieces of at most {} entries (at most {} pieces), a warp each, {} values in flight per lane (rule: rows of {}-{} entries on average)",
                pc.piece,
                pc.bound,
                32 / std::mem::size_of::<T>(),
                pieces::MIN_MEAN + 1.0,
                pieces::MAX_MEAN
            );
        }
        if self.wide.is_some() {
            return format!(
                "wide: a block of {} threads per row, 16-byte loads of columns and values (rule: rows of more than {} entries on average, the longest at most {}x the mean, at least {} rows per SM, at most {} columns)",
                wide::THREADS,
                wide::MIN_MEAN,
                wide::MAX_OVER_MEAN,
                wide::MIN_ROWS_PER_SM,
                wide::MAX_COLS
            );
        }
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &st.online {
            None => format!("{} ({})", st.params, self.tuned),
            Some(on) if on.tuner.is_done() => format!(
                "{} (online tuning settled after {} timed calls: {:.4} ms vs fixed rule {} {:.4} ms; {})",
                on.tuner.best(),
                on.tuner.timed_calls(),
                on.tuner.best_ms(),
                on.tuner.fixed(),
                on.tuner.fixed_ms(),
                self.tuned
            ),
            Some(on) => format!(
                "{} (online tuning in progress: {} calls timed, phase {:?}; started from {}; {})",
                on.tuner.best(),
                on.tuner.timed_calls(),
                on.tuner.phase(),
                on.tuner.fixed(),
                self.tuned
            ),
        }
    }

    /// True when ONLINE tuning was asked for and has settled (false while searching; true
    /// without ONLINE).
    pub fn settled(&self) -> bool {
        if self.sliced.is_some() || self.pieces.is_some() || self.wide.is_some() {
            return true;
        }
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.online.as_ref().is_none_or(|o| o.tuner.is_done())
    }
}

impl<T: Scalar> crate::methods::GpuMethod<T> for CsrVectorGpu<T> {
    fn spmv(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        CsrVectorGpu::spmv(self, csr, stream, alpha, x, beta, y)
    }

    // The format is the CSR itself; the sliced and pieces modes add their tables and
    // workspaces.
    fn device_bytes(&self) -> usize {
        self.sliced.as_ref().map_or(0, Sliced::bytes)
            + self.pieces.as_ref().map_or(0, Pieces::bytes)
    }

    fn describe(&self) -> String {
        CsrVectorGpu::describe(self)
    }

    fn settled(&self) -> bool {
        CsrVectorGpu::settled(self)
    }

    // A fixed warp-shuffle tree per row, no atomics on values (the sliced mode adds each row's
    // slices in a fixed order too, and the pieces mode a row's pieces).
    fn deterministic(&self) -> bool {
        true
    }
}
