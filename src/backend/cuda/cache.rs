//! The on-disk module cache: compiled CUBIN images under
//! `$TESSERA_CACHE_DIR`, else `$XDG_CACHE_HOME/tessera`, else `~/.cache/tessera`, one file per
//! key, where the key is the SHA-256 of source, options, architecture and NVRTC version.
//!
//! An entry is a header (magic, the key, the SHA-256 and length of the image) followed by the
//! image. A file that is short, foreign, for another key or whose image does not hash to the
//! recorded digest is ignored and rebuilt, never trusted; so is an image the driver refuses to
//! load (see `Device::module`). Writes go to a temporary file renamed into place, so readers
//! never see half an entry. A cache folder that cannot be created or written is not an error:
//! kernels are then compiled in every process.
#![forbid(unsafe_code)]

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 16] = b"TESSERA-CUBIN-1\n";
const HEADER: usize = 16 + 32 + 32 + 8;

/// The cache folder, if one can be named.
pub fn dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = env("TESSERA_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("tessera"));
    }
    env("HOME").map(|h| PathBuf::from(h).join(".cache").join("tessera"))
}

/// The cache key of one compilation.
pub fn key(source: &str, options: &[String], arch: i32, nvrtc: (i32, i32)) -> [u8; 32] {
    let mut h = Sha256::new();
    // Length-prefixed fields, so no two different inputs concatenate alike.
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(source.as_bytes());
    for o in options {
        field(o.as_bytes());
    }
    field(format!("sm_{arch}").as_bytes());
    field(format!("nvrtc {}.{}", nvrtc.0, nvrtc.1).as_bytes());
    h.finalize().into()
}

fn hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file of `key` in `dir`.
pub fn path(dir: &Path, key: &[u8; 32]) -> PathBuf {
    dir.join(format!("{}.cubin", hex(key)))
}

/// The image cached for `key`, or None when absent, unreadable or not intact.
pub fn read(dir: &Path, key: &[u8; 32]) -> Option<Vec<u8>> {
    let data = std::fs::read(path(dir, key)).ok()?;
    if data.len() < HEADER || &data[..16] != MAGIC || data[16..48] != key[..] {
        return None;
    }
    let digest: [u8; 32] = data[48..80].try_into().ok()?;
    let len = u64::from_le_bytes(data[80..88].try_into().ok()?) as usize;
    let image = &data[HEADER..];
    if image.len() != len || Sha256::digest(image)[..] != digest[..] {
        return None;
    }
    Some(image.to_vec())
}

/// Stores `image` for `key` (best effort: failures leave the cache as it was).
pub fn write(dir: &Path, key: &[u8; 32], image: &[u8]) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let mut data = Vec::with_capacity(HEADER + image.len());
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(key);
    data.extend_from_slice(&Sha256::digest(image));
    data.extend_from_slice(&(image.len() as u64).to_le_bytes());
    data.extend_from_slice(image);
    let tmp = dir.join(format!(
        ".{}.{}.{:?}.tmp",
        hex(key),
        std::process::id(),
        std::thread::current().id()
    ));
    if std::fs::write(&tmp, &data).is_ok() && std::fs::rename(&tmp, path(dir, key)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_round_trips_and_ignores_corrupt_truncated_or_foreign_entries() {
        let d = tempfile::tempdir().unwrap();
        let k = key("src", &["-DCOOP=4".into()], 90, (13, 0));
        assert_ne!(k, key("src", &["-DCOOP=8".into()], 90, (13, 0)));
        assert_ne!(k, key("src", &["-DCOOP=4".into()], 80, (13, 0)));
        assert_ne!(k, key("src", &["-DCOOP=4".into()], 90, (12, 8)));
        assert!(read(d.path(), &k).is_none());
        write(d.path(), &k, b"\x7fELF image");
        assert_eq!(read(d.path(), &k).unwrap(), b"\x7fELF image");
        let p = path(d.path(), &k);
        // One flipped byte of the image.
        let mut data = std::fs::read(&p).unwrap();
        *data.last_mut().unwrap() ^= 1;
        std::fs::write(&p, &data).unwrap();
        assert!(read(d.path(), &k).is_none());
        // Truncated.
        std::fs::write(&p, &data[..20]).unwrap();
        assert!(read(d.path(), &k).is_none());
        // Another key's intact entry under this key's name.
        let other = key("other", &[], 90, (13, 0));
        write(d.path(), &other, b"x");
        std::fs::copy(path(d.path(), &other), &p).unwrap();
        assert!(read(d.path(), &k).is_none());
        // Rewritten: trusted again.
        write(d.path(), &k, b"fresh");
        assert_eq!(read(d.path(), &k).unwrap(), b"fresh");
    }
}
