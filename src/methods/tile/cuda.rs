//! TileSpMV on the GPU: the host builds the format (format.rs), this file uploads it, chooses
//! the parameters (fixed rule, or QUICK/EXHAUSTIVE: time candidates on the real matrix at
//! analyze) and launches `kernels/tile.cu`.
//!
//! One product, all on the caller's stream, no allocation, no sync:
//! 1. `tile_prescale` over the rows of split tile rows (only when some tile row is split and
//!    beta != 1): their warps add with atomics;
//! 2. `tile_spmv`: one warp per work item (y = alpha*A_tiles*x + beta*y);
//! 3. with deferral, HOLA's product of the deferred CSR matrix with beta = 1 (§III.D's
//!    TileSpMV_DeferredCOO; the paper used CSR5). HOLA runs with its fixed rule.
//!
//! The value map covers both parts: the tile values and, after them, a copy of the deferred
//! matrix's values; `refresh_values` scatters the CSR into that array, then the deferred CSR's
//! own scatter copies the tail into its values.

use super::device;
use super::format::{self, Tiled};
use super::params::{self, TileParams};
use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::{
    launch, launch_overlapped, Device, DeviceBuffer, Function, KernelArgs, Stream,
};
use crate::error::{Error, Result};
use crate::methods::gpu::{pick_fastest, Tuner};
use crate::methods::hola::cuda::HolaGpu;
use crate::methods::{GpuMethod, HostBuilt, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;
use std::marker::PhantomData;
use std::sync::Arc;

/// Warps per CTA of `tile_spmv` (TILE_WARPS in tile.cu).
const WARPS: u32 = 4;
/// Threads per CTA of `tile_prescale`.
const ROW_BLOCK: u32 = 256;

/// The two entry points.
struct Kernels {
    spmv: Function,
    prescale: Function,
}

fn load<T: Scalar>(dev: &Device) -> Result<Kernels> {
    let m = dev.module(&KernelSpec::new(&params::KERNELS, &[])?)?;
    let s = suffix::<T>();
    Ok(Kernels {
        spmv: m.function(&format!("tile_spmv_{s}"))?,
        prescale: m.function(&format!("tile_prescale_{s}"))?,
    })
}

/// The deferred matrix on the device and HOLA ready to run it.
pub(super) struct DeferredGpu<T: Scalar> {
    hola: HolaGpu<T>,
    csr: GpuCsr<T>,
}

/// One format in device memory (built from a host build's arrays, [`OnDevice::upload`], or on
/// the device, [`device::build`]).
pub(super) struct OnDevice<T: Scalar> {
    pub(super) params: TileParams,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) nitems: usize,
    pub(super) nsplit: usize,
    pub(super) tile_values: usize,
    pub(super) item_row: DeviceBuffer,
    pub(super) item_start: DeviceBuffer,
    pub(super) tile_col: DeviceBuffer,
    pub(super) format: DeviceBuffer,
    pub(super) width: DeviceBuffer,
    pub(super) val_ptr: DeviceBuffer,
    pub(super) idx_ptr: DeviceBuffer,
    pub(super) idx: DeviceBuffer,
    pub(super) values: DeviceBuffer,
    pub(super) split_rows: DeviceBuffer,
    pub(super) value_slot: DeviceBuffer,
    pub(super) deferred: Option<DeferredGpu<T>>,
    pub(super) summary: String,
}

impl<T: Scalar> OnDevice<T> {
    fn upload(dev: &Arc<Device>, stream: Stream, f: &Tiled<T>) -> Result<Self> {
        let up = |v: &[u32], what: &str| DeviceBuffer::from_slice(dev, stream, v, what);
        let upb = |v: &[u8], what: &str| DeviceBuffer::from_slice(dev, stream, v, what);
        let deferred = match &f.deferred {
            None => None,
            Some(d) => {
                let stats = d.csr.stats();
                let csr = GpuCsr::upload(
                    dev,
                    stream,
                    &d.csr,
                    crate::methods::transpose::gpu_launch(&stats, dev.sm_count()),
                )?;
                let req = Request {
                    host: Some(&d.csr),
                    stats: &stats,
                    tuning: Tuning::None,
                    deterministic: false,
                };
                let hola = HolaGpu::prepare(dev, stream, &csr, &req)?;
                Some(DeferredGpu { hola, csr })
            }
        };
        Ok(OnDevice {
            params: f.params,
            rows: f.rows,
            cols: f.cols,
            nitems: f.item_row.len(),
            nsplit: f.split_rows.len(),
            tile_values: f.tile_values(),
            item_row: up(&f.item_row, "TILE work items")?,
            item_start: up(&f.item_start, "TILE work-item tile ranges")?,
            tile_col: up(&f.tile_col, "TILE tileColIdx")?,
            format: upb(&f.format, "TILE tile formats")?,
            width: upb(&f.width, "TILE tile widths")?,
            val_ptr: up(&f.val_ptr, "TILE value offsets")?,
            idx_ptr: up(&f.idx_ptr, "TILE index offsets")?,
            idx: upb(&f.idx, "TILE index bytes")?,
            values: DeviceBuffer::from_slice(dev, stream, &f.values, "TILE values")?,
            split_rows: up(&f.split_rows, "TILE split tile rows")?,
            value_slot: up(&f.value_slot, "TILE value map")?,
            deferred,
            summary: f.summary(),
        })
    }

    /// Exact device bytes of this format (the deferred CSR and HOLA's buffers included).
    fn bytes(&self) -> usize {
        [
            &self.item_row,
            &self.item_start,
            &self.tile_col,
            &self.format,
            &self.width,
            &self.val_ptr,
            &self.idx_ptr,
            &self.idx,
            &self.values,
            &self.split_rows,
            &self.value_slot,
        ]
        .iter()
        .map(|b| b.bytes())
        .sum::<usize>()
            + self
                .deferred
                .as_ref()
                .map_or(0, |d| d.csr.device_bytes() + d.hola.device_bytes())
    }

    /// True when no launch adds with atomics.
    fn deterministic(&self) -> bool {
        self.nsplit == 0 && self.deferred.is_none()
    }

    /// One product: see the module comment.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        k: &Kernels,
        dev: &Device,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        let prescale = self.nsplit > 0 && beta != T::ONE;
        if prescale {
            let args = KernelArgs::new()
                .push(self.nsplit as i32)
                .push(self.rows as i32)
                .push(self.split_rows.addr())
                .push(y)
                .push(beta);
            // SAFETY: tile_prescale_<T>(int nsplit, int rows, const unsigned* split_rows, T* y,
            // T beta): split_rows holds nsplit tile rows < ceil(rows/16); rows past `rows` are
            // skipped; y holds rows values (checked by the caller).
            unsafe {
                launch(
                    dev,
                    &k.prescale,
                    (self.nsplit * 16).div_ceil(ROW_BLOCK as usize),
                    ROW_BLOCK,
                    stream,
                    args,
                )?
            };
        }
        if self.nitems > 0 {
            let args = KernelArgs::new()
                .push(self.nitems as i32)
                .push(self.rows as i32)
                .push(self.cols as i32)
                .push(self.item_row.addr())
                .push(self.item_start.addr())
                .push(self.tile_col.addr())
                .push(self.format.addr())
                .push(self.width.addr())
                .push(self.val_ptr.addr())
                .push(self.idx_ptr.addr())
                .push(self.idx.addr())
                .push(self.values.addr())
                .push(x)
                .push(y)
                .push(alpha)
                .push(beta);
            // SAFETY: tile_spmv_<T>(int nitems, int rows, int cols, const unsigned* item_row,
            // const unsigned* item_start, const unsigned* tile_col, const unsigned char* fmt,
            // const unsigned char* width, const unsigned* val_ptr, const unsigned* idx_ptr,
            // const unsigned char* idx, const T* val, const T* x, T* y, T alpha, T beta): every array was built by format.rs for this matrix (item ranges
            // within the tiles, tile offsets within idx/values, tile columns < ceil(cols/16),
            // x read only below cols, y written only below rows); x holds cols and y rows
            // values (checked by the caller); WARPS warps per CTA = TILE_WARPS in tile.cu.
            // Overlapped only right after this product's tile_prescale, which every thread of
            // tile_spmv waits for before it writes y.
            unsafe {
                let grid = self.nitems.div_ceil(WARPS as usize);
                launch_overlapped(dev, &k.spmv, grid, WARPS * 32, stream, args, prescale)?
            };
        }
        if let Some(d) = &self.deferred {
            d.hola.spmv(&d.csr, stream, alpha, x, T::ONE, y)?;
        }
        Ok(())
    }
}

/// The fixed rule on the device: the paper's parameters, then tbalance 4 instead of 8 when the
/// work items would fill at most half of the GPU and a tile row is split anyway
/// ([`params::small_grid`]; only the work items are made again). The deterministic variant (tbalance unlimited) is left as it is.
/// TILE's format built on the host by the fixed rule (TUNING_NONE), waiting for its upload: the
/// host half of [`TileGpu::prepare`], which makes no CUDA call and so can run on a worker
/// thread while products run (AUTO's background build).
pub struct TileOnHost<T: Scalar> {
    f: Tiled<T>,
    why: String,
}

impl<T: Scalar> TileOnHost<T> {
    fn upload_with(
        self: Box<Self>,
        kernels: Kernels,
        dev: &Arc<Device>,
        stream: Stream,
    ) -> Result<TileGpu<T>> {
        let on = OnDevice::upload(dev, stream, &self.f)?;
        Ok(TileGpu {
            kernels,
            text: format!("{} ({}); {}", on.params, self.why, on.summary),
            on,
            dev: dev.clone(),
            _t: PhantomData,
        })
    }
}

impl<T: Scalar> HostBuilt<T> for TileOnHost<T> {
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

/// The fixed rule's format on the host for a device of `sm` SMs (the tbalance of small grids
/// depends on it).
fn fixed_rule_on_host<T: Scalar>(
    sm: u32,
    req: &Request<'_, T>,
    fixed: TileParams,
    mut why: String,
) -> Result<TileOnHost<T>> {
    let mut f = format::build(req.csr()?, &fixed)?;
    let items = f.item_row.len();
    if fixed.tbalance == params::PAPER_TBALANCE && params::small_grid(items, f.split_rows.len(), sm)
    {
        f.set_tbalance(params::SMALL_GRID_TBALANCE);
        why.push_str("; ");
        why.push_str(&params::small_grid_reason(items, fixed.tbalance, sm));
    }
    Ok(TileOnHost { f, why })
}

/// A format's arrays downloaded from the device ([`TileGpu::download`]): the tile part's
/// (values without the deferred tail) and the value map.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub struct DownloadedFormat<T> {
    pub tile_col: Vec<u32>,
    pub format: Vec<u8>,
    pub width: Vec<u8>,
    pub val_ptr: Vec<u32>,
    pub idx_ptr: Vec<u32>,
    pub idx: Vec<u8>,
    pub values: Vec<T>,
    pub item_row: Vec<u32>,
    pub item_start: Vec<u32>,
    pub split_rows: Vec<u32>,
    pub value_slot: Vec<u32>,
}

impl<T: Scalar> DownloadedFormat<T> {
    /// The same arrays of a host-built format.
    pub fn of(f: &Tiled<T>) -> Self {
        DownloadedFormat {
            tile_col: f.tile_col.clone(),
            format: f.format.clone(),
            width: f.width.clone(),
            val_ptr: f.val_ptr.clone(),
            idx_ptr: f.idx_ptr.clone(),
            idx: f.idx.clone(),
            values: f.values[..f.tile_values()].to_vec(),
            item_row: f.item_row.clone(),
            item_start: f.item_start.clone(),
            split_rows: f.split_rows.clone(),
            value_slot: f.value_slot.clone(),
        }
    }
}

/// TileSpMV ready to run on a device.
pub struct TileGpu<T: Scalar> {
    kernels: Kernels,
    on: OnDevice<T>,
    dev: Arc<Device>,
    text: String,
    _t: PhantomData<T>,
}

impl<T: Scalar> std::fmt::Debug for TileGpu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TileGpu({})", self.text)
    }
}

fn build_and_upload<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    req: &Request<'_, T>,
    p: TileParams,
) -> Result<OnDevice<T>> {
    let f = format::build(req.csr()?, &p)?;
    OnDevice::upload(dev, stream, &f)
}

impl<T: Scalar> TileGpu<T> {
    /// Chooses the parameters (fixed rule, or by timing with `req.tuning`; a deterministic
    /// request keeps its fixed variant), builds the format on the host and uploads it.
    pub fn prepare(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let kernels = load::<T>(dev)?;
        let (fixed, why) = params::fixed_rule(req.stats.nnz, req.deterministic);
        // describe(): parameters and how they were chosen first, then the census (Figure 7),
        // then the timings (info.params keeps the first 255 bytes).
        let (on, how, detail) = match req.tuning {
            Tuning::None if req.host.is_none() => {
                // A matrix kept on the device, which `methods::needs_host_csr` found the
                // device build suits.
                let sm = dev.sm_count();
                let mut why = why;
                if !csr.index64() && device::builds_on_device(req.stats) {
                    if let Some(t) = Self::built_on_device(dev, stream, csr, fixed, &why)? {
                        return Ok(t);
                    }
                    why.push_str("; built on the host: the device build found entries to defer");
                }
                // The host build's format, from a downloaded CSR.
                let host = csr.download(stream)?;
                let req = Request::fixed_rule(&host, req.stats, req.deterministic);
                return Box::new(fixed_rule_on_host(sm, &req, fixed, why)?)
                    .upload_with(kernels, dev, stream);
            }
            Tuning::None => {
                return Box::new(fixed_rule_on_host(dev.sm_count(), req, fixed, why)?)
                    .upload_with(kernels, dev, stream)
            }
            _ if req.deterministic => (
                build_and_upload(dev, stream, req, fixed)?,
                format!("{why}; not tuned: the deterministic variant has one shape"),
                String::new(),
            ),
            t => {
                let cands = params::candidates(fixed, t == Tuning::Exhaustive);
                let (on, short, timings) = Self::tune(dev, stream, req, &kernels, &cands)?;
                let online = if t == Tuning::Online {
                    "; ONLINE is treated as QUICK: TILE tunes at analyze"
                } else {
                    ""
                };
                (on, short, format!("; {why}{online}; {timings}"))
            }
        };
        let text = format!("{} ({how}); {}{detail}", on.params, on.summary);
        Ok(TileGpu {
            kernels,
            on,
            dev: dev.clone(),
            text,
            _t: PhantomData,
        })
    }

    /// The format of `p` (tbalance as the fixed rule sets it for this device) built on the
    /// device from `csr` (int32 arrays, [`device::builds_on_device`]); `None` when it would
    /// defer entries. `why` (how `p` was chosen) goes into describe().
    #[doc(hidden)]
    pub fn built_on_device(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        p: TileParams,
        why: &str,
    ) -> Result<Option<Self>> {
        if !p.is_valid() {
            return Err(Error::InvalidValue(format!("invalid TILE parameters {p}")));
        }
        let kernels = load::<T>(dev)?;
        let Some((on, how)) = device::build(dev, stream, csr, p, dev.sm_count())? else {
            return Ok(None);
        };
        Ok(Some(TileGpu {
            kernels,
            text: format!("{} ({why}; {how}); {}", on.params, on.summary),
            on,
            dev: dev.clone(),
            _t: PhantomData,
        }))
    }

    /// The format's arrays as they are on the device (waits for `stream`), in the order of
    /// [`Tiled`]'s fields: tests compare a device build with format.rs's.
    #[doc(hidden)]
    pub fn download(&self, stream: Stream) -> Result<DownloadedFormat<T>> {
        let on = &self.on;
        let u32s = |b: &DeviceBuffer| -> Result<Vec<u32>> {
            let mut v = vec![0u32; b.bytes() / 4];
            crate::backend::cuda::copy_to_host(&self.dev, stream, b.addr(), &mut v)?;
            Ok(v)
        };
        let bytes = |b: &DeviceBuffer, n: usize| -> Result<Vec<u8>> {
            let mut v = vec![0u8; n];
            crate::backend::cuda::copy_to_host(&self.dev, stream, b.addr(), &mut v)?;
            Ok(v)
        };
        let tiles = on.format.bytes();
        let val_ptr = u32s(&on.val_ptr)?;
        let idx_ptr = u32s(&on.idx_ptr)?;
        let idx_len = idx_ptr.last().copied().unwrap_or(0) as usize;
        let mut values = vec![T::ZERO; on.tile_values];
        crate::backend::cuda::copy_to_host(&self.dev, stream, on.values.addr(), &mut values)?;
        Ok(DownloadedFormat {
            tile_col: u32s(&on.tile_col)?,
            format: bytes(&on.format, tiles)?,
            width: bytes(&on.width, tiles)?,
            val_ptr,
            idx_ptr,
            idx: bytes(&on.idx, idx_len)?,
            values,
            item_row: u32s(&on.item_row)?,
            item_start: u32s(&on.item_start)?,
            split_rows: u32s(&on.split_rows)?,
            value_slot: u32s(&on.value_slot)?,
        })
    }

    /// The host half of [`TileGpu::prepare`] with TUNING_NONE on a device of `sm` SMs: the
    /// fixed rule and the format, no CUDA call.
    pub fn build_on_host(sm: u32, req: &Request<'_, T>) -> Result<TileOnHost<T>> {
        let (fixed, why) = params::fixed_rule(req.csr()?.nnz(), req.deterministic);
        fixed_rule_on_host(sm, req, fixed, why)
    }

    /// Explicit parameters (tests force deferral on or off this way); `why` goes into
    /// describe().
    pub fn with_params(
        dev: &Arc<Device>,
        stream: Stream,
        _csr: &GpuCsr<T>,
        req: &Request<'_, T>,
        p: TileParams,
        why: &str,
    ) -> Result<Self> {
        let kernels = load::<T>(dev)?;
        let on = build_and_upload(dev, stream, req, p)?;
        let text = format!("{p} ({why}); {}", on.summary);
        Ok(TileGpu {
            kernels,
            on,
            dev: dev.clone(),
            text,
            _t: PhantomData,
        })
    }

    /// QUICK/EXHAUSTIVE: builds and times each candidate on the matrix ([`pick_fastest`]: the
    /// fixed rule, candidate 0, is kept unless another is at least
    /// [`MIN_GAIN`](crate::methods::gpu::MIN_GAIN) faster). Returns the format, the choice in
    /// a few words and the timings.
    fn tune(
        dev: &Arc<Device>,
        stream: Stream,
        req: &Request<'_, T>,
        k: &Kernels,
        cands: &[TileParams],
    ) -> Result<(OnDevice<T>, String, String)> {
        let stats = req.stats;
        if stats.rows == 0 || stats.nnz == 0 {
            return Ok((
                build_and_upload(dev, stream, req, cands[0])?,
                "fixed rule: nothing to time on an empty matrix".into(),
                String::new(),
            ));
        }
        let mut tuner = Tuner::new::<T>(dev, stream, stats.rows, stats.cols, "tile")?;
        let picked = pick_fastest(
            &mut tuner,
            None,
            cands.iter().copied(),
            |&p| build_and_upload(dev, stream, req, p).map(Some),
            |on, _, x, y| on.run(k, dev, stream, T::ONE, x, T::ZERO, y),
        )?
        .ok_or_else(|| Error::Internal("TILE tuning had no candidate".into()))?;
        let all: String = picked.timings[1..]
            .iter()
            .map(|(p, ms)| {
                format!(
                    " {}/{}/{}/{}={ms:.4}",
                    p.te,
                    p.th,
                    p.tbalance,
                    if p.deferred { "D" } else { "-" }
                )
            })
            .collect();
        Ok((
            picked.ready,
            format!(
                "tuned: {} candidates timed, best {:.4} ms vs fixed rule {:.4} ms",
                cands.len(),
                picked.ms,
                picked.first_ms
            ),
            format!("te/th/tbalance/deferred=ms:{all}"),
        ))
    }

    /// The parameters in use.
    pub fn params(&self) -> TileParams {
        self.on.params
    }
}

impl<T: Scalar> GpuMethod<T> for TileGpu<T> {
    fn spmv(
        &self,
        _csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        self.on
            .run(&self.kernels, &self.dev, stream, alpha, x, beta, y)
    }

    fn refresh_values(&self, csr: &GpuCsr<T>, stream: Stream) -> Result<()> {
        csr.scatter_values_into(stream, &self.on.value_slot, &self.on.values)?;
        if let Some(d) = &self.on.deferred {
            let off = (self.on.tile_values * std::mem::size_of::<T>()) as u64;
            d.csr
                .scatter_from_device(stream, self.on.values.addr() + off)?;
        }
        Ok(())
    }

    fn device_bytes(&self) -> usize {
        self.on.bytes()
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    fn deterministic(&self) -> bool {
        self.on.deterministic()
    }
}
