//! AUTO's background build: the forms of a method a matrix holds ([`Forms`]: the one that runs,
//! the ones retired by a swap, the one being built), and the worker thread that builds a heavy
//! format off the critical path ([`Background`]).
//!
//! The contract (README, "AUTO's background build"):
//! - products never wait for the build: a product looks at one atomic flag, and only when the
//!   worker has finished does it try (never block) to take the new form and swap it in;
//! - the swap happens between two products, under the write side of the lock every product
//!   reads the running method through; a product that cannot take it at once leaves the swap
//!   to the next;
//! - a retired form is kept until the matrix is destroyed or analyzed again: a CUDA graph that
//!   captured a product of it keeps valid buffers;
//! - the worker first fetches what its host half reads (a matrix kept on the device only:
//!   tessera's host CSR, downloaded), then runs its host half, which makes no CUDA call, then
//!   its device half (upload, kernels). Its CUDA work runs on streams of its own, with the
//!   thread's capture mode relaxed so that a caller capturing a graph on another thread is not
//!   disturbed. Dropping a [`Background`] cancels it: a worker still on the host stops at the
//!   next check of its format builder (`methods::cancel`, every 2^16 rows or so) and discards
//!   its work, making no CUDA call after that; one fetching or on the device is waited for, so
//!   no CUDA call of it outlives the matrix.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::methods;
use crate::types::Algorithm;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard};
use std::time::Instant;

/// A method form and the algorithm it implements.
#[derive(Debug)]
pub(super) struct Running<M> {
    pub(super) algorithm: Algorithm,
    pub(super) method: M,
}

/// Where a background build stands.
enum State<M> {
    /// Waiting for the `after`-th product before it starts (no work done yet).
    Waiting { after: u64 },
    /// Fetching what the host half reads (may call CUDA: a canceller waits for it).
    Fetch,
    /// Building the format on the host (no CUDA call).
    Host,
    /// Uploading it to the device.
    Device,
    /// Built, waiting for a product boundary; `ms` after analyze.
    Ready { method: M, ms: f64 },
    /// Swapped in (at the `products`-th product, `ms` after analyze).
    Swapped { products: u64, ms: f64 },
    /// The build failed: the light method keeps running.
    Failed(String),
    /// The matrix was dropped or analyzed again before the build finished.
    Cancelled,
}

struct Shared<M> {
    state: Mutex<State<M>>,
    /// Set by a canceller: the format builders of the host half poll it
    /// (`methods::cancel`) and stop.
    cancel: Arc<AtomicBool>,
    /// Set when the worker leaves `Fetch`/`Host`/`Device`, cleared by the product that takes the form:
    /// the one thing a product reads while the build runs.
    finished: AtomicBool,
    /// Set when the worker may leave `Waiting` (the product count reached its start, or
    /// `finish_background` asked for the form); its job is handed to a worker thread then.
    go: AtomicBool,
    /// Set (under `state`'s lock, then `changed` notified) when the job has returned, whatever
    /// it did: a canceller that must wait for it waits for this.
    ended: AtomicBool,
    /// Set by the product that swaps the form in or finds the build failed or cancelled: the
    /// forms' next build, if any, may swap in then.
    done: AtomicBool,
    changed: Condvar,
}

/// Marks the job ended when dropped: at its return, or as a panic unwinds it.
struct EndGuard<M>(Arc<Shared<M>>);

impl<M> Drop for EndGuard<M> {
    fn drop(&mut self) {
        let _st = self.0.lock();
        self.0.ended.store(true, Ordering::Release);
        self.0.changed.notify_all();
    }
}

impl<M> Shared<M> {
    fn lock(&self) -> MutexGuard<'_, State<M>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What [`Forms::status`] says of a background build, for `info`.
#[derive(Debug, Clone, PartialEq)]
pub enum BackgroundStatus {
    /// No background build (or none since the last analyze).
    None,
    /// `target` will be built once `after` products have run
    /// (`select::background_start_after`).
    Scheduled {
        /// The method to build.
        target: Algorithm,
        /// Products before the build starts.
        after: u64,
    },
    /// `target` is being built.
    Building(Algorithm),
    /// `target` is built and swaps in at the next product.
    Ready(Algorithm),
    /// `target` runs since the `products`-th product, `ms` after analyze.
    Swapped {
        /// The method swapped in.
        target: Algorithm,
        /// Products before the swap.
        products: u64,
        /// Milliseconds from analyze to the build's end.
        ms: f64,
    },
    /// Building `target` failed (why): the method analyze started with keeps running.
    Failed(Algorithm, String),
}

/// A format being built on a worker thread ([`crate::backend::workers`]).
pub(super) struct Background<M> {
    target: Algorithm,
    shared: Arc<Shared<M>>,
    /// The job, until it is handed to a worker thread (at once, or at [`Background::start`]
    /// for a deferred build).
    pending: Mutex<Option<crate::backend::workers::Job>>,
    /// Drops what the device half would have used (device memory, the context), if the worker
    /// has not taken it: on cancellation before the device half, they are released here, on
    /// the caller's thread, and never by a worker that outlives the matrix.
    release: Box<dyn Fn() + Send + Sync>,
    /// The matrix's values generation the worker built from: a swap after an update_values
    /// refreshes the new form's values first.
    built_gen: u64,
    /// Products before the build starts.
    after: u64,
}

impl<M> std::fmt::Debug for Background<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Background({})", self.target)
    }
}

impl<M: Send + 'static> Background<M> {
    /// Starts building `target` on a worker thread once `after` products have run ([`Forms::poll`]
    /// counts them; 0: at once): `fetch(&resources)` (may call CUDA; a
    /// canceller waits for it; its result must own nothing whose drop calls CUDA), then
    /// `host(fetched)` (no CUDA call: the same rule), then, unless cancelled meanwhile,
    /// `device(host's result, resources)`: `resources` (device handles) pass to the worker
    /// only then, and are dropped by whoever cancels the build before. `gate` (tests) holds the
    /// worker between the host and device halves until it receives a message or its sender is
    /// dropped.
    pub(super) fn spawn<F, P, R>(
        target: Algorithm,
        built_gen: u64,
        after: u64,
        phases: Phases<
            impl FnOnce(&R) -> Result<F> + Send + 'static,
            impl FnOnce(F) -> Result<P> + Send + 'static,
            impl FnOnce(P, R) -> Result<M> + Send + 'static,
        >,
        resources: R,
        gate: Option<std::sync::mpsc::Receiver<()>>,
    ) -> Result<Self>
    where
        F: Send + 'static,
        P: Send + 'static,
        R: Send + 'static,
    {
        let Phases {
            fetch,
            host,
            device,
        } = phases;
        let shared = Arc::new(Shared {
            state: Mutex::new(if after == 0 {
                State::Fetch
            } else {
                State::Waiting { after }
            }),
            cancel: Arc::new(AtomicBool::new(false)),
            finished: AtomicBool::new(false),
            go: AtomicBool::new(after == 0),
            ended: AtomicBool::new(false),
            done: AtomicBool::new(false),
            changed: Condvar::new(),
        });
        let worker = shared.clone();
        let slot = Arc::new(Mutex::new(Some(resources)));
        let (worker_slot, release_slot) = (slot.clone(), slot);
        let start = Instant::now();
        let ended = EndGuard(shared.clone());
        let job: crate::backend::workers::Job = Box::new(move || {
            let _ended = ended;
            let at = |what: &str| {
                crate::backend::trace(2, || {
                    format!(
                        "worker building {target}: {what} at {:.1} us",
                        crate::backend::trace_clock_us()
                    )
                })
            };
            at("start");
            {
                let mut st = worker.lock();
                if matches!(*st, State::Cancelled) {
                    return;
                }
                *st = State::Fetch;
            }
            // The slot's lock is held while fetching: a canceller releasing the resources
            // waits for it.
            let fetched = {
                let slot = worker_slot.lock().unwrap_or_else(|e| e.into_inner());
                match slot.as_ref() {
                    Some(r) => caught(|| fetch(r)),
                    None => Err(Error::Internal("cancelled".into())),
                }
            };
            at("fetched");
            {
                let mut st = worker.lock();
                if matches!(*st, State::Cancelled) {
                    return;
                }
                *st = State::Host;
            }
            let flag = worker.cancel.clone();
            let built = fetched
                .and_then(|f| caught(move || methods::cancel::with_flag(flag, || host(f))))
                .and_then(|p| {
                    if let Some(g) = gate {
                        let _ = g.recv();
                    }
                    let r = {
                        let mut st = worker.lock();
                        if matches!(*st, State::Cancelled) {
                            return Err(Error::Internal("cancelled".into()));
                        }
                        *st = State::Device;
                        worker_slot.lock().unwrap_or_else(|e| e.into_inner()).take()
                    };
                    let r = r.ok_or_else(|| Error::Internal("no device resources".into()))?;
                    at("host half done");
                    caught(move || device(p, r))
                });
            at("device half done");
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let mut st = worker.lock();
            if matches!(*st, State::Cancelled) {
                drop(st);
                // The form is dropped here, on the worker: the canceller waits for it
                // when the build had reached the device.
                drop(built);
                return;
            }
            *st = match built {
                Ok(method) => State::Ready { method, ms },
                Err(e) => State::Failed(e.detail().to_string()),
            };
            worker.finished.store(true, Ordering::Release);
            worker.changed.notify_all();
        });
        let pending = if after == 0 {
            crate::backend::workers::run(job).map_err(|e| {
                Error::AllocFailed(format!(
                    "could not start the thread that builds {target} in the background: {e}"
                ))
            })?;
            None
        } else {
            Some(job)
        };
        Ok(Background {
            target,
            shared,
            pending: Mutex::new(pending),
            release: Box::new(move || {
                release_slot
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
            }),
            built_gen,
            after,
        })
    }
}

/// The three phases of a background build (see [`Background::spawn`]).
pub(super) struct Phases<F, H, D> {
    /// Fetches what the host half reads (may call CUDA).
    pub(super) fetch: F,
    /// Builds the format on the host (no CUDA call).
    pub(super) host: H,
    /// Uploads it (CUDA).
    pub(super) device: D,
}

/// Runs `f`, turning a panic into an error (the worker must always publish an outcome).
fn caught<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::Internal(format!(
            "the background build panicked: {what}"
        )))
    })
}

impl<M> Background<M> {
    /// Lets a deferred build start (a no-op once started): never blocks.
    fn start(&self) {
        if self.shared.go.swap(true, Ordering::AcqRel) {
            return;
        }
        let job = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(job) = job {
            if let Err(e) = crate::backend::workers::run(job) {
                // (The job, dropped unrun, marked itself ended.)
                let mut st = self.shared.lock();
                if !matches!(*st, State::Cancelled) {
                    *st = State::Failed(format!(
                        "could not start the thread that builds {} in the background: {e}",
                        self.target
                    ));
                    self.shared.finished.store(true, Ordering::Release);
                }
            }
        }
    }
}

impl<M> Drop for Background<M> {
    fn drop(&mut self) {
        let (on_device, old) = {
            let mut st = self.shared.lock();
            (
                matches!(*st, State::Device),
                std::mem::replace(&mut *st, State::Cancelled),
            )
        };
        // A worker in its host half stops at its next check; a job never handed to a thread
        // is dropped unrun.
        self.shared.cancel.store(true, Ordering::Release);
        drop(
            self.pending
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        // A built form not swapped in is freed here, not by the worker's last reference.
        drop(old);
        // A worker still on the host makes no CUDA call after seeing Cancelled: leave it, and
        // release here what its device half would have used. One on the device is waited for;
        // one fetching holds the resources' lock, which the release waits for.
        if on_device {
            let mut st = self.shared.lock();
            while !self.shared.ended.load(Ordering::Acquire) {
                st = self
                    .shared
                    .changed
                    .wait(st)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
        (self.release)();
    }
}

/// The method forms of an analyzed matrix: the one that runs, the ones a swap retired (kept
/// for graphs that captured them), and the ones being built in the background, which swap in
/// in their order (a matrix whose check was deferred gets two at its first product after the
/// check: the light method its statistics choose, then the heavy format).
#[derive(Debug)]
pub(super) struct Forms<M> {
    running: RwLock<Running<M>>,
    retired: Mutex<Vec<Running<M>>>,
    /// Set once: at analyze, or at the product that reads a deferred check's outcome.
    background: OnceLock<Vec<Background<M>>>,
    /// Products so far (counted while a background build is pending).
    products: AtomicU64,
}

impl<M: Send + 'static> Forms<M> {
    /// A matrix running `method` (`algorithm`), with nothing in the background.
    pub(super) fn new(algorithm: Algorithm, method: M) -> Self {
        Forms {
            running: RwLock::new(Running { algorithm, method }),
            retired: Mutex::new(Vec::new()),
            background: OnceLock::new(),
            products: AtomicU64::new(0),
        }
    }

    /// Adds background builds to swap in, in this order, each when it is ready.
    pub(super) fn with_backgrounds(self, bgs: Vec<Background<M>>) -> Self {
        if !bgs.is_empty() {
            let _ = self.background.set(bgs);
        }
        self
    }

    /// True while a background build has finished but waits to be swapped in (held by
    /// [`Forms::poll`]'s `hold` or [`Forms::finish`]'s).
    pub(super) fn ready_unswapped(&self) -> bool {
        self.background.get().into_iter().flatten().any(|b| {
            !b.shared.done.load(Ordering::Acquire) && b.shared.finished.load(Ordering::Acquire)
        })
    }

    /// Adds background builds to a matrix that has none (the forms a deferred check's outcome
    /// chooses), to swap in in this order; false (and nothing added) if it has some.
    pub(super) fn add_backgrounds(&self, bgs: Vec<Background<M>>) -> bool {
        self.background.set(bgs).is_ok()
    }

    /// The running form, for a product (the read side: a swap waits for no product, and a
    /// product for no swap, except for the instant of the exchange).
    pub(super) fn running(&self) -> RwLockReadGuard<'_, Running<M>> {
        self.running.read().unwrap_or_else(|e| e.into_inner())
    }

    /// At a product boundary: counts the product and, when the background build has finished,
    /// swaps it in (after `refresh` brought its values up to date, when the matrix's values
    /// generation is no longer the one it was built from; `Ok(false)` from it: not now). Never
    /// blocks: if another thread holds what it needs, the next product tries again.
    /// Returns the swap it made: (the method swapped in, the one it replaced).
    ///
    /// `hold`: swap nothing in now, and start no build (AUTO's trial of the last swap is still
    /// running: the next form's trial must start from the form that one kept, and a build
    /// beside it would be in its samples).
    ///
    /// Builds start in order: one only once every earlier one is swapped in (or failed) and
    /// its trial is over, and its own product count is reached. A later build is a candidate
    /// to try after the earlier one's trial, so it is not needed sooner; built early it waited
    /// beside the caller's products (session 32, run G: BCCOO, the second candidate on a
    /// random 4000² with rows of 500, built at product 200 where BRC's build started at
    /// 4,000, and the method on the CSR arrays ran 12.9 µs a product until BRC's swap against
    /// 9.2 without it).
    pub(super) fn poll(
        &self,
        values_gen: u64,
        refresh: impl FnOnce(&mut M) -> Result<bool>,
        hold: bool,
    ) -> Option<(Algorithm, Algorithm)> {
        let bgs = self.background.get()?;
        let n = self.products.fetch_add(1, Ordering::Relaxed);
        if hold {
            return None;
        }
        // The first build not done yet: it starts at its count, and swaps in once finished.
        let bg = bgs
            .iter()
            .find(|b| !b.shared.done.load(Ordering::Acquire))?;
        if n + 1 >= bg.after && !bg.shared.go.load(Ordering::Relaxed) {
            bg.start();
        }
        if !bg.shared.finished.load(Ordering::Acquire) {
            return None;
        }
        let running = self.running.try_write().ok()?;
        let st = bg.shared.state.try_lock().ok()?;
        self.swap_in(bg, running, st, n, values_gen, refresh)
    }

    /// Waits for the background builds to finish, then swaps them in, in order, as
    /// [`Forms::poll`] does, waiting for products in flight on other threads if need be.
    /// `holds(swap)` says whether a swap just made holds the later ones (a trial began: they
    /// are built but left for [`Forms::poll`] once it is over).
    /// Returns the swaps it made, in order: (the method swapped in, the one it replaced).
    pub(super) fn finish(
        &self,
        values_gen: u64,
        refresh: impl Fn(&mut M) -> Result<bool>,
        holds: impl Fn((Algorithm, Algorithm)) -> bool,
    ) -> Vec<(Algorithm, Algorithm)> {
        let Some(bgs) = self.background.get() else {
            return Vec::new();
        };
        let mut swaps = Vec::new();
        let mut held = false;
        for bg in bgs {
            if held {
                Self::wait_built(bg);
                continue;
            }
            if let Some(s) = self.finish_one(bg, values_gen, &refresh) {
                held = holds(s);
                swaps.push(s);
            }
        }
        swaps
    }

    /// Starts `bg` if it waits for its product count, and waits until it is no longer being
    /// built.
    fn wait_built(bg: &Background<M>) {
        bg.start();
        let mut st = bg.shared.lock();
        while matches!(
            *st,
            State::Waiting { .. } | State::Fetch | State::Host | State::Device
        ) {
            st = bg
                .shared
                .changed
                .wait(st)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    fn finish_one(
        &self,
        bg: &Background<M>,
        values_gen: u64,
        refresh: impl FnOnce(&mut M) -> Result<bool>,
    ) -> Option<(Algorithm, Algorithm)> {
        Self::wait_built(bg);
        // The lock order of poll: the running form, then the state (the worker and Drop take
        // only the state).
        let running = self.running.write().unwrap_or_else(|e| e.into_inner());
        let st = bg.shared.lock();
        let n = self.products.load(Ordering::Relaxed);
        self.swap_in(bg, running, st, n, values_gen, refresh)
    }

    fn swap_in(
        &self,
        bg: &Background<M>,
        mut running: std::sync::RwLockWriteGuard<'_, Running<M>>,
        mut st: MutexGuard<'_, State<M>>,
        products: u64,
        values_gen: u64,
        refresh: impl FnOnce(&mut M) -> Result<bool>,
    ) -> Option<(Algorithm, Algorithm)> {
        // Failed (kept for info), already swapped, or (finish on a dropped race) not ready.
        if !matches!(*st, State::Ready { .. }) {
            if !matches!(
                *st,
                State::Waiting { .. } | State::Fetch | State::Host | State::Device
            ) {
                bg.shared.finished.store(false, Ordering::Release);
                bg.shared.done.store(true, Ordering::Release);
            }
            return None;
        }
        let State::Ready { mut method, ms } = std::mem::replace(&mut *st, State::Cancelled) else {
            return None;
        };
        bg.shared.finished.store(false, Ordering::Release);
        if values_gen != bg.built_gen {
            match refresh(&mut method) {
                Ok(true) => {}
                Ok(false) => {
                    // Not now (the stream is being captured: the refresh would only run when
                    // the graph does): the next product tries again.
                    *st = State::Ready { method, ms };
                    bg.shared.finished.store(true, Ordering::Release);
                    return None;
                }
                Err(e) => {
                    *st = State::Failed(format!(
                        "refreshing its values after update_values failed: {}",
                        e.detail()
                    ));
                    bg.shared.done.store(true, Ordering::Release);
                    // Not dropped here (a product must not free device memory): kept until
                    // the matrix is destroyed or analyzed again.
                    self.retire(Running {
                        algorithm: bg.target,
                        method,
                    });
                    return None;
                }
            }
        }
        *st = State::Swapped { products, ms };
        bg.shared.done.store(true, Ordering::Release);
        crate::backend::trace(2, || {
            format!(
                "{} swapped in at product {products} at {:.1} us",
                bg.target,
                crate::backend::trace_clock_us()
            )
        });
        let old = std::mem::replace(
            &mut *running,
            Running {
                algorithm: bg.target,
                method,
            },
        );
        let swapped = (bg.target, old.algorithm);
        self.retire(old);
        Some(swapped)
    }

    /// Puts `method` in at once (it needs no device work first), retiring the running form:
    /// waits for the products reading the running form at this instant.
    pub(super) fn swap_now(&self, algorithm: Algorithm, method: M) {
        let mut running = self.running.write().unwrap_or_else(|e| e.into_inner());
        let old = std::mem::replace(&mut *running, Running { algorithm, method });
        drop(running);
        self.retire(old);
    }

    /// Exchanges the running form with the last one retired (the one it replaced: AUTO's
    /// trial, `trial.rs`), if no product reads the running form at this instant; false, and
    /// nothing done, otherwise. Never blocks on a product.
    pub(super) fn try_exchange_last(&self) -> bool {
        let Ok(mut running) = self.running.try_write() else {
            return false;
        };
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        let Some(last) = retired.last_mut() else {
            return false;
        };
        std::mem::swap(&mut *running, last);
        true
    }

    fn retire(&self, r: Running<M>) {
        self.retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r);
    }

    /// Every form a product may still run (the running one and the retired ones), for
    /// update_values.
    pub(super) fn each_mut(&mut self) -> impl Iterator<Item = &mut M> {
        let retired = self.retired.get_mut().unwrap_or_else(|e| e.into_inner());
        let running = self.running.get_mut().unwrap_or_else(|e| e.into_inner());
        std::iter::once(&mut running.method).chain(retired.iter_mut().map(|r| &mut r.method))
    }

    /// Every form held, for `device_bytes`: the running one, the retired ones and a finished
    /// build not yet swapped in.
    pub(super) fn total(&self, bytes: impl Fn(&M) -> usize) -> usize {
        let mut n = bytes(&self.running().method);
        n += self
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|r| bytes(&r.method))
            .sum::<usize>();
        for bg in self.background.get().into_iter().flatten() {
            if let State::Ready { method, .. } = &*bg.shared.lock() {
                n += bytes(method);
            }
        }
        n
    }

    /// Where the background build stands: the first not swapped in yet, else the last.
    pub(super) fn status(&self) -> BackgroundStatus {
        let Some(bgs) = self.background.get() else {
            return BackgroundStatus::None;
        };
        let Some(bg) = bgs
            .iter()
            .find(|b| !matches!(*b.shared.lock(), State::Swapped { .. }))
            .or(bgs.last())
        else {
            return BackgroundStatus::None;
        };
        let target = bg.target;
        match &*bg.shared.lock() {
            State::Waiting { after } => BackgroundStatus::Scheduled {
                target,
                after: *after,
            },
            State::Fetch | State::Host | State::Device => BackgroundStatus::Building(target),
            State::Ready { .. } => BackgroundStatus::Ready(target),
            State::Swapped { products, ms } => BackgroundStatus::Swapped {
                target,
                products: *products,
                ms: *ms,
            },
            State::Failed(why) => BackgroundStatus::Failed(target, why.clone()),
            State::Cancelled => BackgroundStatus::None,
        }
    }
}
