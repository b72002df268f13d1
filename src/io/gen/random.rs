//! The generators' random stream and the sampling helpers built on it.
#![forbid(unsafe_code)]

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A reproducible stream of random numbers: ChaCha8 whose 256-bit key holds the spec's SEED
/// (bytes 0..8) and the FNV-1a hash of the generator's name (bytes 8..16), so each generator
/// has its own key space and two generators given the same SEED draw unrelated numbers. Each
/// key has 2^64 independent sub-streams (ChaCha's stream id), picked by `purpose`: the
/// constants below give structure, values, permutation and row choice a sub-stream each, so
/// the values do not depend on how many draws the structure took; `powerlaw` takes one
/// sub-stream per block of R-MAT draws, with ids from 2^40 up.
pub(super) struct RandomStream(ChaCha8Rng);

// Which use a sub-stream serves; separate sub-streams keep structure and values independent.
/// Sub-stream of the sparsity structure (which columns each row holds).
pub(super) const STRUCTURE: u64 = 0;
/// Sub-stream of the values, drawn in CSR order once the structure is known.
pub(super) const VALUES: u64 = 1;
/// Sub-stream of `powerlaw`'s vertex relabelling.
pub(super) const PERMUTATION: u64 = 2;
/// Sub-stream that picks special rows (`circuit`'s long rows, `emptyrows`'s non-empty ones).
pub(super) const CHOICE: u64 = 3;

impl RandomStream {
    /// The sub-stream `purpose` of the stream keyed by `generator`'s name and `seed`.
    pub(super) fn new(generator: &str, seed: u64, purpose: u64) -> Self {
        // FNV-1a of the generator's name: fixed, so each generator has its own key space.
        let tag = generator.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&tag.to_le_bytes());
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(purpose);
        RandomStream(rng)
    }

    /// The next 64 random bits.
    #[inline]
    pub(super) fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (n <= 2^32; bias below 2^-32).
    #[inline]
    pub(super) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub(super) fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A value with magnitude uniform in [0.1, 1) and a random sign.
    #[inline]
    pub(super) fn value(&mut self) -> f64 {
        let x = self.u64();
        let m = 0.1 + 0.9 * ((x >> 11) as f64 * (1.0 / (1u64 << 53) as f64));
        // The top few draws would round up to 1.0: keep them below it.
        let m = m.min(1.0 - f64::EPSILON / 2.0);
        if x & 1 == 1 {
            -m
        } else {
            m
        }
    }
}

/// Appends `k` distinct values of `0..n` to `out`, in increasing order. `buf` is scratch.
pub(super) fn sample_sorted(
    s: &mut RandomStream,
    k: usize,
    n: usize,
    out: &mut Vec<i32>,
    buf: &mut Vec<i32>,
) {
    debug_assert!(k <= n);
    if k == 0 {
        return;
    }
    if k.saturating_mul(4) >= n {
        // Selection sampling (Knuth's algorithm S): one draw per candidate, already sorted.
        let mut need = k;
        for c in 0..n {
            if s.below(n - c) < need {
                out.push(c as i32);
                need -= 1;
                if need == 0 {
                    break;
                }
            }
        }
    } else {
        // Sparse: draw, sort, drop repeats, draw the shortfall again.
        buf.clear();
        while buf.len() < k {
            for _ in buf.len()..k {
                buf.push(s.below(n) as i32);
            }
            buf.sort_unstable();
            buf.dedup();
        }
        out.extend_from_slice(buf);
    }
}

/// Splits `total` into one length per weight, proportional to the weights (largest remainder),
/// none above `cap`; the lengths add up to exactly `total` (which must be <= len * cap).
pub(super) fn distribute(total: usize, weights: &[f64], cap: usize) -> Vec<usize> {
    let n = weights.len();
    debug_assert!(total as u128 <= n as u128 * cap as u128);
    if n == 0 {
        return Vec::new();
    }
    let sum: f64 = weights.iter().sum();
    let mut len = Vec::with_capacity(n);
    let mut frac = Vec::with_capacity(n);
    let mut given = 0usize;
    for (i, &w) in weights.iter().enumerate() {
        let ideal = total as f64 * (w / sum);
        let base = (ideal.floor() as usize).min(cap);
        len.push(base);
        frac.push((ideal - base as f64, i));
        given += base;
    }
    // Rounding can in principle overshoot by a unit; take it back from the longest rows.
    while given > total {
        let i = (0..n)
            .max_by_key(|&i| (len[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        len[i] -= 1;
        given -= 1;
    }
    frac.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = total - given;
    while left > 0 {
        for &(_, i) in &frac {
            if left == 0 {
                break;
            }
            if len[i] < cap {
                len[i] += 1;
                left -= 1;
            }
        }
    }
    len
}
