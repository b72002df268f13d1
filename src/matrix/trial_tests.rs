//! The trial's logic on the host, with made-up times (`trial.rs`).

use super::*;

/// Runs a trial whose products take `new` and `old` ms (each read at once), returning the
/// side kept, the exchanges made and the products run.
fn run(new: f64, old: f64, exchange_fails_every: usize) -> (Side, usize, usize) {
    run_spans(new, old, exchange_fails_every, 1)
}

/// [`run`] with samples of `span` products.
fn run_spans(new: f64, old: f64, exchange_fails_every: usize, span: usize) -> (Side, usize, usize) {
    let mut v = Verdict::new(true, Side::New, span);
    let (mut exchanges, mut products, mut sum) = (0, 0, 0.0);
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
        if let Some(m) = v.launch() {
            assert_eq!(m.first, sum == 0.0, "a sample opens once");
            sum += if m.side == Side::New { new } else { old };
            if m.last {
                v.sample(m.side, sum, span);
                sum = 0.0;
            }
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
        let mut v = Verdict::new(false, Side::Old, 1);
        for _ in 0..100 {
            v.decide();
            if v.kept() == Some(v.running) {
                return v.running;
            }
            if v.step() == Step::Exchange {
                v.exchanged();
            }
            if let Some(m) = v.launch() {
                v.sample(m.side, if m.side == Side::New { new } else { old }, 1);
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
    assert!((margin(0.0283, 1) - HOST_MS / 0.0283).abs() < 1e-12);
    // Capped at 25% for the shortest products, 1% from SHORT_MS up.
    assert_eq!(margin(0.005, 1), SHORT_MARGIN);
    assert_eq!(margin(SHORT_MS, 1), MARGIN);
    assert_eq!(margin(0.2, 1), MARGIN);
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
    let mut v = Verdict::new(true, Side::New, 1);
    for ms in [0.08, 0.5, 0.08, 0.08, 0.08] {
        v.sample(Side::New, ms, 1);
    }
    for _ in 0..SAMPLES {
        v.sample(Side::Old, 0.1, 1);
    }
    assert!(v.decide());
    assert_eq!(v.kept(), Some(Side::New));
    assert_eq!(v.medians(), Some((0.08, 0.1)));
}

/// A trial whose samples are read `lag` products after their launch (a caller far ahead of
/// the GPU), with products of `new` and `old` ms and `wait` the predicted side: the side kept
/// and the products each side ran (of 2,000).
fn in_flight(new: f64, old: f64, wait: Side, lag: usize) -> (Option<Side>, [usize; 2]) {
    let mut v = Verdict::new(true, wait, 1);
    let mut flight: Vec<(usize, Side)> = Vec::new();
    let mut ran = [0; 2];
    for product in 0..2000 {
        while let Some(&(at, side)) = flight.first() {
            if at + lag > product {
                break;
            }
            v.sample(side, if side == Side::New { new } else { old }, 1);
            flight.remove(0);
        }
        v.decide();
        if v.step() == Step::Exchange {
            v.exchanged();
        }
        ran[Verdict::index(v.running)] += 1;
        if let Some(m) = v.launch() {
            flight.push((product, m.side));
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
    let mut v = Verdict::new(true, Side::New, 1);
    assert_eq!(
        v.launch(),
        None,
        "the first product after the swap is warm-up"
    );
    let one = Some(Mark {
        side: Side::New,
        first: true,
        last: true,
    });
    for _ in 0..SAMPLES {
        assert_eq!(v.launch(), one);
    }
    assert_eq!(v.launch(), None, "enough in flight");
    v.lost(Side::New);
    assert_eq!(v.launch(), one);
}

#[test]
fn a_sample_spans_its_products_and_is_never_split_by_an_exchange() {
    let span = 4;
    let (kept, exchanges, products) = run_spans(0.008, 0.010, 0, span);
    assert_eq!((kept, exchanges), (Side::New, 2));
    assert_eq!(products, 2 * (SAMPLES * span + WARM) + 1);
    // An exchange the trial wants waits for the open sample's last product.
    let mut v = Verdict::new(true, Side::New, span);
    v.launch();
    for _ in 0..SAMPLES * span - 1 {
        assert!(v.launch().is_some());
        assert_eq!(v.step(), Step::Run);
    }
    assert!(v.launch().is_some_and(|m| m.last));
    assert_eq!(v.step(), Step::Exchange);
    // A sample's time is shared among its products.
    for side in [Side::New, Side::Old] {
        for _ in 0..SAMPLES {
            v.sample(side, if side == Side::New { 0.032 } else { 0.040 }, span);
        }
    }
    assert!(v.decide());
    assert_eq!(v.medians(), Some((0.008, 0.010)));
}

#[test]
fn a_sample_given_up_is_timed_again() {
    let mut v = Verdict::new(true, Side::New, 3);
    v.launch();
    assert!(v.launch().is_some_and(|m| m.first && !m.last));
    assert!(v.is_open());
    v.abort();
    assert!(!v.is_open());
    for _ in 0..SAMPLES {
        assert!(v.launch().is_some_and(|m| m.first));
        assert!(v.launch().is_some_and(|m| !m.first && !m.last));
        assert!(v.launch().is_some_and(|m| m.last));
    }
    assert_eq!(
        v.launch(),
        None,
        "every sample opened once more after the one given up"
    );
}

#[test]
fn a_sample_closed_early_counts_its_own_products_and_the_median_sample_sets_the_margin() {
    let mut v = Verdict::new(true, Side::New, 4);
    v.launch();
    assert!(v.launch().is_some_and(|m| m.first));
    assert!(v.launch().is_some_and(|m| !m.last));
    assert_eq!(v.close(), 2);
    assert!(!v.is_open());
    assert_eq!(v.close(), 0, "closed once");
    // The next product opens the next sample.
    assert!(v.launch().is_some_and(|m| m.first));
    // 30 against 27 µs a product: over samples of 4 the host's part (3%) is below the
    // 10% lead. Samples of 1 product on one side (`short` of the 5) bring the margin back to
    // one call's (13%) once they are most of that side's samples, not before.
    let decide = |short: usize| {
        let mut v = Verdict::new(true, Side::New, 4);
        for i in 0..SAMPLES {
            let k = if i < short { 1 } else { 4 };
            v.sample(Side::New, 0.030 * k as f64, k);
            v.sample(Side::Old, 0.027 * 4.0, 4);
        }
        assert!(v.decide());
        v.kept()
    };
    assert_eq!(decide(0), Some(Side::Old));
    assert_eq!(decide(2), Some(Side::Old), "two short samples of five");
    assert_eq!(decide(3), Some(Side::New));
}

#[test]
fn a_longer_sample_needs_a_smaller_lead() {
    // 25.4 against 21.4 µs (TILE against HOLA, random 3000² at 53%, f64, session 31): one
    // product's host part is 16% of the favoured side, within the margin; over 5 products
    // it is 3%, and HOLA wins.
    assert_eq!(run_spans(0.0254, 0.0214, 0, 1).0, Side::New);
    assert_eq!(run_spans(0.0254, 0.0214, 0, 5).0, Side::Old);
    assert!((margin(0.0254, 5) - HOST_MS / (5.0 * 0.0254)).abs() < 1e-12);
}

#[test]
fn a_sample_spans_enough_bytes() {
    // Products of 40 µs and more: one each; the smallest matrices: MAX_SPAN.
    assert_eq!(span(24 << 20, 8), 1);
    assert_eq!(span(1000, 8), MAX_SPAN);
    // A band of 5.2M f64 entries (62 MB): three products a sample; in f32 (42 MB) four.
    assert_eq!(span(5_220_000, 8), 3);
    assert_eq!(span(5_220_000, 4), 4);
    // Dense 2000² in f64 (48 MB): three.
    assert_eq!(span(4_000_000, 8), 3);
    assert_eq!(span(0, 8), MAX_SPAN);
}

#[test]
fn a_sample_whose_end_is_not_recorded_yet_is_given_up_not_read() {
    // Another thread's product has opened a sample and launched, and not yet recorded the end:
    // closing the sample then (a product of this thread on another stream, or one that finds
    // the end "complete") must give it up, not queue a reading of an event that holds nothing
    // of it (cuEventElapsedTime fails on it: session 34's memcheck of gpu_background).
    for ended in [false, true] {
        let mut run = Running {
            verdict: Verdict::new(true, Side::New, 2),
            new: Algorithm::Brc,
            old: Algorithm::Hola,
            free: vec![1],
            pending: Vec::new(),
            open: None,
            opened: 0,
        };
        let mark = std::iter::repeat_with(|| run.verdict.launch())
            .take(10)
            .flatten()
            .next()
            .expect("a sample opens after the warm products");
        assert!(mark.first && !mark.last, "the first of a sample of two");
        run.open_in(0, mark.side, Stream(0));
        run.open.as_mut().unwrap().ended = ended;
        run.close();
        assert!(run.open.is_none(), "closed either way");
        if ended {
            assert_eq!(run.pending, vec![(0, Side::New, 1)], "read once complete");
            assert_eq!(run.free, vec![1]);
        } else {
            assert!(run.pending.is_empty(), "nothing to read");
            assert_eq!(run.free, vec![1, 0], "its events free again");
        }
    }
}

#[test]
fn a_late_after_of_an_earlier_sample_never_marks_a_later_one_in_the_same_slot() {
    // A product of sample 1 (slot 0, stream 1) is between its launch and its `after` on one
    // thread; meanwhile another thread closes sample 1, it is read, and sample 2 takes slot 0
    // on stream 2. The late `after` must not record sample 2's end on stream 1 (whose end
    // could then complete before its start: cuEventElapsedTime's NOT_READY in session 35's
    // memcheck of gpu_background).
    let mut run = Running {
        verdict: Verdict::new(true, Side::New, 2),
        new: Algorithm::Brc,
        old: Algorithm::Hola,
        free: Vec::new(),
        pending: Vec::new(),
        open: None,
        opened: 0,
    };
    let first = run.open_in(0, Side::New, Stream(1));
    let late = Timing {
        slot: 0,
        id: first,
        last: false,
    };
    assert!(run.open_for(&late).is_some(), "its own sample");
    run.open = None;
    let second = run.open_in(0, Side::Old, Stream(2));
    assert_ne!(first, second);
    assert!(run.open_for(&late).is_none(), "the slot's later sample");
    let own = Timing {
        slot: 0,
        id: second,
        last: true,
    };
    assert_eq!(run.open_for(&own).map(|o| o.stream), Some(Stream(2)));
}
