//! Per-matrix workspaces shared by concurrent products.
//!
//! Some methods keep scratch memory per matrix (HOLA's carry sums, BCCOO's synchronisation flags
//! and partial sums, BRC's deterministic partial sums). Products of one matrix may run at once on
//! different streams (other handles, other threads), and two products must never use one
//! workspace at the same time: their partial sums would mix. A [`SlotRing`] hands each product
//! the next of `n` workspace slots and orders it after the slot's previous user on the device
//! (`cuStreamWaitEvent`), without blocking the host; beyond `n` products in flight they queue.
//! A product on the same stream as the slot's previous user is ordered by the stream already
//! and waits for nothing.
//!
//! While a stream is being captured into a CUDA graph nothing is waited on or recorded: an event
//! recorded outside a capture cannot be waited on inside it, and the graph keeps the slot it was
//! captured with.

#![forbid(unsafe_code)]

use crate::backend::cuda::{is_capturing, Device, Event, Stream};
use crate::error::Result;
use std::sync::{Arc, Mutex};

/// `n` workspace slots with the event and stream of each slot's last use.
pub struct SlotRing {
    order: Mutex<Order>,
}

/// Which slot the next product takes; per slot an event recorded after its last launches and
/// the stream they ran on (None: never used).
struct Order {
    next: usize,
    done: Vec<Event>,
    used: Vec<Option<Stream>>,
}

impl std::fmt::Debug for SlotRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = self.order.lock().unwrap_or_else(|p| p.into_inner());
        write!(f, "SlotRing(next {}, {} slots)", o.next, o.done.len())
    }
}

impl SlotRing {
    /// A ring of `n` slots (at least 1), with an ordering-only event each.
    pub fn new(dev: &Arc<Device>, n: usize) -> Result<Self> {
        let n = n.max(1);
        Ok(SlotRing {
            order: Mutex::new(Order {
                next: 0,
                done: (0..n)
                    .map(|_| Event::for_ordering(dev))
                    .collect::<Result<_>>()?,
                used: vec![None; n],
            }),
        })
    }

    /// Runs `launches(slot)` on `stream` with the next of the first `active` slots (all when
    /// `active` is 0 or larger than the ring): acquire (wait on the device for the slot's
    /// previous user, unless it ran on this same stream or the stream is capturing), the
    /// launches, release (record the slot's event on `stream`). The slot is released even when
    /// a launch failed, because an earlier launch of the same product may already be queued
    /// and using it. The ring is locked from acquire to release, so the record of one product
    /// always precedes the wait of the next on the same slot.
    pub fn run<R>(
        &self,
        dev: &Device,
        stream: Stream,
        active: usize,
        launches: impl FnOnce(usize) -> Result<R>,
    ) -> Result<R> {
        let mut o = self.order.lock().unwrap_or_else(|p| p.into_inner());
        let n = match active {
            0 => o.done.len(),
            a => a.min(o.done.len()),
        };
        let slot = o.next % n;
        o.next = o.next.wrapping_add(1);
        let capturing = is_capturing(dev, stream)?;
        if !capturing && o.used[slot].is_some_and(|s| !s.same_queue(stream)) {
            o.done[slot].wait_on(stream)?;
        }
        let launched = launches(slot);
        if !capturing {
            o.done[slot].record(stream)?;
            o.used[slot] = Some(stream);
        }
        launched
    }
}
