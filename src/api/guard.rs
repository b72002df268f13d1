//! The one guard around every `extern "C"` body: `Err` becomes its status and
//! its sentence goes to `tessera_last_error()`; a panic becomes INTERNAL_ERROR with the panic's
//! text. No panic crosses the C boundary.

use super::types::{tessera_status, TESSERA_STATUS_INTERNAL_ERROR, TESSERA_STATUS_SUCCESS};
use crate::error::Result;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `msg` as this thread's last error (interior NULs are replaced).
pub(crate) fn set_last_error(msg: String) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Pointer to this thread's last error text; valid until the next failing call on this thread.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs `f`, mapping `Ok` to SUCCESS, `Err` to its status and a panic to INTERNAL_ERROR. `name`
/// (the C function) prefixes the sentence.
pub(crate) fn guard(name: &str, f: impl FnOnce() -> Result<()>) -> tessera_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => TESSERA_STATUS_SUCCESS,
        Ok(Err(e)) => {
            set_last_error(format!("{name}: {}", e.detail()));
            e.status() as tessera_status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            set_last_error(format!(
                "{name}: internal error (a bug in tessera, please report it): {what}"
            ));
            TESSERA_STATUS_INTERNAL_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: last_error_ptr points to this thread's live, NUL-terminated CString.
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn errors_become_their_status_and_panics_become_internal_error() {
        assert_eq!(guard("f", || Ok(())), 0);
        assert_eq!(
            guard("f", || Err(Error::InvalidSize(
                "rows = -1 is negative".into()
            ))),
            102
        );
        assert_eq!(last(), "f: rows = -1 is negative");
        let s = guard("g", || -> Result<()> { panic!("boom {}", 7) });
        assert_eq!(s, TESSERA_STATUS_INTERNAL_ERROR);
        assert!(last().starts_with("g: internal error") && last().ends_with("boom 7"));
    }
}
