//! The borrowed create's check, not waited for ([`Matrix::borrow_device_deferred`]): what
//! `tessera_create_csr_borrowed` does unless `TESSERA_CHECK=sync`.
//!
//! The check (`util_inspect`) is queued on the create's stream and nothing waits for it. Its
//! outcome is read when something needs it:
//! - AUTO's analyze with TUNING_NONE does not wait: while the check runs it answers with HOLA
//!   (safe on any row lengths) with parameters from the sizes and the mean row length
//!   (`provisional_params`), every kernel of
//!   which reads the check's verdict on the device first and, for malformed arrays, reads
//!   nothing of them and fills y with NaN (`tessera_gated` in kernels/common.cuh);
//! - each product looks (never waits): once the outcome is there, a malformed matrix's product
//!   returns the check's error (the create's status and sentence), and a sound one's first
//!   product starts AUTO's real choice in the background (the light method its statistics
//!   pick, built on a worker and swapped in at a product boundary, then the heavy format if
//!   AUTO predicts one), as `background.rs` swaps any build;
//! - every other call that needs the statistics or the arrays (analyze otherwise, value
//!   updates, the host copy) waits for the outcome and returns the error, if any.
//!
//! The check's slot (its verdict word) stays with the matrix while a gated form may run: until
//! the matrix is destroyed or analyzed again.

use super::background::{Background, Phases};
use super::{Gpu, Matrix};
use crate::backend::cuda::check::{Fuse, BIG_WORK_BYTES, WORK_BYTES};
use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::import::DeviceCsr;
use crate::backend::cuda::{self, OwnedStream, Stream};
use crate::csr::RowStats;
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::methods::csr_vector::{pieces, sliced};
use crate::methods::hola::cuda::{self as hola_cuda, HolaGpu};
use crate::methods::hola::params as hola_params;
use crate::methods::{self, GpuMethod, Request};
use crate::scalar::Scalar;
use crate::select;
use crate::types::{Algorithm, Tuning};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A provisional analysis: HOLA with these parameters, gated by the check, until a product
/// after the one that read the check's outcome (`stats`) starts AUTO's real choice (`begun`).
pub(super) struct Provisional {
    params: hola_params::Params,
    /// Its row starts (device address; the form is retired, not dropped, when swapped out).
    starts: u64,
    /// It runs in share mode (a grid of many waves), as a HOLA of its parameters built with
    /// the statistics would: then it stays when AUTO's choice is that HOLA.
    shares_rows: bool,
    /// The check's statistics, set by the product that reads the outcome, for the next one
    /// to start AUTO's choice with (that host work is left to the next product).
    stats: std::sync::OnceLock<RowStats>,
    /// AUTO's choice has been started.
    begun: AtomicBool,
}

impl std::fmt::Debug for Provisional {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Provisional(HOLA {})", self.params)
    }
}

/// A check's outcome as the matrix's statistics, or the error every call then returns.
fn outcome(o: &Result<Option<RowStats>>) -> Result<RowStats> {
    match o {
        Err(e) => Err(e.clone()),
        Ok(None) => Err(unsorted()),
        Ok(Some(s)) => Ok(*s),
    }
}

/// The provisional HOLA's layout in the check's workspace (`None`: it does not fit): carry
/// mode in the slot's for a grid of up to two blocks per SM, in a big one up to
/// `CARRY_PER_SM`, else share mode (row starts alone) in a big one.
fn slot_layout<T: Scalar>(
    dev: &cuda::Device,
    params: hola_params::Params,
    nnz: usize,
) -> Option<hola_cuda::Layout> {
    let sm = dev.sm_count();
    hola_cuda::workspace_layout::<T>(params, nnz, (sm, 2), WORK_BYTES)
        .or_else(|| {
            let per_sm = hola_cuda::CARRY_PER_SM;
            hola_cuda::workspace_layout::<T>(params, nnz, (sm, per_sm), BIG_WORK_BYTES)
        })
        .or_else(|| hola_cuda::share_layout(params, nnz, sm, BIG_WORK_BYTES))
}

/// The error of a matrix read in place whose columns are unsorted in some row.
pub(crate) fn unsorted() -> Error {
    Error::NotSupported(
        "the columns of some row are not sorted: a matrix read in place needs them sorted (tessera_create_csr sorts a copy)".into(),
    )
}

/// What is known of a matrix before its check: its sizes and mean row length; the longest row
/// taken as all of it and the columns as spread over all (what HOLA's fixed rule then picks is
/// its general split).
fn before_check(p: &DeviceCsr) -> RowStats {
    RowStats {
        rows: p.rows,
        cols: p.cols,
        nnz: p.nnz,
        mean: if p.rows == 0 {
            0.0
        } else {
            p.nnz as f64 / p.rows as f64
        },
        std_dev: 0.0,
        min: 0,
        max: p.nnz,
        empty_rows: 0,
        col_spread: p.cols as f64,
    }
}

/// The provisional HOLA's parameters for a matrix of these sizes: its fixed rule on what is
/// known before the check (the sizes and the mean row length; any parameters are safe on any
/// rows). Below [`GUESS_LOCAL_NNZ`] entries the longest row is taken as all of them and the
/// columns as spread over all: HOLA's general split (256 x 4), which is AUTO's final HOLA on
/// most small matrices it runs HOLA on, so that form stays once the check reports. From there,
/// where products last long enough for the split to matter, the rows are taken as even and
/// their columns as near each other (128 x 8 from 6 entries per row). Session 20, runs R and S
/// (H100, each configuration timed): where the rows are regular and local, 256 x 4 is 20-24%
/// slower than 128 x 8 in f32 (stencil27 100³ 94.5 against 78.7 us, elasticity 48³ 90.3
/// against 72.8, lap3d7 160³ 129.9 against 108.5); where they are not, 128 x 8 is 0.3-1.4%
/// slower than 256 x 4 at 16 entries per row (uniform, power-law and empty-row generators,
/// both types; circuit rows, 4.6-6.2%, have fewer than 6 entries and keep 256 x 4). The final
/// HOLA, with the measured statistics, follows once the check reports.
fn provisional_params(s: &RowStats) -> hola_params::Params {
    let local = s.nnz >= GUESS_LOCAL_NNZ;
    hola_params::fixed_rule(&RowStats {
        std_dev: 0.0,
        min: 0,
        max: if local { s.mean.ceil() as usize } else { s.nnz },
        empty_rows: 0,
        col_spread: if local { 0.0 } else { s.cols as f64 },
        ..*s
    })
}

/// The entries from which the provisional HOLA takes the rows as regular and local
/// ([`provisional_params`]): the size from which `select::needs_split` sends rows of 10 or
/// more to HOLA for good.
const GUESS_LOCAL_NNZ: usize = 4_000_000;

/// What AUTO with TUNING_NONE runs for these statistics, as analyze decides it: the method over
/// the CSR arrays, and the heavy format to build in the background and after how many
/// products (none with one core: analyze would build BRC's device form at once, which a
/// product does not).
fn auto_plan(stats: &RowStats, val_bytes: usize, sm: u32) -> (Algorithm, Vec<(Algorithm, u64)>) {
    let spare = select::spare_core();
    let after = |target: Algorithm| {
        let from = if methods::needs_host_csr(target, Tuning::None, stats) {
            select::BuildFrom::Download
        } else {
            select::BuildFrom::Device
        };
        (target, select::background_start_after(target, from))
    };
    match select::background_plan(
        stats,
        val_bytes,
        Algorithm::Auto,
        Tuning::None,
        false,
        sm,
        spare,
    ) {
        Some((now, later)) if spare => {
            // A second format to try once the first one's trial is over.
            let second = select::second_trial(stats, val_bytes, later, false, spare);
            (
                now,
                std::iter::once(later).chain(second).map(after).collect(),
            )
        }
        Some((now, _)) => (now, Vec::new()),
        None => (select::heuristic(stats, val_bytes, false, sm), Vec::new()),
    }
}

impl<T: Scalar> Matrix<T> {
    /// As [`Matrix::borrow_device`] with [`super::BorrowedWrites::Announced`], but the check is
    /// queued and not waited for (this module's header says when its outcome is read). A
    /// matrix with int64 indices or no rows, or when every check slot is taken, is checked
    /// before this returns, as `borrow_device` does (`Ok(None)`: unsorted columns).
    pub fn borrow_device_deferred(handle: &Handle, p: &DeviceCsr) -> Result<Option<Self>> {
        let writes = super::BorrowedWrites::Announced;
        let (Some(dev), false, crate::types::IndexBase::Zero) = (handle.cuda(), p.is64, p.base)
        else {
            return Self::borrow_device(handle, p, writes);
        };
        let stream = handle.cuda_stream();
        let t0 = std::time::Instant::now();
        let stats = before_check(p);
        // A small matrix's provisional HOLA lives in the check's slot: the check's kernel
        // writes its row starts and zeroes its carry workspace (no allocation, no launch).
        let params = provisional_params(&stats);
        let fuse = slot_layout::<T>(dev, params, p.nnz).map(|l| Fuse {
            npb: params.npb(),
            nblocks: l.blocks,
            carry_at: l.carry_at,
            carry_bytes: l.carry_bytes,
        });
        crate::backend::span("borrow: stats");
        let Some(check) = cuda::import::inspect_deferred(dev, stream, p, fuse)? else {
            return Self::borrow_device(handle, p, writes);
        };
        let t1 = std::time::Instant::now();
        // The transposed product's launch depends on the mean row length alone.
        let transpose = methods::transpose::gpu_launch(&stats, dev.sm_count());
        let gpu = GpuCsr::borrowed(
            dev,
            (p.rows, p.cols, p.nnz),
            [p.row_ptr, p.col_ind, p.values],
            false,
            transpose,
        )?;
        crate::backend::span("borrow: csr");
        let mut m = Self::with_copies(handle, None, Some(Arc::new(gpu)), stats);
        m.check = Some(check);
        crate::backend::span("borrow: matrix");
        crate::backend::trace(2, || {
            format!(
                "borrow {} x {}, nnz {}: check queued in {:.1} us, the rest {:.1} us",
                p.rows,
                p.cols,
                p.nnz,
                (t1 - t0).as_secs_f64() * 1e6,
                t1.elapsed().as_secs_f64() * 1e6
            )
        });
        Ok(Some(m))
    }

    /// Reads the check's outcome, waiting for it when `wait` (else `Ok(false)` while it runs):
    /// its statistics become the matrix's, or its error is returned (every time).
    pub(super) fn settle_check(&mut self, handle: &Handle, wait: bool) -> Result<bool> {
        let Some(c) = &self.check else {
            return Ok(true);
        };
        let stream = handle.cuda_stream();
        let outcome = if wait {
            Some(c.wait(stream))
        } else {
            c.poll(stream)
        };
        match outcome {
            None => Ok(false),
            Some(o) => {
                self.stats = self::outcome(o)?;
                Ok(true)
            }
        }
    }

    /// True while the matrix runs a provisional analysis (HOLA gated by its check): its
    /// product changes once the check's outcome is read (the bench then measures every N).
    #[doc(hidden)]
    pub fn is_provisional(&self) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.provisional.is_some())
    }

    /// The statistics of the check, when its outcome is known and sound.
    pub(super) fn checked_stats(&self) -> Option<&RowStats> {
        match self.check.as_ref()?.known()? {
            Ok(Some(s)) => Some(s),
            _ => None,
        }
    }

    /// At analyze: AUTO with TUNING_NONE on a matrix whose check is still running (and may
    /// build in the background, on a handle that allows atomics) gets the provisional HOLA
    /// (`Ok(true)`); otherwise the outcome is waited for, and kept or returned as an error
    /// (`Ok(false)`: analyze goes on).
    pub(super) fn analyze_before_check(
        &mut self,
        handle: &Handle,
        alg: Algorithm,
        tuning: Tuning,
    ) -> Result<bool> {
        if self.check.is_none() {
            return Ok(false);
        }
        let eligible = alg == Algorithm::Auto
            && tuning == Tuning::None
            && !handle.deterministic()
            && select::background_enabled()
            && !self.reads_arrays_only();
        let t0 = std::time::Instant::now();
        let settled = eligible && self.settle_check(handle, false)?;
        crate::backend::span("analyze: poll");
        if settled && self.analyze_in_slot(handle)? {
            return Ok(true);
        }
        crate::backend::span("analyze: in slot?");
        if !eligible || settled {
            self.settle_check(handle, true)?;
            crate::backend::span("analyze: outcome read");
            crate::backend::trace(2, || {
                format!(
                    "analyze: the check's outcome read in {:.1} us",
                    t0.elapsed().as_secs_f64() * 1e6
                )
            });
            return Ok(false);
        }
        let (Some(dev), Some(csr), Some(c)) = (handle.cuda(), self.dcsr.clone(), &self.check)
        else {
            return Err(Error::Internal(
                "a deferred check without a device CSR".into(),
            ));
        };
        let start = std::time::Instant::now();
        let (gate, workspace) = (c.gate(), c.workspace());
        // The old analysis goes first, as analyze_with does.
        self.drop_analysis();
        let params = provisional_params(&self.stats);
        let stream = handle.cuda_stream();
        let in_slot = workspace.zip(slot_layout::<T>(dev, params, csr.nnz()));
        let hola = match in_slot {
            Some(work) => HolaGpu::prepare_in_place(dev, &csr, params, gate, work)?,
            None => HolaGpu::prepare_gated(dev, stream, &csr, params, gate)?,
        };
        let (starts, shares_rows) = (hola.starts_addr(), hola.shares_rows(dev.sm_count()));
        let in_slot = in_slot.is_some();
        let method: Box<dyn GpuMethod<T>> = Box::new(hola);
        crate::backend::span("prov: hola");
        // In the slot, analyze queued nothing (the check's kernel wrote the row starts, and
        // products are ordered after it by the check itself): no event to record.
        let ready = match in_slot {
            true => cuda::Ready::nothing(),
            false => cuda::Ready::record(dev, stream)?,
        };
        crate::backend::span("prov: event");
        let provisional = Provisional {
            params,
            starts,
            shares_rows,
            stats: std::sync::OnceLock::new(),
            begun: AtomicBool::new(false),
        };
        self.install_hola(
            (csr, method, ready),
            Some(provisional),
            start,
            "AUTO: HOLA while the arrays' check runs, then the method its statistics choose; ",
        );
        Ok(true)
    }

    /// Makes HOLA `method` over `csr` the matrix's analysis (what analyze queued marked by
    /// `ready`), provisional or not, as analyze_with records one.
    fn install_hola(
        &mut self,
        (csr, method, ready): (Arc<GpuCsr<T>>, Box<dyn GpuMethod<T>>, cuda::Ready),
        provisional: Option<Provisional>,
        start: std::time::Instant,
        auto_note: &str,
    ) {
        let kind = match provisional {
            Some(_) => "while the arrays' check runs",
            None => "from the check's slot",
        };
        self.gpu = Some(Gpu {
            forms: super::Forms::new(Algorithm::Hola, method),
            csr,
            provisional,
            trial: Arc::new(super::trial::Trial::for_matrix(
                self.stats.nnz,
                std::mem::size_of::<T>(),
            )),
            ready,
        });
        let analysis_ms = start.elapsed().as_secs_f64() * 1e3;
        super::trace(|| format!("analyze: hola in {:.1} us, {kind}", analysis_ms * 1e3));
        self.analysis = Some(super::Analysis {
            analysis_ms,
            auto_note: auto_note.into(),
        });
    }

    /// At analyze, the check's outcome read and sound: when AUTO's choice is HOLA and no heavy
    /// format follows, that HOLA runs from the check's workspace for good (`Ok(true)`): with
    /// the parameters the workspace was laid out for, over the row starts the check's kernel
    /// wrote (no allocation, no launch); with others, at a first analysis, its row starts are
    /// written there (no allocation). Otherwise `Ok(false)` (analyze goes on).
    fn analyze_in_slot(&mut self, handle: &Handle) -> Result<bool> {
        let (Some(dev), Some(csr), Some(c)) = (handle.cuda(), self.dcsr.clone(), &self.check)
        else {
            return Ok(false);
        };
        if auto_plan(&self.stats, std::mem::size_of::<T>(), dev.sm_count())
            != (Algorithm::Hola, Vec::new())
        {
            return Ok(false);
        }
        let params = provisional_params(&self.stats);
        let fixed = hola_params::fixed_rule(&self.stats);
        let laid_out = c
            .fills_workspace()
            .then(|| slot_layout::<T>(dev, params, csr.nnz()))
            .flatten()
            .filter(|_| fixed == params);
        // Other parameters overwrite the workspace: only where no earlier analysis's HOLA
        // may still read it.
        if laid_out.is_none() && (self.gpu.is_some() || self.analysis.is_some()) {
            return Ok(false);
        }
        let start = std::time::Instant::now();
        let (gate, lent) = (c.gate(), c.lend());
        let stream = handle.cuda_stream();
        self.drop_analysis();
        let method: Box<dyn GpuMethod<T>> = match laid_out {
            // One launch of the core kernel where no row needs combining (the check is done:
            // no gate), else the carry or share mode the workspace was laid out for.
            Some(layout) => match HolaGpu::own_over(
                dev,
                &csr,
                params,
                (lent.0, "from the check's kernel"),
                self.stats.max,
            )? {
                Some(m) => Box::new(m),
                None => Box::new(HolaGpu::prepare_in_place(
                    dev,
                    &csr,
                    params,
                    gate,
                    (lent.0, layout),
                )?),
            },
            None => Box::new(HolaGpu::prepare_in(
                dev,
                stream,
                &csr,
                (fixed, self.stats.max),
                lent,
            )?),
        };
        let ready = cuda::Ready::record(dev, stream)?;
        self.install_hola((csr, method, ready), None, start, "");
        Ok(true)
    }

    /// At a product, before its launch: while the check runs, orders `stream` after it (the
    /// gated form runs); once its outcome is known, returns its error, or (for a provisional
    /// analysis) the statistics with which the caller starts AUTO's real choice
    /// ([`Matrix::start_after_launch`]) once the product is queued. The product that reads the
    /// outcome leaves that start (a worker, the forms' builds: host work) to the next product
    /// (`now`: to itself), so that a first product does not wait for it; a product being
    /// captured in a graph leaves it too.
    pub(super) fn check_at_product(
        &self,
        dev: &Arc<cuda::Device>,
        stream: Stream,
        gpu: &Gpu<T>,
        now: bool,
    ) -> Result<Option<RowStats>> {
        let Some(c) = &self.check else {
            return Ok(None);
        };
        let prov = gpu.provisional.as_ref();
        if let Some(o) = c.known() {
            outcome(o)?;
            let Some(p) = prov else {
                return Ok(None);
            };
            if let Some(stats) = p.stats.get() {
                // Two atomic loads on every later product; a capture is asked about once.
                if p.begun.load(Ordering::Acquire)
                    || (!now && cuda::is_capturing(dev, stream)?)
                    || p.begun.swap(true, Ordering::AcqRel)
                {
                    return Ok(None);
                }
                return Ok(Some(*stats));
            }
        }
        if cuda::is_capturing(dev, stream)? {
            // No event query in a capture: `order` waits on the host (this once) for the check,
            // so that a replay runs after it; a later product reads the outcome.
            return c.order(stream).map(|()| None);
        }
        let stats = match c.poll(stream) {
            None => return c.order(stream).map(|()| None),
            Some(o) => outcome(o)?,
        };
        let Some(prov) = &gpu.provisional else {
            return Ok(None);
        };
        // Another product may have read the outcome first: it set the statistics.
        if prov.stats.set(stats).is_err() || !now || prov.begun.swap(true, Ordering::AcqRel) {
            return Ok(None);
        }
        Ok(Some(stats))
    }

    /// After a product's launch: starts AUTO's real choice for the statistics that
    /// [`Matrix::check_at_product`] returned (`None`: nothing to start). A failure leaves the
    /// provisional HOLA running: the arrays are sound, so it is right.
    pub(super) fn start_after_launch(
        &self,
        dev: &Arc<cuda::Device>,
        stream: Stream,
        gpu: &Gpu<T>,
        stats: Option<RowStats>,
    ) {
        let (Some(stats), Some(prov)) = (stats, &gpu.provisional) else {
            return;
        };
        if let Err(e) = self.start_final(dev, stream, gpu, prov, stats) {
            super::trace(|| format!("AUTO's choice after the check could not start: {e}"));
        }
    }

    /// Starts what AUTO's analyze would have built with the statistics: the light method (a
    /// build on a worker, swapped in at a product boundary), unless it is the provisional HOLA
    /// itself, then the heavy format it predicts, if any.
    fn start_final(
        &self,
        dev: &Arc<cuda::Device>,
        stream: Stream,
        gpu: &Gpu<T>,
        prov: &Provisional,
        stats: RowStats,
    ) -> Result<()> {
        let (now, later) = auto_plan(&stats, std::mem::size_of::<T>(), dev.sm_count());
        let mut bgs = Vec::new();
        // CSR_VECTOR outside its sliced and pieces modes is its kernels looked up (no device
        // work, no allocation): made here, after the product's launch (while the device runs
        // it), and swapped in at once. The sliced mode builds its slice bounds from the arrays
        // and the pieces mode its piece table, each with its workspace: on a worker
        // (`light_build`), since a product allocates nothing.
        let made = match now {
            Algorithm::CsrVector
                if !sliced::suits(&stats, std::mem::size_of::<T>()) && !pieces::suits(&stats) =>
            {
                let req = Request::on_device(&stats, false);
                methods::prepare_gpu(Algorithm::CsrVector, dev, stream, &gpu.csr, &req).ok()
            }
            _ => None,
        };
        crate::backend::span("final: light made");
        let same_hola = now == Algorithm::Hola && hola_params::fixed_rule(&stats) == prov.params;
        // Without rows that need combining, the final HOLA runs its core kernel alone (no
        // carry ring, no gate) over the provisional one's row starts, in at once when the grid
        // is one wave.
        let own = match same_hola {
            true => HolaGpu::own_over(
                dev,
                &gpu.csr,
                prov.params,
                (
                    prov.starts,
                    "of the HOLA that ran while the arrays' check ran",
                ),
                stats.max,
            )?,
            false => None,
        };
        if let Some(m) = made {
            // Made at analyze (kernels only): in at once.
            gpu.forms.swap_now(now, m);
        } else if let Some(m) = own {
            gpu.forms.swap_now(now, Box::new(m));
        } else if !same_hola
            || !(prov.shares_rows || hola_params::needs_combine(Some(stats.max), prov.params.npb()))
        {
            // The provisional HOLA stays only where a HOLA built now would be the same: its
            // parameters, and share mode (a grid of many waves) or long rows that need the
            // carry mode it runs in.
            bgs.push(light_build(now, stats, self.values_gen, dev, &gpu.csr)?);
        }
        crate::backend::span("final: light spawned");
        for &(target, after) in &later {
            bgs.push(self.spawn_gpu(dev, &gpu.csr, target, stats, false, None, after, &gpu.trial)?);
        }
        crate::backend::span("final: later spawned");
        super::trace(|| {
            format!(
                "the arrays' check: sound; AUTO: {now}{}",
                later
                    .iter()
                    .map(|(t, a)| format!(", then {t} after {a} products"))
                    .collect::<String>()
            )
        });
        if !bgs.is_empty() {
            gpu.forms.add_backgrounds(bgs);
        }
        Ok(())
    }
}

/// A method over the CSR arrays (CSR_VECTOR or HOLA, fixed rule), prepared on a worker on a
/// stream of its own and waited for there, to swap in for the provisional HOLA.
fn light_build<T: Scalar>(
    target: Algorithm,
    stats: RowStats,
    values_gen: u64,
    dev: &Arc<cuda::Device>,
    csr: &Arc<GpuCsr<T>>,
) -> Result<Background<Box<dyn GpuMethod<T>>>> {
    type Resources<T> = (Arc<cuda::Device>, Arc<GpuCsr<T>>);
    Background::spawn(
        target,
        values_gen,
        0,
        Phases {
            fetch: |_: &Resources<T>| Ok(()),
            host: |()| Ok(()),
            device: move |(), (dev, csr): Resources<T>| {
                cuda::relax_capture_mode()?;
                // The context current for the whole half (spawn.rs says why).
                let _current = dev.enter()?;
                let own = OwnedStream::new(&dev)?;
                let req = Request::on_device(&stats, false);
                // Stream-ordered allocations: a cuMemAlloc here would stall the caller's
                // launches (memory.rs, allocating_on).
                let m = cuda::allocating_on(own.stream(), || {
                    methods::prepare_gpu(target, &dev, own.stream(), &csr, &req)
                })?;
                own.synchronize()?;
                Ok(m)
            },
        },
        (dev.clone(), csr.clone()),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(rows: usize, nnz: usize) -> RowStats {
        before_check(&DeviceCsr {
            rows,
            cols: rows,
            nnz,
            row_ptr: 0,
            col_ind: 0,
            values: 0,
            is64: false,
            base: crate::types::IndexBase::Zero,
        })
    }

    #[test]
    fn the_provisional_hola_guesses_local_rows_only_on_large_matrices() {
        let p = |rows, nnz| {
            let q = provisional_params(&sizes(rows, nnz));
            (q.threads, q.npt)
        };
        // A 27-point stencil of 100³: 26.5M entries.
        assert_eq!(p(1_000_000, 26_463_592), (128, 8));
        // The same mean on a small matrix: the general split, AUTO's usual final HOLA there.
        assert_eq!(p(10_000, 265_000), (256, 4));
        // Fewer than 6 entries per row: never taken as local.
        assert_eq!(p(1_000_000, 5_000_000), (256, 4));
        // Rows longer than a block: blocks of 512 whatever the guess.
        assert_eq!(p(4_000, 8_000_000), (128, 4));
    }
}
