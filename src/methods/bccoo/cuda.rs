//! BCCOO on the GPU: the host builds the format (format.rs), this file uploads it with the
//! workspace of adjacent synchronisation (block counter, flags, Grp_sum; allocated here, at
//! analyze, and left zeroed by every call), tunes it (§4) by timing candidates with CUDA events
//! on the real matrix, and launches `bccoo_spmv_<T>` (plus `bccoo_combine_<T>` for BCCOO+).
//!
//! One product is one launch (two for BCCOO+), allocation-free and sync-free.
//!
//! Products of one matrix may run concurrently (several threads, handles or streams): the
//! workspace (counter, flags, Grp_sum, BCCOO+'s temporary buffer) is a ring of
//! [`WORKSPACE_RING`] slots and each call takes the next one, so up to that many products of
//! one matrix can be in flight at once; a call whose slot is still in use by another stream
//! waits for it on the device (`cuStreamWaitEvent`), never sharing a slot, so more concurrent
//! calls are serialised rather than mixed. A BCCOO+ temporary buffer above [`TMP_RING_BYTES`]
//! in all gets fewer slots (down to one), which narrows the ring. A launch captured in a CUDA
//! graph keeps the slot it was captured with: replaying it concurrently with other products of
//! the same matrix is not ordered.

use super::format::{self, Bccoo, Blocked, ColArrays};
use super::params::{self, FormatParams, MatrixFacts, Params, Shape, Stage, WG_VALUES};
use super::{describe_format, describe_sizes, device};
use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::{
    launch, launch_shared, Device, DeviceBuffer, Function, KernelArgs, Stream,
};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::methods::gpu::{pick_fastest, Picked, SlotRing, Tuner};
use crate::methods::Request;
use crate::scalar::Scalar;
use crate::types::Tuning;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

/// Threads per block of the combine kernel.
const COMBINE_BLOCK: u32 = 256;

/// Workspace slots of a matrix: products of it that may be in flight at the same time.
pub const WORKSPACE_RING: usize = 4;

/// The most bytes BCCOO+'s temporary buffers may take in all (one slot at least).
pub const TMP_RING_BYTES: usize = 64 << 20;

/// The two entry points of one `bccoo.cu` specialisation.
#[derive(Debug, Clone)]
struct Kernels {
    spmv: Function,
    combine: Function,
}

fn load<T: Scalar>(dev: &Device, shape: Shape) -> Result<Kernels> {
    let m = dev.module(&KernelSpec::new(
        &params::KERNELS,
        &[shape.bw as i64, shape.bh as i64],
    )?)?;
    let s = suffix::<T>();
    Ok(Kernels {
        spmv: m.function(&format!("bccoo_spmv_{s}"))?,
        combine: m.function(&format!("bccoo_combine_{s}"))?,
    })
}

/// A format on the device, with the per-workgroup flags for some workgroup sizes and the
/// workspace ring for the smallest of them.
#[derive(Debug)]
struct OnDevice {
    /// The format's arrays and sizes.
    a: Arrays,
    out_len: usize,
    slice_stride: usize,
    /// Per slot: counter + one flag per workgroup (`1 + max_wg_count` words), all zero
    /// between calls.
    sync: DeviceBuffer,
    /// Per slot: Grp_sum, bh values per workgroup.
    carry: DeviceBuffer,
    /// BCCOO+'s temporary buffers, `tmp_slots` of `out_len` values (empty for BCCOO).
    tmp: DeviceBuffer,
    /// Workgroups the workspace of one slot holds.
    max_wgs: usize,
    /// Workspace slots, and temporary-buffer slots.
    slots: usize,
    tmp_slots: usize,
    /// Which workspace slot the next call takes, ordered after the slot's previous user on the
    /// device: any number of concurrent products stays correct; beyond the ring size they run
    /// one after another.
    ring: SlotRing,
}

/// A format's arrays on the device, however they were built (uploaded from format.rs's
/// [`Bccoo`], or built on the device by `device.rs`), before the workspace.
#[derive(Debug)]
pub(super) struct Arrays {
    pub params: FormatParams,
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
    /// Block rows per slice.
    pub block_rows: usize,
    /// Logical blocks (before padding).
    pub blocks: usize,
    /// Threads (padded to the workgroup sizes).
    pub threads: usize,
    /// Delta escapes beyond the first block of each tile.
    pub escapes: usize,
    pub bits: DeviceBuffer,
    pub col: DeviceBuffer,
    /// The delta mode's full column array (empty otherwise).
    pub col_full: DeviceBuffer,
    pub values: DeviceBuffer,
    pub res_entry: DeviceBuffer,
    /// The value map (empty when the format's values are never updated: the tuner's
    /// candidates).
    pub slot: DeviceBuffer,
    /// (workgroup size, its wg_info).
    pub info: Vec<(u32, DeviceBuffer)>,
    /// Bytes held past the arrays: a device build's format allocated from an estimate of its
    /// blocks (`device::build`), freed with them.
    pub slack: usize,
}

impl Arrays {
    /// `f` uploaded, with per-workgroup flags for each of `wgs` that divides its threads.
    fn upload<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        f: &Bccoo<T>,
        wgs: &[u32],
        with_slot: bool,
    ) -> Result<Self> {
        let (col, col_full) = match &f.col {
            ColArrays::U16(v) => (
                DeviceBuffer::from_slice(dev, stream, v, "BCCOO column indices")?,
                DeviceBuffer::alloc(dev, 0, "")?,
            ),
            ColArrays::U32(v) => (
                DeviceBuffer::from_slice(dev, stream, v, "BCCOO column indices")?,
                DeviceBuffer::alloc(dev, 0, "")?,
            ),
            ColArrays::Delta { delta, full } => (
                DeviceBuffer::from_slice(dev, stream, delta, "BCCOO column deltas")?,
                DeviceBuffer::from_slice(dev, stream, full, "BCCOO column indices")?,
            ),
        };
        let mut info = Vec::new();
        for &wg in wgs {
            if f.threads % wg as usize != 0 {
                continue;
            }
            info.push((
                wg,
                DeviceBuffer::from_slice(dev, stream, &f.wg_info(wg as usize), "BCCOO wg flags")?,
            ));
        }
        Ok(Arrays {
            params: f.params,
            rows: f.rows,
            cols: f.cols,
            nnz: f.nnz,
            block_rows: f.block_rows,
            blocks: f.blocks,
            threads: f.threads,
            escapes: f.escapes,
            bits: DeviceBuffer::from_slice(dev, stream, &f.bits, "BCCOO bit flags")?,
            col,
            col_full,
            values: DeviceBuffer::from_slice(dev, stream, &f.values, "BCCOO values")?,
            res_entry: DeviceBuffer::from_slice(
                dev,
                stream,
                &f.res_entry,
                "BCCOO first-result entries",
            )?,
            slot: if with_slot {
                DeviceBuffer::from_slice(dev, stream, &f.value_slot, "BCCOO value map")?
            } else {
                DeviceBuffer::alloc(dev, 0, "")?
            },
            info,
            slack: 0,
        })
    }
}

impl OnDevice {
    fn upload<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        f: &Bccoo<T>,
        wgs: &[u32],
        with_slot: bool,
        slots: usize,
    ) -> Result<Self> {
        let a = Arrays::upload(dev, stream, f, wgs, with_slot)?;
        Self::with_workspace::<T>(dev, stream, a, slots)
    }

    /// `a` with the workspace of `slots` products in flight (zeroed flags, Grp_sum, BCCOO+'s
    /// temporary buffers) for the smallest of its workgroup sizes.
    fn with_workspace<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        a: Arrays,
        slots: usize,
    ) -> Result<Self> {
        let min_wg = a.info.iter().map(|(w, _)| *w as usize).min();
        let nwg = min_wg.map_or(0, |w| a.threads / w);
        let slots = slots.max(1);
        // Zeroed by a copy that is waited for: products on any stream find it zero.
        let sync = DeviceBuffer::from_slice(
            dev,
            stream,
            &vec![0u32; slots * (1 + nwg)],
            "BCCOO adjacent-synchronisation flags",
        )?;
        let bh = a.params.shape.bh as usize;
        let carry = DeviceBuffer::alloc(
            dev,
            slots * nwg * bh * std::mem::size_of::<T>(),
            "BCCOO Grp_sum",
        )?;
        let slice_stride = a.block_rows * bh;
        let out_len = if a.params.slices == 1 {
            a.rows
        } else {
            a.params.slices as usize * slice_stride
        };
        let tmp_one = if a.params.slices > 1 {
            out_len * std::mem::size_of::<T>()
        } else {
            0
        };
        let tmp_slots = TMP_RING_BYTES
            .checked_div(tmp_one)
            .map_or(1, |n| n.clamp(1, slots));
        let tmp = DeviceBuffer::alloc(dev, tmp_slots * tmp_one, "BCCOO+ temporary buffer")?;
        Ok(OnDevice {
            a,
            out_len,
            slice_stride,
            sync,
            carry,
            tmp,
            max_wgs: nwg,
            slots,
            tmp_slots,
            ring: SlotRing::new(dev, slots)?,
        })
    }

    fn bytes(&self) -> usize {
        self.a.bits.bytes()
            + self.a.col.bytes()
            + self.a.col_full.bytes()
            + self.a.values.bytes()
            + self.a.res_entry.bytes()
            + self.a.slot.bytes()
            + self.a.info.iter().map(|(_, b)| b.bytes()).sum::<usize>()
            + self.a.slack
            + self.sync.bytes()
            + self.carry.bytes()
            + self.tmp.bytes()
    }

    /// y = alpha*A*x + beta*y with `p` (its format must be this one). nnz > 0.
    #[allow(clippy::too_many_arguments)]
    fn run<T: Scalar>(
        &self,
        dev: &Device,
        k: &Kernels,
        p: &Params,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        let info = self
            .a
            .info
            .iter()
            .find(|(w, _)| *w == p.wg)
            .map(|(_, b)| b)
            .ok_or_else(|| {
                Error::Internal(format!(
                    "BCCOO format has no flags for workgroups of {}",
                    p.wg
                ))
            })?;
        let nwg = self.a.threads / p.wg as usize;
        if nwg == 0 || self.a.nnz == 0 || p.format != self.a.params {
            return Err(Error::Internal(format!(
                "BCCOO launch of {p} over a format of {:?} with {nwg} workgroups",
                self.a.params
            )));
        }
        if nwg > self.max_wgs {
            return Err(Error::Internal(format!(
                "BCCOO workspace for {} workgroups, {nwg} launched",
                self.max_wgs
            )));
        }
        // This call's workspace slot (a BCCOO+ temporary buffer with fewer slots narrows the
        // ring).
        let bccoo_plus = self.a.params.slices > 1;
        let ring = if bccoo_plus {
            self.slots.min(self.tmp_slots)
        } else {
            self.slots
        };
        // The ring is locked from this slot's wait to its record, after the launches (a
        // launch captured in a graph keeps the slot it was captured with).
        self.ring.run(dev, stream, ring, |slot| {
            self.launch_in_slot(dev, k, p, info, stream, slot, alpha, x, beta, y)
        })
    }

    /// The launches of one product in workspace slot `slot` (ordered after its previous user).
    #[allow(clippy::too_many_arguments)]
    fn launch_in_slot<T: Scalar>(
        &self,
        dev: &Device,
        k: &Kernels,
        p: &Params,
        info: &DeviceBuffer,
        stream: Stream,
        slot: usize,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        let bccoo_plus = self.a.params.slices > 1;
        let nwg = self.a.threads / p.wg as usize;
        let sync = self.sync.addr() + (slot * (1 + self.max_wgs) * 4) as u64;
        let carry = self.carry.addr()
            + (slot * self.max_wgs * self.a.params.shape.bh as usize * std::mem::size_of::<T>())
                as u64;
        let tmp = self.tmp.addr()
            + ((slot % self.tmp_slots) * self.out_len * std::mem::size_of::<T>()) as u64;
        let (out, limit, a, b) = if bccoo_plus {
            (tmp, self.out_len as i64, T::ONE, T::ZERO)
        } else {
            (y, self.a.rows as i64, alpha, beta)
        };
        let args = KernelArgs::new()
            .push(self.a.bits.addr())
            .push(self.a.col.addr())
            .push(self.a.col_full.addr())
            .push(self.a.values.addr())
            .push(self.a.res_entry.addr())
            .push(info.addr())
            .push(sync)
            .push(carry)
            .push(x)
            .push(out)
            .push(a)
            .push(b)
            .push(limit)
            .push(self.a.cols as i32)
            .push(p.config_word());
        // SAFETY: bccoo_spmv_<T>(const void* bits, const void* col, const unsigned* col_full,
        // const T* values, const unsigned* res_entry, const unsigned char* wg_info,
        // unsigned* sync, T* carry, const T* x, T* out, T alpha, T beta, long long limit,
        // int cols, int config): every array is this format's, built for nwg * wg threads of
        // `config`'s tile and word type (checked above: same format parameters); wg_info has nwg
        // entries, this slot's sync 1 + nwg (or more) zeroed words (no other call uses the slot
        // while this one runs: it waited for the slot's previous user) and its carry nwg * bh
        // values; x holds cols and out `limit` values (y checked by the caller, or this slot's
        // temporary buffer); the dynamic shared memory is what the kernel lays out for
        // blockDim.x = wg and `config`.
        unsafe {
            launch_shared(
                dev,
                &k.spmv,
                nwg,
                p.wg,
                p.shared_bytes(std::mem::size_of::<T>()),
                stream,
                args,
            )?
        };
        if bccoo_plus {
            let grid = self
                .a
                .rows
                .div_ceil(COMBINE_BLOCK as usize)
                .clamp(1, 32 * dev.sm_count().max(1) as usize);
            let args = KernelArgs::new()
                .push(tmp)
                .push(self.slice_stride as i64)
                .push(self.a.params.slices as i32)
                .push(self.a.rows as i64)
                .push(y)
                .push(alpha)
                .push(beta);
            // SAFETY: bccoo_combine_<T>(const T* tmp, long long stride, int slices,
            // long long rows, T* y, T alpha, T beta): tmp holds slices * stride values with
            // stride >= rows; y holds rows values (checked by the caller).
            unsafe { launch(dev, &k.combine, grid, COMBINE_BLOCK, stream, args) }
        } else {
            Ok(())
        }
    }
}

/// BCCOO ready to run on a device.
pub struct BccooGpu<T> {
    kernels: Kernels,
    format: OnDevice,
    params: Params,
    text: String,
    _t: PhantomData<T>,
}

impl<T: Scalar> std::fmt::Debug for BccooGpu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BccooGpu({})", self.text)
    }
}

impl<T: Scalar> BccooGpu<T> {
    /// Chooses the parameters (fixed rule, or by timing with `tuning`; ONLINE is treated as
    /// QUICK), builds the format on the host, uploads it and loads its kernel. With
    /// TUNING_NONE for a matrix kept on the device (no host copy), the facts, the fixed rule's
    /// format and its workgroup flags are built on the device from `csr` (`device.rs`), or,
    /// where that does not apply (int64 indices, no non-zeros), on the host from a downloaded
    /// CSR.
    pub fn prepare(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        if req.tuning == Tuning::None && req.host.is_none() {
            let how = format!("fixed rule for {} SMs", dev.sm_count());
            if !csr.index64() && device::builds_on_device(req.stats) {
                let facts = device::facts(dev, stream, csr)?;
                let p = params::fixed_rule(&facts, dev.sm_count());
                let guess = Some(facts.blocks_of(p.format.shape));
                return Self::built_on_device(dev, stream, csr, p, guess, &how);
            }
            let host = csr.download(stream)?;
            let facts = format::facts(&host);
            let p = params::fixed_rule(&facts, dev.sm_count());
            return Self::finish(dev, stream, &host, p, &format!("{how}; built on the host"));
        }
        let (csr_host, tuning) = (req.csr()?, req.tuning);
        let facts = format::facts(csr_host);
        let fixed = params::fixed_rule(&facts, dev.sm_count());
        let (p, how) = match tuning {
            Tuning::None => (fixed, format!("fixed rule for {} SMs", dev.sm_count())),
            _ if csr_host.nnz() == 0 => (
                fixed,
                format!("fixed rule; tuning={tuning}: nothing to time without non-zeros"),
            ),
            Tuning::Quick | Tuning::Online | Tuning::Exhaustive => {
                let (quick, stages) = if tuning == Tuning::Exhaustive {
                    (false, params::EXHAUSTIVE_STAGES)
                } else {
                    (true, params::QUICK_STAGES)
                };
                let picked = search(dev, stream, csr_host, &facts, fixed, stages, quick)?;
                let (best, best_ms, fixed_ms) = (picked.cand, picked.ms, picked.first_ms);
                let online = if tuning == Tuning::Online {
                    " (ONLINE treated as QUICK)"
                } else {
                    ""
                };
                (
                    best,
                    format!(
                        "tuned {tuning}{online}: {} candidates timed{}, {best_ms:.4} ms vs fixed rule {fixed_ms:.4} ms ({fixed})",
                        picked.timings.len(),
                        if picked.skipped > 0 {
                            format!(
                                " ({} skipped: format not buildable or too large)",
                                picked.skipped
                            )
                        } else {
                            String::new()
                        }
                    ),
                )
            }
        };
        Self::finish(dev, stream, csr_host, p, &how)
    }

    /// BCCOO with exactly `p` (tests and experiments): builds the format, uploads it and
    /// loads its kernel. `p` must be valid for the GPU (u16 column indices only below 65535
    /// block columns; u32 and delta work for any width).
    pub fn with_params(
        dev: &Arc<Device>,
        stream: Stream,
        csr_host: &Csr<T>,
        p: Params,
    ) -> Result<Self> {
        let block_cols = csr_host.cols().div_ceil(p.format.shape.bw as usize);
        let u16_fits = block_cols < params::U16_BLOCK_COLS;
        if !p.is_valid() || (p.format.col == params::ColMode::U16 && !u16_fits) {
            return Err(Error::InvalidValue(format!(
                "BCCOO parameters {p} are not valid for the GPU on a {} x {} matrix",
                csr_host.rows(),
                csr_host.cols()
            )));
        }
        Self::finish(dev, stream, csr_host, p, "given")
    }

    /// BCCOO with `p` (one slice) built on the device from `csr` (int32 indices, some
    /// non-zeros: [`device::builds_on_device`]); `guess`, the facts' estimate of its blocks,
    /// lets the format be allocated while the device counts them; `how` (how `p` was chosen)
    /// goes into describe(). Waits for the build.
    #[doc(hidden)]
    pub fn built_on_device(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        p: Params,
        guess: Option<f64>,
        how: &str,
    ) -> Result<Self> {
        let a = device::build(dev, stream, csr, &p, guess)?;
        let text = format!(
            "{p} ({how}; built on the device); {}",
            describe_sizes::<T>(&a.params, a.rows, a.nnz, a.blocks, a.threads, a.escapes, p.wg)
        );
        let format = OnDevice::with_workspace::<T>(dev, stream, a, WORKSPACE_RING)?;
        Ok(BccooGpu {
            kernels: load::<T>(dev, p.format.shape)?,
            format,
            params: p,
            text,
            _t: PhantomData,
        })
    }

    /// The format's arrays as they are on the device (waits for `stream`), as format.rs's
    /// [`Bccoo`], and the per-workgroup flags of the workgroup size in use: tests compare a
    /// device build with format.rs's.
    #[doc(hidden)]
    pub fn download(&self, dev: &Device, stream: Stream) -> Result<(Bccoo<T>, Vec<u8>)> {
        let on = &self.format;
        fn get<U: Copy + Default>(
            dev: &Device,
            stream: Stream,
            b: &DeviceBuffer,
        ) -> Result<Vec<U>> {
            let mut v = vec![U::default(); b.bytes() / std::mem::size_of::<U>()];
            crate::backend::cuda::copy_to_host(dev, stream, b.addr(), &mut v)?;
            Ok(v)
        }
        let col = match on.a.params.col {
            params::ColMode::U16 => ColArrays::U16(get(dev, stream, &on.a.col)?),
            params::ColMode::U32 => ColArrays::U32(get(dev, stream, &on.a.col)?),
            params::ColMode::Delta => ColArrays::Delta {
                delta: get(dev, stream, &on.a.col)?,
                full: get(dev, stream, &on.a.col_full)?,
            },
        };
        let mut values = vec![T::ZERO; on.a.values.bytes() / std::mem::size_of::<T>()];
        crate::backend::cuda::copy_to_host(dev, stream, on.a.values.addr(), &mut values)?;
        let info =
            on.a.info
                .iter()
                .find(|(w, _)| *w == self.params.wg)
                .map(|(_, b)| get(dev, stream, b))
                .transpose()?
                .unwrap_or_default();
        let f = Bccoo {
            params: on.a.params,
            rows: on.a.rows,
            cols: on.a.cols,
            nnz: on.a.nnz,
            block_rows: on.slice_stride / on.a.params.shape.bh as usize,
            slice_width: on.a.cols,
            blocks: on.a.blocks,
            threads: on.a.threads,
            bits: get(dev, stream, &on.a.bits)?,
            col,
            values,
            res_entry: get(dev, stream, &on.a.res_entry)?,
            value_slot: get(dev, stream, &on.a.slot)?,
            escapes: on.a.escapes,
        };
        Ok((f, info))
    }

    fn finish(
        dev: &Arc<Device>,
        stream: Stream,
        csr_host: &Csr<T>,
        p: Params,
        how: &str,
    ) -> Result<Self> {
        let f = format::build(csr_host, &p.format, p.wg as usize)?;
        let format = OnDevice::upload(dev, stream, &f, &[p.wg], true, WORKSPACE_RING)?;
        let kernels = load::<T>(dev, p.format.shape)?;
        let text = format!("{p} ({how}); {}", describe_format(&f, p.wg as usize));
        Ok(BccooGpu {
            kernels,
            format,
            params: p,
            text,
            _t: PhantomData,
        })
    }

    /// The parameters in use.
    pub fn params(&self) -> Params {
        self.params
    }
}

impl<T: Scalar> crate::methods::GpuMethod<T> for BccooGpu<T> {
    fn spmv(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        if self.format.a.nnz == 0 {
            return csr.scale(stream, self.format.a.rows, y, beta);
        }
        self.format.run(
            csr.device(),
            &self.kernels,
            &self.params,
            stream,
            alpha,
            x,
            beta,
            y,
        )
    }

    fn refresh_values(&self, csr: &GpuCsr<T>, stream: Stream) -> Result<()> {
        if self.format.a.nnz == 0 {
            return Ok(());
        }
        csr.scatter_values_into(stream, &self.format.a.slot, &self.format.a.values)
    }

    fn device_bytes(&self) -> usize {
        self.format.bytes()
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    // No float atomics; every addition in a fixed order (format.rs, kernels/bccoo.cu).
    fn deterministic(&self) -> bool {
        true
    }
}

/// A candidate of the search, ready to time: its format on the device and its kernels.
struct Candidate {
    format: Rc<OnDevice>,
    kernels: Rc<Kernels>,
}

/// Analyze-time tuning (the staged search of the paper's §4) over candidates timed on the real
/// matrix. Conversions are reused: the blocked matrix of the last shape, the format on the
/// device of the last format parameters (candidates of one format are sorted next to each
/// other), and the kernels of each shape.
struct Search<'a, T: Scalar> {
    dev: &'a Arc<Device>,
    stream: Stream,
    csr: &'a Csr<T>,
    kernels: HashMap<Shape, Rc<Kernels>>,
    blocked: Option<Blocked>,
    current: Option<Rc<OnDevice>>,
}

impl<T: Scalar> Search<'_, T> {
    /// `p` ready to time; `None` when its format cannot be built or does not fit in device
    /// memory (many BCCOO+ slices of a large matrix): skipped, not fatal.
    fn build(&mut self, p: &Params) -> Result<Option<Candidate>> {
        match self.try_build(p) {
            Ok(c) => Ok(Some(c)),
            Err(Error::InvalidValue(_) | Error::NotSupported(_) | Error::AllocFailed(_)) => {
                self.current = None;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn try_build(&mut self, p: &Params) -> Result<Candidate> {
        let fp = &p.format;
        if !self.current.as_ref().is_some_and(|c| c.a.params == *fp) {
            self.current = None;
            let reuse = self
                .blocked
                .as_ref()
                .is_some_and(|b| b.shape == fp.shape && b.slices == fp.slices);
            if !reuse {
                self.blocked = None;
                self.blocked = Some(format::block(self.csr, fp.shape, fp.slices)?);
            }
            let blk = self.blocked.as_ref().expect("blocked just built");
            let max_wg = *WG_VALUES.iter().max().expect("workgroup sizes") as usize;
            // Padded for every workgroup size, so one upload serves all of them.
            let f = format::layout(self.csr, blk, fp, max_wg)?;
            let wgs: Vec<u32> = WG_VALUES.iter().map(|&w| w as u32).collect();
            let on = OnDevice::upload(self.dev, self.stream, &f, &wgs, false, 1)?;
            self.current = Some(Rc::new(on));
        }
        let shape = fp.shape;
        if !self.kernels.contains_key(&shape) {
            self.kernels
                .insert(shape, Rc::new(load::<T>(self.dev, shape)?));
        }
        Ok(Candidate {
            format: self.current.clone().expect("format uploaded"),
            kernels: self.kernels[&shape].clone(),
        })
    }
}

/// The staged search from `fixed`: each stage's candidates around the incumbent, timed by
/// [`pick_fastest`] (a candidate replaces the incumbent only when at least
/// [`MIN_GAIN`](crate::methods::gpu::MIN_GAIN) faster). Returns the choice with its time, the
/// fixed rule's time, and the candidates timed and skipped.
fn search<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &Csr<T>,
    facts: &MatrixFacts,
    fixed: Params,
    stages: &[Stage],
    quick: bool,
) -> Result<Picked<Params, Candidate>> {
    let mut tuner = Tuner::new::<T>(dev, stream, csr.rows(), csr.cols(), "bccoo")?;
    let mut s = Search {
        dev,
        stream,
        csr,
        kernels: HashMap::new(),
        blocked: None,
        current: None,
    };
    let run = |c: &Candidate, p: &Params, x: u64, y: u64| {
        c.format
            .run(dev, &c.kernels, p, stream, T::ONE, x, T::ZERO, y)
    };
    let mut best = pick_fastest(&mut tuner, None, [fixed], |p| s.build(p), run)?;
    for &stage in stages {
        let Some(b) = best.as_ref() else { break };
        let mut cands = params::stage_candidates(stage, &b.cand, facts, quick);
        // Candidates of one format next to each other: one conversion and upload each.
        cands.sort_by_key(|q| {
            let f = &q.format;
            (f.shape, f.slices, f.tile, f.word_bits, f.col.code(), q.wg)
        });
        best = pick_fastest(&mut tuner, best, cands, |p| s.build(p), run)?;
    }
    best.ok_or_else(|| {
        Error::Internal(format!(
            "BCCOO's fixed rule {fixed} could not be built for tuning"
        ))
    })
}
