//! The analyses the shim keeps, by [`crate::decide::Key`]: a least-recently-used map with a
//! bound on its entries. An entry holds no device copy of the matrix (tessera reads the
//! caller's arrays in place), only the method's choice and kernels, so the bound is on their
//! count: `TESSERA_CUSPARSE_CACHE` (default 1024).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A multiply-rotate hasher (the `FxHash` scheme): every product the shim forwards or takes
/// looks its matrix up here, and SipHash's protection against chosen keys buys nothing for
/// device addresses and sizes.
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map that forgets its least recently used entry beyond `cap` entries.
#[derive(Debug)]
pub struct Lru<K, V> {
    map: HashMap<K, (V, u64), BuildHasherDefault<FastHasher>>,
    cap: usize,
    tick: u64,
}

impl<K: Eq + Hash + Clone, V: Clone> Lru<K, V> {
    /// An empty map holding at most `cap` entries (at least 1).
    pub fn new(cap: usize) -> Self {
        Lru {
            map: HashMap::default(),
            cap: cap.max(1),
            tick: 0,
        }
    }

    /// The entry of `k`, marked as used now.
    pub fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(k).map(|(v, t)| {
            *t = tick;
            v.clone()
        })
    }

    /// Inserts or replaces `k`; returns what it evicted to stay within the bound (dropped by
    /// the caller, outside any lock).
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        self.tick += 1;
        self.map.insert(k, (v, self.tick));
        if self.map.len() <= self.cap {
            return None;
        }
        let oldest = self
            .map
            .iter()
            .min_by_key(|(_, (_, t))| *t)
            .map(|(k, _)| k.clone())?;
        self.map.remove(&oldest).map(|(v, _)| v)
    }

    /// Forgets `k`.
    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.map.remove(k).map(|(v, _)| v)
    }

    /// Forgets every entry whose key matches `f`; returns them.
    pub fn remove_where(&mut self, f: impl Fn(&K) -> bool) -> Vec<V> {
        let keys: Vec<K> = self.map.keys().filter(|k| f(k)).cloned().collect();
        keys.into_iter().filter_map(|k| self.remove(&k)).collect()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut l = Lru::new(2);
        assert!(l.insert(1, "a").is_none());
        assert!(l.insert(2, "b").is_none());
        // 1 used after 2: 2 is the oldest now.
        assert_eq!(l.get(&1), Some("a"));
        assert_eq!(l.insert(3, "c"), Some("b"));
        assert_eq!(l.len(), 2);
        assert_eq!(l.get(&2), None);
        assert_eq!(l.get(&1), Some("a"));
        assert_eq!(l.get(&3), Some("c"));
        // Replacing a key evicts nothing.
        assert!(l.insert(3, "d").is_none());
        assert_eq!(l.get(&3), Some("d"));
        assert_eq!(l.remove_where(|k| *k == 1), vec!["a"]);
        assert_eq!(l.len(), 1);
        assert!(!l.is_empty());
    }
}
