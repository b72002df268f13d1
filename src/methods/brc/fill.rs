//! BRC filled on the device (cuda.rs's `prepare`, when [`super::fills_on_device`]): the row
//! offsets downloaded, the fixed rule and `format::plan` on the host, then `brc_ell_fill` and
//! `brc_fill` (kernels/brc.cu) place the columns, values and value map from the device CSR. A
//! child module of cuda.rs, whose `BrcGpu` it makes.

use super::{BrcGpu, Kernels, OnDevice};
use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{launch, Device, DeviceBuffer, KernelArgs, Stream};
use crate::backend::trace;
use crate::error::{Error, Result};
use crate::methods::brc::format;
use crate::methods::brc::host::variant_for;
use crate::methods::brc::params;
use crate::methods::Request;
use crate::scalar::Scalar;
use std::sync::Arc;

impl<T: Scalar> BrcGpu<T> {
    /// The fixed rule's format of the device CSR `csr`, built on the device: the row offsets
    /// downloaded (`rows + 1` of them, waited for), the plan made from them on the host
    /// (`format::plan`), its metadata uploaded, then on `stream` the ELL part (if any) filled
    /// by `brc_ell_fill` (one warp per 32 rows) and the blocks by `brc_fill` (one warp per
    /// block): the same arrays format.rs builds.
    pub(super) fn fill_on_device(
        kernels: Kernels,
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let t0 = std::time::Instant::now();
        let us = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
        let st = req.stats;
        let (rp_dev, ci, va) = csr.arrays();
        let mut rp = crate::csr::try_vec_filled(st.rows + 1, 0i32, "BRC's row offsets")?;
        crate::backend::cuda::copy_to_host(dev, stream, rp_dev, &mut rp)?;
        let read = us(t0);
        let sm = dev.sm_count();
        let rule = params::fixed_rule(&rp, st, sm);
        let p = rule.params;
        if p.b1 != params::WARP {
            return Err(Error::Internal(format!(
                "BRC's device fill takes B1 = 32, the fixed rule gave {p}"
            )));
        }
        let plan = format::plan(
            &rp,
            st.cols,
            p.b1 as usize,
            p.b2 as usize,
            p.ell_width as usize,
            variant_for(req.deterministic),
        )?;
        drop(rp);
        let planned = us(t0);
        let sz = std::mem::size_of::<T>();
        let arrays = DeviceBuffer::alloc_parts(
            dev,
            [plan.slots * sz, plan.slots * 4, st.nnz * 4],
            "BRC's format (values, columns, value map)",
        )?;
        let (val, col, slot) = (arrays[0].addr(), arrays[1].addr(), arrays[2].addr());
        // The format's metadata (its block table among it) first: the fill reads that table.
        let on = OnDevice::with_plan::<T>(dev, stream, &plan, p.format_key(), arrays)?;
        let uploaded = us(t0);
        let k = plan.ell_width;
        if k > 0 {
            let args = KernelArgs::new()
                .push(st.rows as i32)
                .push(k as i32)
                .push(rp_dev)
                .push(ci)
                .push(va)
                .push(col)
                .push(val)
                .push(slot);
            // SAFETY: brc_ell_fill_<T>(int rows, int k, const int* rp, const int* ci, const T*
            // va, int* col, T* val, unsigned* slot): rp, ci, va are tessera's int32 CSR of
            // `rows` rows; col and val hold the plan's slots, of which the first rows * k
            // (< 2^32, format::plan) are the ELL part, slot nnz entries; whole warps (128
            // threads a block), one per 32 rows.
            unsafe {
                launch(
                    dev,
                    &kernels.ell_fill,
                    st.rows.div_ceil(32).div_ceil(4),
                    128,
                    stream,
                    args,
                )?
            };
        }
        let blocks = plan.num_blocks();
        if blocks > 0 {
            let starts =
                DeviceBuffer::from_slice(dev, stream, &plan.piece_start, "BRC piece starts")?;
            let lens = DeviceBuffer::from_slice(dev, stream, &plan.piece_len, "BRC piece lengths")?;
            let args = KernelArgs::new()
                .push(blocks as i32)
                .push(plan.ell_slots() as u32)
                .push(on.block_info.addr())
                .push(starts.addr())
                .push(lens.addr())
                .push(ci)
                .push(va)
                .push(col)
                .push(val)
                .push(slot);
            // SAFETY: brc_fill_<T>(int blocks, unsigned ell_slots, const uint2* block_info,
            // const unsigned* piece_start, const unsigned* piece_len, const int* ci, const T*
            // va, int* col, T* val, unsigned* slot): block_info has `blocks` entries whose slots
            // (ell_slots + offset + T * 32) lie within plan.slots (format::plan checked the
            // total fits in 32 bits), piece_start/piece_len 32 per block naming entries < nnz
            // of the int32 CSR ci/va, slot nnz entries; whole warps (128 threads a block), one
            // per BRC block. The temporaries are freed after the launch is queued: in the
            // stream's order under allocating_on (AUTO's background build), after a wait for
            // the device otherwise (DeviceBuffer's drop).
            unsafe { launch(dev, &kernels.fill, blocks.div_ceil(4), 128, stream, args)? };
        }
        let queued = us(t0);
        trace(2, || {
            let done = match crate::backend::cuda::synchronize(dev, stream) {
                Ok(()) => format!("done at {:.1} us", us(t0)),
                Err(e) => format!("its wait failed: {e}"),
            };
            format!(
                "BRC's device fill of {} rows, {} slots: row offsets read at {read:.1} us, rule and plan at {planned:.1} us, plan arrays uploaded at {uploaded:.1} us, fill queued at {queued:.1} us, {done}",
                st.rows, plan.slots
            )
        });
        let how = format!(
            "planned from the row offsets and filled on the device; {}; {sm} SMs",
            rule.why
        );
        Ok(Self::assemble(kernels, dev, on, p, &how))
    }
}
