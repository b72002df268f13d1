//! Fault injection for tests (issue 10, item 3): makes the Nth device allocation, NVRTC
//! compilation, module load or kernel launch fail, so that every error path of the CUDA backend
//! can be exercised on a healthy GPU.
//!
//! Two switches, both off by default:
//! - [`arm`] (Rust tests, `#[doc(hidden)]`): counts events on the *calling thread* only, so test
//!   threads running in parallel do not disturb each other. Every operation of tessera runs its
//!   driver and NVRTC calls on the thread that called it, so a thread's count is exactly the
//!   events of its own calls.
//! - `TESSERA_FAULT_INJECT=alloc:N|compile:N|load:N|launch:N` (C programs; several separated by
//!   `,`): counts events of the whole process from its start; read once, at the first event.
//!
//! An injected failure takes the same path and gives the same status as a real one: allocation
//! CUDA_ERROR_OUT_OF_MEMORY (ALLOC_FAILED), compilation an NVRTC compile error
//! (COMPILE_FAILED), module load CUDA_ERROR_INVALID_IMAGE and launch
//! CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (both EXECUTION_FAILED); the sentence for
//! `tessera_last_error()` ends with "[injected fault: ...]" naming the event and its number.
//!
//! While a compilation or module-load fault is armed (either switch), `Device::module` bypasses
//! the in-memory and on-disk module caches, so each module request really compiles and loads:
//! otherwise a module cached by an earlier call would make those faults unreachable.
//!
//! Cost when nothing is armed: one thread-local read and one relaxed atomic load per event, next
//! to a driver call that costs microseconds.
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The events a fault can be injected into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A device allocation (`cuMemAlloc`, every `DeviceBuffer` of tessera).
    Alloc,
    /// An NVRTC compilation of a kernel module.
    Compile,
    /// A module load (`cuModuleLoadData`).
    Load,
    /// A kernel launch (`cuLaunchKernel`).
    Launch,
}

/// The environment variable for C programs.
pub const ENV: &str = "TESSERA_FAULT_INJECT";

const KINDS: [Fault; 4] = [Fault::Alloc, Fault::Compile, Fault::Load, Fault::Launch];

impl Fault {
    fn index(self) -> usize {
        self as usize
    }

    /// The name used in `TESSERA_FAULT_INJECT` and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Alloc => "alloc",
            Fault::Compile => "compile",
            Fault::Load => "load",
            Fault::Launch => "launch",
        }
    }

    fn event(self) -> &'static str {
        match self {
            Fault::Alloc => "device allocation",
            Fault::Compile => "NVRTC compilation",
            Fault::Load => "module load",
            Fault::Launch => "kernel launch",
        }
    }
}

/// One thread's switch for one kind: fail event number `target` (1-based; 0 = off), `seen`
/// events so far, `fired` once it failed one.
#[derive(Clone, Copy, Default)]
struct Slot {
    target: u64,
    seen: u64,
    fired: bool,
}

thread_local! {
    /// True while any kind is armed on this thread (the one read on the fast path).
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static SLOTS: Cell<[Slot; 4]> = const { Cell::new([Slot { target: 0, seen: 0, fired: false }; 4]) };
}

/// The process-wide switch of `TESSERA_FAULT_INJECT`: per kind the event number to fail (0 =
/// off) and the events seen.
struct EnvSwitch {
    any: bool,
    target: [u64; 4],
    seen: [AtomicU64; 4],
}

static ENV_SWITCH: OnceLock<EnvSwitch> = OnceLock::new();
static ENV_CHECKED: AtomicBool = AtomicBool::new(false);

fn env_switch() -> Option<&'static EnvSwitch> {
    if ENV_CHECKED.load(Ordering::Relaxed) {
        let s = ENV_SWITCH.get()?;
        return s.any.then_some(s);
    }
    let s = ENV_SWITCH.get_or_init(|| {
        let mut target = [0u64; 4];
        if let Ok(v) = std::env::var(ENV) {
            if let Err(e) = parse(&v, &mut target) {
                eprintln!("tessera: ignoring {ENV}={v:?}: {e}");
                target = [0; 4];
            }
        }
        EnvSwitch {
            any: target.iter().any(|&t| t > 0),
            target,
            seen: Default::default(),
        }
    });
    ENV_CHECKED.store(true, Ordering::Relaxed);
    s.any.then_some(s)
}

/// Parses `alloc:N,launch:M...` into per-kind targets.
fn parse(v: &str, target: &mut [u64; 4]) -> Result<(), String> {
    for part in v.split([',', '|', ' ']).filter(|p| !p.is_empty()) {
        let (k, n) = part
            .split_once(':')
            .ok_or_else(|| format!("{part:?} is not KIND:N"))?;
        let kind = KINDS
            .iter()
            .find(|f| f.name() == k.trim())
            .ok_or_else(|| format!("{k:?} is not one of alloc, compile, load, launch"))?;
        let n: u64 = n
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{n:?} is not a positive event number"))?;
        target[kind.index()] = n;
    }
    Ok(())
}

/// Called at each event of `kind`: `Some(sentence)` when this event is to fail. The sentence
/// ("[injected fault: ...]") is appended to the error's detail.
#[inline]
pub(crate) fn hit(kind: Fault) -> Option<String> {
    if ARMED.with(Cell::get) {
        let mut slots = SLOTS.with(Cell::get);
        let s = &mut slots[kind.index()];
        if s.target > 0 {
            s.seen += 1;
            let fire = s.seen == s.target;
            s.fired |= fire;
            let n = s.seen;
            SLOTS.with(|c| c.set(slots));
            if fire {
                return Some(format!(
                    "[injected fault: {} #{n} on this thread, armed by tessera's test switch]",
                    kind.event()
                ));
            }
        }
    }
    let env = env_switch()?;
    let t = env.target[kind.index()];
    if t == 0 {
        return None;
    }
    let n = env.seen[kind.index()].fetch_add(1, Ordering::Relaxed) + 1;
    (n == t).then(|| {
        format!(
            "[injected fault: {} #{n} of the process, {ENV}={}:{t}]",
            kind.event(),
            kind.name()
        )
    })
}

/// True while a compilation or module-load fault is armed (on this thread or by the
/// environment): `Device::module` then compiles and loads every module afresh.
#[inline]
pub(crate) fn bypass_module_cache() -> bool {
    if ARMED.with(Cell::get) {
        let slots = SLOTS.with(Cell::get);
        if slots[Fault::Compile.index()].target > 0 || slots[Fault::Load.index()].target > 0 {
            return true;
        }
    }
    env_switch()
        .is_some_and(|e| e.target[Fault::Compile.index()] > 0 || e.target[Fault::Load.index()] > 0)
}

/// Arms `kind` on the calling thread: its `n`th event from now (1-based) fails; `n = 0`
/// disarms that kind. Counters of the kind restart at zero.
#[doc(hidden)]
pub fn arm(kind: Fault, n: u64) {
    let mut slots = SLOTS.with(Cell::get);
    slots[kind.index()] = Slot {
        target: n,
        seen: 0,
        fired: false,
    };
    SLOTS.with(|c| c.set(slots));
    ARMED.with(|a| a.set(slots.iter().any(|s| s.target > 0)));
}

/// Disarms every kind on the calling thread.
#[doc(hidden)]
pub fn disarm() {
    for k in KINDS {
        arm(k, 0);
    }
}

/// Whether the fault armed for `kind` on this thread has fired since it was armed.
#[doc(hidden)]
pub fn fired(kind: Fault) -> bool {
    SLOTS.with(Cell::get)[kind.index()].fired
}

/// Events of `kind` counted on this thread since it was armed (0 when not armed).
#[doc(hidden)]
pub fn seen(kind: Fault) -> u64 {
    SLOTS.with(Cell::get)[kind.index()].seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_event_of_the_armed_kind_fails_once_and_only_on_this_thread() {
        assert!(hit(Fault::Alloc).is_none());
        arm(Fault::Alloc, 3);
        assert!(
            bypass_module_cache() == env_switch().is_some_and(|e| e.target[1] + e.target[2] > 0)
        );
        assert!(hit(Fault::Alloc).is_none());
        assert!(hit(Fault::Launch).is_none());
        assert!(hit(Fault::Alloc).is_none());
        assert!(!fired(Fault::Alloc));
        std::thread::spawn(|| {
            for _ in 0..5 {
                assert!(hit(Fault::Alloc).is_none(), "another thread is not armed");
            }
        })
        .join()
        .unwrap();
        let s = hit(Fault::Alloc).expect("the third allocation fails");
        assert!(s.contains("injected fault: device allocation #3"), "{s}");
        assert!(fired(Fault::Alloc));
        assert!(hit(Fault::Alloc).is_none(), "only the third");
        assert_eq!(seen(Fault::Alloc), 4);
        arm(Fault::Load, 1);
        assert!(bypass_module_cache());
        disarm();
        assert!(hit(Fault::Load).is_none());
        assert!(!ARMED.with(Cell::get));
    }

    #[test]
    fn the_environment_switch_parses_kinds_and_refuses_nonsense() {
        let mut t = [0; 4];
        parse("alloc:3,launch:7", &mut t).unwrap();
        assert_eq!(t, [3, 0, 0, 7]);
        let mut t = [0; 4];
        parse("compile:1|load:2", &mut t).unwrap();
        assert_eq!(t, [0, 1, 2, 0]);
        assert!(parse("alloc", &mut t).is_err());
        assert!(parse("free:1", &mut t).is_err());
        assert!(parse("launch:0", &mut t).is_err());
        assert!(parse("launch:x", &mut t).is_err());
    }
}
