//! The check of a caller's CSR read in place, queued and not waited for: `util_inspect` runs on
//! the caller's stream, writes its result into page-locked host memory and its verdict into
//! device memory, and the host reads the result when it next needs it ([`DeferredCheck`]).
//! Products launched before then read the verdict on the device (`tessera_gated` in
//! kernels/common.cuh). What `tessera_create_csr_borrowed` does (`crate::matrix`'s check.rs
//! says when the result is read and what a malformed matrix then reports).
//!
//! Each check takes a slot of the device's check slab (one allocation of device memory and one
//! of mapped page-locked host memory, made at the first deferred check and freed with the
//! device): the kernel's accumulators and verdict in device memory, its result words in host
//! memory. The kernel leaves its accumulators zero, so a slot goes back to the free list once
//! its kernel has run; with every slot taken a create checks synchronously instead.

use super::import::{self, DeviceCsr};
use super::{check, Device, Ready, Stream};
use crate::csr::RowStats;
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::sync::{Arc, OnceLock};

/// True unless `TESSERA_CHECK` is `sync`: the borrowed create then checks before it returns.
pub fn deferred_checks() -> bool {
    !std::env::var("TESSERA_CHECK").is_ok_and(|v| v.trim().eq_ignore_ascii_case("sync"))
}

/// Slots of a device's check slab: checks whose matrix is alive at once.
pub(crate) const SLOTS: usize = 256;
/// Words of a slot's head: 12 accumulators (kernels/util.cu), then the verdict (a 32-bit
/// word); the slot's workspace follows.
const SLOT_WORDS: usize = 16;
/// Bytes of a slot's workspace: lent to the provisional method of a small matrix (HOLA's row
/// starts, which the check's kernel writes, and its carry workspace, which it zeroes). 24 KiB
/// hold f64's layout for every grid that carry mode takes in one wave at two blocks per SM
/// (`hola::cuda::workspace_layout`) on up to 140 SMs (H100 and H200: 264 blocks, 22.6 KiB, about
/// 270,000 non-zeros at 1024 per block). The slab is then 6.3 MB (256 slots).
pub(crate) const WORK_BYTES: usize = 24 << 10;
/// Bytes of a big workspace: lent, when a slot's workspace is too small, to the provisional
/// HOLA of a large matrix, which runs with prescale and atomics and needs its row starts alone
/// (the check's kernel writes them): 65,535 blocks, about 67 million non-zeros at 1024 per
/// block. [`BIG_SLOTS`] of them (4 MiB) are allocated with the slab; a check that finds none
/// free leaves the starts to the provisional HOLA's own allocation and launch.
pub(crate) const BIG_WORK_BYTES: usize = 256 << 10;
/// Big workspaces of a device: large matrices whose provisional HOLA's row starts the check's
/// kernel writes, alive at once.
const BIG_SLOTS: usize = 16;
/// Bytes of a slot in device memory.
const SLOT_BYTES: usize = SLOT_WORDS * 8 + WORK_BYTES;
/// Word of the verdict in a device slot.
const VERDICT_WORD: usize = 12;
/// Words of a slot's result in host memory (11 used).
const RESULT_WORDS: usize = 16;

/// A device's check slab: `SLOTS` slots of device memory (zeroed once) and of mapped
/// page-locked host memory, and the free ones. Raw handles: owned by the [`Device`] and freed
/// by it ([`CheckSlab::release`]) while its context lives.
#[derive(Debug)]
pub(crate) struct CheckSlab {
    dev: sys::CUdeviceptr,
    host: *mut u64,
    host_dev: sys::CUdeviceptr,
    free: Vec<u32>,
    /// The big workspaces ([`BIG_WORK_BYTES`] each) and the free ones.
    big: sys::CUdeviceptr,
    big_free: Vec<u32>,
}

// SAFETY: device and page-locked allocations are process-wide; the slab is used under the
// device's scratch mutex.
unsafe impl Send for CheckSlab {}

impl CheckSlab {
    /// Allocates the slab and zeroes its device half on `stream`, waiting for it (once per
    /// device). The context must be current.
    pub(crate) fn new(stream: Stream) -> Result<CheckSlab> {
        let mut slab = CheckSlab {
            dev: 0,
            host: std::ptr::null_mut(),
            host_dev: 0,
            free: (0..SLOTS as u32).rev().collect(),
            big: 0,
            big_free: (0..BIG_SLOTS as u32).rev().collect(),
        };
        let made = (|| -> Result<()> {
            let bytes = SLOTS * SLOT_BYTES;
            // SAFETY (each call): the context is current; valid out-pointers; the memset and
            // the wait cover the allocation just made.
            check(
                unsafe { sys::cuMemAlloc_v2(&mut slab.dev, bytes) },
                "cuMemAlloc (check slab)",
            )?;
            // The big workspaces need no zeroing: the check's kernel writes every row start.
            check(
                unsafe { sys::cuMemAlloc_v2(&mut slab.big, BIG_SLOTS * BIG_WORK_BYTES) },
                "cuMemAlloc (check slab's big workspaces)",
            )?;
            let mut h: *mut std::ffi::c_void = std::ptr::null_mut();
            check(
                unsafe {
                    sys::cuMemHostAlloc(
                        &mut h,
                        SLOTS * RESULT_WORDS * 8,
                        sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP,
                    )
                },
                "cuMemHostAlloc (check results)",
            )?;
            slab.host = h.cast();
            check(
                unsafe { sys::cuMemHostGetDevicePointer_v2(&mut slab.host_dev, h, 0) },
                "cuMemHostGetDevicePointer",
            )?;
            check(
                unsafe { sys::cuMemsetD8Async(slab.dev, 0, bytes, stream.raw()) },
                "cuMemsetD8Async (check slab)",
            )?;
            check(
                unsafe { sys::cuStreamSynchronize(stream.raw()) },
                "cuStreamSynchronize (check slab)",
            )
        })();
        match made {
            Ok(()) => Ok(slab),
            Err(e) => {
                slab.release();
                Err(e)
            }
        }
    }

    /// Frees both halves; the device's context must be current.
    pub(crate) fn release(&mut self) {
        // SAFETY: allocations of this context, freed once (nulled here).
        unsafe {
            if self.dev != 0 {
                let _ = sys::cuMemFree_v2(self.dev);
            }
            if self.big != 0 {
                let _ = sys::cuMemFree_v2(self.big);
            }
            if !self.host.is_null() {
                let _ = sys::cuMemFreeHost(self.host.cast());
            }
        }
        self.dev = 0;
        self.big = 0;
        self.host = std::ptr::null_mut();
    }

    /// A free slot, if any.
    pub(crate) fn take(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// The device addresses of slot `i`'s accumulators, its verdict word, its result words
    /// (host memory) and its workspace.
    pub(crate) fn addresses(&self, i: u32) -> [u64; 4] {
        let d = self.dev + (i as usize * SLOT_BYTES) as u64;
        [
            d,
            d + (VERDICT_WORD * 8) as u64,
            self.host_dev + (i as usize * RESULT_WORDS * 8) as u64,
            d + (SLOT_WORDS * 8) as u64,
        ]
    }

    /// Slot `i`'s result words, once its kernel has run.
    fn result(&self, i: u32) -> [u64; import::STATUS] {
        let mut out = [0u64; import::STATUS];
        for (w, o) in out.iter_mut().enumerate() {
            // SAFETY: slot i's words lie inside the host allocation; the kernel that wrote
            // them has finished (the caller waited for its event), and nothing writes them
            // until the slot is given back.
            *o = unsafe { self.host.add(i as usize * RESULT_WORDS + w).read_volatile() };
        }
        out
    }

    /// Gives slot `i` back (its kernel has run: its accumulators are zero again).
    pub(crate) fn give_back(&mut self, i: u32) {
        self.free.push(i);
    }

    /// A free big workspace, if any: its index and device address.
    pub(crate) fn take_big(&mut self) -> Option<(u32, u64)> {
        let i = self.big_free.pop()?;
        Some((i, self.big + (i as usize * BIG_WORK_BYTES) as u64))
    }

    /// Gives big workspace `i` back (nothing that used it runs any more).
    pub(crate) fn give_back_big(&mut self, i: u32) {
        self.big_free.push(i);
    }
}

/// A check queued on the device ([`import::inspect_deferred`]) and its outcome once read: the
/// row statistics, `None` for columns unsorted within a row, or the error the host path gives.
pub struct DeferredCheck {
    dev: Arc<Device>,
    slot: u32,
    /// Marks the kernel, on the create's stream.
    ready: Ready,
    p: DeviceCsr,
    /// The verdict word's device address (the products' gate).
    verdict: u64,
    /// The workspace the check's kernel filled ([`Fuse`]): the slot's, or a big one (its
    /// index), lent to the matrix's methods until this is dropped.
    work: Option<(u64, Option<u32>)>,
    /// The slot's workspace.
    slot_work: u64,
    /// A workspace was lent to a method ([`DeferredCheck::workspace`], [`DeferredCheck::lend`]):
    /// only then may products still read it when this is dropped.
    lent: std::sync::atomic::AtomicBool,
    outcome: OnceLock<Result<Option<RowStats>>>,
}

impl std::fmt::Debug for DeferredCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeferredCheck(slot {}, {:?})",
            self.slot,
            self.outcome.get()
        )
    }
}

/// What the check's kernel also prepares in workspace memory for a provisional HOLA of `npb`
/// non-zeros per block and `nblocks` blocks: the row starts at offset 0 (`nblocks + 1` int32),
/// and zeroes `carry_bytes` at `carry_at` (the caller's layout: in the slot's workspace when it
/// fits [`WORK_BYTES`], else in a big one when it fits [`BIG_WORK_BYTES`] and one is free).
#[derive(Debug, Clone, Copy)]
pub struct Fuse {
    /// Non-zeros per block.
    pub npb: usize,
    /// Blocks.
    pub nblocks: usize,
    /// Offset of the workspace to zero.
    pub carry_at: usize,
    /// Bytes to zero (a multiple of 4).
    pub carry_bytes: usize,
}

/// Test hook: while set, [`DeferredCheck::poll`] answers "not yet" for every check.
static HOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Holds (`true`) or releases every deferred check's outcome (tests: products launched while
/// a check is held run gated even when its kernel has long finished).
#[doc(hidden)]
pub fn hold_checks(on: bool) {
    HOLD.store(on, std::sync::atomic::Ordering::SeqCst);
}

impl DeferredCheck {
    pub(super) fn new(
        dev: &Arc<Device>,
        slot: u32,
        ready: Ready,
        p: DeviceCsr,
        verdict: u64,
        (slot_work, work): (u64, Option<(u64, Option<u32>)>),
    ) -> DeferredCheck {
        DeferredCheck {
            dev: dev.clone(),
            slot,
            ready,
            p,
            verdict,
            work,
            slot_work,
            lent: std::sync::atomic::AtomicBool::new(false),
            outcome: OnceLock::new(),
        }
    }

    /// The workspace the check's kernel filled as the create's [`Fuse`] asked (the slot's, or
    /// a big one for a layout larger than [`WORK_BYTES`]).
    pub fn workspace(&self) -> Option<u64> {
        let w = self.work.map(|(w, _)| w);
        if w.is_some() {
            self.lent.store(true, std::sync::atomic::Ordering::Release);
        }
        w
    }

    /// True when the check's kernel fills a workspace (as [`DeferredCheck::workspace`], without
    /// lending it).
    pub fn fills_workspace(&self) -> bool {
        self.work.is_some()
    }

    /// Workspace memory for the matrix's methods until this is dropped, as address and bytes:
    /// the one the check's kernel filled ([`WORK_BYTES`], or [`BIG_WORK_BYTES`] for a big
    /// one), else the slot's, unused by the kernel. The caller overwrites what the kernel
    /// wrote there.
    pub fn lend(&self) -> (u64, usize) {
        self.lent.store(true, std::sync::atomic::Ordering::Release);
        match self.work {
            Some((w, Some(_))) => (w, BIG_WORK_BYTES),
            Some((w, None)) => (w, WORK_BYTES),
            None => (self.slot_work, WORK_BYTES),
        }
    }

    /// The device address of the verdict word: the gate of products launched before the
    /// outcome is read.
    pub fn gate(&self) -> u64 {
        self.verdict
    }

    /// The outcome if it is known or the kernel has finished (never blocks then, except to
    /// read back the entries an error names); `None` while the kernel runs.
    pub fn poll(&self, stream: Stream) -> Option<&Result<Option<RowStats>>> {
        if let Some(o) = self.outcome.get() {
            return Some(o);
        }
        if HOLD.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        match self.ready.is_done() {
            Ok(false) => None,
            Ok(true) => Some(self.read(stream)),
            Err(e) => Some(self.outcome.get_or_init(|| Err(e))),
        }
    }

    /// The outcome, waiting for the kernel if need be.
    pub fn wait(&self, stream: Stream) -> &Result<Option<RowStats>> {
        if let Some(o) = self.outcome.get() {
            return o;
        }
        if let Err(e) = self.ready.synchronize() {
            return self.outcome.get_or_init(|| Err(e));
        }
        self.read(stream)
    }

    /// The outcome, if it has been read.
    pub fn known(&self) -> Option<&Result<Option<RowStats>>> {
        self.outcome.get()
    }

    /// Orders `stream` after the check (a product on another stream than the create's,
    /// launched before the outcome is known): [`Ready::order`].
    pub fn order(&self, stream: Stream) -> Result<()> {
        self.ready.order(stream)
    }

    fn read(&self, stream: Stream) -> &Result<Option<RowStats>> {
        self.outcome.get_or_init(|| {
            let status = match self.dev.scratch() {
                Ok(g) => match &g.checks {
                    Some(slab) => slab.result(self.slot),
                    None => return Err(Error::Internal("a check without its slab".into())),
                },
                Err(e) => return Err(e),
            };
            import::decode_stats(&self.dev, stream, &self.p, status)
        })
    }
}

impl Drop for DeferredCheck {
    fn drop(&mut self) {
        // The slot is reused only after its kernel has run (a slot whose kernel failed keeps
        // accumulators that may not be zero: never reused), and, when a workspace was lent to
        // a method, after every product that may use it (as freeing the method's own memory
        // would wait: cuMemFree synchronizes). A workspace the kernel filled but no method was
        // given (AUTO chose another method once the outcome was known) needs no more than the
        // kernel: an analyze that finds the check done does not wait for the whole device.
        if self.ready.synchronize().is_err() {
            return;
        }
        if self.lent.load(std::sync::atomic::Ordering::Acquire) {
            let Ok(_g) = self.dev.enter() else {
                return;
            };
            // SAFETY: the device's context is current.
            if unsafe { sys::cuCtxSynchronize() } != sys::CUresult::CUDA_SUCCESS {
                return;
            }
        }
        if let Ok(mut g) = self.dev.scratch() {
            if let Some(slab) = &mut g.checks {
                slab.give_back(self.slot);
                if let Some((_, Some(big))) = self.work {
                    slab.give_back_big(big);
                }
            }
        }
    }
}
