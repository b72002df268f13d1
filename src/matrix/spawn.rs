//! AUTO's background build of a format for the device ([`Matrix::spawn_gpu`]): what the worker
//! fetches, builds on the host and uploads, or builds on the device.

use super::background::{Background, Phases};
use super::Matrix;
use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{self, OwnedStream};
use crate::csr::{Csr, RowStats};
use crate::error::Result;
use crate::methods::{self, GpuMethod, Request};
use crate::scalar::Scalar;
use crate::types::{Algorithm, Tuning};
use std::sync::Arc;

impl<T: Scalar> Matrix<T> {
    /// Starts building `target` (fixed rule) for the device in the background: its host half
    /// ([`methods::build_on_host`]; no CUDA call) on the worker, then its upload on a stream of
    /// the worker's own, waited for there; or, for a matrix kept on the device and a format that
    /// builds there ([`methods::needs_host_csr`] false: BRC's ELL form of even rows), nothing
    /// on the host and the format built on the device on that stream.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn spawn_gpu(
        &self,
        dev: &Arc<cuda::Device>,
        gcsr: &Arc<GpuCsr<T>>,
        target: Algorithm,
        stats: RowStats,
        deterministic: bool,
        gate: Option<std::sync::mpsc::Receiver<()>>,
        after: u64,
        trial: &Arc<super::trial::Trial>,
    ) -> Result<Background<Box<dyn GpuMethod<T>>>> {
        /// What the host half leaves for the device half.
        enum HostHalf<T: Scalar> {
            /// The format, built.
            Built(Box<dyn methods::HostBuilt<T>>),
            /// A method built in one step: the CSR, for `prepare_gpu` in the device half.
            Whole(Arc<Csr<T>>, RowStats),
            /// A format built on the device from the device CSR (no host copy).
            OnDevice,
        }
        type Resources<T> = (Arc<cuda::Device>, Arc<GpuCsr<T>>);
        // The kernels the build will run, loaded now on a worker, while the device has little
        // queued: a first load waits for everything queued on the device, and the build starts
        // only after `after` products the caller may have queued far ahead of the GPU.
        let pdev = dev.clone();
        let _ = crate::backend::workers::run(Box::new(move || {
            if cuda::relax_capture_mode().is_ok() {
                let _current = pdev.enter();
                let _ = methods::preload_gpu(target, &pdev);
            }
        }));
        let present = self.csr.clone();
        let sm = dev.sm_count();
        // Only a format of its own is tried against the method it replaces, unless the rule is
        // sure of it (`select::sure_of`).
        let trial = (crate::select::has_own_format(target)
            && !crate::select::sure_of(target, &stats))
        .then(|| trial.clone());
        if let Some(t) = &trial {
            let vb = std::mem::size_of::<T>();
            t.expect(crate::select::heuristic(&stats, vb, deterministic, sm));
        }
        // A format that builds on the device from the device CSR (BRC's ELL form of even
        // rows) of a matrix kept there: nothing to fetch.
        let on_device = present.is_none() && !methods::needs_host_csr(target, Tuning::None, &stats);
        let phases = Phases {
            // A matrix kept on the device: its host copy, downloaded here rather than on the
            // caller's first product.
            fetch: move |(dev, gcsr): &Resources<T>| match present {
                _ if on_device => Ok(None),
                Some(csr) => Ok(Some(csr)),
                None => {
                    cuda::relax_capture_mode()?;
                    let _current = dev.enter()?;
                    let own = OwnedStream::new(dev)?;
                    Ok(Some(Arc::new(gcsr.download(own.stream())?)))
                }
            },
            host: move |csr: Option<Arc<Csr<T>>>| {
                let Some(csr) = csr else {
                    return Ok(HostHalf::OnDevice);
                };
                let req = Request::fixed_rule(&csr, &stats, deterministic);
                Ok(match methods::build_on_host(target, sm, &req) {
                    Some(built) => HostHalf::Built(built?),
                    None => HostHalf::Whole(csr, stats),
                })
            },
            device: move |half, (dev, gcsr): Resources<T>| {
                crate::backend::span_start();
                cuda::relax_capture_mode()?;
                // The context current for the whole half: each driver call below then finds it
                // so, instead of pushing and popping it around every call on this thread.
                let _current = dev.enter()?;
                let own = OwnedStream::new(&dev)?;
                crate::backend::span("bg: stream");
                // Stream-ordered allocations: a cuMemAlloc of the format would stall the
                // caller's launches for as long as it takes (memory.rs, allocating_on).
                let method = cuda::allocating_on(own.stream(), || match half {
                    HostHalf::Built(b) => b.upload(&dev, own.stream(), &gcsr),
                    HostHalf::OnDevice => {
                        let req = Request::on_device(&stats, deterministic);
                        methods::prepare_gpu(target, &dev, own.stream(), &gcsr, &req)
                    }
                    HostHalf::Whole(csr, stats) => {
                        let req = Request::fixed_rule(&csr, &stats, deterministic);
                        methods::prepare_gpu(target, &dev, own.stream(), &gcsr, &req)
                    }
                })?;
                crate::backend::span("bg: built");
                // The events of the trial this form gets when it swaps in (without them, none),
                // made while the device runs the build: made after its synchronize they kept the
                // form from its swap for 16-107 µs more (session 38, run A: BRC on a 2D grid,
                // whose build takes 130-280 µs).
                if let Some(t) = &trial {
                    let _ = t.prepare(&dev);
                }
                crate::backend::span("bg: trial events");
                own.synchronize()?;
                crate::backend::span("bg: synchronized");
                drop(own);
                crate::backend::span("bg: stream back");
                crate::backend::spans(&format!(
                    "worker's device half of {target} (ends at {:.1} us)",
                    crate::backend::trace_clock_us()
                ));
                Ok(method)
            },
        };
        // The device handles reach the worker only for its fetch (under the lock a canceller
        // waits for) and its device half: a cancelled build never frees device memory on it.
        Background::spawn(
            target,
            self.values_gen,
            after,
            phases,
            (dev.clone(), gcsr.clone()),
            gate,
        )
    }
}
