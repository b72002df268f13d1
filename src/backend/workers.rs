//! The threads that run AUTO's background builds (`matrix::background::Background`), kept
//! between builds: starting a thread costs tens of microseconds on the GPU machines (60-70 us
//! of a 4M-row matrix's analyze, measured with `TESSERA_TRACE`), and analyze must not wait. A
//! job runs at once on an idle thread, or on a new one when every thread is busy (so a job
//! never waits for another: a test's gated build cannot hold up the next); a thread idle for
//! [`IDLE`] leaves. A thread that takes a job first starts spares until [`SPARES`] are idle, so
//! that the caller's next jobs find one.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::Duration;

/// A build, run once on a worker thread. It catches its own panics (a worker survives them
/// anyway).
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// How long a thread waits for its next job before it leaves.
const IDLE: Duration = Duration::from_secs(10);

/// An idle thread: its id and where to send it a job.
struct Idle {
    id: u64,
    tx: Sender<Job>,
}

/// The idle threads, the most recently idle last.
static IDLE_THREADS: Mutex<Vec<Idle>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
/// Jobs running now.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How many background builds are running now in this process (their threads stay, idle,
/// after): what a test of cancellation waits to see reach 0.
#[doc(hidden)]
pub fn running_builds() -> usize {
    RUNNING.load(Ordering::Acquire)
}

fn idle() -> std::sync::MutexGuard<'static, Vec<Idle>> {
    IDLE_THREADS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job` on an idle worker thread, or on a new one. Err: no thread could be started.
pub(crate) fn run(job: Job) -> std::io::Result<()> {
    let mut job = job;
    loop {
        let Some(w) = idle().pop() else {
            return start(Some(job));
        };
        match w.tx.send(job) {
            Ok(()) => return Ok(()),
            // (Cannot happen: a thread leaves only after taking itself off the idle list.)
            Err(mpsc::SendError(j)) => job = j,
        }
    }
}

/// Idle threads a worker keeps ready when it takes a job (it starts the missing ones itself),
/// so that the next jobs, which AUTO sends in a burst (its check's outcome starts a light
/// build, a kernel preload and a heavy build), find a thread instead of starting one on the
/// caller's thread: 30-50 us each there, inside a product call (H200, session 35, run E:
/// `final: later spawned` 60-100 us for two jobs).
const SPARES: usize = 2;

/// Spare threads started and not yet on the idle list.
static STARTING: AtomicUsize = AtomicUsize::new(0);

/// Starts threads until [`SPARES`] are idle (or on their way): what a CUDA handle's creation
/// does, so that even a process's first background build finds a thread (starting one inside
/// the product call that hands the build over took 80-120 us: session 35, run P).
pub(crate) fn top_up() {
    let have = idle().len() + STARTING.load(Ordering::Acquire);
    for _ in have..SPARES {
        if start(None).is_err() {
            return;
        }
    }
}

/// A new worker thread, starting with `first`, or idle (a spare) without one.
fn start(first: Option<Job>) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<Job>();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let spare = first.is_none();
    if spare {
        STARTING.fetch_add(1, Ordering::AcqRel);
    }
    let started = std::thread::Builder::new()
        .name("tessera-build".into())
        .spawn(move || {
            let mut job = first;
            // A spare counts as starting until it is first on the idle list.
            let mut starting = spare;
            loop {
                if let Some(j) = job.take() {
                    top_up();
                    // A panic is the job's own to report (it catches its phases'); the thread
                    // goes on.
                    RUNNING.fetch_add(1, Ordering::AcqRel);
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(j));
                    RUNNING.fetch_sub(1, Ordering::AcqRel);
                }
                idle().push(Idle { id, tx: tx.clone() });
                if std::mem::take(&mut starting) {
                    STARTING.fetch_sub(1, Ordering::AcqRel);
                }
                loop {
                    match rx.recv_timeout(IDLE) {
                        Ok(j) => {
                            job = Some(j);
                            break;
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            let mut list = idle();
                            if let Some(pos) = list.iter().position(|w| w.id == id) {
                                list.remove(pos);
                                return;
                            }
                            // Taken off the list by `run`: its job is on the way.
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            }
        })
        .map(|_| ());
    if started.is_err() && spare {
        STARTING.fetch_sub(1, Ordering::AcqRel);
    }
    started
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn jobs_run_at_once_even_when_every_thread_is_busy_and_finished_threads_wait_for_more() {
        // A job that blocks until released, then another: the second runs meanwhile (a new
        // thread); a finished thread then waits for the next job, which runs.
        let (block_tx, block_rx) = channel::<()>();
        let (done_tx, done_rx) = channel::<(u32, String)>();
        let d1 = done_tx.clone();
        run(Box::new(move || {
            block_rx.recv().unwrap();
            d1.send((1, std::thread::current().name().unwrap().into()))
                .unwrap();
        }))
        .unwrap();
        let d2 = done_tx.clone();
        run(Box::new(move || {
            d2.send((2, format!("{:?}", std::thread::current().id())))
                .unwrap();
        }))
        .unwrap();
        let (n, _) = done_rx.recv_timeout(IDLE).unwrap();
        assert_eq!(n, 2, "the second job ran while the first blocked");
        block_tx.send(()).unwrap();
        let (n, name) = done_rx.recv_timeout(IDLE).unwrap();
        assert_eq!((n, name.as_str()), (1, "tessera-build"));
        // A finished thread waits, idle, for the next job (other tests' builds may take it
        // meanwhile: polled for a second).
        let t = std::time::Instant::now();
        while idle().is_empty() {
            assert!(
                t.elapsed() < Duration::from_secs(1),
                "no finished thread waits for the next job"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        run(Box::new(move || {
            done_tx
                .send((3, format!("{:?}", std::thread::current().id())))
                .unwrap();
        }))
        .unwrap();
        let (n, _) = done_rx.recv_timeout(IDLE).unwrap();
        assert_eq!(n, 3);
    }

    #[test]
    fn a_worker_that_takes_a_job_leaves_spares_for_the_next() {
        let (tx, rx) = channel::<()>();
        run(Box::new(move || tx.send(()).unwrap())).unwrap();
        rx.recv_timeout(IDLE).unwrap();
        // The job's own thread comes back idle too; the spares it started are there besides.
        let t = std::time::Instant::now();
        while idle().len() < SPARES + 1 {
            assert!(
                t.elapsed() < Duration::from_secs(2),
                "{} idle threads after a job, want {}",
                idle().len(),
                SPARES + 1
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_panicking_job_leaves_its_thread_working() {
        let (tx, rx) = channel::<u32>();
        run(Box::new(|| panic!("a job's own panic"))).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        run(Box::new(move || tx.send(7).unwrap())).unwrap();
        assert_eq!(rx.recv_timeout(IDLE).unwrap(), 7);
    }
}
