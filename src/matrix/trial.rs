//! AUTO's trial of a heavy format against the form it replaced, on the caller's own products.
//!
//! AUTO's rule predicts from row statistics that a format of its own (BRC, TILE, BCCOO) will
//! beat the method over the CSR arrays, and builds it in the background. The prediction misses
//! on some matrices (measured: BRC 3% slower than HOLA on an empty-rows matrix of 16M
//! non-zeros in f64, 60% slower than CSR_VECTOR on a 3 million non-zero elasticity matrix), and
//! a user's matrices are not the ones the rule was fitted on. So when a heavy format swaps in,
//! the next products time it against the form it replaced, both on the caller's stream with
//! CUDA events around the products' own launches: [`SAMPLES`] samples of the new form, then
//! (the two exchanged at a product boundary) [`SAMPLES`] of the old one, after [`WARM`] untimed
//! products on each. A sample is one event pair around a few consecutive products ([`span`]:
//! one for products of 40 µs and more, up to [`MAX_SPAN`] for small matrices), so that the
//! host's part of a call, which a pair around one short product also times when the GPU has
//! run dry, is shared among them. The faster one stays: the old form wins only when its median is more
//! than [`MARGIN`] below the new one's (more for products under [`SHORT_MS`]: [`margin`]); in a
//! later trial of the same analysis (a second candidate, `select::then_try`) the margin
//! favours the old form instead: the new one must win by it.
//! Until the samples are read, the form AUTO's rule predicts runs (`select::heuristic`'s
//! choice: the new form when it is that choice, the old one when the new is only a candidate,
//! [`Trial::expect`]). A caller that queues products far ahead of the GPU reads a sample
//! hundreds of products after its launch, and every product queued meanwhile runs that form.
//! Then the trial is over: products read one atomic flag. A second heavy format built for the
//! same matrix (`select::then_try`) swaps in only after that (`Forms::poll`'s `hold`), and its
//! own trial runs against the form the first one kept.
//!
//! What it never does: wait for an event (a sample is read at a later product, once its end
//! event has completed: `cuEventQuery`), allocate (its events are made by the background
//! build's worker, [`Trial::prepare`]), time a product being captured into a graph (a
//! captured product runs the form running at that instant, as before), or free a form (both
//! stay until the matrix is destroyed or analyzed again, as every retired form does). A
//! product on another thread that finds the trial's lock taken runs untimed (and, on the
//! stream of an open sample, inside it). The sample's end event is recorded again after each
//! of its products, so it can close early, after the products it has, without touching a
//! stream (a caller may destroy a stream after its products): before a product it cannot
//! time (transposed, only scaling y, captured into a graph, or on another stream), and when
//! its last product has already completed at the next one's launch (the GPU ran dry: a caller
//! that waits for each product, or every few, would otherwise have the wait timed on one side
//! and not the other). A sample also times what the caller queues on its stream between its
//! products (a solver's vector operations), the same on both sides.
//! `TESSERA_TRIAL=0` turns it off (a heavy format that swaps in stays).
#![forbid(unsafe_code)]

use crate::backend::cuda::{self, Device, Event, Stream};
use crate::error::Result;
use crate::select;
use crate::types::Algorithm;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Products timed on each side.
pub(super) const SAMPLES: usize = 5;
/// Products run untimed on a side before its timed ones (the first product after an exchange
/// finds the other form's arrays in L2).
pub(super) const WARM: usize = 1;
/// The side the trial does not favour (the old form in AUTO's first trial, the new one in a
/// later trial) is kept only when its median time is this much below the other's.
pub(super) const MARGIN: f64 = 0.01;
/// Below this many ms per product (the favoured side's median) the side not favoured must be
/// faster by up to [`SHORT_MARGIN`] ([`margin`]). A timed product's start event is recorded before the method's host-side work, so
/// when the stream's queue has run dry the event pair also times the host's part of the call
/// (3.7-4.0 µs for a launch on the H100 machine, notes/overhead.md), which differs between
/// methods: in session 17's run B, BRC on a 2D grid of 2.1M non-zeros timed 12.4 µs in its
/// trial against 5.6 µs back to back, CSR_VECTOR 10.0 against 8.7, and the trial went back
/// to the slower CSR_VECTOR. Above it the host's part is under a tenth of a product.
pub(super) const SHORT_MS: f64 = 0.04;
/// The most lead a short product's trial needs (see [`SHORT_MS`] and [`margin`]).
pub(super) const SHORT_MARGIN: f64 = 0.25;
/// The host's part of a call that a short product's events may also time, ms: 3.0-4.0 µs for a
/// launch on the H100 and H200 machines (`tessera overhead`, notes/overhead.md).
pub(super) const HOST_MS: f64 = 0.004;

/// The lead the side a trial does not favour needs, given the favoured side's median (ms a
/// product) and the products a sample spans: [`MARGIN`] from [`SHORT_MS`] up; below it the
/// host's part of one call ([`HOST_MS`]) over the sample's products, between [`MARGIN`] and
/// [`SHORT_MARGIN`]. A flat 25% below 40 µs kept TILE at 28.3 µs over HOLA at 21.4 (random
/// 3000² at 53%, f64, H200, session 30's run O: 0.88 of cuSPARSE), 7 µs of lead where the
/// host's part is 3-4.
pub(super) fn margin(favoured_ms: f64, span: usize) -> f64 {
    if favoured_ms >= SHORT_MS {
        MARGIN
    } else {
        (HOST_MS / (favoured_ms * span.max(1) as f64)).clamp(MARGIN, SHORT_MARGIN)
    }
}
/// Event pairs: samples timed and not read yet, at most.
const SLOTS: usize = 2 * (SAMPLES + WARM);
/// The CSR bytes (values and column indices) a sample should read at least: a sample spans
/// this many bytes' worth of products ([`span`]: about 40 µs at 3.3 TB/s), so that a short
/// product's host part, which only the first product of a sample pays inside its events when
/// the GPU has run dry, is a small share of it.
pub(super) const SAMPLE_BYTES: usize = 128 << 20;
/// The most products one sample spans. Each side runs [`WARM`] + [`SAMPLES`] x span products,
/// and the side that loses costs its lead on each: at 8 (session 32, run A) the old form's 41
/// products cost dense 2000² in f32 about 4% of its first 1,000 (HOLA 15.7 µs against TILE's
/// 6.6), at 4 about 2%. Samples of 4 still read the trial's medians within 1-3 µs of the steady
/// times where one-product samples were 1.3-2x them (run D).
pub(super) const MAX_SPAN: usize = 4;

/// Products one sample spans for a matrix of `nnz` entries of `val_bytes` each: enough that
/// the sample reads [`SAMPLE_BYTES`] of CSR, from 1 (products of 40 µs and more) to [`MAX_SPAN`].
/// `TESSERA_TRIAL_SPAN=K` sets it (a measuring aid).
pub(super) fn span(nnz: usize, val_bytes: usize) -> usize {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        std::env::var("TESSERA_TRIAL_SPAN")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    });
    let bytes = nnz.saturating_mul(val_bytes + 4).max(1);
    forced
        .unwrap_or_else(|| SAMPLE_BYTES.div_ceil(bytes))
        .clamp(1, MAX_SPAN)
}

/// The form a product ran: the one swapped in, or the one it replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    New,
    Old,
}

/// What the product path must do before its launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing: run the running form.
    Run,
    /// Exchange the running form with the one it replaced, then run.
    Exchange,
}

/// A product that a sample times: its side, and whether it opens the sample (the start event
/// goes before it) and closes it (the end event goes after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mark {
    pub(super) side: Side,
    pub(super) first: bool,
    pub(super) last: bool,
}

/// The trial's logic, without events: which side runs, which products are timed, and the
/// verdict (tested on the host with made-up times).
#[derive(Debug, Clone)]
pub(super) struct Verdict {
    /// The side that runs now.
    running: Side,
    /// Products launched on the running side since it started running.
    launched: usize,
    /// Samples opened on each side (read or not).
    timed: [usize; 2],
    /// Products a sample spans ([`span`]).
    span: usize,
    /// Products launched in the sample now open (0: none is).
    open: usize,
    /// The products of each sample read, per side.
    spans: [Vec<usize>; 2],
    /// Milliseconds a product, per sample read, per side.
    new: Vec<f64>,
    old: Vec<f64>,
    /// The side kept, once decided.
    kept: Option<Side>,
    /// Which side the margin favours: the new form in the first trial of an analysis, the old
    /// one when the new is only a candidate after another's trial (`select::then_try`).
    favour_new: bool,
    /// The side that runs once both sides' timed products are launched, until the verdict:
    /// the one AUTO's rule predicts.
    wait: Side,
}

fn median_count(v: &[usize]) -> usize {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied().unwrap_or(1)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

impl Verdict {
    pub(super) fn new(favour_new: bool, wait: Side, span: usize) -> Self {
        Verdict {
            running: Side::New,
            launched: 0,
            timed: [0; 2],
            span: span.max(1),
            open: 0,
            spans: [Vec::new(), Vec::new()],
            new: Vec::new(),
            old: Vec::new(),
            kept: None,
            favour_new,
            wait,
        }
    }

    fn index(s: Side) -> usize {
        match s {
            Side::New => 0,
            Side::Old => 1,
        }
    }

    /// A sample of `side` took `ms` over its `products`.
    pub(super) fn sample(&mut self, side: Side, ms: f64, products: usize) {
        let products = products.max(1);
        self.spans[Self::index(side)].push(products);
        let ms = ms / products as f64;
        match side {
            Side::New => self.new.push(ms),
            Side::Old => self.old.push(ms),
        }
    }

    /// The side kept, once the trial is over.
    pub(super) fn kept(&self) -> Option<Side> {
        self.kept
    }

    /// Before a product: whether to exchange the forms first (the caller reports a done
    /// exchange through [`Verdict::exchanged`]). Each side runs until its timed products are
    /// launched, not until they are read: a caller that queues products ahead of the GPU reads
    /// a sample hundreds of products after its launch. Until then the `wait` side runs, the one
    /// AUTO's rule predicts, which pays only where the prediction is wrong:
    /// - session 23, run D: the new form run until its samples were read cost 3.5 ms in the first
    ///   1,000 products where TILE (35 µs) lost to HOLA (24 µs) on a random half-dense matrix in
    ///   f64, which the rule then predicted;
    /// - session 30, run A: the old form run while waiting cost 40-45 products of BRC's time at
    ///   N = 1,000 on the 3D Laplacian 160³, the 27-point stencil and elasticity 40³ (f64, H200),
    ///   where BRC is the rule's choice and wins every trial.
    ///
    /// A sample's products run on one side: no exchange while one is open.
    pub(super) fn step(&self) -> Step {
        if self.open > 0 {
            return Step::Run;
        }
        let want = match self.kept {
            // Decided: the kept side must be the running one.
            Some(k) => k,
            // The new side's samples not all launched (or one lost): the new side.
            None if self.timed[Self::index(Side::New)] < SAMPLES => Side::New,
            // Then the old side's.
            None if self.timed[Self::index(Side::Old)] < SAMPLES => Side::Old,
            // Then the predicted side, until the verdict.
            None => self.wait,
        };
        if want != self.running {
            Step::Exchange
        } else {
            Step::Run
        }
    }

    /// The forms were exchanged.
    pub(super) fn exchanged(&mut self) {
        self.running = match self.running {
            Side::New => Side::Old,
            Side::Old => Side::New,
        };
        self.launched = 0;
    }

    /// Decides once both sides have their samples; true when decided (now or before).
    pub(super) fn decide(&mut self) -> bool {
        if self.kept.is_none() && self.new.len() >= SAMPLES && self.old.len() >= SAMPLES {
            let (n, o) = (median(&self.new), median(&self.old));
            // The host's part is shared among the products of the samples the medians come
            // from: the median sample of the side with the shorter ones (a few samples closed
            // early, at a wait of the caller's, do not widen it).
            let spanned = self
                .spans
                .iter()
                .map(|v| median_count(v))
                .min()
                .unwrap_or(1);
            let margin = margin(if self.favour_new { n } else { o }, spanned);
            // The side not favoured must win by the margin.
            self.kept = Some(match self.favour_new {
                true if o < n * (1.0 - margin) => Side::Old,
                true => Side::New,
                false if n < o * (1.0 - margin) => Side::New,
                false => Side::Old,
            });
        }
        self.kept.is_some()
    }

    /// A product is launched on the running side: whether a sample times it.
    pub(super) fn launch(&mut self) -> Option<Mark> {
        let side = self.running;
        self.launched += 1;
        if self.open > 0 {
            self.open += 1;
            let last = self.open >= self.span;
            if last {
                self.open = 0;
            }
            return Some(Mark {
                side,
                first: false,
                last,
            });
        }
        let i = Self::index(side);
        if self.kept.is_some() || self.launched <= WARM || self.timed[i] >= SAMPLES {
            return None;
        }
        self.timed[i] += 1;
        let last = self.span == 1;
        self.open = usize::from(!last);
        Some(Mark {
            side,
            first: true,
            last,
        })
    }

    /// The products the samples read spanned: "4", or "1-4" where some closed early.
    pub(super) fn spanned(&self) -> String {
        let fewest = self.spans.iter().flatten().min().map_or(self.span, |&f| f);
        match fewest < self.span {
            true => format!("{fewest}-{}", self.span),
            false => self.span.to_string(),
        }
    }

    /// True while a sample is open (some of its products launched, not all).
    pub(super) fn is_open(&self) -> bool {
        self.open > 0
    }

    /// Medians of both sides (ms), once decided.
    pub(super) fn medians(&self) -> Option<(f64, f64)> {
        self.kept.map(|_| (median(&self.new), median(&self.old)))
    }

    /// A sample was lost (its events failed, or a product not its own may have run inside
    /// it): time another on that side.
    fn lost(&mut self, side: Side) {
        let i = Self::index(side);
        self.timed[i] = self.timed[i].saturating_sub(1);
    }

    /// The open sample is given up (see [`Verdict::lost`]).
    fn abort(&mut self) {
        if self.open > 0 {
            self.open = 0;
            self.lost(self.running);
        }
    }

    /// The open sample closes after the products launched so far (a product it cannot time
    /// comes next): how many (0: none was open).
    fn close(&mut self) -> usize {
        std::mem::take(&mut self.open)
    }
}

/// The trial's state while it runs.
#[derive(Debug)]
struct Running {
    verdict: Verdict,
    new: Algorithm,
    old: Algorithm,
    /// Event pairs not in use.
    free: Vec<usize>,
    /// Samples closed and not read yet: (event pair, side, products).
    pending: Vec<(usize, Side, usize)>,
    /// The sample now open: its event pair, side and the stream its products run on.
    open: Option<Open>,
    /// Samples opened so far (the next one's id).
    opened: u64,
}

/// A sample some of whose products are launched.
#[derive(Debug, Clone, Copy)]
struct Open {
    slot: usize,
    /// Which sample this is (samples reuse their slots): a product's [`Timing`] names it, so
    /// that a late `after` of an earlier sample's product never records into a later one.
    id: u64,
    side: Side,
    stream: Stream,
    /// Its end event has been recorded after one of its products ([`Trial::after`]). Until
    /// then the event holds nothing of this sample (never recorded, or recorded for an earlier
    /// sample of its slot): a query would say "done" and a reading would fail (a product on
    /// another thread, between its launch and its record, when this one looks).
    ended: bool,
}

impl Running {
    /// The open sample, if it is the one `t` times: not one closed since `t`'s product was
    /// launched whose slot a later sample took (a product on another thread, between its
    /// launch and its `after`; its end record would date the later sample's end before its
    /// start, on another stream).
    fn open_for(&mut self, t: &Timing) -> Option<&mut Open> {
        self.open.as_mut().filter(|o| o.id == t.id)
    }

    /// Opens a sample in `slot` for `side` on `stream`: its id.
    fn open_in(&mut self, slot: usize, side: Side, stream: Stream) -> u64 {
        self.opened += 1;
        self.open = Some(Open {
            slot,
            id: self.opened,
            side,
            stream,
            ended: false,
        });
        self.opened
    }

    /// Gives up the open sample, if any (its start event is recorded, its end never will be).
    fn abort(&mut self) {
        if let Some(o) = self.open.take() {
            self.free.push(o.slot);
            if self.verdict.is_open() {
                self.verdict.abort();
            } else {
                // Its last product launched: the verdict has closed it already.
                self.verdict.lost(o.side);
            }
        }
    }

    /// Closes the open sample after the products launched so far, whose end event is already
    /// recorded (after each of its products, [`Trial::after`]): no stream is touched, so this
    /// is safe whatever the caller did with the sample's stream since. Nothing when the last
    /// product's end is another thread's to record; the sample is given up when its only
    /// product's end is (there is nothing to read yet).
    fn close(&mut self) {
        let Some(o) = self.open else {
            return;
        };
        if !self.verdict.is_open() {
            return;
        }
        if !o.ended {
            self.abort();
            return;
        }
        self.open = None;
        let products = self.verdict.close();
        self.pending.push((o.slot, o.side, products));
    }
}

/// A product a sample times: the sample's event pair, and whether the product closes it.
#[derive(Debug)]
pub(super) struct Timing {
    slot: usize,
    /// The sample's id ([`Open::id`]).
    id: u64,
    last: bool,
}

/// A matrix's trial (one per analysis).
#[derive(Debug)]
pub(super) struct Trial {
    /// Products a sample spans ([`span`]).
    span: usize,
    /// The event pairs, made by the background build's worker.
    events: OnceLock<Vec<(Event, Event)>>,
    /// True while a trial runs: the one thing a product reads otherwise.
    active: AtomicBool,
    /// A trial has begun on this analysis (the next favours the form it kept).
    begun: AtomicBool,
    /// The method AUTO's rule chose for this matrix ([`Trial::expect`]).
    expected: OnceLock<Algorithm>,
    state: Mutex<Option<Running>>,
    /// What the trials found, for `info` (one sentence per trial, in order).
    note: Mutex<String>,
}

impl Trial {
    /// A trial for a matrix of `nnz` entries of `val_bytes` each: its samples span
    /// [`span`] products.
    pub(super) fn for_matrix(nnz: usize, val_bytes: usize) -> Self {
        Trial {
            span: span(nnz, val_bytes),
            events: OnceLock::new(),
            active: AtomicBool::new(false),
            begun: AtomicBool::new(false),
            expected: OnceLock::new(),
            state: Mutex::new(None),
            note: Mutex::new(String::new()),
        }
    }

    /// Makes the trial's events (on the background build's worker, before its form is ready).
    pub(super) fn prepare(&self, dev: &Arc<Device>) -> Result<()> {
        if !select::trial_enabled() || self.events.get().is_some() {
            return Ok(());
        }
        let ev = (0..SLOTS)
            .map(|_| Ok((Event::new(dev)?, Event::new(dev)?)))
            .collect::<Result<Vec<_>>>()?;
        let _ = self.events.set(ev);
        Ok(())
    }

    /// The method AUTO's rule (`select::heuristic`) chose for this matrix, before its
    /// background builds start: a trial whose new form is that method runs it while the samples
    /// are in flight, any other trial the old form ([`Verdict::step`]). The first call counts.
    pub(super) fn expect(&self, predicted: Algorithm) {
        let _ = self.expected.set(predicted);
    }

    /// `new` swapped in for `old`: starts a trial when `new` is a heavy format and the events
    /// are there.
    pub(super) fn begin(&self, new: Algorithm, old: Algorithm) {
        if !select::has_own_format(new) || new == old || self.events.get().is_none() {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.is_some() {
            return;
        }
        // The first trial tries what AUTO's rule predicted; a later one a mere candidate.
        let first = !self.begun.swap(true, Ordering::AcqRel);
        let wait = match self.expected.get() {
            Some(&p) if p == new => Side::New,
            _ => Side::Old,
        };
        *st = Some(Running {
            verdict: Verdict::new(first, wait, self.span),
            new,
            old,
            free: (0..SLOTS).rev().collect(),
            pending: Vec::new(),
            open: None,
            opened: 0,
        });
        self.active.store(true, Ordering::Release);
    }

    /// True while a trial runs.
    pub(super) fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// What the trials found (for `info`): empty before the first is over.
    pub(super) fn note(&self) -> String {
        self.note.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Before a product's launch, with the running form not yet read: reads the samples that
    /// have completed, exchanges the forms through `exchange` (true: done; it must not block)
    /// when the trial asks for it, and says whether to time this product (its start event
    /// recorded on `stream`). Never blocks; a product on another thread that holds the trial
    /// runs untimed.
    pub(super) fn before(
        &self,
        dev: &Device,
        stream: Stream,
        exchange: impl FnOnce() -> bool,
    ) -> Option<Timing> {
        if !self.active() {
            return None;
        }
        let events = self.events.get()?;
        let Ok(mut st) = self.state.try_lock() else {
            return None;
        };
        let run = st.as_mut()?;
        // Samples whose end event has completed, oldest first, up to the first that has not
        // (the others were launched after it; one on another stream that is done waits for a
        // later product): one query a product while a caller far ahead of the GPU has every
        // sample pending, not one per sample. A query is host time, which a short product's
        // next sample also times when the GPU runs dry.
        while let Some(&(slot, side, products)) = run.pending.first() {
            let (start, end) = &events[slot];
            let done = end.is_done();
            if matches!(done, Ok(false)) {
                break;
            }
            match done.and_then(|_| end.elapsed_ms(start)) {
                // (Not after its start: an end event another thread had yet to record.)
                Ok(ms) if ms > 0.0 => run.verdict.sample(side, ms, products),
                _ => run.verdict.lost(side),
            }
            run.pending.remove(0);
            run.free.push(slot);
        }
        run.verdict.decide();
        if run.verdict.step() == Step::Exchange && exchange() {
            run.verdict.exchanged();
        }
        if let Some(kept) = run.verdict.kept() {
            if kept == run.verdict.running {
                let (n, o) = run.verdict.medians().unwrap_or((0.0, 0.0));
                let (win, lose) = match kept {
                    Side::New => (run.new, run.old),
                    Side::Old => (run.old, run.new),
                };
                self.note
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_str(&format!(
                        "trial on this matrix's products: {} {n:.4} ms, {} {o:.4} ms (medians of {SAMPLES} samples of {} products): {win} kept over {lose}; ",
                        run.new, run.old, run.verdict.spanned()
                    ));
                *st = None;
                self.active.store(false, Ordering::Release);
                return None;
            }
        }
        // An open sample ends before this product when it cannot time it (another stream), or
        // when its last product has already completed: the GPU ran dry (a caller that waited
        // for it, or one slower than the GPU), and the gap before this product would be timed.
        if let Some(o) = run.open {
            if o.stream != stream || (o.ended && matches!(events[o.slot].1.is_done(), Ok(true))) {
                run.close();
            }
        }
        // A product captured into a graph is not timed (its events would be graph nodes), nor
        // inside an open sample.
        if cuda::is_capturing(dev, stream).unwrap_or(true) {
            run.close();
            return None;
        }
        // The last product of a sample launched on another thread, its end event not yet
        // recorded: this one runs untimed.
        if run.open.is_some() && !run.verdict.is_open() {
            return None;
        }
        let mark = run.verdict.launch()?;
        if mark.first {
            let Some(slot) = run.free.pop() else {
                run.verdict.abort();
                return None;
            };
            run.open_in(slot, mark.side, stream);
            if events[slot].0.record(stream).is_err() {
                run.abort();
                return None;
            }
        }
        let open = run.open?;
        Some(Timing {
            slot: open.slot,
            id: open.id,
            last: mark.last,
        })
    }

    /// After the launch of a product a sample times: the sample's end event, recorded again
    /// after each of its products on the same stream (the sample may close after any of them:
    /// [`Running::close`]); after the last the sample is closed. A failed launch or record
    /// gives the sample up.
    pub(super) fn after(&self, t: Timing, stream: Stream, launched: bool) {
        let Some(events) = self.events.get() else {
            return;
        };
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(run) = st.as_mut() else {
            return;
        };
        let Some(o) = run.open_for(&t).copied() else {
            return;
        };
        if !launched || events[t.slot].1.record(stream).is_err() {
            run.abort();
            return;
        }
        if let Some(o) = run.open_for(&t) {
            o.ended = true;
        }
        if t.last {
            run.open = None;
            run.pending.push((o.slot, o.side, run.verdict.span));
        }
    }

    /// Before a product that is not the trial's to time (a transposed one, or one that only
    /// scales y): an open sample on its stream closes first, so that it does not time it.
    pub(super) fn untimed(&self, stream: Stream) {
        if !self.active() {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(run) = st.as_mut() {
            if run.open.is_some_and(|o| o.stream == stream) {
                run.close();
            }
        }
    }
}

#[cfg(test)]
#[path = "trial_tests.rs"]
mod tests;
