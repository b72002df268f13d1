//! AUTO's trial of a heavy format against the form it replaced, on the caller's own products.
//!
//! AUTO's rule predicts from row statistics that a format of its own (BRC, TILE, BCCOO) will
//! beat the method over the CSR arrays, and builds it in the background. The prediction misses
//! on some matrices (measured: BRC 3% slower than HOLA on an empty-rows matrix of 16M
//! non-zeros in f64, 60% slower than CSR_VECTOR on a 3 million non-zero elasticity matrix), and
//! a user's matrices are not the ones the rule was fitted on. So when a heavy format swaps in,
//! the next products time it against the form it replaced, both on the caller's stream with
//! CUDA events around the product's own launches: [`SAMPLES`] products of the new form, then
//! (the two exchanged at a product boundary) [`SAMPLES`] of the old one, after [`WARM`] untimed
//! products on each. The faster one stays: the old form wins only when its median is more
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
//! product on another thread that finds the trial's lock taken runs untimed.
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

/// The lead the side a trial does not favour needs, given the favoured side's median (ms):
/// [`MARGIN`] from [`SHORT_MS`] up; below it the host's part of a call over the product
/// ([`HOST_MS`]), between [`MARGIN`] and [`SHORT_MARGIN`]. A flat 25% below 40 µs kept TILE at
/// 28.3 µs over HOLA at 21.4 (random 3000² at 53%, f64, H200, session 30's run O: 0.88 of
/// cuSPARSE), 7 µs of lead where the host's part is 3-4; products under 16 µs keep 25%.
pub(super) fn margin(favoured_ms: f64) -> f64 {
    if favoured_ms >= SHORT_MS {
        MARGIN
    } else {
        (HOST_MS / favoured_ms).clamp(MARGIN, SHORT_MARGIN)
    }
}
/// Event pairs: products timed and not read yet, at most.
const SLOTS: usize = 2 * (SAMPLES + WARM);

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

/// The trial's logic, without events: which side runs, which products are timed, and the
/// verdict (tested on the host with made-up times).
#[derive(Debug, Clone)]
pub(super) struct Verdict {
    /// The side that runs now.
    running: Side,
    /// Products launched on the running side since it started running.
    launched: usize,
    /// Timed products launched on each side (read or not).
    timed: [usize; 2],
    /// Milliseconds read, per side.
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

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

impl Verdict {
    pub(super) fn new(favour_new: bool, wait: Side) -> Self {
        Verdict {
            running: Side::New,
            launched: 0,
            timed: [0; 2],
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

    /// A timed product of `side` took `ms`.
    pub(super) fn sample(&mut self, side: Side, ms: f64) {
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
    pub(super) fn step(&self) -> Step {
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
            let margin = margin(if self.favour_new { n } else { o });
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

    /// A product is launched on the running side: whether to time it.
    pub(super) fn launch(&mut self) -> Option<Side> {
        let side = self.running;
        self.launched += 1;
        let i = Self::index(side);
        let time = self.kept.is_none() && self.launched > WARM && self.timed[i] < SAMPLES;
        if time {
            self.timed[i] += 1;
        }
        time.then_some(side)
    }

    /// Medians of both sides (ms), once decided.
    pub(super) fn medians(&self) -> Option<(f64, f64)> {
        self.kept.map(|_| (median(&self.new), median(&self.old)))
    }

    /// A timed product's sample was lost (its events failed): time another on that side.
    fn lost(&mut self, side: Side) {
        let i = Self::index(side);
        self.timed[i] = self.timed[i].saturating_sub(1);
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
    /// Timed products not read yet: (event pair, side).
    pending: Vec<(usize, Side)>,
}

/// A product being timed: its event pair and side.
#[derive(Debug)]
pub(super) struct Timing {
    slot: usize,
    side: Side,
}

/// A matrix's trial (one per analysis).
#[derive(Debug, Default)]
pub(super) struct Trial {
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
            verdict: Verdict::new(first, wait),
            new,
            old,
            free: (0..SLOTS).rev().collect(),
            pending: Vec::new(),
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
        while let Some(&(slot, side)) = run.pending.first() {
            let (start, end) = &events[slot];
            let done = end.is_done();
            if matches!(done, Ok(false)) {
                break;
            }
            match done.and_then(|_| end.elapsed_ms(start)) {
                Ok(ms) => run.verdict.sample(side, ms),
                Err(_) => run.verdict.lost(side),
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
                        "trial on this matrix's products: {} {n:.4} ms, {} {o:.4} ms (medians of {SAMPLES}): {win} kept over {lose}; ",
                        run.new, run.old
                    ));
                *st = None;
                self.active.store(false, Ordering::Release);
                return None;
            }
        }
        // A product captured into a graph is not timed (its events would be graph nodes).
        if cuda::is_capturing(dev, stream).unwrap_or(true) {
            return None;
        }
        let side = run.verdict.launch()?;
        let Some(slot) = run.free.pop() else {
            run.verdict.lost(side);
            return None;
        };
        if events[slot].0.record(stream).is_err() {
            run.free.push(slot);
            run.verdict.lost(side);
            return None;
        }
        Some(Timing { slot, side })
    }

    /// After the timed product's launch: its end event, on the same stream.
    pub(super) fn after(&self, t: Timing, stream: Stream, launched: bool) {
        let Some(events) = self.events.get() else {
            return;
        };
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(run) = st.as_mut() else {
            return;
        };
        if launched && events[t.slot].1.record(stream).is_ok() {
            run.pending.push((t.slot, t.side));
        } else {
            run.free.push(t.slot);
            run.verdict.lost(t.side);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a trial whose products take `new` and `old` ms (each read at once), returning the
    /// side kept, the exchanges made and the products run.
    fn run(new: f64, old: f64, exchange_fails_every: usize) -> (Side, usize, usize) {
        let mut v = Verdict::new(true, Side::New);
        let (mut exchanges, mut products) = (0, 0);
        while products < 1000 {
            v.decide();
            if v.kept() == Some(v.running) {
                return (v.running, exchanges, products);
            }
            if v.step() == Step::Exchange {
                // A contended exchange is left to the next product.
                if exchange_fails_every == 0 || products % exchange_fails_every != 0 {
                    v.exchanged();
                    exchanges += 1;
                }
            }
            products += 1;
            if let Some(side) = v.launch() {
                v.sample(side, if side == Side::New { new } else { old });
            }
        }
        panic!("the trial never ended");
    }

    #[test]
    fn a_faster_new_form_stays_after_one_round_trip() {
        let (kept, exchanges, products) = run(0.08, 0.10, 0);
        assert_eq!((kept, exchanges), (Side::New, 2));
        // Each side's warm-up and samples, and the product that exchanges back (untimed).
        assert_eq!(products, 2 * (SAMPLES + WARM) + 1);
    }

    #[test]
    fn a_slower_new_form_is_exchanged_back_once() {
        let (kept, exchanges, _) = run(0.12, 0.10, 0);
        assert_eq!((kept, exchanges), (Side::Old, 1));
    }

    #[test]
    fn the_old_form_must_win_by_the_margin() {
        // 0.5% faster: within the margin, the new form stays.
        assert_eq!(run(0.1005, 0.1, 0).0, Side::New);
        assert_eq!(run(0.1020, 0.1, 0).0, Side::Old);
        const { assert!(SHORT_MS < 0.1, "these products are long ones") };
    }

    #[test]
    fn a_later_trial_keeps_the_old_form_unless_the_new_wins_by_the_margin() {
        let run_later = |new: f64, old: f64| {
            let mut v = Verdict::new(false, Side::Old);
            for _ in 0..100 {
                v.decide();
                if v.kept() == Some(v.running) {
                    return v.running;
                }
                if v.step() == Step::Exchange {
                    v.exchanged();
                }
                if let Some(side) = v.launch() {
                    v.sample(side, if side == Side::New { new } else { old });
                }
            }
            panic!("the trial never ended");
        };
        // Long products: 1%.
        assert_eq!(run_later(0.0995, 0.1), Side::Old);
        assert_eq!(run_later(0.0980, 0.1), Side::New);
        // Short ones: 25% (session 18's run E, elasticity 24³ f32: BCCOO 14.4 against BRC's
        // 11.1 µs in the trial kept the slower BCCOO when the margin favoured it).
        assert_eq!(run_later(0.0144, 0.0111), Side::Old);
        assert_eq!(run_later(0.0090, 0.0111), Side::Old);
        assert_eq!(run_later(0.0204, 0.0292), Side::New);
    }

    #[test]
    fn a_short_product_needs_a_larger_lead_to_go_back() {
        // 12.4 against 10.0 µs: the host's part of the call may be the difference.
        assert_eq!(run(0.0124, 0.0100, 0).0, Side::New);
        // Twice as fast (elasticity 24³ in f32: BRC 23.8, CSR_VECTOR 11.5 µs): back.
        assert_eq!(run(0.0238, 0.0115, 0).0, Side::Old);
    }

    #[test]
    fn the_short_margin_is_the_host_part_of_a_call() {
        // 28.3 against 21.4 µs (TILE against HOLA, random 3000² at 53%, f64): 14% is enough.
        assert_eq!(run(0.0283, 0.0214, 0).0, Side::Old);
        assert!((margin(0.0283) - HOST_MS / 0.0283).abs() < 1e-12);
        // Capped at 25% for the shortest products, 1% from SHORT_MS up.
        assert_eq!(margin(0.005), SHORT_MARGIN);
        assert_eq!(margin(SHORT_MS), MARGIN);
        assert_eq!(margin(0.2), MARGIN);
        // Within the host's part: the favoured side stays (30 against 27 µs).
        assert_eq!(run(0.030, 0.027, 0).0, Side::New);
    }

    #[test]
    fn contended_exchanges_are_retried() {
        let (kept, exchanges, _) = run(0.12, 0.10, 2);
        assert_eq!((kept, exchanges), (Side::Old, 1));
        let (kept, exchanges, _) = run(0.08, 0.10, 3);
        assert_eq!((kept, exchanges), (Side::New, 2));
    }

    #[test]
    fn the_median_ignores_one_slow_sample() {
        let mut v = Verdict::new(true, Side::New);
        for ms in [0.08, 0.5, 0.08, 0.08, 0.08] {
            v.sample(Side::New, ms);
        }
        for _ in 0..SAMPLES {
            v.sample(Side::Old, 0.1);
        }
        assert!(v.decide());
        assert_eq!(v.kept(), Some(Side::New));
        assert_eq!(v.medians(), Some((0.08, 0.1)));
    }

    /// A trial whose samples are read `lag` products after their launch (a caller far ahead of
    /// the GPU), with products of `new` and `old` ms and `wait` the predicted side: the side kept
    /// and the products each side ran (of 2,000).
    fn in_flight(new: f64, old: f64, wait: Side, lag: usize) -> (Option<Side>, [usize; 2]) {
        let mut v = Verdict::new(true, wait);
        let mut flight: Vec<(usize, Side)> = Vec::new();
        let mut ran = [0; 2];
        for product in 0..2000 {
            while let Some(&(at, side)) = flight.first() {
                if at + lag > product {
                    break;
                }
                v.sample(side, if side == Side::New { new } else { old });
                flight.remove(0);
            }
            v.decide();
            if v.step() == Step::Exchange {
                v.exchanged();
            }
            ran[Verdict::index(v.running)] += 1;
            if let Some(side) = v.launch() {
                flight.push((product, side));
            }
        }
        (v.kept(), ran)
    }

    #[test]
    fn the_predicted_form_runs_while_the_samples_are_in_flight() {
        // The new form predicted and faster (BRC on the 3D Laplacian): the old form runs only
        // its warm-up and timed products.
        let (kept, ran) = in_flight(0.100, 0.120, Side::New, 300);
        assert_eq!(kept, Some(Side::New));
        assert_eq!(ran[Verdict::index(Side::Old)], SAMPLES + WARM);
        // The new form only a candidate, and slower (BRC on some elasticity matrices): the new
        // form runs only its warm-up and timed products, never again after the verdict.
        let (kept, ran) = in_flight(0.035, 0.024, Side::Old, 300);
        assert_eq!(kept, Some(Side::Old));
        assert_eq!(ran[Verdict::index(Side::New)], SAMPLES + WARM);
        // A wrong prediction costs the products in flight, once: the new form runs until the
        // verdict is read (both sides' samples and the lag), then never again.
        let (kept, ran) = in_flight(0.035, 0.024, Side::New, 300);
        assert_eq!(kept, Some(Side::Old));
        let on_new = ran[Verdict::index(Side::New)];
        assert!(
            on_new > 300 && on_new <= 300 + 2 * (SAMPLES + WARM),
            "{on_new} products on the new form"
        );
    }

    #[test]
    fn lost_samples_are_timed_again_and_warm_products_never() {
        let mut v = Verdict::new(true, Side::New);
        assert_eq!(
            v.launch(),
            None,
            "the first product after the swap is warm-up"
        );
        for _ in 0..SAMPLES {
            assert_eq!(v.launch(), Some(Side::New));
        }
        assert_eq!(v.launch(), None, "enough in flight");
        v.lost(Side::New);
        assert_eq!(v.launch(), Some(Side::New));
    }
}
