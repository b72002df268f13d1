//! Fuzz target (a): arbitrary CSR input -> validation (`Csr::from_parts`, and
//! `Csr::from_triplets`) -> every implemented method's host format (fixed rules, both
//! determinism settings, and parameter variants) -> its host reference against the plain f64
//! CSR product, in f64 and f32; then each method's value map (`update_values`).
//!
//! Invalid input must be an error, never a panic; a valid matrix must give the right product.
#![no_main]

use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tessera::Csr;
use tessera_fuzz::{check_every_method, check_parameter_variants, small_value, RawCsr};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(triplets) = u.arbitrary::<bool>() else {
        return;
    };
    let a = if triplets {
        let Ok(rows) = u.int_in_range(0usize..=200) else {
            return;
        };
        let Ok(cols) = u.int_in_range(0usize..=200) else {
            return;
        };
        let mut entries = Vec::new();
        while let (Ok(r), Ok(c), Ok(v)) = (
            u.arbitrary::<u8>(),
            u.arbitrary::<u8>(),
            u.arbitrary::<u8>(),
        ) {
            // Mostly inside the matrix; the rest must be refused, not panic.
            entries.push((
                r as usize % (rows + 1),
                c as usize % (cols + 1),
                small_value(v),
            ));
            if entries.len() >= 2000 {
                break;
            }
        }
        match Csr::from_triplets(rows, cols, &entries) {
            Ok(a) => a,
            Err(_) => return,
        }
    } else {
        let Ok(raw) = RawCsr::arbitrary(&mut u) else {
            return;
        };
        match raw.validate() {
            Ok(a) => a,
            Err(e) => {
                // Refused input names the reason; the status is one of the input errors.
                assert!(!e.to_string().is_empty());
                assert!(
                    matches!(
                        e,
                        tessera::Error::InvalidSize(_)
                            | tessera::Error::InvalidMatrix(_)
                            | tessera::Error::NotSupported(_)
                    ),
                    "unexpected error kind for bad CSR input: {e:?}"
                );
                return;
            }
        }
    };
    // A valid matrix may declare 2^31-1 columns with a few entries; its products need x (or y)
    // of that length, which this target does not allocate: validation was the point.
    if a.rows().max(a.cols()) > 1 << 16 {
        return;
    }
    let mut u = Unstructured::new(u.take_rest());
    let f32_too = u.arbitrary::<bool>().unwrap_or(false);
    if check_every_method(&a, &mut u).is_err() {
        return;
    }
    if check_parameter_variants(&a, &mut u).is_err() {
        return;
    }
    if f32_too {
        let a32 = a.convert::<f32>();
        let _ = check_every_method(&a32, &mut u);
    }
});
