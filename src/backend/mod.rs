//! The floor every method stands on: the CUDA backend (`cuda/`: loading, the device and its
//! modules, streams, events and timing, memory, launches, the kernel files, the CSR on the
//! device). It imports nothing from the methods. The host backend needs no machinery of its own:
//! it runs each method's `reference.rs` over that method's arrays (`crate::matrix`).

pub mod cuda;

/// With `TESSERA_TRACE=1`, one line on stderr per create and analyze saying where its time went;
/// with `TESSERA_TRACE=2` also each device allocation and the launch and wait of an inspection
/// (a debugging aid; off by default).
pub(crate) fn trace(level: u8, line: impl FnOnce() -> String) {
    static LEVEL: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    let on = *LEVEL.get_or_init(|| {
        std::env::var("TESSERA_TRACE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    });
    if level <= on {
        eprintln!("tessera: {}", line());
    }
}
