//! The floor every method stands on: the CUDA backend (`cuda/`: loading, the device and its
//! modules, streams, events and timing, memory, launches, the kernel files, the CSR on the
//! device). It imports nothing from the methods. The host backend needs no machinery of its own:
//! it runs each method's `reference.rs` over that method's arrays (`crate::matrix`).

pub mod cuda;
pub mod workers;

/// The trace level: `TESSERA_TRACE` (0 when unset), read once per process (the CLI's bench asks
/// it at every product).
#[doc(hidden)]
pub fn trace_level() -> u8 {
    static LEVEL: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| {
        std::env::var("TESSERA_TRACE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    })
}

/// True when the environment variable `name` is `0`, `off`, `false` or `no` (any case).
pub(crate) fn switched_off(name: &str) -> bool {
    matches!(
        std::env::var(name)
            .unwrap_or_default()
            .to_ascii_lowercase()
            .as_str(),
        "0" | "off" | "false" | "no"
    )
}

/// With `TESSERA_TRACE=1`, one line on stderr per create and analyze saying where its time went;
/// with `TESSERA_TRACE=2` also each device allocation and the launch and wait of an inspection;
/// with `TESSERA_TRACE=3` also the host time between the marks of the first products' path
/// ([`span`], [`spans`]) (a debugging aid; off by default).
pub(crate) fn trace(level: u8, line: impl FnOnce() -> String) {
    if level <= trace_level() {
        eprintln!("tessera: {}", line());
    }
}

/// Microseconds since the process's first call of this function (the traces' common clock).
#[doc(hidden)]
pub fn trace_clock_us() -> f64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1e6
}

thread_local! {
    static SPANS: std::cell::RefCell<Vec<(&'static str, std::time::Instant)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// With `TESSERA_TRACE=3`: marks this instant on this thread as the end of step `name` (also
/// for the tools outside the library: `tessera bench`'s own steps).
#[doc(hidden)]
pub fn span(name: &'static str) {
    if trace_level() >= 3 {
        SPANS.with(|s| s.borrow_mut().push((name, std::time::Instant::now())));
    }
}

/// With `TESSERA_TRACE=3`: prints the steps marked on this thread since the last call (each
/// step's host time from the previous mark), after `label`, and forgets them.
#[doc(hidden)]
pub fn spans(label: &str) {
    if trace_level() < 3 {
        return;
    }
    let marks = SPANS.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let text: Vec<String> = marks
        .windows(2)
        .map(|w| format!("{} {:.1}", w[1].0, (w[1].1 - w[0].1).as_secs_f64() * 1e6))
        .collect();
    eprintln!("tessera: {label} (us): {}", text.join(" | "));
}

/// Starts a new timeline of marks on this thread ([`spans`] prints it).
#[doc(hidden)]
pub fn span_start() {
    if trace_level() >= 3 {
        SPANS.with(|s| {
            let mut s = s.borrow_mut();
            s.clear();
            s.push(("start", std::time::Instant::now()));
        });
    }
}
