//! HOLA on the GPU: loads `kernels/hola.cu` for the chosen THREADS/NPT/SORT, builds the block
//! row-start buffer with `hola_row_starts` (Alg. 2) at analyze, and launches per product either
//! `hola_prescale` + `hola_spmv` (rows shared between blocks pre-scaled, then added to with
//! atomics) or, for small grids, `hola_spmv_carry` alone (shared rows finished by the last of
//! their blocks through a carry workspace allocated here); `hola_spmvt` for TRANSPOSE. QUICK/EXHAUSTIVE time their candidates with CUDA events on the real matrix;
//! ONLINE is treated as QUICK (HOLA has no run-time tuner).

use super::params::{self, Params};
use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::{
    copy_to_host, launch, launch_overlapped, Device, DeviceBuffer, Event, Function, KernelArgs,
    Stream,
};
use crate::error::{Error, Result};
use crate::methods::gpu::{pick_fastest, SlotRing, Tuner};
use crate::methods::{GpuMethod, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;
use std::marker::PhantomData;
use std::sync::Arc;

/// Threads per block of the row-start and prescale kernels.
const AUX_BLOCK: u32 = 256;

/// `TESSERA_HOLA_MODE=own` (ownership, and carry where rows need combining) or `share`
/// (prescale and atomics) in every grid, for measurements; unset: by [`params::own_mode`].
fn forced_mode() -> Option<bool> {
    static MODE: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("TESSERA_HOLA_MODE").ok()?.trim() {
        "own" => Some(true),
        "share" => Some(false),
        _ => None,
    })
}

/// Whether `blocks` blocks of `kernel` run in one wave ([`params::own_mode`]); a grid of at most
/// one block per SM is, without asking the driver for the kernel's occupancy.
fn one_wave(dev: &Device, blocks: usize, kernel: &Function, p: Params) -> bool {
    params::own_mode(blocks, dev.sm_count(), 1)
        || params::own_mode(
            blocks,
            dev.sm_count(),
            kernel.resident_blocks(dev, p.threads),
        )
}

/// The kernels of one specialisation.
struct Kernels {
    row_starts: Function,
    prescale: Function,
    spmv: Function,
    spmv_own: Function,
    spmv_carry: Function,
    spmvt: Function,
}

fn load<T: Scalar>(dev: &Device, p: Params) -> Result<Kernels> {
    let m = dev.module(&KernelSpec::new(&params::KERNELS, &p.defines())?)?;
    let s = suffix::<T>();
    Ok(Kernels {
        row_starts: m.function("hola_row_starts")?,
        prescale: m.function(&format!("hola_prescale_{s}"))?,
        spmv: m.function(&format!("hola_spmv_{s}"))?,
        spmv_own: m.function(&format!("hola_spmv_own_{s}"))?,
        spmv_carry: m.function(&format!("hola_spmv_carry_{s}"))?,
        spmvt: m.function(&format!("hola_spmvt_{s}"))?,
    })
}

/// Fills `starts` (blocks + 1 entries) with `hola_row_starts` on `stream` (asynchronous);
/// `ev`, when given, is recorded around the kernel.
fn build_starts<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
    k: &Kernels,
    (p, starts): (Params, &DeviceBuffer),
    ev: Option<&(Event, Event)>,
    (gate, zero): (u64, &DeviceBuffer),
) -> Result<()> {
    let blocks = p.blocks(csr.nnz());
    if starts.bytes() < (blocks + 1) * 4 {
        return Err(Error::Internal(format!(
            "a HOLA row-start buffer of {} bytes for {blocks} blocks",
            starts.bytes()
        )));
    }
    let rows = csr.rows();
    let (rp, _, _) = csr.arrays();
    let args = KernelArgs::new()
        .push(rows as i32)
        .push(blocks as i32)
        .push(rp)
        .push(starts.addr())
        .push(gate)
        .push(zero.addr())
        .push((zero.bytes() / 4) as i64);
    if let Some(ev) = ev {
        ev.0.record(stream)?;
    }
    // SAFETY: hola_row_starts(int rows, int nblocks, const int* row_ptr, int* starts,
    // const unsigned* gate, int* zero, long long nzero): zero holds nzero ints (a buffer of
    // ours, or none); row_ptr has rows + 1 entries (ours, or the caller's: checked, or
    // gated by `gate`, the verdict word of the check queued before on this stream, which stops
    // the kernel before it reads them when they are malformed), starts blocks + 1 (allocated
    // above); one thread per row (at least one thread, which writes starts[0] and
    // starts[nblocks]).
    unsafe {
        launch(
            dev,
            &k.row_starts,
            rows.div_ceil(AUX_BLOCK as usize).max(1),
            AUX_BLOCK,
            stream,
            args,
        )?;
    }
    if let Some(ev) = ev {
        ev.1.record(stream)?;
    }
    Ok(())
}

/// The row-start buffer the device builds for `p` (waits): for tests against
/// `format::row_starts`.
pub fn row_starts_on_device<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
    p: Params,
) -> Result<Vec<i32>> {
    let k = load::<T>(dev, p)?;
    let starts = DeviceBuffer::alloc(dev, (p.blocks(csr.nnz()) + 1) * 4, "HOLA row starts")?;
    let none = DeviceBuffer::borrowed(dev, 0, 0);
    build_starts(dev, stream, csr, &k, (p, &starts), None, (0, &none))?;
    let mut out = vec![0i32; p.blocks(csr.nnz()) + 1];
    copy_to_host(dev, stream, starts.addr(), &mut out)?;
    Ok(out)
}

/// Carry-workspace slots of a matrix: carry-mode products of it that may be in flight at once.
const CARRY_RING: usize = 4;

/// Carry mode's workspace: [`CARRY_RING`] slots of `one` bytes, each two partial sums per block
/// then one counter per block, zeroed here (the kernel resets each counter it completes, so
/// nothing is needed between products). Concurrent products of one matrix (other handles'
/// streams) must not share a slot: their tickets and partial sums would mix (a row summed
/// from another product's parts, or never written); the [`SlotRing`] keeps them apart.
struct Carry {
    buf: DeviceBuffer,
    one: usize,
    ring: SlotRing,
}

/// Bytes of one carry slot for `blocks` blocks: two partial sums (T) then a counter per block,
/// 256-byte aligned.
fn carry_slot_bytes<T: Scalar>(blocks: usize) -> usize {
    (2 * blocks * std::mem::size_of::<T>() + 4 * blocks).next_multiple_of(256)
}

/// Blocks per SM up to which a provisional HOLA runs in carry mode (the carry kernel's residency
/// in f64 at 256 threads: 64 registers and 18.5 KB of shared memory per block): beyond, share
/// mode ([`share_layout`]).
pub(crate) const CARRY_PER_SM: usize = 4;

/// Offset of the carry workspace after the row starts of `blocks` blocks (256-byte aligned, as
/// [`DeviceBuffer::alloc_parts`] places its parts).
fn carry_offset(blocks: usize) -> usize {
    ((blocks + 1) * 4).next_multiple_of(256)
}

/// Where a provisional HOLA's row starts and carry workspace lie in workspace memory given to
/// it (`crate::matrix`'s deferred check: a slot of the device's check slab, filled by the
/// check's kernel): offsets in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Blocks of the grid (non-zeros per block: the parameters' NPB).
    pub blocks: usize,
    /// Offset of the carry workspace (the row starts are at 0).
    pub carry_at: usize,
    /// Bytes of the carry workspace (zeroed by the check's kernel).
    pub carry_bytes: usize,
}

/// The [`Layout`] of parameters `p` over `nnz` entries in `bytes` of workspace, on a device of
/// `sm` SMs: `None` when it does not fit or the grid is larger than `per_sm` blocks per SM. The
/// layout is for carry mode, which is right in any grid and fast in one wave: four blocks of
/// the provisional parameters (256 threads; the carry kernel takes 64 registers in f64 and 48
/// in f32) fit on an SM.
pub fn workspace_layout<T: Scalar>(
    p: Params,
    nnz: usize,
    (sm, per_sm): (u32, usize),
    bytes: usize,
) -> Option<Layout> {
    let blocks = p.blocks(nnz);
    if blocks == 0 || !params::own_mode(blocks, sm, per_sm) {
        return None;
    }
    let carry_at = carry_offset(blocks);
    let carry_bytes = CARRY_RING * carry_slot_bytes::<T>(blocks);
    (carry_at + carry_bytes <= bytes).then_some(Layout {
        blocks,
        carry_at,
        carry_bytes,
    })
}

/// The [`Layout`] of a provisional HOLA in share mode (prescale and atomics: its row starts
/// alone, `carry_bytes` 0) over `nnz` entries in `bytes` of workspace, on a device of `sm` SMs:
/// `None` when it does not fit, or for a grid of at most [`CARRY_PER_SM`] blocks per SM (carry
/// mode's, in one wave: [`workspace_layout`]).
pub fn share_layout(p: Params, nnz: usize, sm: u32, bytes: usize) -> Option<Layout> {
    let blocks = p.blocks(nnz);
    if blocks == 0 || params::own_mode(blocks, sm, CARRY_PER_SM) {
        return None;
    }
    let carry_at = carry_offset(blocks);
    (carry_at <= bytes).then_some(Layout {
        blocks,
        carry_at,
        carry_bytes: 0,
    })
}

/// How a configuration treats rows crossing block boundaries (kernels/hola.cu).
enum Mode {
    /// Every such row shared: `hola_prescale`, then `hola_spmv` adds with atomics.
    Share,
    /// Ownership without rows spanning three blocks: `hola_spmv_own` alone.
    Own,
    /// Ownership, rows spanning three blocks carried: `hola_spmv_carry` alone, with its
    /// workspace.
    Carry(Carry),
}

/// One configuration, ready: kernels, its row-start buffer and, in carry mode, the carry
/// workspace.
struct OnDevice {
    params: Params,
    kernels: Kernels,
    starts: DeviceBuffer,
    blocks: usize,
    /// Which kernels run.
    mode: Mode,
    /// The verdict word of the check its arrays were still under at analyze (0: none): every
    /// kernel takes it (`tessera_gated` in kernels/common.cuh).
    gate: u64,
}

impl OnDevice {
    /// Loads the kernels, picks the mode and queues the row starts (zeroing the carry
    /// workspace) into memory of its own, or into `work` (address and bytes: memory lent by
    /// the caller, which must outlive it) when its layout fits there.
    #[allow(clippy::too_many_arguments)]
    fn new<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        p: Params,
        ev: Option<&(Event, Event)>,
        (gate, longest_row): (u64, Option<usize>),
        work: Option<(u64, usize)>,
    ) -> Result<Self> {
        let t0 = std::time::Instant::now();
        let kernels = load::<T>(dev, p)?;
        let t1 = std::time::Instant::now();
        let blocks = p.blocks(csr.nnz());
        let combine = params::needs_combine(longest_row, p.npb());
        let one_wave_kernel = if combine {
            &kernels.spmv_carry
        } else {
            &kernels.spmv_own
        };
        let own = forced_mode().unwrap_or_else(|| one_wave(dev, blocks, one_wave_kernel, p));
        let carry = own && combine;
        let one = carry_slot_bytes::<T>(blocks);
        // The row starts and the carry workspace: in the memory lent when they fit, else one
        // allocation (each costs a driver call on the first product's path).
        let sizes = [(blocks + 1) * 4, if carry { CARRY_RING * one } else { 0 }];
        let carry_at = carry_offset(blocks);
        let [starts, buf] = match work {
            Some((w, bytes)) if carry_at + sizes[1] <= bytes => [
                DeviceBuffer::borrowed(dev, w, sizes[0]),
                DeviceBuffer::borrowed(dev, w + carry_at as u64, sizes[1]),
            ],
            _ => DeviceBuffer::alloc_parts(dev, sizes, "HOLA row starts and carry workspace")?,
        };
        let t2 = std::time::Instant::now();
        // The kernel also zeroes the carry workspace (empty without carry mode).
        build_starts(dev, stream, csr, &kernels, (p, &starts), ev, (gate, &buf))?;
        let t3 = std::time::Instant::now();
        let mode = match (own, carry) {
            (false, _) => Mode::Share,
            (true, false) => Mode::Own,
            (true, true) => Mode::Carry(Carry {
                buf,
                one,
                ring: SlotRing::new(dev, CARRY_RING)?,
            }),
        };
        crate::backend::trace(2, || {
            let us = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e6;
            format!(
                "HOLA set-up: kernels {:.1} us, allocation {:.1} us, row starts {:.1} us, carry ring {:.1} us",
                us(t0, t1),
                us(t1, t2),
                us(t2, t3),
                us(t3, std::time::Instant::now())
            )
        });
        Ok(OnDevice {
            params: p,
            kernels,
            starts,
            blocks,
            mode,
            gate,
        })
    }

    /// How rows spanning three blocks or more are combined, for `describe`.
    fn mode(&self) -> &'static str {
        match self.mode {
            Mode::Share => " prescale",
            Mode::Own => " own (one launch: no row spans three blocks)",
            Mode::Carry(_) => " carry",
        }
    }

    /// y = alpha*A*x + beta*y: `hola_spmv_carry` or `hola_spmv_own` alone, or `hola_prescale`
    /// (when beta != 1 and there are several blocks) then `hola_spmv`. alpha != 0 and nnz > 0
    /// (the caller handles the rest).
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
        if let Mode::Carry(w) = &self.mode {
            return w.ring.run(csr.device(), stream, 0, |slot| {
                let carry = w.buf.addr() + (slot * w.one) as u64;
                let count = carry + (2 * self.blocks * std::mem::size_of::<T>()) as u64;
                self.core(csr, stream, alpha, x, beta, y, carry, count, false)
            });
        }
        let (rp, _, _) = csr.arrays();
        let prescale = matches!(self.mode, Mode::Share) && self.blocks > 1 && beta != T::ONE;
        if prescale {
            let args = KernelArgs::new()
                .push(self.blocks as i32)
                .push(rp)
                .push(self.starts.addr())
                .push(y)
                .push(beta)
                .push(self.gate);
            // SAFETY: hola_prescale_<T>(int nblocks, const int* row_ptr, const int* starts,
            // T* y, T beta, const unsigned* gate): starts has nblocks + 1 entries built for
            // this NPB, every entry a row < rows (unless the gate is shut: then the kernel
            // reads nothing); y holds rows values (checked by the caller).
            unsafe {
                launch(
                    csr.device(),
                    &self.kernels.prescale,
                    (self.blocks - 1).div_ceil(AUX_BLOCK as usize),
                    AUX_BLOCK,
                    stream,
                    args,
                )?;
            }
        }
        self.core(csr, stream, alpha, x, beta, y, 0, 0, prescale)
    }

    /// The core kernel: `hola_spmv_carry` with this call's carry slot (`carry`, `count`) in
    /// carry mode, else `hola_spmv` (which ignores both). `after_prescale`: `hola_prescale` was
    /// launched just before on `stream`, and the core overlaps it (its blocks wait for the
    /// prescale before their first atomic into y: `hola_wait_prescale`).
    #[allow(clippy::too_many_arguments)]
    fn core<T: Scalar>(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
        carry: u64,
        count: u64,
        after_prescale: bool,
    ) -> Result<()> {
        let (rp, ci, va) = csr.arrays();
        let args = KernelArgs::new()
            .push(csr.nnz() as i32)
            .push(self.blocks as i32)
            .push(rp)
            .push(ci)
            .push(va)
            .push(self.starts.addr())
            .push(x)
            .push(y)
            .push(alpha)
            .push(beta)
            .push(carry)
            .push(count)
            .push(self.gate)
            .push(csr.rows() as i32);
        let f = match self.mode {
            Mode::Share => &self.kernels.spmv,
            Mode::Own => &self.kernels.spmv_own,
            Mode::Carry(_) => &self.kernels.spmv_carry,
        };
        let dev = csr.device();
        // SAFETY: hola_spmv[_carry]_<T>(int nnz, int nblocks, const int* row_ptr,
        // const int* col_ind, const T* values, const int* starts, const T* x, T* y, T alpha,
        // T beta, T* carry, int* count, const unsigned* gate, int n): with the gate shut
        // (malformed arrays) the kernel only fills y[0, n = rows) with NaN; otherwise the CSR
        // arrays are sound and starts ours (built for
        // this NPB, with starts[nblocks] = rows); in carry mode carry holds 2*nblocks values and
        // count nblocks counters (one slot of the ring, used by no other launch in flight),
        // zeroed at analyze and left zeroed by every completed launch (the other kernels
        // ignore both); hola_spmv_own only for arrays whose longest row (their statistics) is at
        // most NPB + 1, so that no row is shared (it would add to y with an atomic that no
        // prescale prepared: a wrong y, never a fault); x holds cols and y rows values (checked
        // by the caller); one block per NPB non-zeros. Overlapped only right after this
        // product's own hola_prescale, which hola_spmv waits for before touching a shared row.
        unsafe {
            let threads = self.params.threads;
            launch_overlapped(dev, f, self.blocks, threads, stream, args, after_prescale)
        }
    }

    /// y = alpha*A^T*x + beta*y: scale y, then `hola_spmvt`.
    #[allow(clippy::too_many_arguments)]
    fn spmvt<T: Scalar>(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        csr.scale(stream, csr.cols(), y, beta)?;
        if self.blocks == 0 {
            return Ok(());
        }
        let (rp, ci, va) = csr.arrays();
        let args = KernelArgs::new()
            .push(csr.nnz() as i32)
            .push(self.blocks as i32)
            .push(rp)
            .push(ci)
            .push(va)
            .push(self.starts.addr())
            .push(x)
            .push(y)
            .push(alpha)
            .push(self.gate)
            .push(csr.cols() as i32);
        // SAFETY: hola_spmvt_<T>(int nnz, int nblocks, const int* row_ptr,
        // const int* col_ind, const T* values, const int* starts, const T* x, T* y, T alpha,
        // const unsigned* gate, int n): as for hola_spmv, with x holding rows and y n = cols
        // values (checked by the caller).
        unsafe {
            launch(
                csr.device(),
                &self.kernels.spmvt,
                self.blocks,
                self.params.threads,
                stream,
                args,
            )
        }
    }
}

/// HOLA ready to run on a device.
pub struct HolaGpu<T> {
    ready: OnDevice,
    text: String,
    _t: PhantomData<T>,
}

impl<T: Scalar> std::fmt::Debug for HolaGpu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HolaGpu({})", self.text)
    }
}

impl<T: Scalar> HolaGpu<T> {
    /// Chooses the parameters (fixed rule, or by timing candidates), loads the kernels and
    /// builds the row-start buffer.
    pub fn prepare(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let fixed = params::fixed_rule(req.stats);
        let tuned = match req.tuning {
            Tuning::None => None,
            _ if csr.nnz() == 0 => None,
            t => Some(params::candidates(req.stats, t == Tuning::Exhaustive)),
        };
        let (ready, text) = match tuned {
            None => {
                // Queued on the stream, not waited for (analyze waits once for everything):
                // the first product follows without a round trip of its own.
                let r = OnDevice::new(
                    dev,
                    stream,
                    csr,
                    fixed,
                    None,
                    (0, Some(req.stats.max)),
                    None,
                )?;
                let text = format!("{fixed} blocks={}{} (fixed rule, 3.1)", r.blocks, r.mode());
                (r, text)
            }
            Some(cands) => Self::tune(dev, stream, csr, req, &cands)?,
        };
        let text = if req.tuning == Tuning::Online {
            format!("{text}; ONLINE tunes at analyze like QUICK (HOLA has no run-time tuner)")
        } else {
            text
        };
        Ok(HolaGpu {
            ready,
            text,
            _t: PhantomData,
        })
    }

    /// QUICK/EXHAUSTIVE: each candidate with its own row starts, timed on the matrix
    /// ([`pick_fastest`]: the fixed rule, candidate 0, is kept unless another is at least
    /// [`MIN_GAIN`](crate::methods::gpu::MIN_GAIN) faster).
    fn tune(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
        cands: &[Params],
    ) -> Result<(OnDevice, String)> {
        let stats = req.stats;
        let mut tuner = Tuner::new::<T>(dev, stream, stats.rows, stats.cols, "hola")?;
        let picked = pick_fastest(
            &mut tuner,
            None,
            cands.iter().copied(),
            |&p| OnDevice::new(dev, stream, csr, p, None, (0, Some(stats.max)), None).map(Some),
            |r, _, x, y| r.spmv(csr, stream, T::ONE, x, T::ZERO, y),
        )?
        .ok_or_else(|| Error::Internal("HOLA tuning had no candidate".into()))?;
        let all: String = picked
            .timings
            .iter()
            .map(|(p, ms)| format!(" {}/{}/{}={ms:.4}", p.threads, p.npt, p.sort as u8))
            .collect();
        let r = picked.ready;
        let text = format!(
            "{} blocks={}{} (tuned: {} candidates timed, best {:.4} ms vs fixed rule ({}) {:.4} ms; threads/npt/sort=ms:{all})",
            r.params,
            r.blocks,
            r.mode(),
            cands.len(),
            picked.ms,
            cands[0],
            picked.first_ms
        );
        Ok((r, text))
    }

    /// HOLA with its fixed rule's parameters `p` for arrays known sound whose longest row is
    /// `longest_row`, as [`HolaGpu::prepare`] with TUNING_NONE builds it, its row starts and
    /// carry workspace in `work` (address and bytes: memory lent by the caller, which must
    /// outlive it) when they fit there: no allocation then, one launch (the row starts).
    pub fn prepare_in(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        (p, longest_row): (Params, usize),
        work: (u64, usize),
    ) -> Result<Self> {
        let r = OnDevice::new(
            dev,
            stream,
            csr,
            p,
            None,
            (0, Some(longest_row)),
            Some(work),
        )?;
        let text = format!("{p} blocks={}{} (fixed rule, 3.1)", r.blocks, r.mode());
        Ok(HolaGpu {
            ready: r,
            text,
            _t: PhantomData,
        })
    }

    /// HOLA with parameters `p` over arrays whose check is still running (the borrowed
    /// create's deferred check, `crate::matrix`): every kernel reads the check's verdict word
    /// at `gate` (device memory, written by the check earlier on `stream`) and, when it says
    /// the arrays are malformed, reads nothing of them and fills y with NaN.
    pub fn prepare_gated(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        p: Params,
        gate: u64,
    ) -> Result<Self> {
        let ready = OnDevice::new(dev, stream, csr, p, None, (gate, None), None)?;
        let text = format!(
            "{p} blocks={}{} (while the arrays' check runs: parameters from the mean row length alone)",
            ready.blocks,
            ready.mode()
        );
        Ok(HolaGpu {
            ready,
            text,
            _t: PhantomData,
        })
    }

    /// As [`HolaGpu::prepare_gated`], with its row starts and carry workspace already made in
    /// workspace memory at `work` laid out as `layout` (the check's kernel wrote the starts and
    /// zeroed the workspace): no allocation, no launch. Carry mode for a [`workspace_layout`],
    /// share mode (prescale and atomics) for a [`share_layout`] (no carry workspace). The
    /// memory is not the method's: it must outlive it.
    pub fn prepare_in_place(
        dev: &Arc<Device>,
        csr: &GpuCsr<T>,
        p: Params,
        gate: u64,
        (work, layout): (u64, Layout),
    ) -> Result<Self> {
        if layout.blocks != p.blocks(csr.nnz()) {
            return Err(Error::Internal(format!(
                "a HOLA workspace laid out for {} blocks, used for {}",
                layout.blocks,
                p.blocks(csr.nnz())
            )));
        }
        let ready = OnDevice {
            params: p,
            kernels: load::<T>(dev, p)?,
            starts: DeviceBuffer::borrowed(dev, work, (layout.blocks + 1) * 4),
            blocks: layout.blocks,
            mode: match layout.carry_bytes {
                0 => Mode::Share,
                bytes => Mode::Carry(Carry {
                    buf: DeviceBuffer::borrowed(dev, work + layout.carry_at as u64, bytes),
                    one: carry_slot_bytes::<T>(layout.blocks),
                    ring: SlotRing::new(dev, CARRY_RING)?,
                }),
            },
            gate,
        };
        let text = format!(
            "{p} blocks={}{} (while the arrays' check runs: parameters from the mean row length alone; row starts from the check's kernel)",
            ready.blocks,
            ready.mode()
        );
        Ok(HolaGpu {
            ready,
            text,
            _t: PhantomData,
        })
    }

    /// HOLA with parameters `p` in one launch of its core kernel (own mode: no carry ring, no
    /// gate), over row starts already made for `p` at `starts` (another HOLA's, or the check's
    /// slot: memory that must outlive this, as a retired form's does; `whose` says which, for
    /// `describe`) for arrays now known sound whose longest row is `longest_row`: what the
    /// provisional HOLA hands over to once the check reports (no allocation, no launch). `None`
    /// when own mode does not apply (rows spanning three blocks, or more blocks than one wave).
    pub fn own_over(
        dev: &Arc<Device>,
        csr: &GpuCsr<T>,
        p: Params,
        (starts, whose): (u64, &str),
        longest_row: usize,
    ) -> Result<Option<Self>> {
        let blocks = p.blocks(csr.nnz());
        if blocks == 0 || params::needs_combine(Some(longest_row), p.npb()) {
            return Ok(None);
        }
        let kernels = load::<T>(dev, p)?;
        if !one_wave(dev, blocks, &kernels.spmv_own, p) {
            return Ok(None);
        }
        let ready = OnDevice {
            params: p,
            kernels,
            starts: DeviceBuffer::borrowed(dev, starts, (blocks + 1) * 4),
            blocks,
            mode: Mode::Own,
            gate: 0,
        };
        let text = format!(
            "{p} blocks={blocks}{} (fixed rule, 3.1; row starts {whose})",
            ready.mode()
        );
        Ok(Some(HolaGpu {
            ready,
            text,
            _t: PhantomData,
        }))
    }

    /// The parameters in use.
    pub fn params(&self) -> Params {
        self.ready.params
    }

    /// True in share mode (prescale and atomics) over a grid larger than any SM holds in one
    /// wave (one block per 2048 threads of every SM): the mode a HOLA of its parameters built
    /// with any statistics runs in.
    pub fn shares_rows(&self, sm: u32) -> bool {
        let at_most_resident = 2048 / self.ready.params.threads.max(1) as usize;
        matches!(self.ready.mode, Mode::Share)
            && !params::own_mode(self.ready.blocks, sm, at_most_resident)
    }

    /// Device address of the row starts (blocks + 1 entries), for [`HolaGpu::own_over`].
    pub fn starts_addr(&self) -> u64 {
        self.ready.starts.addr()
    }
}

impl<T: Scalar> GpuMethod<T> for HolaGpu<T> {
    fn spmv(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        if self.ready.blocks == 0 {
            return csr.scale(stream, csr.rows(), y, beta);
        }
        self.ready.spmv(csr, stream, alpha, x, beta, y)
    }

    fn spmv_transpose(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        self.ready.spmvt(csr, stream, alpha, x, beta, y)
    }

    // Workspace lent by the check slab (prepare_in_place) is the device's, not the matrix's.
    fn device_bytes(&self) -> usize {
        self.ready.starts.owned_bytes()
            + match &self.ready.mode {
                Mode::Carry(c) => c.buf.owned_bytes(),
                _ => 0,
            }
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    // Rows shared between blocks (and leftovers inside a block) are added with float atomics.
    fn deterministic(&self) -> bool {
        false
    }
}
