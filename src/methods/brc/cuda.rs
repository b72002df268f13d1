//! BRC on the GPU: the host builds the format (format.rs), this file uploads it, chooses the
//! parameters (fixed rule, or QUICK/EXHAUSTIVE: time candidates on the real matrix at analyze,
//! the paper's bounded search of §5) and launches `kernels/brc.cu`. With the fixed rule on a
//! matrix kept on the device it builds the format there instead: the pure ELL form of even rows
//! (`brc_ell_build`), or any other shape from format.rs's plan of the row offsets
//! (`brc_ell_fill`, `brc_fill`; `TESSERA_BRC_DEVICE_FILL=0` turns that off).
//!
//! One product is two launches at most, all on the caller's stream, no allocation, no sync:
//! - pure BRC, atomic: `brc_scale_rows` over the split and empty rows (skipped when there are
//!   none), then `brc_spmv`;
//! - pure BRC, deterministic: `brc_spmv` (split rows' partials to a buffer allocated here),
//!   then `brc_reduce` over the split and empty rows;
//! - hybrid: `brc_ell` (every row), then `brc_spmv` (atomic adds, or partials + `brc_reduce`).
//!
//! Why a row list and not `GpuCsr::scale` over all of y before the atomics: the list moves
//! 4 (index) + 16 (y read and write; 8 when beta = 0) bytes per split or empty row, while
//! scaling all of y moves 16 per row and then forces every owned row to read y back as well
//! (y += alpha*sum instead of y = alpha*sum + beta*y: 8-16 more per owned row). The list is
//! never worse unless nearly every row is split (L > 0.89 rows), and then the difference is
//! 4 bytes per row against the >= 12*64 bytes of matrix data such a row carries.

use super::format::{self, Brc, Variant};
use super::host::variant_for;
use super::params::{self, Params};
use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::{
    launch, launch_overlapped, launch_shared, Device, DeviceBuffer, Function, KernelArgs, Stream,
};
use crate::error::{Error, Result};
use crate::methods::gpu::{pick_fastest, SlotRing, Tuner};
use crate::methods::{GpuMethod, HostBuilt, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

#[path = "fill.rs"]
mod fill;

/// Threads per CTA of the row-list kernels and the ELL kernel.
const ROW_BLOCK: u32 = 256;

/// The entry points: the product's four, the device builds' three and the device plan's four.
struct Kernels {
    spmv: Function,
    scale_rows: Function,
    ell: Function,
    reduce: Function,
    ell_build: Function,
    ell_fill: Function,
    fill: Function,
    plan_lengths: Function,
    plan_count: Function,
    plan_place: Function,
    plan_queue: Function,
}

fn load<T: Scalar>(dev: &Device) -> Result<Kernels> {
    let m = dev.module(&KernelSpec::new(&params::KERNELS, &[])?)?;
    let s = suffix::<T>();
    Ok(Kernels {
        spmv: m.function(&format!("brc_spmv_{s}"))?,
        scale_rows: m.function(&format!("brc_scale_rows_{s}"))?,
        ell: m.function(&format!("brc_ell_{s}"))?,
        reduce: m.function(&format!("brc_reduce_{s}"))?,
        ell_build: m.function(&format!("brc_ell_build_{s}"))?,
        ell_fill: m.function(&format!("brc_ell_fill_{s}"))?,
        fill: m.function(&format!("brc_fill_{s}"))?,
        plan_lengths: m.function("brc_plan_lengths")?,
        plan_count: m.function("brc_plan_count")?,
        plan_place: m.function("brc_plan_place")?,
        plan_queue: m.function("brc_plan_queue")?,
    })
}

/// The most padding (ELL slots over non-zeros) for which BRC's format is built on the device as
/// a pure ELL part (k = the longest row, no BRC blocks): the rows of AUTO's BRC matrices are
/// all about as long (`select::heuristic`: longest <= 1.5 x mean), and the host rule's HYB
/// width is then usually the longest row too (3D Laplacian, 27-point stencil, uniform rows).
const DEVICE_ELL_MAX_PADDING: f64 = 1.5;

/// The widest ELL part built on the device: `brc_ell_build` stages a group of 32 rows in
/// 32 * k * (value + 4) bytes of shared memory (36 KiB in f64 at 96: under the 48 KiB a launch
/// gets without opting in; 96 holds 3D elasticity's 81-entry rows).
const DEVICE_ELL_MAX_WIDTH: usize = 96;

/// True when BRC with TUNING_NONE builds its format on the device (`kernels/brc.cu`,
/// `brc_ell_build`: one pass over the CSR, about two products' time) rather than on the host:
/// a pure ELL part whose padding is at most [`DEVICE_ELL_MAX_PADDING`], at most
/// [`DEVICE_ELL_MAX_WIDTH`] wide, of at most 2^32 - 1 slots. The matrix must also keep no host copy (`BrcGpu::prepare`).
pub fn builds_on_device(stats: &crate::csr::RowStats) -> bool {
    stats.nnz > 0
        && stats.max <= DEVICE_ELL_MAX_WIDTH
        && stats.max as f64 <= DEVICE_ELL_MAX_PADDING * stats.mean
        && (stats.rows as u128 * stats.max as u128) <= u32::MAX as u128
}

/// True when BRC with TUNING_NONE, on a matrix kept on the device whose rows are not all about
/// as long ([`builds_on_device`] false), is planned on the host from the row offsets alone
/// (`format::plan`: a download of `rows + 1` offsets instead of the whole CSR) and filled on the
/// device: its ELL part, if the fixed rule gives it one, by `brc_ell_fill`, its blocks by
/// `brc_fill`. Any matrix with entries.
///
/// On unless `TESSERA_BRC_DEVICE_FILL=0` (then such a matrix is built on the host from a
/// downloaded CSR, as before session 34). Read once per process.
pub fn fills_on_device(stats: &crate::csr::RowStats) -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| !crate::backend::switched_off("TESSERA_BRC_DEVICE_FILL")) && stats.nnz > 0
}

/// (block_offset, nnz_per_block) per block, interleaved: `OnDevice::block_info`, which
/// `brc_spmv` and `brc_fill` read as one `uint2` per block.
fn block_info(nnz_per_block: &[u32], block_offset: &[u32]) -> Vec<[u32; 2]> {
    nnz_per_block
        .iter()
        .zip(block_offset)
        .map(|(&t, &off)| [off, t])
        .collect()
}

/// One format in device memory.
struct OnDevice {
    /// The format parameters it was built with (`Params::format_key`).
    key: (u32, u32, u32),
    rows: usize,
    ell_width: usize,
    ell_slots: usize,
    b1: usize,
    block_rows: usize,
    n_scale: usize,
    n_fix: usize,
    accumulate: bool,
    deterministic: bool,
    values: DeviceBuffer,
    col: DeviceBuffer,
    /// (block_offset, nnz_per_block) per block, interleaved: one 8-byte load per block row.
    block_info: DeviceBuffer,
    dest: DeviceBuffer,
    scale_rows: DeviceBuffer,
    fix_rows: DeviceBuffer,
    fix_ptr: DeviceBuffer,
    partial: DeviceBuffer,
    value_slot: DeviceBuffer,
    summary: String,
    /// The deterministic variant's partial sums are one buffer per matrix: a ring of one slot
    /// orders each product that uses them after the previous one on another stream (on the
    /// device), so concurrent products never share the buffer.
    partial_ring: Option<SlotRing>,
}

impl OnDevice {
    fn upload<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        f: &Brc<T>,
        key: (u32, u32, u32),
    ) -> Result<Self> {
        let arrays = [
            DeviceBuffer::from_slice(dev, stream, &f.values, "BRC values")?,
            DeviceBuffer::from_slice(dev, stream, &f.col, "BRC column indices")?,
            DeviceBuffer::from_slice(dev, stream, &f.value_slot, "BRC value map")?,
        ];
        Self::with_plan::<T>(dev, stream, &f.plan, key, arrays)
    }

    /// The format of `plan` over `values`, `col` and `value_slot` (filled, or being filled on
    /// `stream`), with the plan's metadata uploaded.
    fn with_plan<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        plan: &format::Plan,
        key: (u32, u32, u32),
        [values, col, value_slot]: [DeviceBuffer; 3],
    ) -> Result<Self> {
        let up = |v: &[u32], what: &str| DeviceBuffer::from_slice(dev, stream, v, what);
        let deterministic = plan.variant == Variant::Deterministic;
        Ok(OnDevice {
            key,
            rows: plan.rows,
            ell_width: plan.ell_width,
            ell_slots: plan.ell_slots(),
            b1: plan.b1,
            block_rows: plan.block_rows(),
            n_scale: plan.scale_rows.len(),
            n_fix: plan.fix_rows.len(),
            accumulate: plan.accumulates(),
            deterministic,
            values,
            col,
            block_info: DeviceBuffer::from_slice(
                dev,
                stream,
                &block_info(&plan.nnz_per_block, &plan.block_offset),
                "BRC block offsets/widths",
            )?,
            dest: up(&plan.dest, "BRC block-row destinations")?,
            scale_rows: up(&plan.scale_rows, "BRC rows to scale")?,
            fix_rows: up(&plan.fix_rows, "BRC rows to reduce")?,
            fix_ptr: up(&plan.fix_ptr, "BRC partial ranges")?,
            partial: DeviceBuffer::alloc(
                dev,
                plan.partial_len() * std::mem::size_of::<T>(),
                "BRC partial sums",
            )?,
            value_slot,
            summary: plan.summary(),
            partial_ring: if deterministic {
                Some(SlotRing::new(dev, 1)?)
            } else {
                None
            },
        })
    }

    /// Exact device bytes of this format.
    fn bytes(&self) -> usize {
        [
            &self.values,
            &self.col,
            &self.block_info,
            &self.dest,
            &self.scale_rows,
            &self.fix_rows,
            &self.fix_ptr,
            &self.partial,
            &self.value_slot,
        ]
        .iter()
        .map(|b| b.bytes())
        .sum()
    }

    /// One product with `p`'s launch (`rep`, block size): see the module comment. The
    /// deterministic variant takes the partial buffer through its one-slot ring.
    #[allow(clippy::too_many_arguments)]
    fn run<T: Scalar>(
        &self,
        k: &Kernels,
        dev: &Device,
        p: Params,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        match &self.partial_ring {
            None => self.launches(k, dev, p, stream, alpha, x, beta, y),
            Some(ring) => ring.run(dev, stream, 1, |_| {
                self.launches(k, dev, p, stream, alpha, x, beta, y)
            }),
        }
    }

    /// The launches of one product.
    #[allow(clippy::too_many_arguments)]
    fn launches<T: Scalar>(
        &self,
        k: &Kernels,
        dev: &Device,
        p: Params,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        let sz = std::mem::size_of::<T>() as u64;
        let (vals, col) = (self.values.addr(), self.col.addr());
        // Evict-first loads for a format larger than the L2, plain ones for a smaller one.
        let hint = dev.streams_past_l2(self.values.bytes() + self.col.bytes()) as i32;
        // Whether brc_ell or brc_scale_rows runs first: brc_spmv then overlaps it.
        let first = self.ell_width > 0 || (!self.deterministic && self.n_scale > 0);
        if self.ell_width > 0 {
            let args = KernelArgs::new()
                .push(self.rows as i32)
                .push(self.ell_width as i32)
                .push(col)
                .push(vals)
                .push(x)
                .push(y)
                .push(alpha)
                .push(beta)
                .push(hint);
            // SAFETY: brc_ell_<T>(int rows, int k, const int* col, const T* val, const T* x,
            // T* y, T alpha, T beta, int stream): col/val hold rows*k ELL slots first
            // (format.rs); x holds cols and y rows values (checked by the caller); one thread
            // per row.
            unsafe {
                launch(
                    dev,
                    &k.ell,
                    self.rows.div_ceil(ROW_BLOCK as usize),
                    ROW_BLOCK,
                    stream,
                    args,
                )?
            };
        } else if !self.deterministic && self.n_scale > 0 {
            let args = KernelArgs::new()
                .push(self.n_scale as i32)
                .push(self.scale_rows.addr())
                .push(y)
                .push(beta);
            // SAFETY: brc_scale_rows_<T>(int n, const unsigned* rows, T* y, T beta): rows holds
            // n row indices < rows; y holds rows values.
            unsafe {
                launch(
                    dev,
                    &k.scale_rows,
                    self.n_scale.div_ceil(ROW_BLOCK as usize),
                    ROW_BLOCK,
                    stream,
                    args,
                )?
            };
        }
        if self.block_rows > 0 {
            let partial = if self.deterministic {
                self.partial.addr()
            } else {
                0
            };
            let off = self.ell_slots as u64;
            let args = KernelArgs::new()
                .push(self.block_rows as i64)
                .push(self.b1 as i32)
                .push(p.rep as i32)
                .push(self.block_info.addr())
                .push(self.dest.addr())
                .push(col + 4 * off)
                .push(vals + sz * off)
                .push(x)
                .push(y)
                .push(partial)
                .push(alpha)
                .push(beta)
                .push(hint);
            // SAFETY: brc_spmv_<T>(long long block_rows, int b1, int rep, const uint2*
            // block_info, const unsigned* dest, const int* col, const T* val, const T* x, T* y,
            // T* partial, T alpha, T beta, int stream): block_info has block_rows/b1 entries whose slots lie
            // in the BRC part (col/val past the ELL slots); dest has block_rows entries naming
            // rows < rows or partial indices < partial_len (partial allocated here when
            // deterministic, NULL otherwise); x/y checked by the caller. Overlapped only right
            // after this product's brc_ell or brc_scale_rows: brc_spmv waits for it before its
            // first atomic into y, and its plain writes go to rows that kernel does not touch
            // (owned rows are in no scale list; with the ELL part every block row adds).
            unsafe {
                let (grid, block) = (p.grid_size(self.block_rows), p.block_size);
                launch_overlapped(dev, &k.spmv, grid, block, stream, args, first)?
            };
        }
        if self.deterministic && self.n_fix > 0 {
            let args = KernelArgs::new()
                .push(self.n_fix as i32)
                .push(self.fix_rows.addr())
                .push(self.fix_ptr.addr())
                .push(self.partial.addr())
                .push(y)
                .push(alpha)
                .push(beta)
                .push(self.accumulate as i32);
            // SAFETY: brc_reduce_<T>(int n, const unsigned* rows, const unsigned* ptr, const T*
            // partial, T* y, T alpha, T beta, int accumulate): rows has n entries < rows, ptr
            // n+1 non-decreasing entries <= partial_len, partial was written by brc_spmv above
            // (same stream).
            unsafe {
                launch(
                    dev,
                    &k.reduce,
                    self.n_fix.div_ceil(ROW_BLOCK as usize),
                    ROW_BLOCK,
                    stream,
                    args,
                )?
            };
        }
        Ok(())
    }
}

/// BRC ready to run on a device.
pub struct BrcGpu<T> {
    kernels: Kernels,
    on: OnDevice,
    params: Params,
    dev: Arc<Device>,
    text: String,
    _t: PhantomData<T>,
}

impl<T: Scalar> BrcGpu<T> {
    /// The method over `on`, built with `params`; `how` says how they were chosen and built
    /// (`info`'s params: the parameters, the format's summary, then `how`).
    fn assemble(
        kernels: Kernels,
        dev: &Arc<Device>,
        on: OnDevice,
        params: Params,
        how: &str,
    ) -> Self {
        BrcGpu {
            kernels,
            text: format!("{params} {}; {how}", on.summary),
            on,
            params,
            dev: dev.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Scalar> std::fmt::Debug for BrcGpu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BrcGpu({})", self.text)
    }
}

/// The format with parameters `p`, in the variant `req` asks for (host only).
fn build_format<T: Scalar>(req: &Request<'_, T>, p: Params) -> Result<Brc<T>> {
    format::build(
        req.csr()?,
        p.b1 as usize,
        p.b2 as usize,
        p.ell_width as usize,
        variant_for(req.deterministic),
    )
}

fn build_and_upload<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    req: &Request<'_, T>,
    p: Params,
) -> Result<OnDevice> {
    OnDevice::upload(dev, stream, &build_format(req, p)?, p.format_key())
}

/// BRC's format built on the host by the fixed rule (TUNING_NONE), waiting for its upload: the
/// host half of [`BrcGpu::prepare`], which makes no CUDA call and so can run on a worker
/// thread while products run (AUTO's background build).
pub struct BrcOnHost<T: Scalar> {
    f: Brc<T>,
    params: Params,
    how: String,
}

impl<T: Scalar> BrcOnHost<T> {
    fn upload_with(
        self: Box<Self>,
        kernels: Kernels,
        dev: &Arc<Device>,
        stream: Stream,
    ) -> Result<BrcGpu<T>> {
        let on = OnDevice::upload(dev, stream, &self.f, self.params.format_key())?;
        Ok(BrcGpu::assemble(kernels, dev, on, self.params, &self.how))
    }
}

impl<T: Scalar> HostBuilt<T> for BrcOnHost<T> {
    fn upload(
        self: Box<Self>,
        dev: &Arc<Device>,
        stream: Stream,
        _csr: &GpuCsr<T>,
    ) -> Result<Box<dyn GpuMethod<T>>> {
        let kernels = load::<T>(dev)?;
        Ok(Box::new(self.upload_with(kernels, dev, stream)?))
    }
}

impl<T: Scalar> BrcGpu<T> {
    /// Chooses the parameters (fixed rule, or by timing with `req.tuning`), builds the format
    /// on the host in the requested variant and uploads it; or, with TUNING_NONE for a matrix
    /// kept on the device whose rows are all about as long ([`builds_on_device`]), builds a
    /// pure ELL part on the device from `csr`.
    pub fn prepare(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let kernels = load::<T>(dev)?;
        if req.tuning == Tuning::None
            && req.host.is_none()
            && !csr.index64()
            && builds_on_device(req.stats)
        {
            return Self::ell_on_device(kernels, dev, stream, csr, req);
        }
        if req.tuning == Tuning::None
            && req.host.is_none()
            && !csr.index64()
            && fills_on_device(req.stats)
        {
            return Self::fill_on_device(kernels, dev, stream, csr, req);
        }
        let sm = dev.sm_count();
        let rule = params::fixed_rule(req.csr()?.row_ptr(), req.stats, sm);
        let (params, on, how) = match req.tuning {
            Tuning::None => {
                return Box::new(Self::build_on_host(sm, req)?).upload_with(kernels, dev, stream)
            }
            Tuning::Quick | Tuning::Exhaustive | Tuning::Online => {
                let cands = params::candidates(
                    req.csr()?.row_ptr(),
                    req.stats,
                    sm,
                    req.tuning == Tuning::Exhaustive,
                );
                let (p, on, text) = Self::tune(dev, stream, req, &kernels, &cands)?;
                let online = if req.tuning == Tuning::Online {
                    " (ONLINE is treated as QUICK: BRC tunes at analyze)"
                } else {
                    ""
                };
                (p, on, format!("{}; {text}{online}", rule.why))
            }
        };
        Ok(Self::assemble(kernels, dev, on, params, &how))
    }

    /// The pure ELL form (k = the longest row) built on the device from `csr`: the same arrays
    /// format.rs builds on the host for that width (padding columns included), queued on
    /// `stream`.
    fn ell_on_device(
        kernels: Kernels,
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let st = req.stats;
        let (rows, k, nnz) = (st.rows, st.max, st.nnz);
        let slots = rows * k;
        let sz = std::mem::size_of::<T>();
        let [values, col, value_slot] = DeviceBuffer::alloc_parts(
            dev,
            [slots * sz, slots * 4, nnz * 4],
            "BRC's ELL part (values, columns, value map)",
        )?;
        let (rp, ci, va) = csr.arrays();
        let args = KernelArgs::new()
            .push(rows as i32)
            .push(k as i32)
            .push(rp)
            .push(ci)
            .push(va)
            .push(col.addr())
            .push(values.addr())
            .push(value_slot.addr());
        // SAFETY: brc_ell_build_<T>(int rows, int k, const int* rp, const int* ci, const T* va,
        // int* col, T* val, unsigned* slot): rp, ci, va are tessera's int32 CSR of `rows` rows
        // whose rows are at most k long (k = stats.max <= 96); col and val hold rows*k slots
        // (< 2^32, builds_on_device), slot nnz entries; one warp per block and 32 rows, with
        // the 32*k*(sizeof(T) + 4) bytes of shared memory it stages them in.
        unsafe {
            launch_shared(
                dev,
                &kernels.ell_build,
                rows.div_ceil(32),
                32,
                (32 * k * (sz + 4)) as u32,
                stream,
                args,
            )?
        };
        let params = Params {
            b1: params::FIXED_B1,
            b2: 1,
            rep: 1,
            ell_width: k as u32,
            block_size: params::BLOCK_SIZE,
        };
        let empty = || DeviceBuffer::alloc(dev, 0, "");
        let on = OnDevice {
            key: params.format_key(),
            rows,
            ell_width: k,
            ell_slots: slots,
            b1: params::FIXED_B1 as usize,
            block_rows: 0,
            n_scale: 0,
            n_fix: 0,
            accumulate: true,
            // No BRC part: no atomics, whatever the variant.
            deterministic: true,
            values,
            col,
            block_info: empty()?,
            dest: empty()?,
            scale_rows: empty()?,
            fix_rows: empty()?,
            fix_ptr: empty()?,
            partial: empty()?,
            value_slot,
            summary: format!(
                "padding={:.3} (stored slots {slots} / nnz {nnz}; ELL {slots}), blocks=0, split_rows=0, empty_rows={}, no BRC part (bitwise reproducible)",
                slots as f64 / nnz as f64,
                st.empty_rows
            ),
            partial_ring: None,
        };
        let how = format!(
            "built on the device: pure ELL k = longest row {k} (<= {DEVICE_ELL_MAX_PADDING} x mean {:.2})",
            st.mean
        );
        Ok(Self::assemble(kernels, dev, on, params, &how))
    }

    /// [`BrcGpu::prepare`]'s device fill whatever `TESSERA_BRC_DEVICE_FILL` says (tests: it
    /// against format.rs's arrays), for an int32 CSR with entries.
    #[doc(hidden)]
    pub fn prepare_fill_on_device(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        if req.stats.nnz == 0 || csr.index64() {
            return Err(Error::InvalidValue(
                "BRC's device fill takes an int32 CSR with entries".into(),
            ));
        }
        Self::fill_on_device(load::<T>(dev)?, dev, stream, csr, req)
    }

    /// The format's columns, values and value map as they are on the device (waits for
    /// `stream`): for tests that compare the device-built ELL part with format.rs's.
    #[doc(hidden)]
    pub fn download(&self, stream: Stream) -> Result<(Vec<i32>, Vec<T>, Vec<u32>)> {
        let dev = &self.dev;
        let on = &self.on;
        let mut col = vec![0i32; on.col.bytes() / 4];
        let mut val = vec![T::ZERO; on.values.bytes() / std::mem::size_of::<T>()];
        let mut slot = vec![0u32; on.value_slot.bytes() / 4];
        crate::backend::cuda::copy_to_host(dev, stream, on.col.addr(), &mut col)?;
        crate::backend::cuda::copy_to_host(dev, stream, on.values.addr(), &mut val)?;
        crate::backend::cuda::copy_to_host(dev, stream, on.value_slot.addr(), &mut slot)?;
        Ok((col, val, slot))
    }

    /// The host half of [`BrcGpu::prepare`] with TUNING_NONE on a device of `sm` SMs: the
    /// fixed rule and the format, no CUDA call.
    pub fn build_on_host(sm: u32, req: &Request<'_, T>) -> Result<BrcOnHost<T>> {
        let rule = params::fixed_rule(req.csr()?.row_ptr(), req.stats, sm);
        let p = rule.params;
        Ok(BrcOnHost {
            f: build_format(req, p)?,
            params: p,
            how: format!("{}; {sm} SMs", rule.why),
        })
    }

    /// Explicit parameters (tests: shapes the fixed rule never picks, such as the paper's
    /// B1 = 3), in the variant `req` asks for; `why` goes into `describe()`.
    pub fn with_params(
        dev: &Arc<Device>,
        stream: Stream,
        _csr: &GpuCsr<T>,
        req: &Request<'_, T>,
        params: Params,
        why: &str,
    ) -> Result<Self> {
        if !params.is_valid() {
            return Err(crate::error::Error::InvalidValue(format!(
                "invalid BRC parameters {params}"
            )));
        }
        let kernels = load::<T>(dev)?;
        let on = build_and_upload(dev, stream, req, params)?;
        Ok(Self::assemble(kernels, dev, on, params, why))
    }

    /// QUICK/EXHAUSTIVE: times every candidate on the matrix ([`pick_fastest`]: the fixed rule,
    /// candidate 0, is kept unless another is at least
    /// [`MIN_GAIN`](crate::methods::gpu::MIN_GAIN) faster). Candidates of one format are timed
    /// next to each other, on one build of it.
    fn tune(
        dev: &Arc<Device>,
        stream: Stream,
        req: &Request<'_, T>,
        k: &Kernels,
        cands: &[Params],
    ) -> Result<(Params, OnDevice, String)> {
        let stats = req.stats;
        if stats.rows == 0 || stats.nnz == 0 {
            let first = build_and_upload(dev, stream, req, cands[0])?;
            return Ok((cands[0], first, "nothing to time on an empty matrix".into()));
        }
        // The fixed rule first, then the others grouped by format in order of first appearance.
        let mut keys: Vec<(u32, u32, u32)> = Vec::new();
        for c in cands {
            if !keys.contains(&c.format_key()) {
                keys.push(c.format_key());
            }
        }
        let group = |c: &Params| keys.iter().position(|&k| k == c.format_key());
        let mut order: Vec<Params> = cands[1..].to_vec();
        order.sort_by_key(group);
        let order = std::iter::once(cands[0]).chain(order);
        let mut tuner = Tuner::new::<T>(dev, stream, stats.rows, stats.cols, "brc")?;
        // The format of the last candidate, shared by the next ones of its group; a format
        // that lost is freed once the next group's is built.
        let mut last: Option<Rc<OnDevice>> = None;
        let mut formats = 0;
        let build = |p: &Params| -> Result<Option<Rc<OnDevice>>> {
            if let Some(on) = last.as_ref().filter(|on| on.key == p.format_key()) {
                return Ok(Some(on.clone()));
            }
            last = None;
            let on = Rc::new(build_and_upload(dev, stream, req, *p)?);
            formats += 1;
            last = Some(on.clone());
            Ok(Some(on))
        };
        let picked = pick_fastest(&mut tuner, None, order, build, |on, p, x, y| {
            on.run(k, dev, *p, stream, T::ONE, x, T::ZERO, y)
        })?
        .ok_or_else(|| Error::Internal("BRC tuning had no candidate".into()))?;
        drop(last);
        let on = Rc::try_unwrap(picked.ready).map_err(|_| {
            Error::Internal("BRC tuning kept a second reference to its format".into())
        })?;
        Ok((
            picked.cand,
            on,
            format!(
                "tuned: {} candidates on {formats} formats timed on the device, best {:.4} ms vs fixed rule ({}) {:.4} ms",
                cands.len(),
                picked.ms,
                cands[0],
                picked.first_ms
            ),
        ))
    }

    /// The parameters in use.
    pub fn params(&self) -> Params {
        self.params
    }
}

impl<T: Scalar> crate::methods::GpuMethod<T> for BrcGpu<T> {
    fn spmv(
        &self,
        _csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        self.on.run(
            &self.kernels,
            &self.dev,
            self.params,
            stream,
            alpha,
            x,
            beta,
            y,
        )
    }

    fn refresh_values(&self, csr: &GpuCsr<T>, stream: Stream) -> Result<()> {
        csr.scatter_values_into(stream, &self.on.value_slot, &self.on.values)
    }

    fn device_bytes(&self) -> usize {
        self.on.bytes()
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    fn deterministic(&self) -> bool {
        self.on.deterministic
    }
}
