! api_fortran.f90: the tessera Fortran module on the host backend, with 1-based indices.
!
! A 4x3 f64 matrix in 1-based CSR (int32 indices), products checked against hand values (both
! operations, beta = 0 over NaN, alpha/beta), update_values, get_info, version, status names.
!
! Build: gfortran -c include/tessera.f90 -J moddir && \
!        gfortran -I moddir c-tests/api_fortran.f90 -L target/debug -ltessera
! Prints "ok: N checks" and exits 0, or prints each failed check and stops with code 1.
program api_fortran
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use tessera
  implicit none

  interface
     function c_strlen(s) bind(c, name="strlen") result(n)
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: n
     end function c_strlen
  end interface

  !   A = [1 0 2]    x3 = [1 2 3]:    A x   = [7 6 19 12]
  !       [0 3 0]    x4 = [1 2 3 4]:  A^T x = [13 30 17]
  !       [4 0 5]
  !       [0 6 0]
  integer(c_int64_t), parameter :: m = 4, n = 3, nnz = 6
  integer(c_int32_t), target :: row_ptr(m + 1) = [1, 3, 4, 6, 7]
  integer(c_int32_t), target :: col_ind(nnz) = [1, 3, 2, 1, 3, 2]
  real(c_double), target :: values(nnz) = [1d0, 2d0, 3d0, 4d0, 5d0, 6d0]
  real(c_double), target :: x3(n) = [1d0, 2d0, 3d0]
  real(c_double), target :: x4(m) = [1d0, 2d0, 3d0, 4d0]
  real(c_double), parameter :: ax(m) = [7d0, 6d0, 19d0, 12d0]
  real(c_double), parameter :: atx(n) = [13d0, 30d0, 17d0]
  real(c_double), parameter :: y0(m) = [1d0, -2d0, 3d0, -4d0]
  real(c_double), target :: y(m), yt(n), alpha, beta
  real(c_double), target :: new_values(nnz)

  type(c_ptr) :: h, A
  type(tessera_matrix_info) :: info
  integer(c_int32_t) :: major, minor, patch
  integer :: checks = 0, failures = 0
  character(len=:), allocatable :: text

  h = c_null_ptr
  A = c_null_ptr

  call expect_status(tessera_create_with(h, TESSERA_BACKEND_HOST, 0_c_int32_t), &
       TESSERA_STATUS_SUCCESS, "tessera_create_with(host)")
  call check(c_associated(h), "handle is not NULL")
  if (.not. c_associated(h)) call finish()

  call expect_status(tessera_create_csr(h, A, m, n, nnz, c_loc(row_ptr), c_loc(col_ind), &
       c_loc(values), TESSERA_INDEX_TYPE_I32, TESSERA_INDEX_BASE_ONE, TESSERA_VALUE_TYPE_F64), &
       TESSERA_STATUS_SUCCESS, "tessera_create_csr(1-based)")
  call check(c_associated(A), "matrix is not NULL")
  if (.not. c_associated(A)) call finish()

  ! spmv before analyze
  alpha = 1d0
  beta = 0d0
  call expect_status(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, c_loc(alpha), A, c_loc(x3), &
       c_loc(beta), c_loc(y)), TESSERA_STATUS_NOT_ANALYZED, "tessera_spmv before analyze")

  ! info before analyze
  call expect_status(tessera_matrix_get_info(A, info), TESSERA_STATUS_SUCCESS, "get_info before analyze")
  call check(info%algorithm == TESSERA_ALGORITHM_AUTO, "algorithm is AUTO before analyze")
  call check(info%rows == m .and. info%cols == n .and. info%nnz == nnz, "rows/cols/nnz before analyze")

  call expect_status(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE), &
       TESSERA_STATUS_SUCCESS, "tessera_analyze(AUTO)")

  call expect_status(tessera_finish_background(h, A), TESSERA_STATUS_SUCCESS, &
       "tessera_finish_background (nothing in the background)")

  ! info after analyze: the struct layout must match C's
  call expect_status(tessera_matrix_get_info(A, info), TESSERA_STATUS_SUCCESS, "get_info")
  call check(info%algorithm == TESSERA_ALGORITHM_CSR_VECTOR, "AUTO chose CSR_VECTOR")
  call check(info%rows == m, "info%rows")
  call check(info%cols == n, "info%cols")
  call check(info%nnz == nnz, "info%nnz")
  call check(info%device_bytes > 0, "info%device_bytes > 0")
  call check(info%analysis_ms >= 0d0 .and. info%analysis_ms < 6d4, "info%analysis_ms")
  call check(info%deterministic == 1, "info%deterministic")
  text = params_text(info)
  call check(len(text) > 0 .and. len(text) < 256, "info%params is non-empty NUL-terminated text")

  ! y = A x with NaN in y and beta = 0
  y = ieee_value(1d0, ieee_quiet_nan)
  call expect_status(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, c_loc(alpha), A, c_loc(x3), &
       c_loc(beta), c_loc(y)), TESSERA_STATUS_SUCCESS, "spmv A x")
  call check_vector(y, ax, "A x (beta 0 over NaN)")

  ! y = 2 A x - y0
  alpha = 2d0
  beta = -1d0
  y = y0
  call expect_status(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, c_loc(alpha), A, c_loc(x3), &
       c_loc(beta), c_loc(y)), TESSERA_STATUS_SUCCESS, "spmv 2 A x - y")
  call check_vector(y, 2d0 * ax - y0, "2 A x - y0")

  ! yt = A^T x4, beta = 0 over NaN
  alpha = 1d0
  beta = 0d0
  yt = ieee_value(1d0, ieee_quiet_nan)
  call expect_status(tessera_spmv(h, TESSERA_OPERATION_TRANSPOSE, c_loc(alpha), A, c_loc(x4), &
       c_loc(beta), c_loc(yt)), TESSERA_STATUS_SUCCESS, "spmv A^T x")
  call check_vector(yt, atx, "A^T x (beta 0 over NaN)")

  ! update_values: every value times 10, no re-analysis
  new_values = 10d0 * values
  call expect_status(tessera_update_values(h, A, c_loc(new_values)), TESSERA_STATUS_SUCCESS, &
       "tessera_update_values")
  y = ieee_value(1d0, ieee_quiet_nan)
  call expect_status(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, c_loc(alpha), A, c_loc(x3), &
       c_loc(beta), c_loc(y)), TESSERA_STATUS_SUCCESS, "spmv after update_values")
  call check_vector(y, 10d0 * ax, "A x after update_values(10*values)")

  ! a bad argument: the status, a sentence in tessera_last_error, info untouched
  info%rows = -42
  call expect_status(tessera_matrix_get_info(c_null_ptr, info), TESSERA_STATUS_INVALID_HANDLE, &
       "get_info(NULL)")
  call check(info%rows == -42, "info untouched on failure")
  text = c_string(tessera_last_error())
  call check(len(text) > 8 .and. index(text, " ") > 0, "tessera_last_error is a sentence: " // text)

  ! version and status text
  major = -1
  minor = -1
  patch = -1
  call expect_status(tessera_get_version(major, minor, patch), TESSERA_STATUS_SUCCESS, "get_version")
  call check(major == TESSERA_VERSION_MAJOR .and. minor == TESSERA_VERSION_MINOR .and. &
       patch == TESSERA_VERSION_PATCH, "library version equals the module's TESSERA_VERSION_*")
  call check(c_string(tessera_status_name(TESSERA_STATUS_INVALID_VALUE)) == "TESSERA_STATUS_INVALID_VALUE", &
       "tessera_status_name(TESSERA_STATUS_INVALID_VALUE)")
  call check(len(c_string(tessera_status_string(TESSERA_STATUS_NOT_ANALYZED))) > 8, &
       "tessera_status_string(TESSERA_STATUS_NOT_ANALYZED)")

  call expect_status(tessera_destroy_matrix(A), TESSERA_STATUS_SUCCESS, "tessera_destroy_matrix")
  call expect_status(tessera_destroy_matrix(c_null_ptr), TESSERA_STATUS_SUCCESS, "destroy_matrix(NULL)")
  call expect_status(tessera_destroy(h), TESSERA_STATUS_SUCCESS, "tessera_destroy")
  call expect_status(tessera_destroy(c_null_ptr), TESSERA_STATUS_SUCCESS, "tessera_destroy(NULL)")
  call finish()

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok) then
       failures = failures + 1
       write (*, '(a, a)') "FAIL: ", what
    end if
  end subroutine check

  subroutine expect_status(got, want, what)
    integer(c_int32_t), intent(in) :: got, want
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (got /= want) then
       failures = failures + 1
       write (*, '(a, a, a, i0, a, i0, a, a)') "FAIL: ", what, ": returned ", got, ", expected ", want, &
            "; last error: ", c_string(tessera_last_error())
    end if
  end subroutine expect_status

  subroutine check_vector(got, want, what)
    real(c_double), intent(in) :: got(:), want(:)
    character(len=*), intent(in) :: what
    integer :: i
    do i = 1, size(want)
       checks = checks + 1
       ! NaN fails this comparison
       if (.not. (abs(got(i) - want(i)) <= 1d-12 * max(1d0, abs(want(i))))) then
          failures = failures + 1
          write (*, '(a, a, a, i0, a, g0, a, g0)') "FAIL: ", what, ": y(", i, ") = ", got(i), &
               ", expected ", want(i)
       end if
    end do
  end subroutine check_vector

  ! A NUL-terminated C string as a Fortran string ("" for NULL).
  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, length
    if (.not. c_associated(p)) then
       s = ""
       return
    end if
    length = int(c_strlen(p))
    call c_f_pointer(p, chars, [length])
    allocate (character(len=length) :: s)
    do i = 1, length
       s(i:i) = chars(i)
    end do
  end function c_string

  ! info%params up to its NUL.
  function params_text(inf) result(s)
    type(tessera_matrix_info), intent(in) :: inf
    character(len=:), allocatable :: s
    integer :: i
    s = ""
    do i = 1, size(inf%params)
       if (inf%params(i) == c_null_char) return
       s = s // inf%params(i)
    end do
    s = repeat("x", 256) ! no NUL: report as too long
  end function params_text

  subroutine finish()
    if (failures /= 0) then
       write (*, '(a, i0, a, i0, a)') "FAILED: ", failures, " of ", checks, " checks"
       stop 1
    end if
    write (*, '(a, i0, a)') "ok: ", checks, " checks"
    stop
  end subroutine finish
end program api_fortran
