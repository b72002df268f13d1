//! The internal error type. Every variant maps to exactly one `tessera_status` and carries the
//! sentence that `tessera_last_error()` returns.
#![forbid(unsafe_code)]

use crate::types::{BadValue, Status};

/// An error from any tessera operation: a status and a sentence explaining it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The library or a handle was not set up.
    #[error("{0}")]
    NotInitialized(String),
    /// A host or device allocation failed.
    #[error("{0}")]
    AllocFailed(String),
    /// An argument has a value outside its allowed set.
    #[error("{0}")]
    InvalidValue(String),
    /// The device cannot run what was asked.
    #[error("{0}")]
    ArchMismatch(String),
    /// A kernel or a driver call failed.
    #[error("{0}")]
    ExecutionFailed(String),
    /// A bug in tessera (a caught panic lands here).
    #[error("{0}")]
    Internal(String),
    /// A valid request that this build does not support.
    #[error("{0}")]
    NotSupported(String),
    /// NULL, destroyed or foreign handle or matrix.
    #[error("{0}")]
    InvalidHandle(String),
    /// A required pointer is NULL or points to the wrong kind of memory.
    #[error("{0}")]
    InvalidPointer(String),
    /// A size is negative, overflows, or does not match.
    #[error("{0}")]
    InvalidSize(String),
    /// The CSR arrays are malformed.
    #[error("{0}")]
    InvalidMatrix(String),
    /// `spmv` was called before `analyze`.
    #[error("{0}")]
    NotAnalyzed(String),
    /// No usable CUDA device or driver.
    #[error("{0}")]
    NoDevice(String),
    /// Run-time kernel compilation failed.
    #[error("{0}")]
    CompileFailed(String),
}

/// Result with tessera's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The C status this error is reported as.
    pub fn status(&self) -> Status {
        match self {
            Error::NotInitialized(_) => Status::NotInitialized,
            Error::AllocFailed(_) => Status::AllocFailed,
            Error::InvalidValue(_) => Status::InvalidValue,
            Error::ArchMismatch(_) => Status::ArchMismatch,
            Error::ExecutionFailed(_) => Status::ExecutionFailed,
            Error::Internal(_) => Status::InternalError,
            Error::NotSupported(_) => Status::NotSupported,
            Error::InvalidHandle(_) => Status::InvalidHandle,
            Error::InvalidPointer(_) => Status::InvalidPointer,
            Error::InvalidSize(_) => Status::InvalidSize,
            Error::InvalidMatrix(_) => Status::InvalidMatrix,
            Error::NotAnalyzed(_) => Status::NotAnalyzed,
            Error::NoDevice(_) => Status::NoDevice,
            Error::CompileFailed(_) => Status::CompileFailed,
        }
    }

    /// The sentence explaining the error.
    pub fn detail(&self) -> &str {
        match self {
            Error::NotInitialized(s)
            | Error::AllocFailed(s)
            | Error::InvalidValue(s)
            | Error::ArchMismatch(s)
            | Error::ExecutionFailed(s)
            | Error::Internal(s)
            | Error::NotSupported(s)
            | Error::InvalidHandle(s)
            | Error::InvalidPointer(s)
            | Error::InvalidSize(s)
            | Error::InvalidMatrix(s)
            | Error::NotAnalyzed(s)
            | Error::NoDevice(s)
            | Error::CompileFailed(s) => s,
        }
    }
}

impl Error {
    /// The same error (same status) with `f` applied to its sentence.
    pub fn map_detail(self, f: impl FnOnce(String) -> String) -> Error {
        match self {
            Error::NotInitialized(s) => Error::NotInitialized(f(s)),
            Error::AllocFailed(s) => Error::AllocFailed(f(s)),
            Error::InvalidValue(s) => Error::InvalidValue(f(s)),
            Error::ArchMismatch(s) => Error::ArchMismatch(f(s)),
            Error::ExecutionFailed(s) => Error::ExecutionFailed(f(s)),
            Error::Internal(s) => Error::Internal(f(s)),
            Error::NotSupported(s) => Error::NotSupported(f(s)),
            Error::InvalidHandle(s) => Error::InvalidHandle(f(s)),
            Error::InvalidPointer(s) => Error::InvalidPointer(f(s)),
            Error::InvalidSize(s) => Error::InvalidSize(f(s)),
            Error::InvalidMatrix(s) => Error::InvalidMatrix(f(s)),
            Error::NotAnalyzed(s) => Error::NotAnalyzed(f(s)),
            Error::NoDevice(s) => Error::NoDevice(f(s)),
            Error::CompileFailed(s) => Error::CompileFailed(f(s)),
        }
    }
}

impl From<BadValue> for Error {
    fn from(e: BadValue) -> Self {
        Error::InvalidValue(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_maps_to_its_own_status_and_keeps_its_sentence() {
        let all = [
            Error::NotInitialized("a".into()),
            Error::AllocFailed("a".into()),
            Error::InvalidValue("a".into()),
            Error::ArchMismatch("a".into()),
            Error::ExecutionFailed("a".into()),
            Error::Internal("a".into()),
            Error::NotSupported("a".into()),
            Error::InvalidHandle("a".into()),
            Error::InvalidPointer("a".into()),
            Error::InvalidSize("a".into()),
            Error::InvalidMatrix("a".into()),
            Error::NotAnalyzed("a".into()),
            Error::NoDevice("a".into()),
            Error::CompileFailed("a".into()),
        ];
        let mut codes: Vec<i32> = all.iter().map(|e| e.status() as i32).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        assert!(all
            .iter()
            .all(|e| e.detail() == "a" && e.to_string() == "a"));
        assert!(!codes.contains(&0), "no error may map to SUCCESS");
        for e in all {
            let m = e.clone().map_detail(|d| format!("{d}!"));
            assert_eq!((m.status(), m.detail()), (e.status(), "a!"));
        }
    }
}
