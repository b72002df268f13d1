//! Cooperative cancellation of a format built on a worker thread (AUTO's background build):
//! the worker runs its host half under [`with_flag`], and the long loops of the format builders
//! call [`check_every`], which fails (an internal error that no caller sees: the worker discards
//! it) once the flag is set. On any other thread (analyze on the caller's thread, the host backend) the
//! checks find no flag and cost a thread-local read.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `f` with `flag` as this thread's cancel flag (restoring the previous one after).
pub fn with_flag<R>(flag: Arc<AtomicBool>, f: impl FnOnce() -> R) -> R {
    let old = FLAG.with(|c| c.replace(Some(flag)));
    let r = f();
    FLAG.with(|c| *c.borrow_mut() = old);
    r
}

/// This thread's cancel flag, for the threads a build spawns ([`with`]).
pub fn current() -> Option<Arc<AtomicBool>> {
    FLAG.with(|c| c.borrow().clone())
}

/// Runs `f` with `flag` (from [`current`]) as this thread's cancel flag, or with none.
pub fn with<R>(flag: Option<Arc<AtomicBool>>, f: impl FnOnce() -> R) -> R {
    match flag {
        Some(flag) => with_flag(flag, f),
        None => f(),
    }
}

/// The error a cancelled build ends with.
pub fn cancelled() -> Error {
    Error::Internal("the background build was cancelled".into())
}

/// Fails when this thread's build has been cancelled.
pub fn check() -> Result<()> {
    let set = FLAG.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    });
    if set {
        Err(cancelled())
    } else {
        Ok(())
    }
}

/// [`check`] at every 2^16-th `i` (loop counters of the builders: a few checks per millisecond
/// of work).
#[inline]
pub fn check_every(i: usize) -> Result<()> {
    if i & 0xFFFF == 0 {
        check()
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_set_flag_of_this_thread_cancels() {
        assert!(check().is_ok(), "no flag: never cancelled");
        let flag = Arc::new(AtomicBool::new(false));
        with_flag(flag.clone(), || {
            assert!(check().is_ok());
            flag.store(true, Ordering::Relaxed);
            assert!(check().is_err());
            assert!(check_every(1).is_ok(), "checked only every 2^16-th step");
            assert!(check_every(1 << 16).is_err());
            std::thread::scope(|s| {
                s.spawn(|| assert!(check().is_ok(), "another thread has no flag"));
            });
        });
        assert!(check().is_ok(), "the flag ends with with_flag");
    }
}
