//! The matrix's CSR arrays on the device, with the method-independent kernels that work on
//! them: y scaling (alpha = 0, and before the atomic transpose), the value map scatter of
//! `tessera_update_values`, and the transpose product over CSR (every method's TRANSPOSE path).

use super::kernels::{self, KernelSpec};
use super::{launch, Device, DeviceBuffer, Function, KernelArgs, Stream};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::types::ValueType;
use std::marker::PhantomData;
use std::sync::Arc;

/// `f32` or `f64`: the suffix of a kernel's entry point for `T`.
pub(crate) fn suffix<T: Scalar>() -> &'static str {
    match T::VALUE_TYPE {
        ValueType::F32 => "f32",
        ValueType::F64 => "f64",
    }
}

/// Threads per block of the element-wise kernels.
const UTIL_BLOCK: u32 = 256;

/// How the generic transpose kernel walks the CSR rows; the caller of [`GpuCsr::upload`]
/// chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposeLaunch {
    /// Threads cooperating on one row: one of [`kernels::TRANSPOSE_COOP_VALUES`].
    pub coop: u32,
    /// Rows each thread group handles in turn (at least 1).
    pub repeat: u32,
    /// Threads per block: a multiple of 32 and of `coop`.
    pub block_size: u32,
}

impl TransposeLaunch {
    /// Blocks for `rows` rows.
    fn grid_size(&self, rows: usize) -> usize {
        let per_block =
            (self.block_size / self.coop.max(1)).max(1) as usize * self.repeat.max(1) as usize;
        rows.div_ceil(per_block)
    }
}

/// CSR arrays in device memory plus the generic kernels (the functions are declared first so
/// that they, and their modules, go before the buffers and the device).
pub struct GpuCsr<T> {
    scale: Function,
    scatter: Function,
    transpose: Function,
    transpose_params: TransposeLaunch,
    rows: usize,
    cols: usize,
    nnz: usize,
    row_ptr: DeviceBuffer,
    col_ind: DeviceBuffer,
    values: DeviceBuffer,
    /// Caller entry k -> position in `values`; None when that is the identity (sorted input).
    slot: Option<DeviceBuffer>,
    /// int64 row_ptr and col_ind (a caller's arrays, [`GpuCsr::borrowed`]): only CSR_VECTOR's
    /// product reads them; everything else here refuses.
    index64: bool,
    dev: Arc<Device>,
    _t: PhantomData<T>,
}

impl<T: Scalar> std::fmt::Debug for GpuCsr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuCsr({} x {}, nnz {}, {} device bytes)",
            self.rows,
            self.cols,
            self.nnz,
            self.device_bytes()
        )
    }
}

impl<T: Scalar> GpuCsr<T> {
    /// Uploads `csr` (and its value map when the caller's entry order was not CSR order) and
    /// loads the generic kernels; the transpose runs with `transpose_params`' coop and repeat.
    pub fn upload(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &Csr<T>,
        transpose_params: TransposeLaunch,
    ) -> Result<Self> {
        let row_ptr = DeviceBuffer::from_slice(dev, stream, csr.row_ptr(), "row_ptr")?;
        crate::backend::span("up: row_ptr");
        let col_ind = DeviceBuffer::from_slice(dev, stream, csr.col_ind(), "col_ind")?;
        crate::backend::span("up: col_ind");
        let values = DeviceBuffer::from_slice(dev, stream, csr.values(), "values")?;
        crate::backend::span("up: values");
        let slot = match csr.input_map() {
            Some(map) => Some(DeviceBuffer::from_slice(dev, stream, map, "the value map")?),
            None => None,
        };
        let arrays = [row_ptr, col_ind, values];
        let made = Self::from_buffers(dev, csr.rows(), csr.cols(), arrays, slot, transpose_params);
        crate::backend::span("up: buffers");
        made
    }

    /// Uploads a caller's CSR arrays that tessera's CSR takes as they stand (int32, base 0,
    /// well formed, columns sorted in each row: the caller has checked this,
    /// `CsrParts::stats_as_is`) into one allocation ([`GpuCsr::upload_raw`]) and loads the
    /// generic kernels.
    pub fn upload_arrays(
        dev: &Arc<Device>,
        stream: Stream,
        (rows, cols): (usize, usize),
        (row_ptr, col_ind, values): (&[i32], &[i32], &[T]),
        transpose_params: TransposeLaunch,
    ) -> Result<Self> {
        let arrays = Self::upload_raw(dev, stream, (row_ptr, col_ind, values))?;
        crate::backend::span("up: arrays");
        Self::from_buffers(dev, rows, cols, arrays, None, transpose_params)
    }

    /// int32 row_ptr and col_ind and the values copied as they are into one allocation of
    /// tessera's (`DeviceBuffer::alloc_parts`: row_ptr, col_ind, values), the copies waited for
    /// together (`copies_waited_once`); nothing checked.
    pub fn upload_raw(
        dev: &Arc<Device>,
        stream: Stream,
        (row_ptr, col_ind, values): (&[i32], &[i32], &[T]),
    ) -> Result<[DeviceBuffer; 3]> {
        let sizes = [
            std::mem::size_of_val(row_ptr),
            std::mem::size_of_val(col_ind),
            std::mem::size_of_val(values),
        ];
        let arrays = DeviceBuffer::alloc_parts(dev, sizes, "the CSR arrays")?;
        super::copies_waited_once(dev, stream, || {
            arrays[0].fill_from(stream, row_ptr)?;
            arrays[1].fill_from(stream, col_ind)?;
            arrays[2].fill_from(stream, values)
        })?;
        Ok(arrays)
    }

    /// A CSR over [`GpuCsr::upload_raw`]'s buffers once the inspection found them sound and
    /// sorted (`import::inspect`).
    pub fn from_inspected(
        dev: &Arc<Device>,
        (rows, cols): (usize, usize),
        arrays: [DeviceBuffer; 3],
        transpose_params: TransposeLaunch,
    ) -> Result<Self> {
        Self::from_buffers(dev, rows, cols, arrays, None, transpose_params)
    }

    /// A CSR whose arrays are on the device already (tessera's own buffers: int32 row_ptr and
    /// col_ind, base 0, sorted columns, and the values), as [`super::import`] leaves them.
    pub fn from_imported(
        dev: &Arc<Device>,
        imported: super::import::Imported,
        transpose_params: TransposeLaunch,
    ) -> Result<Self> {
        let (rows, cols) = (imported.stats.rows, imported.stats.cols);
        let arrays = [imported.row_ptr, imported.col_ind, imported.values];
        Self::from_buffers(dev, rows, cols, arrays, None, transpose_params)
    }

    /// A CSR over the caller's own device arrays (int32 or, with `index64`, int64 row_ptr and
    /// col_ind, base 0, and the values), read in place by every product: nothing is copied,
    /// and changes the caller makes to the values (or the pattern, keeping rows and nnz) are
    /// seen by the next product. The caller keeps the arrays alive while the CSR exists. An
    /// int64 CSR serves CSR_VECTOR's product alone.
    pub fn borrowed(
        dev: &Arc<Device>,
        (rows, cols, nnz): (usize, usize, usize),
        [row_ptr, col_ind, values]: [u64; 3],
        index64: bool,
        transpose_params: TransposeLaunch,
    ) -> Result<Self> {
        let isz = if index64 { 8 } else { 4 };
        let arrays = [
            DeviceBuffer::borrowed(dev, row_ptr, (rows + 1) * isz),
            DeviceBuffer::borrowed(dev, col_ind, nnz * isz),
            DeviceBuffer::borrowed(dev, values, nnz * std::mem::size_of::<T>()),
        ];
        let mut csr = Self::from_buffers(dev, rows, cols, arrays, None, transpose_params)?;
        csr.index64 = index64;
        Ok(csr)
    }

    /// True for int64 row_ptr and col_ind (a caller's arrays).
    pub fn index64(&self) -> bool {
        self.index64
    }

    /// An error for what only reads int32 arrays.
    fn refuse_index64(&self, what: &str) -> Result<()> {
        if self.index64 {
            return Err(Error::NotSupported(format!(
                "{what} reads int32 indices; this matrix reads the caller's int64 arrays, which only CSR_VECTOR's non-transposed product does"
            )));
        }
        Ok(())
    }

    /// True when the arrays are the caller's ([`GpuCsr::borrowed`]).
    pub fn is_borrowed(&self) -> bool {
        self.values.is_borrowed()
    }

    fn from_buffers(
        dev: &Arc<Device>,
        rows: usize,
        cols: usize,
        [row_ptr, col_ind, values]: [DeviceBuffer; 3],
        slot: Option<DeviceBuffer>,
        transpose_params: TransposeLaunch,
    ) -> Result<Self> {
        let util = dev.module(&KernelSpec::new(&kernels::UTIL, &[])?)?;
        let tr = dev.module(&KernelSpec::new(
            &kernels::TRANSPOSE,
            &[transpose_params.coop as i64],
        )?)?;
        let s = suffix::<T>();
        let scale = util.function(&format!("util_scale_{s}"))?;
        let scatter = util.function(&format!("util_scatter_{s}"))?;
        let transpose = tr.function(&format!("transpose_spmv_{s}"))?;
        Ok(GpuCsr {
            scale,
            scatter,
            transpose,
            transpose_params,
            rows,
            cols,
            nnz: values.bytes() / std::mem::size_of::<T>(),
            row_ptr,
            col_ind,
            values,
            slot,
            index64: false,
            dev: dev.clone(),
            _t: PhantomData,
        })
    }

    /// Bytes of device memory this CSR holds: the sum of its arrays (an imported CSR shares one
    /// allocation, which adds at most 256 bytes of alignment per array).
    pub fn device_bytes(&self) -> usize {
        self.row_ptr.owned_bytes()
            + self.col_ind.owned_bytes()
            + self.values.owned_bytes()
            + self.slot.as_ref().map_or(0, DeviceBuffer::owned_bytes)
    }

    /// Device addresses of row_ptr, col_ind and values.
    pub fn arrays(&self) -> (u64, u64, u64) {
        (self.row_ptr.addr(), self.col_ind.addr(), self.values.addr())
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    fn util_grid(&self, n: usize) -> usize {
        n.div_ceil(UTIL_BLOCK as usize)
            .clamp(1, 32 * self.dev.sm_count().max(1) as usize)
    }

    /// y[0..n] = beta*y (y = 0 when beta = 0, without reading y).
    pub fn scale(&self, stream: Stream, n: usize, y: u64, beta: T) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let args = KernelArgs::new().push(n as i64).push(y).push(beta);
        // SAFETY: util_scale_<T>(long long n, T* y, T beta); y holds n values (checked by the
        // caller with check_device_accessible).
        unsafe {
            launch(
                &self.dev,
                &self.scale,
                self.util_grid(n),
                UTIL_BLOCK,
                stream,
                args,
            )
        }
    }

    /// y = alpha*A^T*x + beta*y: scale y, then the atomic transpose kernel.
    pub fn spmv_transpose(&self, stream: Stream, alpha: T, x: u64, beta: T, y: u64) -> Result<()> {
        self.refuse_index64("the transposed product")?;
        self.scale(stream, self.cols, y, beta)?;
        if self.rows == 0 || self.nnz == 0 {
            return Ok(());
        }
        let p = self.transpose_params;
        let (rp, ci, va) = self.arrays();
        let args = KernelArgs::new()
            .push(self.rows as i32)
            .push(rp)
            .push(ci)
            .push(va)
            .push(x)
            .push(y)
            .push(alpha)
            .push(p.repeat as i32);
        // SAFETY: transpose_spmv_<T>(int rows, const int* row_ptr, const int* col_ind,
        // const T* values, const T* x, T* y, T alpha, int repeat); the CSR arrays are ours and
        // valid; x holds rows values and y cols values (checked by the caller).
        unsafe {
            launch(
                &self.dev,
                &self.transpose,
                p.grid_size(self.rows),
                p.block_size,
                stream,
                args,
            )
        }
    }

    /// New values from device-readable memory at `src`, in the caller's entry order: the value
    /// map scatter kernel, ordered on `stream` (asynchronous).
    pub fn scatter_from_device(&self, stream: Stream, src: u64) -> Result<()> {
        // A borrowed CSR given its own values array (written in place by its caller) has
        // nothing to copy.
        if self.nnz == 0 || (self.slot.is_none() && src == self.values.addr()) {
            return Ok(());
        }
        let args = KernelArgs::new()
            .push(self.nnz as i64)
            .push(src)
            .push(self.slot.as_ref().map_or(0, DeviceBuffer::addr))
            .push(self.values.addr());
        // SAFETY: util_scatter_<T>(long long n, const T* src, const unsigned* slot, T* dst);
        // src holds nnz values (checked by the caller), slot (or NULL) nnz indices < nnz, dst
        // nnz values.
        unsafe {
            launch(
                &self.dev,
                &self.scatter,
                self.util_grid(self.nnz),
                UTIL_BLOCK,
                stream,
                args,
            )
        }
    }

    /// A method's own value array from the CSR values, through its value map on the device:
    /// `dst[slot[k]] = values[k]` for every non-zero k (asynchronous on `stream`). `slot` holds
    /// nnz indices into `dst`, which must be large enough for them (the method's arrays).
    pub fn scatter_values_into(
        &self,
        stream: Stream,
        slot: &DeviceBuffer,
        dst: &DeviceBuffer,
    ) -> Result<()> {
        if self.nnz == 0 {
            return Ok(());
        }
        if slot.bytes() < self.nnz * 4 {
            return Err(Error::Internal(format!(
                "a value map of {} bytes for {} non-zeros",
                slot.bytes(),
                self.nnz
            )));
        }
        let args = KernelArgs::new()
            .push(self.nnz as i64)
            .push(self.values.addr())
            .push(slot.addr())
            .push(dst.addr());
        // SAFETY: util_scatter_<T>(long long n, const T* src, const unsigned* slot, T* dst);
        // src is our nnz values, slot holds nnz entries (checked above) that the method built
        // to index its own array dst.
        unsafe {
            launch(
                &self.dev,
                &self.scatter,
                self.util_grid(self.nnz),
                UTIL_BLOCK,
                stream,
                args,
            )
        }
    }

    /// New values in CSR order from the host (waits for the copy).
    pub fn upload_values(&self, stream: Stream, csr_values: &[T]) -> Result<()> {
        if csr_values.len() != self.nnz {
            return Err(Error::Internal(format!(
                "{} values uploaded to a CSR of nnz {}",
                csr_values.len(),
                self.nnz
            )));
        }
        // Products queued on `stream` may still read the old values: they finish first.
        super::synchronize(&self.dev, stream)?;
        super::upload_staged(&self.dev, csr_values, self.values.addr())
    }

    /// The whole CSR copied to the host (waits for work on `stream`): tessera's host copy of a
    /// matrix that was kept on the device. Only for a CSR without a value map (the imported
    /// ones): the host copy then maps the caller's entries to themselves too.
    pub fn download(&self, stream: Stream) -> Result<Csr<T>> {
        self.refuse_index64("a host copy")?;
        if self.slot.is_some() {
            return Err(Error::Internal(
                "a CSR with a value map is never kept on the device alone".into(),
            ));
        }
        let mut row_ptr = crate::csr::try_vec_touched(self.rows + 1, 0i32, "row_ptr")?;
        let mut col_ind = crate::csr::try_vec_touched(self.nnz, 0i32, "col_ind")?;
        let mut values = crate::csr::try_vec_touched(self.nnz, T::ZERO, "values")?;
        super::copy_to_host(&self.dev, stream, self.row_ptr.addr(), &mut row_ptr)?;
        super::copy_to_host(&self.dev, stream, self.col_ind.addr(), &mut col_ind)?;
        super::copy_to_host(&self.dev, stream, self.values.addr(), &mut values)?;
        Ok(Csr::from_sorted(
            self.rows, self.cols, row_ptr, col_ind, values,
        ))
    }

    /// The device's values in CSR order (waits for work on `stream`).
    pub fn download_values(&self, stream: Stream, dst: &mut [T]) -> Result<()> {
        if dst.len() != self.nnz {
            return Err(Error::Internal(format!(
                "{} values downloaded from a CSR of nnz {}",
                dst.len(),
                self.nnz
            )));
        }
        super::copy_to_host(&self.dev, stream, self.values.addr(), dst)
    }
}
