/* bad_args.c: every argument of every function, in turn, NULL or invalid -> the documented status.
 *
 * For each failure: the exact status, a non-empty sentence in tessera_last_error(), out-parameters
 * left untouched (preset to a sentinel), and afterwards the handle and the matrix still work.
 * Argument-check order: handle -> out-pointers -> enums -> sizes -> quick return on empty -> arrays.
 *
 * tessera_create without TESSERA_BACKEND: NO_DEVICE on a machine without a usable GPU. Where a GPU
 * may be present the program accepts SUCCESS too, unless TESSERA_TEST_EXPECT_NO_DEVICE=1 (the test
 * harness sets it when the machine has no /dev/nvidia0).
 *
 * Build: cc -std=c99 -Wall -Wextra -Wpedantic -Werror -D_POSIX_C_SOURCE=200112L -I include \
 *            c-tests/bad_args.c -L target/debug -ltessera -lm */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"
#include "check.h"

static char sentinel_byte;
#define SENTINEL_H ((tessera_handle)(void *)&sentinel_byte)
#define SENTINEL_M ((tessera_matrix)(void *)&sentinel_byte)

/* The valid 3x3 matrix used throughout:  [1 0 2; 0 3 0; 0 0 4]; x = [1 2 3]: A x = [7 6 12] */
static const int32_t rp[] = {0, 2, 3, 4};
static const int32_t ci[] = {0, 2, 1, 2};
static const double va[] = {1, 2, 3, 4};
static const double x3[] = {1, 2, 3};
static const double ax[] = {7, 6, 12};

/* The matrix and handle still compute A x correctly (after a failed call). */
static void check_still_works(tessera_handle h, tessera_matrix A, double scale, const char *after) {
    double alpha = 1.0, beta = 0.0, y[3] = {NAN, NAN, NAN};
    char what[200];
    int i;
    sprintf(what, "spmv after %s", after);
    check_status_at(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &alpha, A, x3, &beta, y),
                    TESSERA_STATUS_SUCCESS, __FILE__, __LINE__, what);
    for (i = 0; i < 3; ++i) {
        sprintf(what, "A x after %s: y[%d]", after, i);
        check_close_at(y[i], scale * ax[i], 1e-12, __FILE__, __LINE__, what);
    }
}

/* A malformed CSR: arrays given relative to the base (base is added here), 3x3, nnz 4. */
static void bad_csr(tessera_handle h, const int64_t *rel_rp, const int64_t *rel_ci,
                    tessera_index_type it, tessera_index_base base, const char *mentions,
                    const char *what) {
    int32_t rp32[4], ci32[4];
    int64_t rp64[4], ci64[4];
    tessera_matrix A = SENTINEL_M;
    char label[240];
    int i;
    for (i = 0; i < 4; ++i) {
        rp64[i] = rel_rp[i] + base;
        ci64[i] = rel_ci[i] + base;
        rp32[i] = (int32_t)rp64[i];
        ci32[i] = (int32_t)ci64[i];
    }
    sprintf(label, "tessera_create_csr(%s, %s, base %d)", what,
            it == TESSERA_INDEX_TYPE_I32 ? "i32" : "i64", (int)base);
    check_status_at(tessera_create_csr(h, &A, 3, 3, 4,
                                       it == TESSERA_INDEX_TYPE_I32 ? (const void *)rp32 : (const void *)rp64,
                                       it == TESSERA_INDEX_TYPE_I32 ? (const void *)ci32 : (const void *)ci64,
                                       va, it, base, TESSERA_VALUE_TYPE_F64),
                    TESSERA_STATUS_INVALID_MATRIX, __FILE__, __LINE__, label);
    CHECK(A == SENTINEL_M);
    check_error_mentions_at(mentions, __FILE__, __LINE__);
}

static void test_create(void) {
    tessera_handle h = SENTINEL_H;
    tessera_status st;
    const char *expect = getenv("TESSERA_TEST_EXPECT_NO_DEVICE");
    int strict = expect != NULL && strcmp(expect, "1") == 0;

    /* no TESSERA_BACKEND: CUDA device 0, which this machine may not have */
    unsetenv("TESSERA_BACKEND");
    st = tessera_create(&h);
    if (strict || st != TESSERA_STATUS_SUCCESS) {
        CHECK_STATUS(st, TESSERA_STATUS_NO_DEVICE);
        CHECK(h == SENTINEL_H);
    } else {
        CHECK(h != NULL && h != SENTINEL_H);
        CHECK_OK(tessera_destroy(h));
    }
    h = SENTINEL_H;
    st = tessera_create_with(&h, TESSERA_BACKEND_CUDA, 0);
    if (strict || st != TESSERA_STATUS_SUCCESS) {
        CHECK_STATUS(st, TESSERA_STATUS_NO_DEVICE);
        CHECK(h == SENTINEL_H);
    } else {
        CHECK_OK(tessera_destroy(h));
    }
    h = SENTINEL_H;
    /* an out-of-range device ordinal can never be a device */
    CHECK(tessera_create_with(&h, TESSERA_BACKEND_CUDA, 1 << 20) != TESSERA_STATUS_SUCCESS);
    CHECK(h == SENTINEL_H);

    /* NULL out-pointer comes before anything else, in both functions */
    CHECK_STATUS(tessera_create(NULL), TESSERA_STATUS_INVALID_POINTER);
    CHECK_STATUS(tessera_create_with(NULL, TESSERA_BACKEND_HOST, 0), TESSERA_STATUS_INVALID_POINTER);
    CHECK_STATUS(tessera_create_with(NULL, 7, 0), TESSERA_STATUS_INVALID_POINTER); /* out-ptr before enum */

    /* unknown backend values */
    CHECK_STATUS(tessera_create_with(&h, 2, 0), TESSERA_STATUS_INVALID_VALUE);
    CHECK(h == SENTINEL_H);
    CHECK_STATUS(tessera_create_with(&h, -1, 0), TESSERA_STATUS_INVALID_VALUE);
    CHECK(h == SENTINEL_H);
    CHECK_STATUS(tessera_create_with(&h, 0x7fffffff, 0), TESSERA_STATUS_INVALID_VALUE);
    CHECK(h == SENTINEL_H);

    /* the host backend has one device, 0 */
    CHECK_STATUS(tessera_create_with(&h, TESSERA_BACKEND_HOST, 1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(h == SENTINEL_H);
    CHECK_STATUS(tessera_create_with(&h, TESSERA_BACKEND_HOST, -1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(h == SENTINEL_H);

    /* TESSERA_BACKEND=host selects the host backend */
    setenv("TESSERA_BACKEND", "host", 1);
    CHECK_OK(tessera_create(&h));
    CHECK(h != NULL && h != SENTINEL_H);
    if (h != NULL && h != SENTINEL_H) CHECK_OK(tessera_destroy(h));

    /* NULL is a no-op for both destroys */
    CHECK_OK(tessera_destroy(NULL));
    CHECK_OK(tessera_destroy_matrix(NULL));
}

static void test_create_csr(tessera_handle h) {
    static const int64_t ok_rp[] = {0, 2, 3, 4}, ok_ci[] = {0, 2, 1, 2};
    static const int64_t rp_first[] = {1, 2, 3, 4};     /* row_ptr[0] != base */
    static const int64_t rp_decr[] = {0, 3, 2, 4};      /* decreasing */
    static const int64_t rp_neg[] = {0, -1, 3, 4};      /* decreasing through a negative */
    static const int64_t rp_last_lo[] = {0, 2, 3, 3};   /* row_ptr[rows] != nnz + base */
    static const int64_t rp_last_hi[] = {0, 2, 3, 5};
    static const int64_t ci_hi[] = {0, 3, 1, 2};        /* column == cols */
    static const int64_t ci_lo[] = {0, 2, -1, 2};       /* column < base */
    static const int64_t two32 = (int64_t)1 << 32;
    int64_t rp_wrap[4], ci_wrap[4];
    tessera_matrix A = SENTINEL_M;
    const double *v = va;
    int it, base, i;

    /* each argument in turn */
    CHECK_STATUS(tessera_create_csr(NULL, &A, 3, 3, 4, rp, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_HANDLE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, NULL, 3, 3, 4, rp, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_POINTER);
    CHECK_STATUS(tessera_create_csr(h, &A, -1, 3, 4, rp, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_SIZE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, -1, 4, rp, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_SIZE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, -1, rp, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_SIZE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, INT64_MIN, 3, 4, rp, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_SIZE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, NULL, ci, v, 0, 0, 1), TESSERA_STATUS_INVALID_POINTER);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, NULL, v, 0, 0, 1), TESSERA_STATUS_INVALID_POINTER);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, NULL, 0, 0, 1), TESSERA_STATUS_INVALID_POINTER);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, v, 2, 0, 1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, v, -1, 0, 1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, v, 0, 2, 1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, v, 0, -1, 1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, v, 0, 0, 2), TESSERA_STATUS_INVALID_VALUE);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, v, 0, 0, -1), TESSERA_STATUS_INVALID_VALUE);
    CHECK(A == SENTINEL_M);

    /* the order of the checks: handle -> out-pointer -> enums -> sizes -> arrays */
    CHECK_STATUS(tessera_create_csr(NULL, NULL, -1, -1, -1, NULL, NULL, NULL, 9, 9, 9),
                 TESSERA_STATUS_INVALID_HANDLE);
    CHECK_STATUS(tessera_create_csr(h, NULL, -1, -1, -1, NULL, NULL, NULL, 9, 9, 9),
                 TESSERA_STATUS_INVALID_POINTER);
    CHECK_STATUS(tessera_create_csr(h, &A, -1, -1, -1, NULL, NULL, NULL, 0, 0, 9),
                 TESSERA_STATUS_INVALID_VALUE);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, -1, 4, NULL, NULL, NULL, 0, 0, 1), TESSERA_STATUS_INVALID_SIZE);
    CHECK(A == SENTINEL_M);

    /* arrays are required only when their length > 0; row_ptr has rows + 1 entries */
    {
        static const int32_t rp_empty[] = {0, 0, 0, 0};
        tessera_matrix E = NULL;
        CHECK_OK(tessera_create_csr(h, &E, 0, 0, 0, rp_empty, NULL, NULL, 0, 0, 1));
        CHECK(E != NULL);
        CHECK_OK(tessera_destroy_matrix(E));
        E = NULL;
        CHECK_OK(tessera_create_csr(h, &E, 3, 5, 0, rp_empty, NULL, NULL, 0, 0, 1));
        CHECK(E != NULL);
        CHECK_OK(tessera_destroy_matrix(E));
        CHECK_STATUS(tessera_create_csr(h, &A, 0, 0, 0, NULL, NULL, NULL, 0, 0, 1),
                     TESSERA_STATUS_INVALID_POINTER);
        CHECK(A == SENTINEL_M);
        CHECK_STATUS(tessera_create_csr(h, &A, 3, 5, 0, NULL, NULL, NULL, 0, 0, 1),
                     TESSERA_STATUS_INVALID_POINTER);
        CHECK(A == SENTINEL_M);
    }

    /* more than 2^31 - 1 rows or nonzeros: NOT_SUPPORTED, decided from the sizes (before any
       array is read: the arrays here are NULL) */
    CHECK_STATUS(tessera_create_csr(h, &A, (int64_t)1 << 31, 3, 0, NULL, NULL, NULL, 1, 0, 1),
                 TESSERA_STATUS_NOT_SUPPORTED);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, 3, 3, (int64_t)1 << 31, NULL, NULL, NULL, 1, 0, 1),
                 TESSERA_STATUS_NOT_SUPPORTED);
    CHECK(A == SENTINEL_M);
    CHECK_STATUS(tessera_create_csr(h, &A, INT64_MAX, INT64_MAX, INT64_MAX, NULL, NULL, NULL, 1, 0, 1),
                 TESSERA_STATUS_NOT_SUPPORTED);
    CHECK(A == SENTINEL_M);

    /* malformed CSR, for every index type and base; the detail names the array */
    for (it = 0; it < 2; ++it) {
        for (base = 0; base < 2; ++base) {
            bad_csr(h, rp_first, ok_ci, it, base, "row_ptr", "row_ptr[0] != base");
            bad_csr(h, rp_decr, ok_ci, it, base, "row_ptr", "row_ptr decreasing");
            bad_csr(h, rp_neg, ok_ci, it, base, "row_ptr", "row_ptr negative");
            bad_csr(h, rp_last_lo, ok_ci, it, base, "row_ptr", "row_ptr[rows] < nnz + base");
            bad_csr(h, rp_last_hi, ok_ci, it, base, "row_ptr", "row_ptr[rows] > nnz + base");
            bad_csr(h, ok_rp, ci_hi, it, base, "col_ind", "column == cols");
            bad_csr(h, ok_rp, ci_lo, it, base, "col_ind", "column < base");
        }
    }
    /* i64 values that would look valid if truncated to 32 bits */
    for (i = 0; i < 4; ++i) {
        rp_wrap[i] = ok_rp[i];
        ci_wrap[i] = ok_ci[i];
    }
    rp_wrap[3] += two32;
    bad_csr(h, rp_wrap, ok_ci, TESSERA_INDEX_TYPE_I64, 0, "row_ptr", "row_ptr[rows] = nnz + 2^32");
    rp_wrap[3] = ok_rp[3];
    ci_wrap[1] += two32;
    bad_csr(h, rp_wrap, ci_wrap, TESSERA_INDEX_TYPE_I64, 0, "col_ind", "column = 2 + 2^32");
}

int main(void) {
    tessera_handle h = NULL;
    tessera_matrix A = NULL;
    tessera_matrix_info info, info_before;
    double alpha = 1.0, beta = 0.0, y[3];
    int major = -7, minor = -7, patch = -7, i;
    static const double y_sentinel[3] = {-111.0, -222.0, -333.0};

    test_create();

    CHECK_OK(tessera_create_with(&h, TESSERA_BACKEND_HOST, 0));
    if (h == NULL) return check_finish();

    /* tessera_set_stream */
    CHECK_STATUS(tessera_set_stream(NULL, NULL), TESSERA_STATUS_INVALID_HANDLE);
    CHECK_OK(tessera_set_stream(h, NULL));

    /* tessera_release_cached_memory: a NULL handle is refused; the host backend has no pool */
    CHECK_STATUS(tessera_release_cached_memory(NULL), TESSERA_STATUS_INVALID_HANDLE);
    CHECK_OK(tessera_release_cached_memory(h));

    test_create_csr(h);

    CHECK_OK(tessera_create_csr(h, &A, 3, 3, 4, rp, ci, va, TESSERA_INDEX_TYPE_I32,
                                TESSERA_INDEX_BASE_ZERO, TESSERA_VALUE_TYPE_F64));
    if (A == NULL) return check_finish();

    /* tessera_spmv before tessera_analyze: NOT_ANALYZED, y untouched */
    memcpy(y, y_sentinel, sizeof y);
    CHECK_STATUS(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &alpha, A, x3, &beta, y),
                 TESSERA_STATUS_NOT_ANALYZED);
    CHECK(memcmp(y, y_sentinel, sizeof y) == 0);
    CHECK_STATUS(tessera_spmv(h, TESSERA_OPERATION_TRANSPOSE, &alpha, A, x3, &beta, y),
                 TESSERA_STATUS_NOT_ANALYZED);
    CHECK(memcmp(y, y_sentinel, sizeof y) == 0);

    /* tessera_analyze */
    CHECK_STATUS(tessera_analyze(NULL, A, 0, 0), TESSERA_STATUS_INVALID_HANDLE);
    CHECK_STATUS(tessera_analyze(h, NULL, 0, 0), TESSERA_STATUS_INVALID_HANDLE);
    CHECK_STATUS(tessera_analyze(h, A, 6, 0), TESSERA_STATUS_INVALID_VALUE);
    CHECK_STATUS(tessera_analyze(h, A, -1, 0), TESSERA_STATUS_INVALID_VALUE);
    CHECK_STATUS(tessera_analyze(h, A, 0, 4), TESSERA_STATUS_INVALID_VALUE);
    CHECK_STATUS(tessera_analyze(h, A, 0, -1), TESSERA_STATUS_INVALID_VALUE);
    CHECK_STATUS(tessera_analyze(NULL, NULL, 99, 99), TESSERA_STATUS_INVALID_HANDLE);
    CHECK_STATUS(tessera_analyze(h, NULL, 99, 99), TESSERA_STATUS_INVALID_HANDLE);
    /* the failed analyze calls did not analyze the matrix */
    CHECK_STATUS(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &alpha, A, x3, &beta, y),
                 TESSERA_STATUS_NOT_ANALYZED);

    CHECK_OK(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE));
    check_still_works(h, A, 1.0, "analyze");

    /* a method that fails to analyze (not implemented yet, or any other reason) leaves the
       previous analysis in place */
    for (i = TESSERA_ALGORITHM_HOLA; i <= TESSERA_ALGORITHM_TILE; ++i) {
        tessera_status st = tessera_analyze(h, A, i, TESSERA_TUNING_NONE);
        char what[120];
        sprintf(what, "analyze(algorithm %d) that returned %s", i, check_name(st));
        if (st != TESSERA_STATUS_SUCCESS) CHECK_STATUS(st, TESSERA_STATUS_NOT_SUPPORTED);
        check_still_works(h, A, 1.0, what);
    }
    CHECK_OK(tessera_analyze(h, A, TESSERA_ALGORITHM_CSR_VECTOR, TESSERA_TUNING_NONE));

    /* tessera_spmv: each argument in turn; y untouched on failure */
#define SPMV_FAILS(call, want)                                  \
    do {                                                        \
        memcpy(y, y_sentinel, sizeof y);                        \
        CHECK_STATUS(call, want);                               \
        CHECK(memcmp(y, y_sentinel, sizeof y) == 0);            \
    } while (0)
    SPMV_FAILS(tessera_spmv(NULL, 0, &alpha, A, x3, &beta, y), TESSERA_STATUS_INVALID_HANDLE);
    SPMV_FAILS(tessera_spmv(h, 2, &alpha, A, x3, &beta, y), TESSERA_STATUS_INVALID_VALUE);
    SPMV_FAILS(tessera_spmv(h, -1, &alpha, A, x3, &beta, y), TESSERA_STATUS_INVALID_VALUE);
    SPMV_FAILS(tessera_spmv(h, 0, NULL, A, x3, &beta, y), TESSERA_STATUS_INVALID_POINTER);
    SPMV_FAILS(tessera_spmv(h, 0, &alpha, NULL, x3, &beta, y), TESSERA_STATUS_INVALID_HANDLE);
    SPMV_FAILS(tessera_spmv(h, 0, &alpha, A, NULL, &beta, y), TESSERA_STATUS_INVALID_POINTER);
    SPMV_FAILS(tessera_spmv(h, 0, &alpha, A, x3, NULL, y), TESSERA_STATUS_INVALID_POINTER);
    CHECK_STATUS(tessera_spmv(h, 0, &alpha, A, x3, &beta, NULL), TESSERA_STATUS_INVALID_POINTER);
    /* order: handle -> matrix -> enum -> pointers */
    SPMV_FAILS(tessera_spmv(NULL, 9, NULL, NULL, NULL, NULL, y), TESSERA_STATUS_INVALID_HANDLE);
    SPMV_FAILS(tessera_spmv(h, 9, NULL, NULL, NULL, NULL, y), TESSERA_STATUS_INVALID_HANDLE);
    SPMV_FAILS(tessera_spmv(h, 9, NULL, A, NULL, NULL, y), TESSERA_STATUS_INVALID_VALUE);
    check_still_works(h, A, 1.0, "failed spmv calls");

    /* tessera_update_values: each argument in turn; the values stay as they were */
    {
        static const double v2[] = {2, 4, 6, 8};
        CHECK_STATUS(tessera_update_values(NULL, A, v2), TESSERA_STATUS_INVALID_HANDLE);
        CHECK_STATUS(tessera_update_values(h, NULL, v2), TESSERA_STATUS_INVALID_HANDLE);
        CHECK_STATUS(tessera_update_values(h, A, NULL), TESSERA_STATUS_INVALID_POINTER);
        CHECK_STATUS(tessera_update_values(NULL, NULL, NULL), TESSERA_STATUS_INVALID_HANDLE);
        check_still_works(h, A, 1.0, "failed update_values calls");
        CHECK_OK(tessera_update_values(h, A, v2));
        check_still_works(h, A, 2.0, "update_values(2*values)");
        CHECK_OK(tessera_update_values(h, A, va));
    }

    /* tessera_matrix_get_info: info untouched on failure */
    memset(&info, 0xab, sizeof info);
    memcpy(&info_before, &info, sizeof info);
    CHECK_STATUS(tessera_matrix_get_info(NULL, &info), TESSERA_STATUS_INVALID_HANDLE);
    CHECK(memcmp(&info, &info_before, sizeof info) == 0);
    CHECK_STATUS(tessera_matrix_get_info(A, NULL), TESSERA_STATUS_INVALID_POINTER);
    CHECK_STATUS(tessera_matrix_get_info(NULL, NULL), TESSERA_STATUS_INVALID_HANDLE);
    CHECK_OK(tessera_matrix_get_info(A, &info));
    CHECK(info.rows == 3 && info.cols == 3 && info.nnz == 4);
    CHECK(info.algorithm == TESSERA_ALGORITHM_CSR_VECTOR);

    /* tessera_get_version: each pointer in turn; the others untouched */
    CHECK_STATUS(tessera_get_version(NULL, &minor, &patch), TESSERA_STATUS_INVALID_POINTER);
    CHECK(minor == -7 && patch == -7);
    CHECK_STATUS(tessera_get_version(&major, NULL, &patch), TESSERA_STATUS_INVALID_POINTER);
    CHECK(major == -7 && patch == -7);
    CHECK_STATUS(tessera_get_version(&major, &minor, NULL), TESSERA_STATUS_INVALID_POINTER);
    CHECK(major == -7 && minor == -7);
    CHECK_OK(tessera_get_version(&major, &minor, &patch));
    CHECK(major == TESSERA_VERSION_MAJOR && minor == TESSERA_VERSION_MINOR &&
          patch == TESSERA_VERSION_PATCH);

    /* the string getters never return NULL, whatever the code */
    CHECK(tessera_status_name(-12345) != NULL && tessera_status_string(-12345) != NULL);
    CHECK(tessera_last_error() != NULL);

    /* after all of this, the handle and the matrix still work, and new matrices can be made */
    check_still_works(h, A, 1.0, "all bad-argument calls");
    {
        tessera_matrix B = NULL;
        CHECK_OK(tessera_create_csr(h, &B, 3, 3, 4, rp, ci, va, 0, 0, 1));
        CHECK_OK(tessera_analyze(h, B, 0, 0));
        check_still_works(h, B, 1.0, "all bad-argument calls, on a new matrix");
        CHECK_OK(tessera_destroy_matrix(B));
    }

    CHECK_OK(tessera_destroy_matrix(A));
    CHECK_OK(tessera_destroy(h));
    return check_finish();
}
