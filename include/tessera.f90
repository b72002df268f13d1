! tessera: GPU sparse matrix-vector multiply with a cuSPARSE-shaped C API -- Fortran 2003 module.
!
! `use tessera` gives bind(c) interfaces to every function of include/tessera.h, every constant
! as an integer(c_int32_t) parameter, and the bind(c) derived type tessera_matrix_info.
! The module holds interfaces, constants and a type only (no procedures), so linking needs just
! -ltessera; tests/c_programs.rs checks that it covers the header.
!
! Conventions:
! - handles and matrices are type(c_ptr) (c_null_ptr is NULL);
! - arrays, x, y, alpha and beta are passed as type(c_ptr) by value: c_loc(array) of a
!   target array (host pointers on the host backend, device pointers on CUDA);
! - sizes are integer(c_int64_t); enum values are integer(c_int32_t);
! - the string getters return type(c_ptr) to a NUL-terminated C string (static storage, or
!   valid until the next failing call on the thread for tessera_last_error);
! - for 1-based Fortran arrays create matrices with TESSERA_INDEX_BASE_ONE.
!
! Example:
!   use tessera
!   type(c_ptr) :: h, A
!   integer(c_int32_t) :: st
!   st = tessera_create_with(h, TESSERA_BACKEND_HOST, 0_c_int32_t)
!   st = tessera_create_csr(h, A, n, n, nnz, c_loc(row_ptr), c_loc(col_ind), c_loc(val), &
!        TESSERA_INDEX_TYPE_I32, TESSERA_INDEX_BASE_ONE, TESSERA_VALUE_TYPE_F64)
!   st = tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE)
!   st = tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, c_loc(alpha), A, c_loc(x), c_loc(beta), c_loc(y))
module tessera
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int, c_int32_t, c_int64_t, c_double, &
       c_char, c_null_char, c_loc, c_f_pointer, c_associated
  implicit none
  public

  ! ---- version of this module (matches TESSERA_VERSION_* in tessera.h) ----
  integer(c_int32_t), parameter :: TESSERA_VERSION_MAJOR = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_VERSION_MINOR = 1_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_VERSION_PATCH = 0_c_int32_t

  ! ---- tessera_status ----
  integer(c_int32_t), parameter :: TESSERA_STATUS_SUCCESS = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_NOT_INITIALIZED = 1_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_ALLOC_FAILED = 2_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_INVALID_VALUE = 3_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_ARCH_MISMATCH = 4_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_EXECUTION_FAILED = 6_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_INTERNAL_ERROR = 7_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_NOT_SUPPORTED = 10_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_INVALID_HANDLE = 100_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_INVALID_POINTER = 101_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_INVALID_SIZE = 102_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_INVALID_MATRIX = 103_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_NOT_ANALYZED = 104_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_NO_DEVICE = 105_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_STATUS_COMPILE_FAILED = 106_c_int32_t

  ! ---- tessera_backend ----
  integer(c_int32_t), parameter :: TESSERA_BACKEND_CUDA = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_BACKEND_HOST = 1_c_int32_t

  ! ---- tessera_value_type ----
  integer(c_int32_t), parameter :: TESSERA_VALUE_TYPE_F32 = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_VALUE_TYPE_F64 = 1_c_int32_t

  ! ---- tessera_index_type ----
  integer(c_int32_t), parameter :: TESSERA_INDEX_TYPE_I32 = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_INDEX_TYPE_I64 = 1_c_int32_t

  ! ---- tessera_index_base ----
  integer(c_int32_t), parameter :: TESSERA_INDEX_BASE_ZERO = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_INDEX_BASE_ONE = 1_c_int32_t

  ! ---- tessera_operation ----
  integer(c_int32_t), parameter :: TESSERA_OPERATION_NON_TRANSPOSE = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_OPERATION_TRANSPOSE = 1_c_int32_t

  ! ---- tessera_algorithm ----
  integer(c_int32_t), parameter :: TESSERA_ALGORITHM_AUTO = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_ALGORITHM_CSR_VECTOR = 1_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_ALGORITHM_HOLA = 2_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_ALGORITHM_BCCOO = 3_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_ALGORITHM_BRC = 4_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_ALGORITHM_TILE = 5_c_int32_t

  ! ---- tessera_tuning ----
  integer(c_int32_t), parameter :: TESSERA_TUNING_NONE = 0_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_TUNING_QUICK = 1_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_TUNING_EXHAUSTIVE = 2_c_int32_t
  integer(c_int32_t), parameter :: TESSERA_TUNING_ONLINE = 3_c_int32_t

  ! ---- tessera_matrix_info: what tessera_matrix_get_info reports ----
  type, bind(c) :: tessera_matrix_info
     integer(c_int32_t) :: algorithm = 0      ! what analyze chose (AUTO before analyze)
     integer(c_int64_t) :: rows = 0
     integer(c_int64_t) :: cols = 0
     integer(c_int64_t) :: nnz = 0
     integer(c_int64_t) :: device_bytes = 0   ! uint64_t in C
     real(c_double) :: analysis_ms = 0         ! wall time of the last analyze
     integer(c_int32_t) :: deterministic = 0  ! 1 if spmv is bitwise reproducible
     character(kind=c_char) :: params(256) = c_null_char  ! NUL-terminated text
  end type tessera_matrix_info

  interface
     ! Creates a handle on CUDA device 0 (TESSERA_BACKEND=host in the environment selects the
     ! host backend); TESSERA_STATUS_NO_DEVICE without a usable GPU.
     function tessera_create(handle) bind(c, name="tessera_create") result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), intent(inout) :: handle
       integer(c_int32_t) :: status
     end function tessera_create

     ! Creates a handle on an explicit backend and device.
     function tessera_create_with(handle, backend, device_ordinal) &
          bind(c, name="tessera_create_with") result(status)
       import :: c_ptr, c_int, c_int32_t
       type(c_ptr), intent(inout) :: handle
       integer(c_int32_t), value :: backend
       integer(c_int), value :: device_ordinal
       integer(c_int32_t) :: status
     end function tessera_create_with

     ! Destroys a handle; c_null_ptr is a no-op.
     function tessera_destroy(handle) bind(c, name="tessera_destroy") result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       integer(c_int32_t) :: status
     end function tessera_destroy

     ! Sets the CUDA stream of the handle (c_null_ptr = default stream).
     function tessera_set_stream(handle, cuda_stream) bind(c, name="tessera_set_stream") &
          result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       type(c_ptr), value :: cuda_stream
       integer(c_int32_t) :: status
     end function tessera_set_stream

     ! Hands back to the driver the device memory tessera's pool keeps for reuse (at most 64 MiB
     ! of freed buffers); a no-op on the host backend.
     function tessera_release_cached_memory(handle) bind(c, name="tessera_release_cached_memory") &
          result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       integer(c_int32_t) :: status
     end function tessera_release_cached_memory

     ! Creates a matrix from CSR arrays (row_ptr: rows+1 entries; col_ind, values: nnz entries),
     ! passed as c_loc(...); tessera keeps its own copy.
     function tessera_create_csr(handle, A, rows, cols, nnz, row_ptr, col_ind, values, it, base, vt) &
          bind(c, name="tessera_create_csr") result(status)
       import :: c_ptr, c_int32_t, c_int64_t
       type(c_ptr), value :: handle
       type(c_ptr), intent(inout) :: A
       integer(c_int64_t), value :: rows
       integer(c_int64_t), value :: cols
       integer(c_int64_t), value :: nnz
       type(c_ptr), value :: row_ptr
       type(c_ptr), value :: col_ind
       type(c_ptr), value :: values
       integer(c_int32_t), value :: it
       integer(c_int32_t), value :: base
       integer(c_int32_t), value :: vt
       integer(c_int32_t) :: status
     end function tessera_create_csr

     ! Device arrays read in place (base 0, sorted columns); kept until tessera_destroy_matrix.
     function tessera_create_csr_borrowed(handle, A, rows, cols, nnz, row_ptr, col_ind, values, it, base, &
          vt) &
          bind(c, name="tessera_create_csr_borrowed") result(status)
       import :: c_ptr, c_int32_t, c_int64_t
       type(c_ptr), value :: handle
       type(c_ptr), intent(inout) :: A
       integer(c_int64_t), value :: rows
       integer(c_int64_t), value :: cols
       integer(c_int64_t), value :: nnz
       type(c_ptr), value :: row_ptr
       type(c_ptr), value :: col_ind
       type(c_ptr), value :: values
       integer(c_int32_t), value :: it
       integer(c_int32_t), value :: base
       integer(c_int32_t), value :: vt
       integer(c_int32_t) :: status
     end function tessera_create_csr_borrowed

     ! Chooses (AUTO) or takes the method, picks its parameters and builds its format.
     function tessera_analyze(handle, A, alg, tune) bind(c, name="tessera_analyze") result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       type(c_ptr), value :: A
       integer(c_int32_t), value :: alg
       integer(c_int32_t), value :: tune
       integer(c_int32_t) :: status
     end function tessera_analyze

     ! y = alpha*op(A)*x + beta*y; alpha and beta: c_loc of scalars of A's value type.
     function tessera_spmv(handle, op, alpha, A, x, beta, y) bind(c, name="tessera_spmv") &
          result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       integer(c_int32_t), value :: op
       type(c_ptr), value :: alpha
       type(c_ptr), value :: A
       type(c_ptr), value :: x
       type(c_ptr), value :: beta
       type(c_ptr), value :: y
       integer(c_int32_t) :: status
     end function tessera_spmv

     ! New values, same pattern, in the order of the values given to tessera_create_csr.
     function tessera_update_values(handle, A, values) bind(c, name="tessera_update_values") &
          result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       type(c_ptr), value :: A
       type(c_ptr), value :: values
       integer(c_int32_t) :: status
     end function tessera_update_values

     ! Fills info (written only on success).
     function tessera_matrix_get_info(A, info) bind(c, name="tessera_matrix_get_info") &
          result(status)
       import :: c_ptr, c_int32_t, tessera_matrix_info
       type(c_ptr), value :: A
       type(tessera_matrix_info), intent(inout) :: info
       integer(c_int32_t) :: status
     end function tessera_matrix_get_info

     ! Waits for the format AUTO builds in the background and swaps it in (no-op without one).
     function tessera_finish_background(handle, A) bind(c, name="tessera_finish_background") &
          result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: handle
       type(c_ptr), value :: A
       integer(c_int32_t) :: status
     end function tessera_finish_background

     ! Destroys a matrix; c_null_ptr is a no-op.
     function tessera_destroy_matrix(A) bind(c, name="tessera_destroy_matrix") result(status)
       import :: c_ptr, c_int32_t
       type(c_ptr), value :: A
       integer(c_int32_t) :: status
     end function tessera_destroy_matrix

     ! The constant's name of a status (C string, static storage, never NULL).
     function tessera_status_name(s) bind(c, name="tessera_status_name") result(str)
       import :: c_ptr, c_int32_t
       integer(c_int32_t), value :: s
       type(c_ptr) :: str
     end function tessera_status_name

     ! One sentence describing a status (C string, static storage, never NULL).
     function tessera_status_string(s) bind(c, name="tessera_status_string") result(str)
       import :: c_ptr, c_int32_t
       integer(c_int32_t), value :: s
       type(c_ptr) :: str
     end function tessera_status_string

     ! The detail of the last failed call on this thread (C string, never NULL).
     function tessera_last_error() bind(c, name="tessera_last_error") result(str)
       import :: c_ptr
       type(c_ptr) :: str
     end function tessera_last_error

     ! The library's version.
     function tessera_get_version(major, minor, patch) bind(c, name="tessera_get_version") &
          result(status)
       import :: c_int, c_int32_t
       integer(c_int), intent(inout) :: major
       integer(c_int), intent(inout) :: minor
       integer(c_int), intent(inout) :: patch
       integer(c_int32_t) :: status
     end function tessera_get_version
  end interface
end module tessera
