//! HOLA keeps the CSR as it is (§3: "no separate preprocessing"): the value map is the
//! identity. Its one extra array is the block row-start buffer of §3.1, which the device
//! builds with `hola_row_starts` (Alg. 2); [`row_starts`] is the same computation on the host,
//! used by the reference and to check the device's buffer.
#![forbid(unsafe_code)]

/// Alg. 2 (AssignRowsGlobal) for blocks of `npb` non-zeros: `starts[b]` is the row holding
/// non-zero `b·npb`, for `b` in `0..blocks`, plus `starts[blocks] = rows`. Block 0 starts at row
/// 0, so that leading empty rows have a block (our choice; the paper's scatter would give it the
/// first non-empty row and leave those rows to the y = 0 pass).
pub fn row_starts(row_ptr: &[i32], npb: usize) -> Vec<i32> {
    let rows = row_ptr.len() - 1;
    let nnz = row_ptr[rows] as usize;
    let blocks = nnz.div_ceil(npb);
    let mut starts = vec![0i32; blocks + 1];
    starts[blocks] = rows as i32;
    for r in 0..rows {
        let (a, e) = (row_ptr[r] as usize, row_ptr[r + 1] as usize);
        if a == e {
            continue;
        }
        for s in starts
            .iter_mut()
            .take((e - 1) / npb + 1)
            .skip(a.div_ceil(npb).max(1))
        {
            *s = r as i32;
        }
    }
    starts
}

/// Where each CSR non-zero lives in HOLA's value array: the same place.
pub fn value_slot(nnz: usize) -> Vec<u32> {
    (0..nnz as u32).collect()
}

/// Bytes HOLA keeps beyond the CSR: the row-start buffer.
pub fn extra_bytes(nnz: usize, npb: usize) -> usize {
    (nnz.div_ceil(npb) + 1) * std::mem::size_of::<i32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_starts_of_the_papers_figure_1() {
        // Figure 1: row_ptr {0, 3, 11, 13, 14, 19} split into blocks of 4 non-zeros gives the
        // paper's rowStarts = {0, 1, 1, 2, 4, 4} (§3.1), whose last entry closes the last block
        // with its last row (4); ours closes it with the row count (5).
        let rp = [0, 3, 11, 13, 14, 19];
        assert_eq!(row_starts(&rp, 4), vec![0, 1, 1, 2, 4, 5]);
        assert_eq!(row_starts(&rp, 3), vec![0, 1, 1, 1, 2, 4, 4, 5]);
    }

    #[test]
    fn empty_rows_never_start_a_block_except_leading_ones_in_block_0() {
        // rows: 0 empty, 1 has 4, 2 empty, 3 empty, 4 has 4; blocks of 2.
        let rp = [0, 0, 4, 4, 4, 8];
        assert_eq!(row_starts(&rp, 2), vec![0, 1, 4, 4, 5]);
        assert_eq!(row_starts(&[0, 0, 0], 4), vec![2]);
        assert_eq!(extra_bytes(8, 2), 20);
    }
}
