//! Which `cusparseSpMV` calls tessera takes: one pure function of what the handle and the
//! descriptors say ([`decide`]), and the rule on the matrix's rows ([`rows_fit`]). Everything
//! here is host logic, unit-tested without a GPU.

use crate::abi::*;
use tessera::{RowStats, ValueType};

/// What one `cusparseSpMV` call says, read from the real handle and descriptors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    /// `cusparseOperation_t`.
    pub op: cusparseOperation_t,
    /// `cusparseSpMVAlg_t`.
    pub alg: cusparseSpMVAlg_t,
    /// `computeType`.
    pub compute: cudaDataType,
    /// The handle's `cusparsePointerMode_t`.
    pub pointer_mode: cusparsePointerMode_t,
    /// The matrix descriptor's `cusparseFormat_t`.
    pub format: cusparseFormat_t,
    /// The matrix as `cusparseConstCsrGet` gives it (meaningful for CSR only).
    pub csr: CsrDescr,
    /// x's size and type.
    pub x: (i64, cudaDataType),
    /// y's size and type.
    pub y: (i64, cudaDataType),
}

/// A CSR descriptor's contents.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CsrDescr {
    /// Rows.
    pub rows: i64,
    /// Columns.
    pub cols: i64,
    /// Stored entries.
    pub nnz: i64,
    /// Device address of the row offsets.
    pub row_ptr: u64,
    /// Device address of the column indices.
    pub col_ind: u64,
    /// Device address of the values.
    pub values: u64,
    /// `cusparseIndexType_t` of the row offsets.
    pub row_type: cusparseIndexType_t,
    /// `cusparseIndexType_t` of the column indices.
    pub col_type: cusparseIndexType_t,
    /// `cusparseIndexBase_t`.
    pub base: cusparseIndexBase_t,
    /// `cudaDataType` of the values.
    pub value_type: cudaDataType,
}

/// What identifies a matrix across descriptors (CuPy makes a new one for every product): its
/// arrays, sizes, value and index types. Device addresses are unique in the process (unified
/// addressing), so the arrays name the device too: the key needs no driver call. The cached
/// analysis of a key reads the arrays in place, so values changed in them are always seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// Rows, columns, stored entries.
    pub dims: [i64; 3],
    /// row_ptr, col_ind, values.
    pub arrays: [u64; 3],
    /// f32 or f64.
    pub value_type: ValueType,
    /// int64 row offsets and column indices (else int32).
    pub index64: bool,
}

/// `Ok(key)` when tessera can take the call (subject to the matrix's rows, [`rows_fit`]);
/// `Err(why)` when it goes to the real cuSPARSE. The three stages below, in the order the shim
/// reads the call: the arguments, then the matrix descriptor, then the vectors and the handle's
/// pointer mode, so that a call it forwards costs as few reads as possible.
pub fn decide(c: &Call) -> Result<Key, String> {
    decide_args(c.op, c.alg, c.compute)?;
    let key = decide_matrix(c.format, &c.csr, c.compute)?;
    decide_vectors(&c.csr, c.x, c.y, c.pointer_mode)?;
    Ok(key)
}

/// The call's own arguments: non-transpose, a CSR algorithm, an f32 or f64 compute type.
pub fn decide_args(
    op: cusparseOperation_t,
    alg: cusparseSpMVAlg_t,
    compute: cudaDataType,
) -> Result<(), String> {
    if op != CUSPARSE_OPERATION_NON_TRANSPOSE {
        return Err(format!("operation {op} (tessera takes NON_TRANSPOSE)"));
    }
    if !matches!(
        alg,
        CUSPARSE_SPMV_ALG_DEFAULT | CUSPARSE_SPMV_CSR_ALG1 | CUSPARSE_SPMV_CSR_ALG2
    ) {
        return Err(format!("algorithm {alg} (not a CSR one)"));
    }
    if !matches!(compute, CUDA_R_32F | CUDA_R_64F) {
        return Err(format!(
            "compute type {compute} (tessera takes CUDA_R_32F and CUDA_R_64F)"
        ));
    }
    Ok(())
}

/// The matrix descriptor: CSR, values of the compute type, int32 or int64 indices alike, base
/// zero, sizes tessera takes, no NULL array. Its key.
pub fn decide_matrix(
    format: cusparseFormat_t,
    m: &CsrDescr,
    compute: cudaDataType,
) -> Result<Key, String> {
    if format != CUSPARSE_FORMAT_CSR {
        return Err(format!("format {format} (tessera takes CSR)"));
    }
    let value_type = match m.value_type {
        CUDA_R_32F => ValueType::F32,
        CUDA_R_64F => ValueType::F64,
        t => {
            return Err(format!(
                "value type {t} (tessera takes CUDA_R_32F and CUDA_R_64F)"
            ))
        }
    };
    if compute != m.value_type {
        return Err(format!(
            "mixed types: A {}, compute {compute} (tessera takes one type for all)",
            m.value_type
        ));
    }
    let index64 = match (m.row_type, m.col_type) {
        (CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I) => false,
        (CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I) => true,
        (r, c) => {
            return Err(format!(
                "index types {r}/{c} (tessera reads int32 or int64 arrays in place, both alike)"
            ))
        }
    };
    if m.base != CUSPARSE_INDEX_BASE_ZERO {
        return Err("index base one (tessera reads base-zero arrays in place)".into());
    }
    let (rows, cols, nnz) = (m.rows, m.cols, m.nnz);
    let max_nnz = if index64 {
        i64::MAX / 16
    } else {
        i32::MAX as i64 - 1
    };
    if rows <= 0 || cols <= 0 || nnz <= 0 || rows >= i32::MAX as i64 || nnz > max_nnz {
        return Err(format!(
            "sizes {rows} x {cols}, nnz {nnz} (tessera takes 1 to 2^31-2 rows, and entries up to what the index type holds)"
        ));
    }
    if m.row_ptr == 0 || m.col_ind == 0 || m.values == 0 {
        return Err("a NULL array (cuSPARSE reports it)".into());
    }
    Ok(Key {
        dims: [rows, cols, nnz],
        arrays: [m.row_ptr, m.col_ind, m.values],
        value_type,
        index64,
    })
}

/// x and y (sizes and types matching the matrix) and the handle's pointer mode (host).
pub fn decide_vectors(
    m: &CsrDescr,
    x: (i64, cudaDataType),
    y: (i64, cudaDataType),
    pointer_mode: cusparsePointerMode_t,
) -> Result<(), String> {
    if x.1 != m.value_type || y.1 != m.value_type {
        return Err(format!(
            "mixed types: A {}, x {}, y {} (tessera takes one type for all)",
            m.value_type, x.1, y.1
        ));
    }
    if x.0 != m.cols || y.0 != m.rows {
        return Err(format!(
            "x of {} and y of {} for a {} x {} matrix (cuSPARSE reports it)",
            x.0, y.0, m.rows, m.cols
        ));
    }
    if pointer_mode != CUSPARSE_POINTER_MODE_HOST {
        return Err("device pointer mode (tessera takes alpha and beta from the host)".into());
    }
    Ok(())
}

/// `Ok(())` when tessera's kernel on the CSR arrays (CSR_VECTOR: one launch, no atomics, a
/// fixed summation order; it reads every array at product time, so it stays right whatever the
/// caller writes into them) is expected at least as fast as cuSPARSE for rows like these
/// (`tessera::select::needs_split` is false). Long rows, very wide ones and large matrices of
/// longer rows go to cuSPARSE, whose merge-based kernel serves them better than CSR_VECTOR.
pub fn rows_fit(stats: &RowStats) -> Result<(), String> {
    match tessera::select::needs_split(stats) {
        false => Ok(()),
        true => Err(format!(
            "rows unlike ({} rows, nnz {}, mean {:.1}, longest {}): cuSPARSE's merge-based kernel serves them",
            stats.rows, stats.nnz, stats.mean, stats.max
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Call {
        Call {
            op: CUSPARSE_OPERATION_NON_TRANSPOSE,
            alg: CUSPARSE_SPMV_ALG_DEFAULT,
            compute: CUDA_R_64F,
            pointer_mode: CUSPARSE_POINTER_MODE_HOST,
            format: CUSPARSE_FORMAT_CSR,
            csr: CsrDescr {
                rows: 100,
                cols: 80,
                nnz: 500,
                row_ptr: 0x1000,
                col_ind: 0x2000,
                values: 0x3000,
                row_type: CUSPARSE_INDEX_32I,
                col_type: CUSPARSE_INDEX_32I,
                base: CUSPARSE_INDEX_BASE_ZERO,
                value_type: CUDA_R_64F,
            },
            x: (80, CUDA_R_64F),
            y: (100, CUDA_R_64F),
        }
    }

    #[test]
    fn a_plain_csr_product_is_taken_under_the_key_of_its_arrays() {
        let k = decide(&call()).unwrap();
        assert_eq!(k.dims, [100, 80, 500]);
        assert_eq!(k.arrays, [0x1000, 0x2000, 0x3000]);
        assert_eq!(k.value_type, ValueType::F64);
        assert!(!k.index64);
        // int64 arrays (PyTorch's default), both alike; more entries than int32 holds.
        let mut c = call();
        c.csr.row_type = CUSPARSE_INDEX_64I;
        c.csr.col_type = CUSPARSE_INDEX_64I;
        c.csr.nnz = 1 << 32;
        assert!(decide(&c).unwrap().index64);
        c.csr.row_type = CUSPARSE_INDEX_32I;
        c.csr.col_type = CUSPARSE_INDEX_32I;
        assert!(decide(&c).unwrap_err().contains("sizes"));
        // f32 all through, and each CSR algorithm.
        let mut c = call();
        c.csr.value_type = CUDA_R_32F;
        c.x.1 = CUDA_R_32F;
        c.y.1 = CUDA_R_32F;
        c.compute = CUDA_R_32F;
        assert_eq!(decide(&c).unwrap().value_type, ValueType::F32);
        for alg in [CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2] {
            let mut c = call();
            c.alg = alg;
            assert!(decide(&c).is_ok());
        }
        // Another descriptor over the same arrays is the same matrix; other values are not.
        let mut c = call();
        c.csr.values = 0x4000;
        assert_ne!(decide(&c).unwrap(), k);
        assert_eq!(decide(&call()).unwrap(), k);
    }

    #[test]
    fn every_case_tessera_cannot_honour_is_forwarded_with_a_reason() {
        type Change = Box<dyn Fn(&mut Call)>;
        let cases: Vec<(&str, Change)> = vec![
            ("format", Box::new(|c| c.format = 3)),
            ("value type", Box::new(|c| c.csr.value_type = 5)),
            ("mixed", Box::new(|c| c.compute = CUDA_R_32F)),
            ("mixed", Box::new(|c| c.x.1 = CUDA_R_32F)),
            ("mixed", Box::new(|c| c.y.1 = 2)),
            (
                "index types",
                Box::new(|c| c.csr.row_type = CUSPARSE_INDEX_64I),
            ),
            (
                "index types",
                Box::new(|c| c.csr.col_type = CUSPARSE_INDEX_64I),
            ),
            ("index types", Box::new(|c| c.csr.col_type = 1)),
            (
                "base one",
                Box::new(|c| c.csr.base = CUSPARSE_INDEX_BASE_ONE),
            ),
            (
                "operation",
                Box::new(|c| c.op = CUSPARSE_OPERATION_TRANSPOSE),
            ),
            ("operation", Box::new(|c| c.op = 2)),
            ("algorithm", Box::new(|c| c.alg = 1)),
            (
                "pointer mode",
                Box::new(|c| c.pointer_mode = CUSPARSE_POINTER_MODE_DEVICE),
            ),
            ("sizes", Box::new(|c| c.csr.nnz = 0)),
            ("sizes", Box::new(|c| c.csr.rows = 0)),
            ("sizes", Box::new(|c| c.csr.nnz = 1 << 31)),
            ("x of", Box::new(|c| c.x.0 = 81)),
            ("y of", Box::new(|c| c.y.0 = 99)),
            ("NULL", Box::new(|c| c.csr.values = 0)),
        ];
        for (what, change) in cases {
            let mut c = call();
            change(&mut c);
            let why = decide(&c).unwrap_err();
            assert!(
                why.to_lowercase().contains(&what.to_lowercase()),
                "{what}: {why}"
            );
        }
    }

    #[test]
    fn rows_alike_are_taken_and_long_rows_go_to_cusparse() {
        let even = tessera::io::load("gen:lap3d7:20").unwrap().1.stats();
        assert!(rows_fit(&even).is_ok());
        let arrow = tessera::io::load("gen:onerow:5000,5000,4000")
            .unwrap()
            .1
            .stats();
        let why = rows_fit(&arrow).unwrap_err();
        assert!(why.contains("rows unlike"), "{why}");
    }
}
