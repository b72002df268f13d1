/* api_basic.c: correct products through the public C API, written only from the
 * header and the README's API section.
 *
 * Host backend (x and y are host pointers). Covers: tessera_create with TESSERA_BACKEND=host and
 * tessera_create_with, a 5x5 matrix with hand-computed products (empty row included), several
 * alpha/beta (beta == 0 with NaN in y), both operations, every combination of i32/i64, base 0/1 and
 * f32/f64, a rectangular matrix with unsorted columns and duplicate entries, update_values in the
 * caller's entry order, a larger generated matrix against a dense product, every algorithm/tuning
 * value, get_info, empty matrices (0x0, 3x0, 0x3), status names and strings, version.
 *
 * Build: cc -std=c99 -Wall -Wextra -Wpedantic -Werror -D_POSIX_C_SOURCE=200112L -I include \
 *            c-tests/api_basic.c -L target/debug -ltessera -lm
 * Prints "ok: N checks" and exits 0, or prints each failed check and exits 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"
#include "check.h"

/* ---- a matrix described once (base 0, i64, f64), converted to every accepted input type ---- */

typedef struct {
    int64_t rows, cols, nnz;
    const int64_t *row_ptr; /* rows + 1 entries, base 0 */
    const int64_t *col;     /* nnz entries, base 0, in the caller's order */
    const double *val;      /* nnz entries */
} spec;

static void *index_array(const int64_t *src, int64_t n, tessera_index_type it, int64_t base) {
    int64_t i;
    if (n == 0) return NULL; /* zero-length arrays are passed as NULL on purpose */
    if (it == TESSERA_INDEX_TYPE_I32) {
        int32_t *d = (int32_t *)malloc((size_t)n * sizeof *d);
        for (i = 0; i < n; ++i) d[i] = (int32_t)(src[i] + base);
        return d;
    } else {
        int64_t *d = (int64_t *)malloc((size_t)n * sizeof *d);
        for (i = 0; i < n; ++i) d[i] = src[i] + base;
        return d;
    }
}

static void *value_array(const double *src, int64_t n, tessera_value_type vt) {
    int64_t i;
    if (n == 0) return NULL;
    if (vt == TESSERA_VALUE_TYPE_F32) {
        float *d = (float *)malloc((size_t)n * sizeof *d);
        for (i = 0; i < n; ++i) d[i] = (float)src[i];
        return d;
    } else {
        double *d = (double *)malloc((size_t)n * sizeof *d);
        for (i = 0; i < n; ++i) d[i] = src[i];
        return d;
    }
}

static tessera_status make_matrix(tessera_handle h, tessera_matrix *A, const spec *s,
                                  tessera_index_type it, tessera_index_base base,
                                  tessera_value_type vt) {
    void *rp = index_array(s->row_ptr, s->rows + 1, it, base);
    void *ci = index_array(s->col, s->nnz, it, base);
    void *va = value_array(s->val, s->nnz, vt);
    tessera_status st = tessera_create_csr(h, A, s->rows, s->cols, s->nnz, rp, ci, va, it, base, vt);
    size_t isz = it == TESSERA_INDEX_TYPE_I32 ? 4 : 8, vsz = vt == TESSERA_VALUE_TYPE_F32 ? 4 : 8;
    /* the library keeps its own copy: scribble over ours before freeing it */
    if (rp) memset(rp, 0x7f, (size_t)(s->rows + 1) * isz);
    if (ci) memset(ci, 0x7f, (size_t)s->nnz * isz);
    if (va) memset(va, 0x7f, (size_t)s->nnz * vsz);
    free(rp);
    free(ci);
    free(va);
    return st;
}

/* y = alpha*op(A)*x + beta*y through tessera with double vectors, converting for f32 matrices. */
static tessera_status spmv_d(tessera_handle h, tessera_operation op, tessera_matrix A,
                             tessera_value_type vt, double alpha, const double *x, int64_t xlen,
                             double beta, double *y, int64_t ylen) {
    tessera_status st;
    int64_t i;
    if (vt == TESSERA_VALUE_TYPE_F64) {
        return tessera_spmv(h, op, &alpha, A, xlen ? (const void *)x : NULL, &beta,
                            ylen ? (void *)y : NULL);
    } else {
        float a = (float)alpha, b = (float)beta;
        float *xf = (float *)malloc((size_t)(xlen + 1) * sizeof *xf);
        float *yf = (float *)malloc((size_t)(ylen + 1) * sizeof *yf);
        for (i = 0; i < xlen; ++i) xf[i] = (float)x[i];
        for (i = 0; i < ylen; ++i) yf[i] = (float)y[i];
        st = tessera_spmv(h, op, &a, A, xlen ? (const void *)xf : NULL, &b, ylen ? (void *)yf : NULL);
        for (i = 0; i < ylen; ++i) y[i] = (double)yf[i];
        free(xf);
        free(yf);
        return st;
    }
}

/* Dense reference: want = alpha*op(A)*x + beta*y0 (beta == 0: y0 ignored). */
static void reference(const spec *s, tessera_operation op, double alpha, const double *x,
                      double beta, const double *y0, double *want) {
    int64_t r, k;
    int64_t ylen = op == TESSERA_OPERATION_NON_TRANSPOSE ? s->rows : s->cols;
    double *acc = (double *)calloc((size_t)ylen + 1, sizeof *acc);
    for (r = 0; r < s->rows; ++r) {
        for (k = s->row_ptr[r]; k < s->row_ptr[r + 1]; ++k) {
            if (op == TESSERA_OPERATION_NON_TRANSPOSE)
                acc[r] += s->val[k] * x[s->col[k]];
            else
                acc[s->col[k]] += s->val[k] * x[r];
        }
    }
    for (r = 0; r < ylen; ++r) want[r] = alpha * acc[r] + (beta == 0.0 ? 0.0 : beta * y0[r]);
    free(acc);
}

static double tol_for(tessera_value_type vt) { return vt == TESSERA_VALUE_TYPE_F32 ? 2e-5 : 1e-12; }

static const char *combo_name(tessera_index_type it, tessera_index_base base, tessera_value_type vt) {
    static char buf[64];
    sprintf(buf, "%s base %d %s", it == TESSERA_INDEX_TYPE_I32 ? "i32" : "i64", (int)base,
            vt == TESSERA_VALUE_TYPE_F32 ? "f32" : "f64");
    return buf;
}

/* Checks y against want; `what` says which case failed. */
static void check_vector(const char *what, const double *y, const double *want, int64_t n, double tol) {
    int64_t i;
    for (i = 0; i < n; ++i) {
        char label[160];
        sprintf(label, "%s: y[%d]", what, (int)i);
        check_close_at(y[i], want[i], tol, __FILE__, __LINE__, label);
    }
}

/* ---- the 5x5 matrix with hand-computed products ----
 *   [1 0 2 0 0]        x = [1 2 3 4 5]
 *   [0 3 0 0 4]        A x   = [7 26 0 51 61]
 *   [0 0 0 0 0]        A^T x = [21 46 26 28 53]
 *   [5 0 6 7 0]
 *   [0 8 0 0 9]                                           */
static const int64_t m5_rp[] = {0, 2, 4, 4, 7, 9};
static const int64_t m5_col[] = {0, 2, 1, 4, 0, 2, 3, 1, 4};
static const double m5_val[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const double m5_x[] = {1, 2, 3, 4, 5};
static const double m5_ax[] = {7, 26, 0, 51, 61};
static const double m5_atx[] = {21, 46, 26, 28, 53};
static const double m5_y0[] = {1, -2, 3, -4, 5};

static void test_5x5(tessera_handle h, tessera_index_type it, tessera_index_base base,
                     tessera_value_type vt) {
    static const double alphas[] = {1.0, 2.0, 1.0, 2.0, 0.0, -1.5};
    static const double betas[] = {0.0, 0.0, 1.0, -0.5, 3.0, 2.0};
    spec s = {5, 5, 9, m5_rp, m5_col, m5_val};
    tessera_matrix A = NULL;
    tessera_matrix_info info;
    const char *combo = combo_name(it, base, vt);
    char what[200];
    double y[5], want[5];
    int c, op, i;

    CHECK_OK(make_matrix(h, &A, &s, it, base, vt));
    CHECK(A != NULL);
    if (A == NULL) return;

    memset(&info, 0, sizeof info);
    CHECK_OK(tessera_matrix_get_info(A, &info));
    CHECK(info.algorithm == TESSERA_ALGORITHM_AUTO); /* before analyze */
    CHECK(info.rows == 5 && info.cols == 5 && info.nnz == 9);

    CHECK_OK(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE));
    /* Nothing is built in the background for a CSR_VECTOR matrix: a no-op. */
    CHECK_OK(tessera_finish_background(h, A));

    memset(&info, 0x55, sizeof info);
    CHECK_OK(tessera_matrix_get_info(A, &info));
    CHECK(info.algorithm == TESSERA_ALGORITHM_CSR_VECTOR);
    CHECK(info.rows == 5 && info.cols == 5 && info.nnz == 9);
    CHECK(info.device_bytes > 0);
    CHECK(info.analysis_ms >= 0.0 && info.analysis_ms < 60000.0);
    CHECK(info.deterministic == 1);
    CHECK(memchr(info.params, 0, sizeof info.params) != NULL); /* NUL-terminated */
    CHECK(info.params[0] != 0);                               /* non-empty */

    /* hand values first, with the plainest alpha/beta */
    for (i = 0; i < 5; ++i) y[i] = NAN; /* NaN: beta == 0 must not read y */
    CHECK_OK(spmv_d(h, TESSERA_OPERATION_NON_TRANSPOSE, A, vt, 1.0, m5_x, 5, 0.0, y, 5));
    sprintf(what, "A x by hand (%s, NaN in y, beta 0)", combo);
    check_vector(what, y, m5_ax, 5, tol_for(vt));
    for (i = 0; i < 5; ++i) y[i] = NAN;
    CHECK_OK(spmv_d(h, TESSERA_OPERATION_TRANSPOSE, A, vt, 1.0, m5_x, 5, 0.0, y, 5));
    sprintf(what, "A^T x by hand (%s, NaN in y, beta 0)", combo);
    check_vector(what, y, m5_atx, 5, tol_for(vt));

    /* then every alpha/beta pair against alpha*hand + beta*y0 */
    for (op = 0; op < 2; ++op) {
        const double *hand = op == 0 ? m5_ax : m5_atx;
        for (c = 0; c < (int)(sizeof alphas / sizeof alphas[0]); ++c) {
            for (i = 0; i < 5; ++i) {
                y[i] = betas[c] == 0.0 ? NAN : m5_y0[i];
                want[i] = alphas[c] * hand[i] + betas[c] * m5_y0[i];
            }
            CHECK_OK(spmv_d(h, op, A, vt, alphas[c], m5_x, 5, betas[c], y, 5));
            sprintf(what, "%s, op %d, alpha %g, beta %g", combo, op, alphas[c], betas[c]);
            check_vector(what, y, want, 5, tol_for(vt));
        }
    }

    /* alpha == 0 never reads A or x: NaN in x does not leak into y = beta*y */
    for (op = 0; op < 2; ++op) {
        double xnan[5];
        for (i = 0; i < 5; ++i) {
            xnan[i] = NAN;
            y[i] = m5_y0[i];
            want[i] = 3.0 * m5_y0[i];
        }
        CHECK_OK(spmv_d(h, op, A, vt, 0.0, xnan, 5, 3.0, y, 5));
        sprintf(what, "%s, op %d, alpha 0 with NaN in x", combo, op);
        check_vector(what, y, want, 5, tol_for(vt));
    }

    /* update_values: same pattern, every value doubled -> products double, no re-analysis */
    {
        double v2[9];
        void *vb;
        for (i = 0; i < 9; ++i) v2[i] = 2.0 * m5_val[i];
        vb = value_array(v2, 9, vt);
        CHECK_OK(tessera_update_values(h, A, vb));
        free(vb);
        for (op = 0; op < 2; ++op) {
            const double *hand = op == 0 ? m5_ax : m5_atx;
            for (i = 0; i < 5; ++i) {
                y[i] = NAN;
                want[i] = 2.0 * hand[i];
            }
            CHECK_OK(spmv_d(h, op, A, vt, 1.0, m5_x, 5, 0.0, y, 5));
            sprintf(what, "%s, op %d after update_values(2*values)", combo, op);
            check_vector(what, y, want, 5, tol_for(vt));
        }
    }

    CHECK_OK(tessera_destroy_matrix(A));
}

/* ---- 2x3, unsorted columns and a duplicate, in the caller's order ----
 *   entries (0,2)=2 (0,0)=1 (0,2)=0.5 (1,1)=3  ->  [1 0 2.5; 0 3 0]
 *   x = [1 2 3]: A x = [8.5 6];  x = [1 2]: A^T x = [1 6 2.5]
 *   new values [10 20 30 40] in the same order -> [20 0 40; 0 40 0]:
 *   A x = [140 80]; A^T x = [20 80 40]                                  */
static void test_unsorted_duplicates(tessera_handle h, tessera_index_type it,
                                     tessera_index_base base, tessera_value_type vt) {
    static const int64_t rp[] = {0, 3, 4};
    static const int64_t col[] = {2, 0, 2, 1};
    static const double val[] = {2, 1, 0.5, 3};
    static const double nval[] = {10, 20, 30, 40};
    static const double x3[] = {1, 2, 3}, x2[] = {1, 2};
    static const double ax[] = {8.5, 6}, atx[] = {1, 6, 2.5};
    static const double ax_new[] = {140, 80}, atx_new[] = {20, 80, 40};
    spec s = {2, 3, 4, rp, col, val};
    tessera_matrix A = NULL;
    const char *combo = combo_name(it, base, vt);
    char what[200];
    double y[3];
    void *vb;

    CHECK_OK(make_matrix(h, &A, &s, it, base, vt));
    if (A == NULL) return;
    CHECK_OK(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE));

    y[0] = y[1] = NAN;
    CHECK_OK(spmv_d(h, TESSERA_OPERATION_NON_TRANSPOSE, A, vt, 1.0, x3, 3, 0.0, y, 2));
    sprintf(what, "2x3 unsorted+duplicate A x (%s)", combo);
    check_vector(what, y, ax, 2, tol_for(vt));
    y[0] = y[1] = y[2] = NAN;
    CHECK_OK(spmv_d(h, TESSERA_OPERATION_TRANSPOSE, A, vt, 1.0, x2, 2, 0.0, y, 3));
    sprintf(what, "2x3 unsorted+duplicate A^T x (%s)", combo);
    check_vector(what, y, atx, 3, tol_for(vt));

    vb = value_array(nval, 4, vt);
    CHECK_OK(tessera_update_values(h, A, vb));
    free(vb);
    y[0] = y[1] = NAN;
    CHECK_OK(spmv_d(h, TESSERA_OPERATION_NON_TRANSPOSE, A, vt, 1.0, x3, 3, 0.0, y, 2));
    sprintf(what, "2x3 after update_values in caller order, A x (%s)", combo);
    check_vector(what, y, ax_new, 2, tol_for(vt));
    y[0] = y[1] = y[2] = NAN;
    CHECK_OK(spmv_d(h, TESSERA_OPERATION_TRANSPOSE, A, vt, 1.0, x2, 2, 0.0, y, 3));
    sprintf(what, "2x3 after update_values in caller order, A^T x (%s)", combo);
    check_vector(what, y, atx_new, 3, tol_for(vt));

    CHECK_OK(tessera_destroy_matrix(A));
}

/* ---- a larger generated matrix (long row, empty rows, rectangular) against a dense product ---- */
static uint32_t lcg_state = 12345u;
static uint32_t lcg(void) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}

static void test_generated(tessera_handle h, tessera_value_type vt, tessera_algorithm alg,
                           tessera_tuning tune, int expect_supported) {
    enum { R = 300, C = 170 };
    int64_t *rp = (int64_t *)malloc((R + 1) * sizeof *rp);
    int64_t *col = (int64_t *)malloc(R * C * sizeof *col);
    double *val = (double *)malloc(R * C * sizeof *val);
    double *x = (double *)malloc(R * sizeof *x), *y0 = (double *)malloc(R * sizeof *y0);
    double *y = (double *)malloc(R * sizeof *y), *want = (double *)malloc(R * sizeof *want);
    int64_t r, c, nnz = 0;
    int op, rep;
    tessera_matrix A = NULL;
    tessera_status st;
    spec s;
    char what[200];

    lcg_state = 12345u;
    rp[0] = 0;
    for (r = 0; r < R; ++r) {
        int64_t len = r == 7 ? C : (r % 11 == 3 ? 0 : (int64_t)(lcg() % 40));
        for (c = 0; c < len; ++c) {
            col[nnz] = r == 7 ? c : (int64_t)(lcg() % C); /* unsorted, duplicates possible */
            val[nnz] = (double)((int)(lcg() % 2001) - 1000) / 256.0;
            ++nnz;
        }
        rp[r + 1] = nnz;
    }
    for (r = 0; r < R; ++r) {
        x[r] = (double)((int)(lcg() % 201) - 100) / 64.0;
        y0[r] = (double)((int)(lcg() % 201) - 100) / 32.0;
    }
    s.rows = R;
    s.cols = C;
    s.nnz = nnz;
    s.row_ptr = rp;
    s.col = col;
    s.val = val;

    CHECK_OK(make_matrix(h, &A, &s, TESSERA_INDEX_TYPE_I32, TESSERA_INDEX_BASE_ZERO, vt));
    if (A == NULL) goto out;
    st = tessera_analyze(h, A, alg, tune);
    if (!expect_supported && st == TESSERA_STATUS_NOT_SUPPORTED) {
        /* a method that is not implemented yet says so, with a sentence */
        CHECK_STATUS(st, TESSERA_STATUS_NOT_SUPPORTED);
        CHECK_OK(tessera_destroy_matrix(A));
        goto out;
    }
    sprintf(what, "tessera_analyze(algorithm %d, tuning %d)", (int)alg, (int)tune);
    check_status_at(st, TESSERA_STATUS_SUCCESS, __FILE__, __LINE__, what);
    for (rep = 0; rep < 4; ++rep) { /* ONLINE tuning varies over the first calls */
        for (op = 0; op < 2; ++op) {
            int64_t ylen = op == 0 ? R : C, xlen = op == 0 ? C : R, i;
            double alpha = 1.25, beta = rep % 2 ? 0.0 : -0.75;
            for (i = 0; i < ylen; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
            reference(&s, op, alpha, x, beta, y0, want);
            CHECK_OK(spmv_d(h, op, A, vt, alpha, x, xlen, beta, y, ylen));
            sprintf(what, "generated %dx%d %s alg %d tune %d rep %d op %d", R, C,
                    vt == TESSERA_VALUE_TYPE_F32 ? "f32" : "f64", (int)alg, (int)tune, rep, op);
            /* entries are dyadic rationals: f64 is exact; f32 rounds per product */
            check_vector(what, y, want, ylen, vt == TESSERA_VALUE_TYPE_F32 ? 1e-4 : 1e-12);
        }
    }
    CHECK_OK(tessera_destroy_matrix(A));
out:
    free(rp);
    free(col);
    free(val);
    free(x);
    free(y0);
    free(y);
    free(want);
}

/* ---- empty matrices: 0x0, 3x0, 0x3 (zero-length arrays passed as NULL) ---- */
static void test_empty(tessera_handle h, tessera_index_type it, tessera_index_base base,
                       tessera_value_type vt) {
    static const int64_t rp0[] = {0, 0, 0, 0};
    const char *combo = combo_name(it, base, vt);
    char what[200];
    int shape;
    for (shape = 0; shape < 3; ++shape) {
        int64_t rows = shape == 1 ? 3 : 0, cols = shape == 2 ? 3 : 0;
        spec s;
        tessera_matrix A = NULL;
        tessera_matrix_info info;
        int op;
        s.rows = rows;
        s.cols = cols;
        s.nnz = 0;
        s.row_ptr = rp0;
        s.col = NULL;
        s.val = NULL;
        CHECK_OK(make_matrix(h, &A, &s, it, base, vt));
        if (A == NULL) continue;
        CHECK_OK(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE));
        memset(&info, 0x55, sizeof info);
        CHECK_OK(tessera_matrix_get_info(A, &info));
        CHECK(info.rows == rows && info.cols == cols && info.nnz == 0);
        CHECK(memchr(info.params, 0, sizeof info.params) != NULL);
        for (op = 0; op < 2; ++op) {
            int64_t ylen = op == 0 ? rows : cols, xlen = op == 0 ? cols : rows, i;
            double x[3] = {1, 2, 3}, y[3], want[3];
            /* y = alpha*0 + beta*y: beta = 2 doubles y; beta = 0 gives zeros even over NaN */
            for (i = 0; i < 3; ++i) {
                y[i] = (double)(i + 1);
                want[i] = 2.0 * (double)(i + 1);
            }
            CHECK_OK(spmv_d(h, op, A, vt, 1.0, x, xlen, 2.0, y, ylen));
            sprintf(what, "%dx%d empty, %s, op %d, beta 2", (int)rows, (int)cols, combo, op);
            check_vector(what, y, want, ylen, tol_for(vt));
            for (i = 0; i < 3; ++i) {
                y[i] = NAN;
                want[i] = 0.0;
            }
            CHECK_OK(spmv_d(h, op, A, vt, 1.0, x, xlen, 0.0, y, ylen));
            sprintf(what, "%dx%d empty, %s, op %d, beta 0 over NaN", (int)rows, (int)cols, combo, op);
            check_vector(what, y, want, ylen, tol_for(vt));
        }
        /* update_values with no values: NULL is fine */
        CHECK_OK(tessera_update_values(h, A, NULL));
        CHECK_OK(tessera_destroy_matrix(A));
    }
}

/* ---- status names and strings ---- */
static void test_status_text(void) {
    static const struct {
        tessera_status s;
        const char *name;
    } known[] = {
        {TESSERA_STATUS_SUCCESS, "TESSERA_STATUS_SUCCESS"},
        {TESSERA_STATUS_NOT_INITIALIZED, "TESSERA_STATUS_NOT_INITIALIZED"},
        {TESSERA_STATUS_ALLOC_FAILED, "TESSERA_STATUS_ALLOC_FAILED"},
        {TESSERA_STATUS_INVALID_VALUE, "TESSERA_STATUS_INVALID_VALUE"},
        {TESSERA_STATUS_ARCH_MISMATCH, "TESSERA_STATUS_ARCH_MISMATCH"},
        {TESSERA_STATUS_EXECUTION_FAILED, "TESSERA_STATUS_EXECUTION_FAILED"},
        {TESSERA_STATUS_INTERNAL_ERROR, "TESSERA_STATUS_INTERNAL_ERROR"},
        {TESSERA_STATUS_NOT_SUPPORTED, "TESSERA_STATUS_NOT_SUPPORTED"},
        {TESSERA_STATUS_INVALID_HANDLE, "TESSERA_STATUS_INVALID_HANDLE"},
        {TESSERA_STATUS_INVALID_POINTER, "TESSERA_STATUS_INVALID_POINTER"},
        {TESSERA_STATUS_INVALID_SIZE, "TESSERA_STATUS_INVALID_SIZE"},
        {TESSERA_STATUS_INVALID_MATRIX, "TESSERA_STATUS_INVALID_MATRIX"},
        {TESSERA_STATUS_NOT_ANALYZED, "TESSERA_STATUS_NOT_ANALYZED"},
        {TESSERA_STATUS_NO_DEVICE, "TESSERA_STATUS_NO_DEVICE"},
        {TESSERA_STATUS_COMPILE_FAILED, "TESSERA_STATUS_COMPILE_FAILED"},
    };
    static const tessera_status unknown[] = {5, 8, 9, 11, 99, 107, 1000, -1, 2147483647, -2147483647 - 1};
    size_t i, j;
    const char *strings[sizeof known / sizeof known[0]];

    /* the numbers are part of the API */
    CHECK(TESSERA_STATUS_SUCCESS == 0 && TESSERA_STATUS_NOT_INITIALIZED == 1);
    CHECK(TESSERA_STATUS_ALLOC_FAILED == 2 && TESSERA_STATUS_INVALID_VALUE == 3);
    CHECK(TESSERA_STATUS_ARCH_MISMATCH == 4 && TESSERA_STATUS_EXECUTION_FAILED == 6);
    CHECK(TESSERA_STATUS_INTERNAL_ERROR == 7 && TESSERA_STATUS_NOT_SUPPORTED == 10);
    CHECK(TESSERA_STATUS_INVALID_HANDLE == 100 && TESSERA_STATUS_INVALID_POINTER == 101);
    CHECK(TESSERA_STATUS_INVALID_SIZE == 102 && TESSERA_STATUS_INVALID_MATRIX == 103);
    CHECK(TESSERA_STATUS_NOT_ANALYZED == 104 && TESSERA_STATUS_NO_DEVICE == 105);
    CHECK(TESSERA_STATUS_COMPILE_FAILED == 106);
    CHECK(TESSERA_BACKEND_CUDA == 0 && TESSERA_BACKEND_HOST == 1);
    CHECK(TESSERA_VALUE_TYPE_F32 == 0 && TESSERA_VALUE_TYPE_F64 == 1);
    CHECK(TESSERA_INDEX_TYPE_I32 == 0 && TESSERA_INDEX_TYPE_I64 == 1);
    CHECK(TESSERA_INDEX_BASE_ZERO == 0 && TESSERA_INDEX_BASE_ONE == 1);
    CHECK(TESSERA_OPERATION_NON_TRANSPOSE == 0 && TESSERA_OPERATION_TRANSPOSE == 1);
    CHECK(TESSERA_ALGORITHM_AUTO == 0 && TESSERA_ALGORITHM_CSR_VECTOR == 1 &&
          TESSERA_ALGORITHM_HOLA == 2 && TESSERA_ALGORITHM_BCCOO == 3 && TESSERA_ALGORITHM_BRC == 4 &&
          TESSERA_ALGORITHM_TILE == 5);
    CHECK(TESSERA_TUNING_NONE == 0 && TESSERA_TUNING_QUICK == 1 && TESSERA_TUNING_EXHAUSTIVE == 2 &&
          TESSERA_TUNING_ONLINE == 3);

    for (i = 0; i < sizeof known / sizeof known[0]; ++i) {
        const char *n = tessera_status_name(known[i].s);
        const char *s = tessera_status_string(known[i].s);
        char what[200];
        sprintf(what, "tessera_status_name(%d) == \"%s\" (got \"%s\")", (int)known[i].s, known[i].name,
                n ? n : "(NULL)");
        check_report(n != NULL && strcmp(n, known[i].name) == 0, __FILE__, __LINE__, what);
        sprintf(what, "tessera_status_string(%d) is a non-empty sentence", (int)known[i].s);
        check_report(s != NULL && strlen(s) > 8 && strchr(s, ' ') != NULL, __FILE__, __LINE__, what);
        strings[i] = s;
    }
    /* each status has its own sentence */
    for (i = 0; i < sizeof known / sizeof known[0]; ++i)
        for (j = i + 1; j < sizeof known / sizeof known[0]; ++j)
            if (strings[i] && strings[j]) CHECK(strcmp(strings[i], strings[j]) != 0);
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
        const char *n = tessera_status_name(unknown[i]);
        const char *s = tessera_status_string(unknown[i]);
        char what[200];
        sprintf(what, "tessera_status_name/string(%d) non-NULL and non-empty for an unknown code",
                (int)unknown[i]);
        check_report(n != NULL && s != NULL && n[0] != 0 && s[0] != 0, __FILE__, __LINE__, what);
    }
}

int main(void) {
    tessera_handle h = NULL, h2 = NULL;
    int major = -1, minor = -1, patch = -1;
    int it, base, vt, alg, tune;

    /* tessera_create honours TESSERA_BACKEND=host (the harness sets it too) */
    setenv("TESSERA_BACKEND", "host", 1);
    CHECK_OK(tessera_create(&h));
    CHECK(h != NULL);
    CHECK_OK(tessera_create_with(&h2, TESSERA_BACKEND_HOST, 0));
    CHECK(h2 != NULL && h2 != h);
    if (h == NULL || h2 == NULL) return check_finish();
    CHECK_OK(tessera_set_stream(h, NULL)); /* NULL = default stream */
    {
        /* the host backend records any stream and still computes synchronously */
        static char not_a_stream;
        CHECK_OK(tessera_set_stream(h2, &not_a_stream));
    }

    CHECK_OK(tessera_get_version(&major, &minor, &patch));
    CHECK(major == TESSERA_VERSION_MAJOR && minor == TESSERA_VERSION_MINOR &&
          patch == TESSERA_VERSION_PATCH);

    for (it = 0; it < 2; ++it)
        for (base = 0; base < 2; ++base)
            for (vt = 0; vt < 2; ++vt) {
                test_5x5(it + base + vt == 1 ? h2 : h, it, base, vt);
                test_unsorted_duplicates(h, it, base, vt);
                test_empty(h2, it, base, vt);
            }

    /* every algorithm and tuning value is accepted; AUTO and CSR_VECTOR work, the methods that
       are not implemented yet answer NOT_SUPPORTED */
    for (alg = TESSERA_ALGORITHM_AUTO; alg <= TESSERA_ALGORITHM_TILE; ++alg)
        for (tune = TESSERA_TUNING_NONE; tune <= TESSERA_TUNING_ONLINE; ++tune)
            test_generated(h, tune % 2 ? TESSERA_VALUE_TYPE_F32 : TESSERA_VALUE_TYPE_F64, alg, tune,
                           alg == TESSERA_ALGORITHM_AUTO || alg == TESSERA_ALGORITHM_CSR_VECTOR);

    test_status_text();

    CHECK_OK(tessera_destroy(h2));
    CHECK_OK(tessera_destroy(h));
    return check_finish();
}
