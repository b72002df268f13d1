//! Rust-side enums of the API. Their discriminants are the C constants of `api::types`; integers
//! from C become these only through `TryFrom<i32>`, which rejects unknown values.
#![forbid(unsafe_code)]

use crate::api::types as c;
use std::ffi::CStr;

/// An integer from C or a name that is no value of the enum it was read as; it becomes
/// `Error::InvalidValue` (`crate::error` converts it), with this sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue(pub String);

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadValue {}

macro_rules! c_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($(#[$vmeta:meta])* $variant:ident = $value:path => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $value),+
        }

        impl $name {
            /// Every value, in numeric order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The C constant's name, e.g. `TESSERA_ALGORITHM_HOLA`.
            pub fn c_name(self) -> &'static str {
                let path = match self { $($name::$variant => stringify!($value),)+ };
                path.rsplit("::").next().unwrap_or(path).trim()
            }

            /// The short lower-case name used by the CLI and in `info.params`.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }
        }

        impl TryFrom<i32> for $name {
            type Error = BadValue;
            fn try_from(v: i32) -> Result<Self, BadValue> {
                $(if v == $value { return Ok($name::$variant); })+
                Err(BadValue(format!(
                    concat!($what, " = {} is not a valid value (valid: {})"),
                    v,
                    $name::ALL.iter().map(|v| v.c_name()).collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }

        impl std::str::FromStr for $name {
            type Err = BadValue;
            fn from_str(s: &str) -> Result<Self, BadValue> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name().eq_ignore_ascii_case(s))
                    .ok_or_else(|| BadValue(format!(
                        concat!("'{}' is not a valid ", $what, " (valid: {})"),
                        s,
                        $name::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
                    )))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.name())
            }
        }
    };
}

c_enum!(
    /// Status of a C API call (see `tessera_status`).
    Status, "status", {
        /// Success.
        Success = c::TESSERA_STATUS_SUCCESS => "success",
        /// Not initialised.
        NotInitialized = c::TESSERA_STATUS_NOT_INITIALIZED => "not_initialized",
        /// Allocation failed.
        AllocFailed = c::TESSERA_STATUS_ALLOC_FAILED => "alloc_failed",
        /// Invalid value.
        InvalidValue = c::TESSERA_STATUS_INVALID_VALUE => "invalid_value",
        /// Architecture mismatch.
        ArchMismatch = c::TESSERA_STATUS_ARCH_MISMATCH => "arch_mismatch",
        /// Execution failed.
        ExecutionFailed = c::TESSERA_STATUS_EXECUTION_FAILED => "execution_failed",
        /// Internal error.
        InternalError = c::TESSERA_STATUS_INTERNAL_ERROR => "internal_error",
        /// Not supported.
        NotSupported = c::TESSERA_STATUS_NOT_SUPPORTED => "not_supported",
        /// Invalid handle.
        InvalidHandle = c::TESSERA_STATUS_INVALID_HANDLE => "invalid_handle",
        /// Invalid pointer.
        InvalidPointer = c::TESSERA_STATUS_INVALID_POINTER => "invalid_pointer",
        /// Invalid size.
        InvalidSize = c::TESSERA_STATUS_INVALID_SIZE => "invalid_size",
        /// Invalid matrix.
        InvalidMatrix = c::TESSERA_STATUS_INVALID_MATRIX => "invalid_matrix",
        /// Not analyzed.
        NotAnalyzed = c::TESSERA_STATUS_NOT_ANALYZED => "not_analyzed",
        /// No device.
        NoDevice = c::TESSERA_STATUS_NO_DEVICE => "no_device",
        /// Compile failed.
        CompileFailed = c::TESSERA_STATUS_COMPILE_FAILED => "compile_failed",
    }
);

impl Status {
    /// The constant's name as a C string (static storage).
    pub fn c_name_cstr(self) -> &'static CStr {
        match self {
            Status::Success => c"TESSERA_STATUS_SUCCESS",
            Status::NotInitialized => c"TESSERA_STATUS_NOT_INITIALIZED",
            Status::AllocFailed => c"TESSERA_STATUS_ALLOC_FAILED",
            Status::InvalidValue => c"TESSERA_STATUS_INVALID_VALUE",
            Status::ArchMismatch => c"TESSERA_STATUS_ARCH_MISMATCH",
            Status::ExecutionFailed => c"TESSERA_STATUS_EXECUTION_FAILED",
            Status::InternalError => c"TESSERA_STATUS_INTERNAL_ERROR",
            Status::NotSupported => c"TESSERA_STATUS_NOT_SUPPORTED",
            Status::InvalidHandle => c"TESSERA_STATUS_INVALID_HANDLE",
            Status::InvalidPointer => c"TESSERA_STATUS_INVALID_POINTER",
            Status::InvalidSize => c"TESSERA_STATUS_INVALID_SIZE",
            Status::InvalidMatrix => c"TESSERA_STATUS_INVALID_MATRIX",
            Status::NotAnalyzed => c"TESSERA_STATUS_NOT_ANALYZED",
            Status::NoDevice => c"TESSERA_STATUS_NO_DEVICE",
            Status::CompileFailed => c"TESSERA_STATUS_COMPILE_FAILED",
        }
    }

    /// One sentence describing the status in general, as a C string (static storage). The
    /// detail of a particular failure is in `tessera_last_error()`.
    pub fn sentence_cstr(self) -> &'static CStr {
        match self {
            Status::Success => c"The operation completed successfully.",
            Status::NotInitialized => c"The library or the handle was not initialized.",
            Status::AllocFailed => c"A host or device memory allocation failed.",
            Status::InvalidValue => c"An argument has a value outside its allowed set.",
            Status::ArchMismatch => c"The device architecture does not support the operation.",
            Status::ExecutionFailed => c"A kernel launch or a CUDA driver call failed.",
            Status::InternalError => c"An internal error occurred in tessera (please report it).",
            Status::NotSupported => c"The request is valid but not supported by this build.",
            Status::InvalidHandle => c"The handle or matrix is NULL, destroyed or not tessera's.",
            Status::InvalidPointer => c"A required pointer is NULL or of the wrong memory kind.",
            Status::InvalidSize => c"A size is negative, overflows, or does not match another.",
            Status::InvalidMatrix => c"The CSR arrays do not describe a valid sparse matrix.",
            Status::NotAnalyzed => c"The matrix must be analyzed before it can be multiplied.",
            Status::NoDevice => c"No usable CUDA device, driver or NVRTC library was found.",
            Status::CompileFailed => c"Run-time compilation of a GPU kernel failed.",
        }
    }

    /// [`Status::sentence_cstr`] as `&str`.
    pub fn sentence(self) -> &'static str {
        self.sentence_cstr().to_str().unwrap_or("")
    }
}

c_enum!(
    /// Where a handle executes.
    BackendKind, "backend", {
        /// CUDA GPU.
        Cuda = c::TESSERA_BACKEND_CUDA => "cuda",
        /// Host reference.
        Host = c::TESSERA_BACKEND_HOST => "host",
    }
);

c_enum!(
    /// Value type of a matrix.
    ValueType, "value type", {
        /// f32.
        F32 = c::TESSERA_VALUE_TYPE_F32 => "f32",
        /// f64.
        F64 = c::TESSERA_VALUE_TYPE_F64 => "f64",
    }
);

c_enum!(
    /// Index type of the caller's arrays.
    IndexType, "index type", {
        /// i32.
        I32 = c::TESSERA_INDEX_TYPE_I32 => "i32",
        /// i64.
        I64 = c::TESSERA_INDEX_TYPE_I64 => "i64",
    }
);

c_enum!(
    /// Index base of the caller's arrays.
    IndexBase, "index base", {
        /// 0-based.
        Zero = c::TESSERA_INDEX_BASE_ZERO => "zero",
        /// 1-based.
        One = c::TESSERA_INDEX_BASE_ONE => "one",
    }
);

c_enum!(
    /// Which product spmv computes.
    Operation, "operation", {
        /// A x.
        NonTranspose = c::TESSERA_OPERATION_NON_TRANSPOSE => "non_transpose",
        /// A^T x.
        Transpose = c::TESSERA_OPERATION_TRANSPOSE => "transpose",
    }
);

c_enum!(
    /// SpMV method.
    Algorithm, "algorithm", {
        /// Chosen by tessera.
        Auto = c::TESSERA_ALGORITHM_AUTO => "auto",
        /// Reguly–Giles CSR-vector.
        CsrVector = c::TESSERA_ALGORITHM_CSR_VECTOR => "csr_vector",
        /// Hola-SpMV.
        Hola = c::TESSERA_ALGORITHM_HOLA => "hola",
        /// yaSpMV BCCOO.
        Bccoo = c::TESSERA_ALGORITHM_BCCOO => "bccoo",
        /// BRC.
        Brc = c::TESSERA_ALGORITHM_BRC => "brc",
        /// TileSpMV.
        Tile = c::TESSERA_ALGORITHM_TILE => "tile",
    }
);

c_enum!(
    /// Tuning effort of analyze.
    Tuning, "tuning", {
        /// Fixed rule.
        None = c::TESSERA_TUNING_NONE => "none",
        /// A few candidates.
        Quick = c::TESSERA_TUNING_QUICK => "quick",
        /// Full search.
        Exhaustive = c::TESSERA_TUNING_EXHAUSTIVE => "exhaustive",
        /// Tune during spmv calls.
        Online = c::TESSERA_TUNING_ONLINE => "online",
    }
);

impl IndexBase {
    /// The index value that means "first".
    pub fn offset(self) -> i64 {
        match self {
            IndexBase::Zero => 0,
            IndexBase::One => 1,
        }
    }
}

/// The host backend has no SMs; the fixed rules that scale with the SM count use the device of
/// the CSR-vector paper (Reguly & Giles: a Tesla C2070 with 14 SMs), so host parameters read like
/// the paper's.
pub(crate) const HOST_SM_COUNT: u32 = 14;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_enum_values_are_invalid_value_naming_the_valid_ones() {
        let e = crate::error::Error::from(Algorithm::try_from(6).unwrap_err());
        assert_eq!(e.status(), Status::InvalidValue);
        assert!(e.detail().contains("algorithm = 6"), "{}", e.detail());
        assert!(
            e.detail().contains("TESSERA_ALGORITHM_TILE"),
            "{}",
            e.detail()
        );
        assert!(Operation::try_from(-1).is_err());
        assert!(Status::try_from(5).is_err());
        assert_eq!(Tuning::try_from(3).unwrap(), Tuning::Online);
    }

    #[test]
    fn c_names_and_numbers_match_the_c_constants() {
        assert_eq!(Status::InvalidMatrix as i32, 103);
        assert_eq!(
            Status::InvalidMatrix.c_name(),
            "TESSERA_STATUS_INVALID_MATRIX"
        );
        assert_eq!(Algorithm::Tile as i32, 5);
        assert_eq!("HOLA".parse::<Algorithm>().unwrap(), Algorithm::Hola);
        assert!("fast".parse::<Tuning>().is_err());
        for &s in Status::ALL {
            assert_eq!(s.c_name_cstr().to_str().unwrap(), s.c_name());
        }
    }
}
