//! [`Matrix`]: tessera's own copy of a sparse matrix, the method analyze chose for it, and the
//! product.
#![forbid(unsafe_code)]

mod background;
mod borrowed;
mod check;
mod create;
mod info;
mod spawn;
mod trial;

#[doc(hidden)]
pub use crate::backend::workers::running_builds;

pub use crate::backend::cuda::deferred_checks;
pub use background::BackgroundStatus;
pub use borrowed::BorrowedWrites;
pub(crate) use check::unsorted;
pub use create::CreatePath;
pub use info::MatrixInfo;

use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{self, DeviceVec};
use crate::csr::{Csr, RowStats};
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::methods::{self, GpuMethod, HostMethod, Request};
use crate::scalar::Scalar;
use crate::select;
use crate::types::{Algorithm, BackendKind, Operation, Tuning, ValueType};
use background::{Background, Forms, Phases};

/// A background build asked of an analysis: the method to build, the tests' gate, and the
/// products to run before it starts.
type Later = (Algorithm, Option<std::sync::mpsc::Receiver<()>>, u64);
use std::sync::Arc;
use std::time::Instant;

/// `TESSERA_TRACE` (level 1): where a create's or an analyze's time went.
fn trace(line: impl FnOnce() -> String) {
    crate::backend::trace(1, line);
}

#[derive(Debug)]
struct Analysis {
    analysis_ms: f64,
    /// How AUTO chose, when it timed the methods (prefixes `info.params`).
    auto_note: String,
}

/// What analyze built on the device: the method's forms (declared first, so that they go
/// first) and the CSR arrays every method's TRANSPOSE and value update use.
#[derive(Debug)]
struct Gpu<T: Scalar> {
    forms: Forms<Box<dyn GpuMethod<T>>>,
    csr: Arc<GpuCsr<T>>,
    /// A provisional analysis, made while the borrowed create's check ran (check.rs).
    provisional: Option<check::Provisional>,
    /// AUTO's trial of a heavy format swapped in against the form it replaced (trial.rs).
    trial: Arc<trial::Trial>,
    /// What analyze queued on its stream (HOLA's row starts, a format's upload): products and
    /// value updates on other streams follow it (analyze does not wait for it).
    ready: cuda::Ready,
}

/// A sparse matrix owned by tessera, in value type `T` (`f32` or `f64`).
#[derive(Debug)]
pub struct Matrix<T: Scalar> {
    /// tessera's CSR on the host. Absent while the matrix lives on the device only (the device
    /// create paths), until something reads it ([`Matrix::csr`], a format built on the host,
    /// AUTO's timing): see `host_csr`. Shared with a background build's worker while it reads
    /// it; update_values copies it then.
    csr: Option<Arc<Csr<T>>>,
    /// The CSR on the device (CUDA backend): made at create by the device paths, or by the
    /// first analyze; later analyses and value updates reuse it.
    dcsr: Option<Arc<GpuCsr<T>>>,
    stats: RowStats,
    backend: BackendKind,
    device: i32,
    analysis: Option<Analysis>,
    /// The method on the host backend (after analyze).
    host: Option<Forms<Box<dyn HostMethod<T>>>>,
    /// The method and the CSR on the device (CUDA backend, after analyze).
    gpu: Option<Gpu<T>>,
    /// True after update_values from device memory while `csr` is present: the device holds
    /// newer values than it.
    host_values_stale: bool,
    /// Why the last update_values failed part way on the device (the CSR and the method's own
    /// value arrays may then disagree): products refuse to run, rather than return a wrong y
    /// silently, until update_values or analyze succeeds.
    values_failed: Option<String>,
    /// Counts value updates: a form built in the background from older values is refreshed
    /// before it is swapped in.
    values_gen: u64,
    /// A matrix over the caller's arrays whose caller may rewrite them without a call
    /// ([`BorrowedWrites::Unannounced`]): it runs only methods that read them at product time.
    unannounced_writes: bool,
    /// The borrowed create's check, queued and not waited for (check.rs): kept while a form
    /// gated by it may run (until destroy or the next analyze). Declared last: it is dropped
    /// after the forms, when their kernels are done.
    check: Option<crate::backend::cuda::check::DeferredCheck>,
}

impl<T: Scalar> Matrix<T> {
    /// Takes an already validated CSR.
    pub fn from_csr(handle: &Handle, csr: Csr<T>) -> Self {
        let stats = csr.stats();
        Self::from_parts_unchecked(handle, csr, stats)
    }

    fn from_parts_unchecked(handle: &Handle, csr: Csr<T>, stats: RowStats) -> Self {
        Self::with_copies(handle, Some(Arc::new(csr)), None, stats)
    }

    fn with_copies(
        handle: &Handle,
        csr: Option<Arc<Csr<T>>>,
        dcsr: Option<Arc<GpuCsr<T>>>,
        stats: RowStats,
    ) -> Self {
        Matrix {
            csr,
            dcsr,
            stats,
            backend: handle.backend(),
            device: handle.device(),
            analysis: None,
            host: None,
            gpu: None,
            host_values_stale: false,
            values_failed: None,
            values_gen: 0,
            unannounced_writes: false,
            check: None,
        }
    }

    fn check_handle(&self, handle: &Handle) -> Result<()> {
        if handle.backend() != self.backend || handle.device() != self.device {
            return Err(Error::InvalidValue(format!(
                "the matrix was created on the {} backend (device {}) but the handle is {} (device {}); use a handle of the same backend and device",
                self.backend, self.device, handle.backend(), handle.device()
            )));
        }
        Ok(())
    }

    /// The matrix in tessera's CSR (sorted columns, base 0), with its current values. A matrix
    /// kept on the device only is downloaded first (and keeps the host copy); after
    /// [`Matrix::update_values_device`] the device's values are fetched (both wait for the
    /// handle's stream).
    pub fn csr(&mut self, handle: &Handle) -> Result<Arc<Csr<T>>> {
        self.check_handle(handle)?;
        self.settle_check(handle, true)?;
        self.host_csr(handle)
    }

    /// Whether the matrix holds its host copy now (tests: the device create paths make none).
    #[doc(hidden)]
    pub fn has_host_copy(&self) -> bool {
        self.csr.is_some()
    }

    /// The host CSR, made when missing: a matrix the device create paths made lives on the
    /// device only until a reader needs the host copy; this downloads it then.
    fn host_csr(&mut self, handle: &Handle) -> Result<Arc<Csr<T>>> {
        self.sync_host_values(handle)?;
        if let Some(c) = &self.csr {
            return Ok(c.clone());
        }
        if let Some(why) = &self.values_failed {
            return Err(Error::ExecutionFailed(format!(
                "the matrix's last update_values failed part way ({why}) and it has no host copy to restore its values from; call update_values again"
            )));
        }
        let d = self.dcsr.as_ref().ok_or_else(|| {
            Error::Internal("a matrix with neither a host nor a device CSR".into())
        })?;
        let t0 = Instant::now();
        let c = Arc::new(d.download(handle.cuda_stream())?);
        trace(|| {
            format!(
                "host copy of {} entries downloaded in {:.2} ms",
                c.nnz(),
                t0.elapsed().as_secs_f64() * 1e3
            )
        });
        self.csr = Some(c.clone());
        Ok(c)
    }

    /// Row statistics.
    pub fn stats(&self) -> &RowStats {
        self.checked_stats().unwrap_or(&self.stats)
    }

    /// Chooses a method (AUTO) or takes the requested one, picks its parameters (by its fixed
    /// rule; by timing candidates on a GPU when `tuning` asks for it) and builds its format.
    /// Analyzing again replaces the previous analysis.
    ///
    /// AUTO with TUNING_NONE, when its heuristic picks a method with a format of its own (BRC,
    /// TILE, BCCOO), answers at once with the method over the CSR arrays the heuristic would
    /// pick without them, and builds the format on a worker thread; a product swaps it in once
    /// it is ready (`select::background_plan`; `TESSERA_BACKGROUND_BUILD=0` builds it here). A
    /// process with one core (`select::spare_core`: its CPU affinity, e.g. an MPI rank bound to a
    /// core) keeps that method and builds no format, except BRC's ELL form of a matrix kept on
    /// the device whose rows are all about as long, which it builds here on the device.
    pub fn analyze(&mut self, handle: &Handle, alg: Algorithm, tuning: Tuning) -> Result<()> {
        self.check_handle(handle)?;
        if self.analyze_before_check(handle, alg, tuning)? {
            return Ok(());
        }
        if self.reads_arrays_only() {
            return self.analyze_borrowed(handle, alg, tuning);
        }
        let sm = handle.sm_count();
        let trial = handle.cuda().is_some() && select::spare_core();
        let det = handle.deterministic();
        let vb = std::mem::size_of::<T>();
        match select::background_plan(&self.stats, vb, alg, tuning, det, sm, trial) {
            Some((now, later)) => {
                // A format that builds on the device from the device CSR (BRC's ELL form of
                // even rows) moves no copies: its build starts after tens of products, not
                // thousands, and a process with one core runs it here.
                let from = |target: Algorithm| {
                    let on_device = handle.cuda().is_some()
                        && self.csr.is_none()
                        && !methods::needs_host_csr(target, Tuning::None, &self.stats);
                    match (on_device, self.csr.is_some()) {
                        (true, _) => select::BuildFrom::Device,
                        (false, true) => select::BuildFrom::HostCopy,
                        (false, false) => select::BuildFrom::Download,
                    }
                };
                let on_device = from(later) == select::BuildFrom::Device;
                if select::spare_core() {
                    // On the CUDA backend a build's copies slow the products running beside
                    // them: it starts when the products have earned it. A second format to
                    // try follows once the first one's trial is over.
                    let second = select::second_trial(
                        &self.stats,
                        std::mem::size_of::<T>(),
                        later,
                        det,
                        trial,
                    );
                    let builds = std::iter::once(later)
                        .chain(second)
                        .map(|target| {
                            let after = match handle.cuda() {
                                Some(_) => select::background_start_after(target, from(target)),
                                None => 0,
                            };
                            (target, None, after)
                        })
                        .collect();
                    return self.analyze_with(handle, now, Tuning::None, builds);
                }
                // One core for this process (e.g. an MPI rank bound to a core): a background
                // build would take it from the caller's own work, and building on the host here
                // would make the first product wait. AUTO keeps the method over the CSR, or
                // builds a format that builds on the device here.
                let (run, note) = if on_device {
                    (
                        later,
                        format!("AUTO: {later}, built on the device at analyze; "),
                    )
                } else {
                    (
                        now,
                        format!("AUTO keeps {now}: this process has one core, which a background build of {later} would take from it; "),
                    )
                };
                self.analyze_with(handle, run, Tuning::None, Vec::new())?;
                if let Some(a) = &mut self.analysis {
                    a.auto_note = note;
                }
                Ok(())
            }
            None => self.analyze_with(handle, alg, tuning, Vec::new()),
        }
    }

    /// Runs `now` (its fixed rule) from the first product and builds `later` (its fixed rule)
    /// in the background, starting at once, as AUTO does with TUNING_NONE for a heavy format
    /// (see [`Matrix::analyze`], which starts it after some products on the CUDA backend).
    /// `gate` (tests): the worker waits after its host half until it receives a message or the
    /// sender is dropped.
    #[doc(hidden)]
    pub fn analyze_then(
        &mut self,
        handle: &Handle,
        now: Algorithm,
        later: Algorithm,
        gate: Option<std::sync::mpsc::Receiver<()>>,
    ) -> Result<()> {
        self.analyze_later(handle, now, (later, gate, 0))
    }

    /// As [`Matrix::analyze_then`], with the build waiting for `after` products (or
    /// [`Matrix::finish_background`]) before it starts, as AUTO's does on the CUDA backend.
    #[doc(hidden)]
    pub fn analyze_deferred(
        &mut self,
        handle: &Handle,
        now: Algorithm,
        later: Algorithm,
        after: u64,
    ) -> Result<()> {
        self.analyze_later(handle, now, (later, None, after))
    }

    /// The tests' entries to a background build: both methods named, checked to be
    /// implemented.
    fn analyze_later(&mut self, handle: &Handle, now: Algorithm, later: Later) -> Result<()> {
        self.check_handle(handle)?;
        for a in [now, later.0] {
            select::choose(
                &self.stats,
                std::mem::size_of::<T>(),
                a,
                false,
                handle.sm_count(),
            )?;
        }
        self.analyze_with(handle, now, Tuning::None, vec![later])
    }

    /// Drops the analysis (the matrix is then not analyzed) and what a failed value update left.
    fn drop_analysis(&mut self) {
        self.analysis = None;
        self.host = None;
        self.gpu = None;
        self.values_failed = None;
    }

    fn analyze_with(
        &mut self,
        handle: &Handle,
        alg: Algorithm,
        tuning: Tuning,
        later: Vec<Later>,
    ) -> Result<()> {
        let start = Instant::now();
        crate::backend::span("aw: enter");
        let algorithm = select::choose(
            &self.stats,
            std::mem::size_of::<T>(),
            alg,
            handle.deterministic(),
            handle.sm_count(),
        )?;
        crate::backend::span("aw: choose");
        let timed = alg == Algorithm::Auto
            && matches!(tuning, Tuning::Quick | Tuning::Exhaustive)
            && self.stats.nnz > 0;
        // After an update that failed part way the device CSR may hold half-written values:
        // it is uploaded again from the host copy; without one, analyze refuses (host_csr).
        if self.values_failed.is_some() {
            self.host_csr(handle)?;
            self.dcsr = None;
        }
        // A matrix kept on the device stays there for CSR_VECTOR and HOLA: the host copy is
        // made for the methods that read it, and by a background build's worker for itself.
        if handle.cuda().is_none()
            || timed
            || methods::needs_host_csr(algorithm, tuning, &self.stats)
        {
            self.host_csr(handle)?;
        } else {
            self.sync_host_values(handle)?;
        }
        // The old analysis goes first, so that its memory can be reused; if this analysis
        // fails, the matrix is left not analyzed (spmv answers NOT_ANALYZED).
        crate::backend::span("aw: host copy");
        self.drop_analysis();
        crate::backend::span("aw: drop");
        // No form gated by a check is left: its slot goes back (its outcome was kept).
        self.check = None;
        crate::backend::span("aw: check dropped");
        let deterministic = handle.deterministic();
        let host_csr = self.csr.clone();
        let req = Request {
            host: host_csr.as_deref(),
            stats: &self.stats,
            tuning,
            deterministic,
        };
        let mut algorithm = algorithm;
        let mut auto_note = String::new();
        if let Some(dev) = handle.cuda() {
            let stream = handle.cuda_stream();
            let csr = match (&self.dcsr, &host_csr) {
                (Some(d), _) => d.clone(),
                (None, Some(c)) => {
                    let transpose = methods::transpose::gpu_launch(&self.stats, dev.sm_count());
                    let d = Arc::new(GpuCsr::upload(dev, stream, c, transpose)?);
                    crate::backend::span("aw: upload");
                    self.dcsr = Some(d.clone());
                    d
                }
                (None, None) => {
                    return Err(Error::Internal(
                        "a matrix with neither a host nor a device CSR".into(),
                    ))
                }
            };
            if host_csr.is_none() && !later.is_empty() {
                // The worker downloads the host copy on a stream of its own: what the handle's
                // stream still writes into the device CSR lands first.
                handle.synchronize()?;
            }
            // The worker starts first: its host half runs while the light method is set up.
            let trial = Arc::new(trial::Trial::for_matrix(
                self.stats.nnz,
                std::mem::size_of::<T>(),
            ));
            let bgs = later
                .into_iter()
                .map(|(target, gate, after)| {
                    self.spawn_gpu(
                        dev,
                        &csr,
                        target,
                        self.stats,
                        deterministic,
                        gate,
                        after,
                        &trial,
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            crate::backend::span("aw: spawned");
            let method = if timed {
                let (a, m, note) = select::by_timing(dev, stream, &csr, &req)?;
                algorithm = a;
                auto_note = note;
                m
            } else {
                methods::prepare_gpu(algorithm, dev, stream, &csr, &req)?
            };
            crate::backend::span("aw: prepared");
            // Not waited for: later work on other streams is ordered after it.
            let ready = cuda::Ready::record(dev, stream)?;
            crate::backend::span("aw: event");
            let forms = Forms::new(algorithm, method).with_backgrounds(bgs);
            self.gpu = Some(Gpu {
                forms,
                csr,
                provisional: None,
                trial,
                ready,
            });
        } else {
            let mut bgs = Vec::new();
            for (target, gate, after) in later {
                let Some(csr) = host_csr.clone() else { break };
                let stats = self.stats;
                bgs.push(Background::spawn(
                    target,
                    self.values_gen,
                    after,
                    Phases {
                        fetch: move |_: &()| Ok(csr),
                        host: move |csr: Arc<Csr<T>>| {
                            methods::prepare_host(
                                target,
                                &Request::fixed_rule(&csr, &stats, deterministic),
                            )
                        },
                        device: |m, ()| Ok(m),
                    },
                    (),
                    gate,
                )?);
            }
            let forms = Forms::new(algorithm, methods::prepare_host(algorithm, &req)?)
                .with_backgrounds(bgs);
            self.host = Some(forms);
        }
        let analysis_ms = start.elapsed().as_secs_f64() * 1e3;
        trace(|| format!("analyze: {algorithm} in {:.1} us", analysis_ms * 1e3));
        self.analysis = Some(Analysis {
            analysis_ms,
            auto_note,
        });
        Ok(())
    }

    /// Waits for AUTO's background build (if one is running) and swaps its method in, so
    /// that the next product runs it; a no-op without one. For callers about to time the
    /// steady state, or who would rather pay the build now.
    pub fn finish_background(&self, handle: &Handle) -> Result<()> {
        self.check_handle(handle)?;
        self.analysis()?;
        if let (Some(gpu), Some(dev)) = (&self.gpu, handle.cuda()) {
            let stream = handle.cuda_stream();
            if let Some(c) = &self.check {
                c.wait(stream);
                let start = self.check_at_product(dev, stream, gpu, true)?;
                self.start_after_launch(dev, stream, gpu, start);
            }
            // A swap that begins a trial holds the later builds until the trial is over.
            gpu.forms.finish(
                self.values_gen,
                |m| m.refresh_values(&gpu.csr, stream).map(|_| true),
                |(n, o)| {
                    gpu.trial.begin(n, o);
                    gpu.trial.active()
                },
            );
        }
        if let (Some(host), Some(csr)) = (&self.host, &self.csr) {
            let _ = host.finish(
                self.values_gen,
                |m| {
                    m.update_values(csr);
                    Ok(true)
                },
                |_| false,
            );
        }
        Ok(())
    }

    /// On the CUDA backend after [`Matrix::update_values_device`]: copies the device's values
    /// back into the host copy, if the matrix has one (waits for the handle's stream).
    /// Otherwise a no-op.
    pub fn sync_host_values(&mut self, handle: &Handle) -> Result<()> {
        self.check_handle(handle)?;
        if let (true, Some(d), Some(c)) = (self.host_values_stale, &self.dcsr, &mut self.csr) {
            d.download_values(handle.cuda_stream(), Arc::make_mut(c).values_mut())?;
        }
        self.host_values_stale = false;
        Ok(())
    }

    /// True when ONLINE tuning has settled (and always without ONLINE or before analyze).
    pub fn tuning_settled(&self) -> bool {
        self.gpu.as_ref().is_none_or(|g| {
            g.forms.running().method.settled() && !g.trial.active() && !g.forms.ready_unswapped()
        })
    }

    /// True once [`Matrix::analyze`] succeeded.
    pub fn is_analyzed(&self) -> bool {
        self.analysis.is_some()
    }

    /// The analysis, or `NotAnalyzed`: spmv never analyzes implicitly (analysis allocates and
    /// may take time; spmv must stay capture-safe).
    fn analysis(&self) -> Result<&Analysis> {
        self.analysis.as_ref().ok_or_else(|| {
            Error::NotAnalyzed(
                "the matrix has not been analyzed: call tessera_analyze once before tessera_spmv"
                    .into(),
            )
        })
    }

    /// Fails with `NotAnalyzed` (see [`Matrix::spmv`]) before [`Matrix::analyze`].
    pub fn require_analyzed(&self) -> Result<()> {
        self.analysis().map(|_| ())
    }

    /// Lengths of x and y for `op`.
    pub fn vector_lengths(&self, op: Operation) -> (usize, usize) {
        match op {
            Operation::NonTranspose => (self.stats.cols, self.stats.rows),
            Operation::Transpose => (self.stats.rows, self.stats.cols),
        }
    }

    /// y = alpha*op(A)*x + beta*y (BLAS semantics: `beta == 0` never reads y, so NaN in y does
    /// not leak; `alpha == 0` never reads A or x). Fails with `NotAnalyzed` before
    /// [`Matrix::analyze`], with `InvalidSize` when x or y has the wrong length.
    pub fn spmv(
        &self,
        handle: &Handle,
        op: Operation,
        alpha: T,
        x: &[T],
        beta: T,
        y: &mut [T],
    ) -> Result<()> {
        self.check_handle(handle)?;
        self.analysis()?;
        let (xl, yl) = self.vector_lengths(op);
        if x.len() != xl || y.len() != yl {
            return Err(Error::InvalidSize(format!(
                "for {op} of a {} x {} matrix x needs {xl} entries and y {yl}, got {} and {}",
                self.stats.rows,
                self.stats.cols,
                x.len(),
                y.len()
            )));
        }
        if let Some(dev) = handle.cuda() {
            // Staged through device memory (allocates and waits): for tools and tests; C
            // callers and solvers use spmv_device.
            let dx = DeviceVec::from_slice(dev, x)?;
            let dy = DeviceVec::from_slice(dev, y)?;
            self.spmv_device(handle, op, alpha, dx.addr(), beta, dy.addr())?;
            y.copy_from_slice(&dy.to_vec(handle.cuda_stream())?);
            return Ok(());
        }
        if alpha == T::ZERO {
            if beta == T::ZERO {
                y.fill(T::ZERO);
            } else {
                y.iter_mut().for_each(|v| *v = beta * *v);
            }
            return Ok(());
        }
        let (Some(forms), Some(csr)) = (&self.host, &self.csr) else {
            return Err(Error::Internal(
                "a host matrix was analyzed but has no host method or CSR".into(),
            ));
        };
        let _ = forms.poll(
            self.values_gen,
            |m| {
                m.update_values(csr);
                Ok(true)
            },
            false,
        );
        let running = forms.running();
        match op {
            Operation::NonTranspose => running.method.spmv(csr, alpha, x, beta, y),
            Operation::Transpose => running.method.spmv_transpose(csr, alpha, x, beta, y),
        }
        Ok(())
    }

    /// y = alpha*op(A)*x + beta*y on the CUDA backend with x and y in device-accessible memory
    /// (device, managed or mapped pinned), given as device addresses: asynchronous on the
    /// handle's stream, no allocation, no host synchronisation (capturable in a CUDA graph).
    /// x must hold as many values as op(A) has columns and y as many as it has rows; a plain
    /// host address is `InvalidPointer`, a too-short allocation `InvalidSize`.
    pub fn spmv_device(
        &self,
        handle: &Handle,
        op: Operation,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        self.check_handle(handle)?;
        self.analysis()?;
        let Some(dev) = handle.cuda() else {
            return Err(Error::InvalidValue(
                "spmv_device needs a CUDA handle; the host backend takes host slices (Matrix::spmv)".into(),
            ));
        };
        let gpu = self.gpu.as_ref().ok_or_else(|| {
            Error::Internal("a CUDA matrix was analyzed but has no device arrays".into())
        })?;
        if let Some(why) = &self.values_failed {
            return Err(Error::ExecutionFailed(format!(
                "the matrix's last update_values failed part way ({why}), so its values on the device may disagree with each other; call update_values (or analyze) again"
            )));
        }
        let (xl, yl) = self.vector_lengths(op);
        if yl == 0 {
            return Ok(());
        }
        crate::backend::span("spmv: enter");
        handle.check_device_vector(y, yl * std::mem::size_of::<T>(), "y")?;
        let stream = handle.cuda_stream();
        gpu.ready.order(stream)?;
        crate::backend::span("spmv: y, ready");
        // A check still running orders this product after it; one that has reported gives its
        // error, or AUTO's real choice starts once this (or, after the product that read the
        // outcome, the next) product is queued (check.rs).
        let start = self.check_at_product(dev, stream, gpu, false)?;
        crate::backend::span("spmv: check polled");
        let queued = (|| {
            if alpha == T::ZERO {
                gpu.trial.untimed(stream);
                return if beta == T::ONE {
                    Ok(())
                } else {
                    gpu.csr.scale(stream, yl, y, beta)
                };
            }
            handle.check_device_vector(x, xl * std::mem::size_of::<T>(), "x")?;
            // A product boundary: a finished background build is swapped in here (never
            // waited for; its values refreshed on this stream first if update_values came
            // since).
            let swapped = gpu.forms.poll(
                self.values_gen,
                |m| {
                    // A refresh captured into a graph would run only with the graph: swap
                    // later.
                    if cuda::is_capturing(dev, stream)? {
                        return Ok(false);
                    }
                    m.refresh_values(&gpu.csr, stream).map(|_| true)
                },
                gpu.trial.active(),
            );
            if let Some((new, old)) = swapped {
                gpu.trial.begin(new, old);
            }
            crate::backend::span("spmv: swap polled");
            let (trial, plain) = (&gpu.trial, op == Operation::NonTranspose);
            let timed = if plain {
                trial.before(dev, stream, || gpu.forms.try_exchange_last())
            } else {
                trial.untimed(stream);
                None
            };
            crate::backend::span("spmv: trial before");
            let running = gpu.forms.running();
            let r = match op {
                Operation::NonTranspose => running.method.spmv(&gpu.csr, stream, alpha, x, beta, y),
                Operation::Transpose => running
                    .method
                    .spmv_transpose(&gpu.csr, stream, alpha, x, beta, y),
            };
            crate::backend::span("spmv: launched");
            if let Some(t) = timed {
                trial.after(t, stream, r.is_ok());
            }
            r
        })();
        crate::backend::span("spmv: queued");
        self.start_after_launch(dev, stream, gpu, start);
        crate::backend::span("spmv: final started");
        queued
    }

    /// New values for the same pattern, in the caller's original entry order; no re-analysis.
    /// On the CUDA backend the device copy is updated too (and this waits for the upload); a
    /// matrix kept on the device only takes them there alone.
    pub fn update_values(&mut self, handle: &Handle, values: &[T]) -> Result<()> {
        self.check_handle(handle)?;
        self.refuse_if_borrowed()?;
        self.settle_check(handle, true)?;
        match &mut self.csr {
            Some(c) => Arc::make_mut(c).set_values_from_input(values)?,
            None => crate::csr::check_values_len(values.len(), self.stats.nnz)?,
        }
        self.values_gen += 1;
        self.host_values_stale = false;
        if let (Some(forms), Some(csr)) = (&mut self.host, &self.csr) {
            forms.each_mut().for_each(|m| m.update_values(csr));
        }
        if let Some(dcsr) = &self.dcsr {
            let stream = handle.cuda_stream();
            // Without a host copy the matrix came from sorted arrays: the caller's entry order
            // is the CSR order.
            let csr_values = self.csr.as_ref().map_or(values, |c| c.values());
            if let Some(gpu) = &self.gpu {
                gpu.ready.order(stream)?;
            }
            let done = dcsr
                .upload_values(stream, csr_values)
                .and_then(|_| match &mut self.gpu {
                    Some(gpu) => gpu
                        .forms
                        .each_mut()
                        .try_for_each(|m| m.refresh_values(dcsr, stream)),
                    None => Ok(()),
                });
            self.values_failed = done.as_ref().err().map(|e| e.detail().to_string());
            done?;
        }
        Ok(())
    }

    /// New values from device-accessible memory at device address `values` (nnz values, the
    /// caller's original entry order), on the CUDA backend: the value-map scatter kernel runs
    /// on the handle's stream, asynchronously. A matrix with no device CSR yet (created from
    /// host arrays, not analyzed) takes them into its host copy instead (waiting for the
    /// stream).
    pub fn update_values_device(&mut self, handle: &Handle, values: u64) -> Result<()> {
        self.check_handle(handle)?;
        self.refuse_if_borrowed()?;
        self.settle_check(handle, true)?;
        let Some(dev) = handle.cuda() else {
            return Err(Error::InvalidValue(
                "update_values_device needs a CUDA handle; the host backend takes a host slice"
                    .into(),
            ));
        };
        let nnz = self.stats.nnz;
        cuda::check_device_accessible(dev, values, nnz * std::mem::size_of::<T>(), "values")?;
        match (&self.dcsr, &mut self.csr) {
            (Some(dcsr), _) => {
                let stream = handle.cuda_stream();
                if let Some(gpu) = &self.gpu {
                    gpu.ready.order(stream)?;
                }
                // A failed scatter queued nothing: the matrix keeps its previous values.
                dcsr.scatter_from_device(stream, values)?;
                self.values_gen += 1;
                self.host_values_stale = self.csr.is_some();
                let done = match &mut self.gpu {
                    Some(gpu) => gpu
                        .forms
                        .each_mut()
                        .try_for_each(|m| m.refresh_values(dcsr, stream)),
                    None => Ok(()),
                };
                self.values_failed = done.as_ref().err().map(|e| e.detail().to_string());
                done?;
            }
            (None, Some(c)) => {
                let mut v = crate::csr::try_vec_filled(nnz, T::ZERO, "values")?;
                cuda::copy_to_host(dev, handle.cuda_stream(), values, &mut v)?;
                Arc::make_mut(c).set_values_from_input(&v)?;
                self.values_gen += 1;
            }
            (None, None) => {
                return Err(Error::Internal(
                    "a matrix with neither a host nor a device CSR".into(),
                ))
            }
        }
        Ok(())
    }
}

/// A matrix of either value type: what a C `tessera_matrix` points to.
#[derive(Debug)]
pub enum AnyMatrix {
    /// f32 values.
    F32(Matrix<f32>),
    /// f64 values.
    F64(Matrix<f64>),
}

impl AnyMatrix {
    /// The value type.
    pub fn value_type(&self) -> ValueType {
        match self {
            AnyMatrix::F32(_) => ValueType::F32,
            AnyMatrix::F64(_) => ValueType::F64,
        }
    }

    /// See [`Matrix::analyze`].
    pub fn analyze(&mut self, handle: &Handle, alg: Algorithm, tuning: Tuning) -> Result<()> {
        match self {
            AnyMatrix::F32(m) => m.analyze(handle, alg, tuning),
            AnyMatrix::F64(m) => m.analyze(handle, alg, tuning),
        }
    }

    /// See [`Matrix::info`].
    pub fn info(&self) -> MatrixInfo {
        match self {
            AnyMatrix::F32(m) => m.info(),
            AnyMatrix::F64(m) => m.info(),
        }
    }

    /// See [`Matrix::is_analyzed`].
    pub fn is_analyzed(&self) -> bool {
        match self {
            AnyMatrix::F32(m) => m.is_analyzed(),
            AnyMatrix::F64(m) => m.is_analyzed(),
        }
    }

    /// See [`Matrix::vector_lengths`].
    pub fn vector_lengths(&self, op: Operation) -> (usize, usize) {
        match self {
            AnyMatrix::F32(m) => m.vector_lengths(op),
            AnyMatrix::F64(m) => m.vector_lengths(op),
        }
    }
}
