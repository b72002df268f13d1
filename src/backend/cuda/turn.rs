//! A background thread's turn at the driver.
//!
//! The CUDA driver serialises the calls into one context behind a lock that is not fair: a
//! caller that launches products back to back takes it again before a thread woken for it
//! runs. A format built beside such a caller (AUTO's background build) therefore waited 30-80
//! us for each of its launches, about 15 of them, where they take 5-10 us alone (session 24's
//! traces of TILE's build on an H200: the census queued 317 us after its allocation beside the
//! caller, against 40-60 us alone), and the format swapped in hundreds of products later than
//! its kernels needed.
//!
//! So a thread tessera owns marks itself ([`as_background`]) for the scope of its device work,
//! and while it is inside a driver call ([`Device::enter`](super::Device::enter)) the device's
//! [`Turn`] is held. Any other thread about to make a driver call of that device first waits
//! for the turn to be given back, but never longer than [`MAX_WAIT`] from when it was taken,
//! nor longer than that itself: a background call that waits for the GPU inside it, or a long
//! allocation, costs a caller at most that once, and a caller never waits for anything but a
//! running driver call (no lock of tessera's is taken, so no wait can deadlock).
//! Calls that only wait for the device ([`Device::enter_to_wait`](super::Device::enter_to_wait))
//! take no turn. `TESSERA_BACKGROUND_TURN=0` turns it off (the driver's order then decides).

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest a caller's driver call waits for a background call's turn, counted from when
/// the turn was taken (and from when the caller began to wait).
pub(crate) const MAX_WAIT: Duration = Duration::from_micros(100);

thread_local! {
    /// Whether this thread is in [`as_background`], and how deep in driver calls it is.
    static BACKGROUND: Cell<(bool, u32)> = const { Cell::new((false, 0)) };
}

/// Runs `f` as background device work: the driver calls it makes take their turn ahead of
/// other threads' (see the module's documentation). For threads tessera owns.
pub fn as_background<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            BACKGROUND.with(|b| b.set((self.0, b.get().1)));
        }
    }
    let was = BACKGROUND.with(|b| {
        let (was, depth) = b.get();
        b.set((true, depth));
        was
    });
    let _restore = Restore(was);
    f()
}

/// Whether turns are taken (`TESSERA_BACKGROUND_TURN=0`: no).
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("TESSERA_BACKGROUND_TURN").map_or(true, |v| v.trim() != "0"))
}

/// Nanoseconds since the first use in this process: a clock two threads can compare.
fn now_ns() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A device's turn: how many background threads are inside a driver call of it, and when the
/// first of them entered.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    held: AtomicU32,
    since_ns: AtomicU64,
}

/// Gives a background thread's turn back when dropped.
pub(crate) struct TurnGuard<'a>(&'a Turn);

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        let outermost = BACKGROUND.with(|b| {
            let (on, depth) = b.get();
            b.set((on, depth.saturating_sub(1)));
            depth == 1
        });
        if outermost {
            self.0.held.fetch_sub(1, Ordering::Release);
        }
    }
}

impl Turn {
    /// Before a driver call: a background thread takes the turn (until the guard drops);
    /// another thread waits while one is held, at most [`MAX_WAIT`].
    pub(crate) fn enter(&self) -> Option<TurnGuard<'_>> {
        if !enabled() {
            return None;
        }
        let (background, depth) = BACKGROUND.with(Cell::get);
        if background {
            BACKGROUND.with(|b| b.set((true, depth + 1)));
            if depth == 0 {
                self.since_ns.store(now_ns(), Ordering::Relaxed);
                // Release: a caller that sees the turn held sees when it was taken.
                self.held.fetch_add(1, Ordering::AcqRel);
            }
            return Some(TurnGuard(self));
        }
        if self.held.load(Ordering::Acquire) != 0 {
            self.wait();
        }
        None
    }

    /// Waits while a background thread holds the turn, at most [`MAX_WAIT`] from when it took
    /// it and from now.
    #[cold]
    fn wait(&self) {
        let max = MAX_WAIT.as_nanos() as u64;
        let start = now_ns();
        let mut spins = 0u32;
        while self.held.load(Ordering::Acquire) != 0 {
            let now = now_ns();
            let since = self.since_ns.load(Ordering::Relaxed);
            if now.saturating_sub(since) >= max || now.saturating_sub(start) >= max {
                return;
            }
            spins += 1;
            if spins % 64 == 0 {
                // On a machine with fewer cores than threads, the background thread needs one.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Whether a background thread holds the turn now (tests).
    #[cfg(test)]
    pub(crate) fn held(&self) -> bool {
        self.held.load(Ordering::Acquire) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_background_thread_holds_the_turn_for_its_outermost_call_only_and_gives_it_back() {
        let t = Turn::default();
        assert!(t.enter().is_none(), "a caller's thread takes no turn");
        assert!(!t.held());
        as_background(|| {
            let outer = t.enter().expect("a background thread takes the turn");
            assert!(t.held());
            let inner = t.enter().expect("nested");
            drop(inner);
            assert!(t.held(), "the outer call still holds it");
            drop(outer);
            assert!(!t.held());
        });
        assert!(t.enter().is_none(), "the mark ends with as_background");
    }

    #[test]
    fn a_caller_waits_for_a_held_turn_but_no_longer_than_the_bound() {
        let t = Arc::new(Turn::default());
        let (took, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let t2 = t.clone();
        let h = std::thread::spawn(move || {
            as_background(|| {
                let _g = t2.enter();
                took.0.send(()).unwrap();
                // Held until the main thread says so: longer than the bound.
                let _ = release.1.recv_timeout(Duration::from_secs(10));
            })
        });
        took.1.recv().unwrap();
        let start = Instant::now();
        assert!(t.enter().is_none());
        let waited = start.elapsed();
        release.0.send(()).unwrap();
        h.join().unwrap();
        assert!(
            waited < Duration::from_millis(50),
            "a caller waited {waited:?} for a turn held past the bound"
        );
        assert!(!t.held());
    }

    #[test]
    fn a_caller_goes_on_only_once_the_turn_is_given_back_or_the_bound_has_passed() {
        use std::sync::atomic::AtomicBool;
        let t = Arc::new(Turn::default());
        let released = Arc::new(AtomicBool::new(false));
        let took = std::sync::mpsc::channel();
        let (t2, r2) = (t.clone(), released.clone());
        let h = std::thread::spawn(move || {
            as_background(|| {
                let g = t2.enter();
                took.0.send(()).unwrap();
                let start = Instant::now();
                while start.elapsed() < Duration::from_micros(30) {
                    std::hint::spin_loop();
                }
                r2.store(true, Ordering::SeqCst);
                drop(g);
            })
        });
        took.1.recv().unwrap();
        let start = Instant::now();
        assert!(t.enter().is_none());
        let waited = start.elapsed();
        assert!(
            released.load(Ordering::SeqCst) || waited >= MAX_WAIT,
            "the caller went on after {waited:?} while the turn was held"
        );
        h.join().unwrap();
    }
}
