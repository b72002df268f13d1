/* gpu_api.c: tessera's CUDA backend through the public C API, with device memory.
 *
 * The program links only libtessera (and libdl): it dlopen()s the CUDA driver, libcuda.so.1, and
 * resolves the few driver-API functions it needs with its own minimal typedefs, so it builds on a
 * machine without the CUDA toolkit and runs on any machine with an NVIDIA driver.
 *
 * tessera_create (the program sets TESSERA_BACKEND=cuda first) answering NO_DEVICE prints one line,
 * "skipped: no CUDA device (<tessera_last_error()>)", and exits 0. Otherwise every case prints
 * "ok <case>" or "FAIL <case>: <details>", and the program exits 1 if any case failed.
 *
 * Cases, each against a host reference computed in double (f64: 1e-12, f32: 1e-5, relative to
 * |alpha|*sum|a||x| + |beta*y0| per entry; NaN never passes), on a 1000x800 matrix with empty
 * rows and one full (800-entry) row:
 *   1 csr-device-arrays-i32-f64   CSR arrays in device memory (i32, base 0, f64), x and y device,
 *                                 beta = 0 over NaN in y; the device CSR arrays are overwritten
 *                                 after tessera_create_csr (tessera keeps its own copy)
 *   2 host-arrays-i64-base1-f32   int64 1-based host arrays, f32 values
 *   3 transpose-beta-0.5          TESSERA_OPERATION_TRANSPOSE with beta = 0.5 (f64 and f32)
 *   4 custom-stream               a non-blocking cuStreamCreate stream set with tessera_set_stream
 *   5 update-values               tessera_update_values from device values (doubled), then from
 *                                 host values (tripled, then the originals again)
 *   6 managed-memory              x and y in cuMemAllocManaged memory
 *   7 host-pointer-rejected       a plain host x is TESSERA_STATUS_INVALID_POINTER with a message;
 *                                 the handle works after it
 *   8 matrix-info                 AUTO resolved; HOLA keeps more than the CSR and says it is not
 *                                 deterministic; CSR_VECTOR: device_bytes of the sorted 0-based
 *                                 CSR, non-empty params
 *
 * Build (strict C99, from the repository root):
 *   gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude c-tests/gpu_api.c \
 *       -Ltarget/release -ltessera -ldl -lm -Wl,-rpath,'$ORIGIN/../lib' -o gpu_api */
#define _POSIX_C_SOURCE 200112L

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

/* ---- the CUDA driver API, the few functions used, loaded at run time ---- */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;

#define CUDA_SUCCESS 0
#define CU_MEM_ATTACH_GLOBAL 1u
#define CU_STREAM_NON_BLOCKING 1u

static struct {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev); /* optional */
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*MemAllocManaged)(CUdeviceptr *p, size_t bytes, unsigned int flags);
    CUresult (*MemFree)(CUdeviceptr p);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*StreamCreate)(CUstream *s, unsigned int flags);
    CUresult (*StreamSynchronize)(CUstream s);
    CUresult (*StreamDestroy)(CUstream s);
    CUresult (*GetErrorName)(CUresult r, const char **name);
} cu;

/* dlsym into a function pointer without the object-to-function pointer cast ISO C forbids
   (POSIX guarantees both have the same representation). */
static int load_symbol(void *lib, const char *name, void *fn_ptr, size_t fn_size) {
    void *sym = dlsym(lib, name);
    if (sym == NULL || fn_size != sizeof sym) return 0;
    memcpy(fn_ptr, &sym, fn_size);
    return 1;
}

static const char *cu_error_name(CUresult r) {
    static char buf[48];
    const char *name = NULL;
    if (cu.GetErrorName != NULL && cu.GetErrorName(r, &name) == CUDA_SUCCESS && name != NULL)
        return name;
    sprintf(buf, "CUresult %d", r);
    return buf;
}

/* ---- reporting: one line per case ---- */

static char detail[2048]; /* the first failure of the running case */
static int failed_cases = 0;

static void fail(const char *fmt, ...) {
    va_list ap;
    if (detail[0] != 0) return; /* keep the first */
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
}

static void report(const char *name) {
    if (detail[0] == 0) {
        printf("ok %s\n", name);
    } else {
        printf("FAIL %s: %s\n", name, detail);
        ++failed_cases;
    }
    fflush(stdout);
    detail[0] = 0;
}

static const char *last_error(void) {
    const char *e = tessera_last_error();
    return e != NULL ? e : "(NULL)";
}

static const char *status_name(tessera_status s) {
    const char *n = tessera_status_name(s);
    return n != NULL ? n : "(NULL)";
}

/* A driver call that must succeed; on failure record it and leave through `out`. */
#define CU(call)                                                                                 \
    do {                                                                                         \
        CUresult r_ = (call);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                                \
            fail("line %d: %s returned %s", __LINE__, #call, cu_error_name(r_));                  \
            goto out;                                                                            \
        }                                                                                        \
    } while (0)

/* A tessera call that must succeed. */
#define TS(call)                                                                                 \
    do {                                                                                         \
        tessera_status s_ = (call);                                                              \
        if (s_ != TESSERA_STATUS_SUCCESS) {                                                      \
            fail("line %d: %s returned %s: %s", __LINE__, #call, status_name(s_), last_error()); \
            goto out;                                                                            \
        }                                                                                        \
    } while (0)

#define DPTR(d) ((void *)(uintptr_t)(d))

/* ---- the test matrix: 1000 x 800, sorted columns, empty rows, one full row ---- */

enum { R = 1000, C = 800, LONG_ROW = 500, MAXN = 1000 };

static int64_t nnz;
static int32_t rp32[R + 1], *ci32;   /* base 0 */
static int64_t rp64b1[R + 1], *ci64b1; /* base 1 */
static double *val;                  /* f64 values */
static float *valf;                  /* the same values as f32 (exact: small dyadic rationals) */
static double xv[MAXN], y0v[MAXN];   /* x and y0, long enough for either operation */

static void build_matrix(void) {
    int64_t r, k, pos = 0;
    ci32 = (int32_t *)malloc((size_t)(R * 10 + C) * sizeof *ci32);
    for (r = 0; r < R; ++r) {
        rp32[r] = (int32_t)pos;
        if (r == LONG_ROW) {
            for (k = 0; k < C; ++k) ci32[pos++] = (int32_t)k;
        } else if (r % 97 != 13 && r != R - 1) { /* the others are empty */
            int64_t len = 1 + (r * 7) % 9, start = pos, i, j;
            for (k = 0; k < len; ++k) ci32[pos++] = (int32_t)((r * 37 + k * 89) % C); /* distinct */
            for (i = start + 1; i < pos; ++i) /* insertion sort: sorted columns */
                for (j = i; j > start && ci32[j - 1] > ci32[j]; --j) {
                    int32_t t = ci32[j];
                    ci32[j] = ci32[j - 1];
                    ci32[j - 1] = t;
                }
        }
    }
    rp32[R] = (int32_t)pos;
    nnz = pos;
    ci64b1 = (int64_t *)malloc((size_t)nnz * sizeof *ci64b1);
    val = (double *)malloc((size_t)nnz * sizeof *val);
    valf = (float *)malloc((size_t)nnz * sizeof *valf);
    for (r = 0; r <= R; ++r) rp64b1[r] = (int64_t)rp32[r] + 1;
    for (r = 0; r < R; ++r)
        for (k = rp32[r]; k < rp32[r + 1]; ++k) {
            ci64b1[k] = (int64_t)ci32[k] + 1;
            val[k] = (double)((r * 13 + ci32[k] * 7) % 31 - 15) / 8.0;
            valf[k] = (float)val[k];
        }
    for (k = 0; k < MAXN; ++k) {
        xv[k] = (double)((k * 5) % 17 - 8) / 4.0;
        y0v[k] = (double)((k * 3) % 11 - 5) / 2.0;
    }
}

/* want = alpha*op(scale*A)*x + beta*y0 (beta == 0: y0 ignored), and the error scale of each entry:
   |alpha|*sum|scale*a||x| + |beta*y0|. Returns the length of y. */
static int64_t reference(tessera_operation op, double scale, double alpha, double beta,
                         double *want, double *bound) {
    int64_t r, k, ylen = op == TESSERA_OPERATION_NON_TRANSPOSE ? R : C;
    double acc[MAXN], mag[MAXN];
    for (r = 0; r < ylen; ++r) acc[r] = mag[r] = 0.0;
    for (r = 0; r < R; ++r)
        for (k = rp32[r]; k < rp32[r + 1]; ++k) {
            double a = scale * val[k];
            if (op == TESSERA_OPERATION_NON_TRANSPOSE) {
                acc[r] += a * xv[ci32[k]];
                mag[r] += fabs(a * xv[ci32[k]]);
            } else {
                acc[ci32[k]] += a * xv[r];
                mag[ci32[k]] += fabs(a * xv[r]);
            }
        }
    for (r = 0; r < ylen; ++r) {
        want[r] = alpha * acc[r] + (beta == 0.0 ? 0.0 : beta * y0v[r]);
        bound[r] = fabs(alpha) * mag[r] + (beta == 0.0 ? 0.0 : fabs(beta * y0v[r]));
    }
    return ylen;
}

/* Compares y with the reference; records the first bad entry (NaN never passes). */
static int check_product(const char *what, const double *y, tessera_operation op, double scale,
                         double alpha, double beta, int f32) {
    double want[MAXN], bound[MAXN], tol = f32 ? 1e-5 : 1e-12;
    int64_t i, n = reference(op, scale, alpha, beta, want, bound), bad = 0, first = -1;
    for (i = 0; i < n; ++i) {
        int ok = !(y[i] != y[i]) && fabs(y[i] - want[i]) <= tol * bound[i];
        if (!ok) {
            if (first < 0) first = i;
            ++bad;
        }
    }
    if (bad != 0) {
        fail("%s: %lld of %lld entries wrong; first y[%lld] = %.17g, expected %.17g (tolerance %g)",
             what, (long long)bad, (long long)n, (long long)first, y[first], want[first],
             tol * bound[first]);
        return 1;
    }
    return 0;
}

/* ---- device memory helpers ---- */

static size_t vsize(int f32) { return f32 ? sizeof(float) : sizeof(double); }

/* n values (from doubles) into device memory at d, converted to float when f32. */
static CUresult upload_values(CUdeviceptr d, const double *src, int64_t n, int f32) {
    unsigned char buf[MAXN * sizeof(double)];
    int64_t i;
    for (i = 0; i < n; ++i) {
        if (f32) {
            float v = (float)src[i];
            memcpy(buf + (size_t)i * sizeof v, &v, sizeof v);
        } else {
            memcpy(buf + (size_t)i * sizeof src[i], &src[i], sizeof src[i]);
        }
    }
    return cu.MemcpyHtoD(d, buf, (size_t)n * vsize(f32));
}

static CUresult upload_nan(CUdeviceptr d, int64_t n, int f32) {
    double nan[MAXN];
    int64_t i;
    for (i = 0; i < n; ++i) nan[i] = NAN;
    return upload_values(d, nan, n, f32);
}

/* n values from device memory at d into doubles (synchronous w.r.t. the legacy default stream). */
static CUresult download_values(double *dst, CUdeviceptr d, int64_t n, int f32) {
    unsigned char buf[MAXN * sizeof(double)];
    int64_t i;
    CUresult r = cu.MemcpyDtoH(buf, d, (size_t)n * vsize(f32));
    if (r != CUDA_SUCCESS) return r;
    for (i = 0; i < n; ++i) {
        if (f32) {
            float v;
            memcpy(&v, buf + (size_t)i * sizeof v, sizeof v);
            dst[i] = (double)v;
        } else {
            memcpy(&dst[i], buf + (size_t)i * sizeof dst[i], sizeof dst[i]);
        }
    }
    return CUDA_SUCCESS;
}

static void free_device(CUdeviceptr *d) {
    if (*d != 0) {
        CUresult r = cu.MemFree(*d);
        if (r != CUDA_SUCCESS) fail("cuMemFree returned %s", cu_error_name(r));
        *d = 0;
    }
}

/* ---- shared state of the cases ---- */

static tessera_handle h = NULL;
static tessera_matrix A64 = NULL; /* case 1: device CSR arrays, i32 base 0, f64 */
static tessera_matrix A32 = NULL; /* case 2: host CSR arrays, i64 base 1, f32 */
static CUdeviceptr dx64, dy64, dx32, dy32; /* MAXN values each */

/* y = alpha*op(A)*x + beta*y with device x and y (x uploaded from xv, y from y0v or NaN for
   beta == 0) on the handle's current stream `s` (NULL: the legacy default stream), then checked. */
static int device_product(const char *what, tessera_matrix A, int f32, tessera_operation op,
                          double alpha, double beta, double scale, CUstream s) {
    double y[MAXN];
    int64_t xlen = op == TESSERA_OPERATION_NON_TRANSPOSE ? C : R;
    int64_t ylen = op == TESSERA_OPERATION_NON_TRANSPOSE ? R : C;
    CUdeviceptr dx = f32 ? dx32 : dx64, dy = f32 ? dy32 : dy64;
    tessera_status st;
    CU(upload_values(dx, xv, xlen, f32));
    CU(beta == 0.0 ? upload_nan(dy, ylen, f32) : upload_values(dy, y0v, ylen, f32));
    /* pageable cuMemcpyHtoD may return before its DMA lands: a non-blocking stream must not
       start before it has */
    CU(cu.StreamSynchronize(NULL));
    if (f32) {
        float a = (float)alpha, b = (float)beta;
        st = tessera_spmv(h, op, &a, A, DPTR(dx), &b, DPTR(dy));
    } else {
        st = tessera_spmv(h, op, &alpha, A, DPTR(dx), &beta, DPTR(dy));
    }
    if (st != TESSERA_STATUS_SUCCESS) {
        fail("%s: tessera_spmv returned %s: %s", what, status_name(st), last_error());
        goto out;
    }
    if (s != NULL) CU(cu.StreamSynchronize(s));
    CU(download_values(y, dy, ylen, f32));
    return check_product(what, y, op, scale, alpha, beta, f32);
out:
    return 1;
}

/* ---- the cases ---- */

static void case_device_csr(void) {
    CUdeviceptr drp = 0, dci = 0, dva = 0;
    unsigned char *junk = NULL;
    size_t brp = (size_t)(R + 1) * sizeof(int32_t), bci = (size_t)nnz * sizeof(int32_t),
           bva = (size_t)nnz * sizeof(double);
    CU(cu.MemAlloc(&drp, brp));
    CU(cu.MemAlloc(&dci, bci));
    CU(cu.MemAlloc(&dva, bva));
    CU(cu.MemcpyHtoD(drp, rp32, brp));
    CU(cu.MemcpyHtoD(dci, ci32, bci));
    CU(cu.MemcpyHtoD(dva, val, bva));
    CU(cu.StreamSynchronize(NULL));
    TS(tessera_create_csr(h, &A64, R, C, nnz, DPTR(drp), DPTR(dci), DPTR(dva), TESSERA_INDEX_TYPE_I32,
                          TESSERA_INDEX_BASE_ZERO, TESSERA_VALUE_TYPE_F64));
    /* tessera keeps its own copy: scribble over the caller's device arrays */
    junk = (unsigned char *)malloc(bva);
    memset(junk, 0x7f, bva);
    CU(cu.MemcpyHtoD(drp, junk, brp));
    CU(cu.MemcpyHtoD(dci, junk, bci));
    CU(cu.MemcpyHtoD(dva, junk, bva));
    CU(cu.StreamSynchronize(NULL));
    TS(tessera_analyze(h, A64, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE));
    device_product("A x, f64, beta 0 over NaN", A64, 0, TESSERA_OPERATION_NON_TRANSPOSE, 1.5, 0.0,
                   1.0, NULL);
    device_product("A x, f64, alpha -2, beta 0.5", A64, 0, TESSERA_OPERATION_NON_TRANSPOSE, -2.0, 0.5,
                   1.0, NULL);
out:
    free(junk);
    free_device(&drp);
    free_device(&dci);
    free_device(&dva);
}

static void case_host_i64_base1_f32(void) {
    TS(tessera_create_csr(h, &A32, R, C, nnz, rp64b1, ci64b1, valf, TESSERA_INDEX_TYPE_I64,
                          TESSERA_INDEX_BASE_ONE, TESSERA_VALUE_TYPE_F32));
    TS(tessera_analyze(h, A32, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE));
    device_product("A x, f32, beta 0 over NaN", A32, 1, TESSERA_OPERATION_NON_TRANSPOSE, 1.5, 0.0,
                   1.0, NULL);
    device_product("A x, f32, alpha -2, beta 0.5", A32, 1, TESSERA_OPERATION_NON_TRANSPOSE, -2.0, 0.5,
                   1.0, NULL);
out:;
}

static void case_transpose(void) {
    if (A64 == NULL || A32 == NULL) {
        fail("needs the matrices of cases 1 and 2");
        return;
    }
    device_product("A^T x, f64, beta 0.5", A64, 0, TESSERA_OPERATION_TRANSPOSE, 1.5, 0.5, 1.0, NULL);
    device_product("A^T x, f32, beta 0.5", A32, 1, TESSERA_OPERATION_TRANSPOSE, 1.5, 0.5, 1.0, NULL);
    device_product("A^T x, f64, beta 0 over NaN", A64, 0, TESSERA_OPERATION_TRANSPOSE, 1.0, 0.0, 1.0,
                   NULL);
}

static void case_stream(void) {
    CUstream s = NULL;
    int stream_set = 0;
    if (A64 == NULL || A32 == NULL) {
        fail("needs the matrices of cases 1 and 2");
        return;
    }
    CU(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    TS(tessera_set_stream(h, (void *)s));
    stream_set = 1;
    device_product("A x on the stream, f64, beta 0.5", A64, 0, TESSERA_OPERATION_NON_TRANSPOSE, -0.75,
                   0.5, 1.0, s);
    device_product("A x on the stream, f32, beta 0 over NaN", A32, 1, TESSERA_OPERATION_NON_TRANSPOSE,
                   1.5, 0.0, 1.0, s);
    device_product("A^T x on the stream, f64, beta 0 over NaN", A64, 0, TESSERA_OPERATION_TRANSPOSE,
                   1.5, 0.0, 1.0, s);
out:
    if (stream_set) {
        tessera_status st = tessera_set_stream(h, NULL);
        if (st != TESSERA_STATUS_SUCCESS)
            fail("tessera_set_stream(h, NULL) returned %s: %s", status_name(st), last_error());
    }
    if (s != NULL) {
        CUresult r = cu.StreamSynchronize(s);
        if (r == CUDA_SUCCESS) r = cu.StreamDestroy(s);
        if (r != CUDA_SUCCESS) fail("cuStreamSynchronize/cuStreamDestroy returned %s", cu_error_name(r));
    }
}

static void case_update_values(void) {
    CUdeviceptr dv = 0;
    double *v2 = NULL, *v3 = NULL;
    size_t bytes = (size_t)nnz * sizeof(double);
    int64_t k;
    if (A64 == NULL) {
        fail("needs the matrix of case 1");
        return;
    }
    v2 = (double *)malloc(bytes);
    v3 = (double *)malloc(bytes);
    for (k = 0; k < nnz; ++k) {
        v2[k] = 2.0 * val[k];
        v3[k] = 3.0 * val[k];
    }
    /* device values */
    CU(cu.MemAlloc(&dv, bytes));
    CU(cu.MemcpyHtoD(dv, v2, bytes));
    CU(cu.StreamSynchronize(NULL));
    TS(tessera_update_values(h, A64, DPTR(dv)));
    if (device_product("A x after update_values(device 2*values)", A64, 0,
                       TESSERA_OPERATION_NON_TRANSPOSE, 1.5, 0.0, 2.0, NULL))
        goto out;
    device_product("A^T x after update_values(device 2*values)", A64, 0, TESSERA_OPERATION_TRANSPOSE,
                   1.5, 0.5, 2.0, NULL);
    CU(cu.StreamSynchronize(NULL)); /* the update has run: dv may go */
    free_device(&dv);
    /* host values */
    TS(tessera_update_values(h, A64, v3));
    memset(v3, 0x7f, bytes); /* copied by the call */
    device_product("A x after update_values(host 3*values)", A64, 0, TESSERA_OPERATION_NON_TRANSPOSE,
                   1.5, 0.5, 3.0, NULL);
    TS(tessera_update_values(h, A64, val));
    device_product("A x after update_values(host values) back to the originals", A64, 0,
                   TESSERA_OPERATION_NON_TRANSPOSE, 1.5, 0.0, 1.0, NULL);
out:
    if (dv != 0 && cu.StreamSynchronize(NULL) == CUDA_SUCCESS) free_device(&dv);
    free(v2);
    free(v3);
}

static void case_managed(void) {
    CUdeviceptr mx = 0, my = 0;
    double *x, *y, alpha = 1.5, beta = 0.5;
    tessera_status st;
    int64_t i;
    if (A64 == NULL) {
        fail("needs the matrix of case 1");
        return;
    }
    CU(cu.MemAllocManaged(&mx, MAXN * sizeof(double), CU_MEM_ATTACH_GLOBAL));
    CU(cu.MemAllocManaged(&my, MAXN * sizeof(double), CU_MEM_ATTACH_GLOBAL));
    CU(cu.StreamSynchronize(NULL));
    x = (double *)DPTR(mx);
    y = (double *)DPTR(my);
    for (i = 0; i < C; ++i) x[i] = xv[i];
    for (i = 0; i < R; ++i) y[i] = y0v[i];
    st = tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &alpha, A64, x, &beta, y);
    if (st != TESSERA_STATUS_SUCCESS) {
        fail("tessera_spmv(managed x, y) returned %s: %s", status_name(st), last_error());
        goto out;
    }
    CU(cu.StreamSynchronize(NULL));
    if (check_product("A x, managed x and y, beta 0.5", y, TESSERA_OPERATION_NON_TRANSPOSE, 1.0, alpha,
                      beta, 0))
        goto out;
    for (i = 0; i < R; ++i) x[i] = xv[i];
    for (i = 0; i < C; ++i) y[i] = NAN;
    beta = 0.0;
    st = tessera_spmv(h, TESSERA_OPERATION_TRANSPOSE, &alpha, A64, x, &beta, y);
    if (st != TESSERA_STATUS_SUCCESS) {
        fail("tessera_spmv(TRANSPOSE, managed x, y) returned %s: %s", status_name(st), last_error());
        goto out;
    }
    CU(cu.StreamSynchronize(NULL));
    check_product("A^T x, managed x and y, beta 0 over NaN", y, TESSERA_OPERATION_TRANSPOSE, 1.0, alpha,
                  beta, 0);
out:
    if (cu.StreamSynchronize(NULL) == CUDA_SUCCESS) {
        free_device(&mx);
        free_device(&my);
    }
}

static void case_host_pointer(void) {
    double hx[MAXN], alpha = 1.0, beta = 0.0;
    const char *e;
    tessera_status st;
    int64_t i;
    if (A64 == NULL) {
        fail("needs the matrix of case 1");
        return;
    }
    for (i = 0; i < MAXN; ++i) hx[i] = xv[i];
    CU(upload_nan(dy64, R, 0));
    CU(cu.StreamSynchronize(NULL));
    st = tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &alpha, A64, hx, &beta, DPTR(dy64));
    e = tessera_last_error();
    if (st != TESSERA_STATUS_INVALID_POINTER) {
        fail("tessera_spmv with a host x returned %s, expected TESSERA_STATUS_INVALID_POINTER "
             "(last error: %s)",
             status_name(st), last_error());
        CU(cu.StreamSynchronize(NULL));
        return;
    }
    if (e == NULL || e[0] == 0) {
        fail("tessera_spmv with a host x returned INVALID_POINTER but tessera_last_error() is empty");
        return;
    }
    device_product("A x after the rejected host pointer", A64, 0, TESSERA_OPERATION_NON_TRANSPOSE, 1.5,
                   0.0, 1.0, NULL);
out:;
}

static void case_info(void) {
    tessera_matrix_info info;
    uint64_t want;
    if (A64 == NULL) {
        fail("needs the matrix of case 1");
        return;
    }
    /* AUTO chose some concrete method in case 1. */
    memset(&info, 0x55, sizeof info);
    TS(tessera_matrix_get_info(A64, &info));
    if (info.algorithm == TESSERA_ALGORITHM_AUTO) fail("AUTO was not resolved to a method");
    /* CSR_VECTOR keeps exactly the CSR; HOLA adds its row-start buffer and is not
     * bitwise reproducible (float atomics). */
    TS(tessera_analyze(h, A64, TESSERA_ALGORITHM_HOLA, TESSERA_TUNING_NONE));
    memset(&info, 0x55, sizeof info);
    TS(tessera_matrix_get_info(A64, &info));
    want = (uint64_t)(R + 1) * 4u + (uint64_t)nnz * 4u + (uint64_t)nnz * sizeof(double);
    if (info.algorithm != TESSERA_ALGORITHM_HOLA || info.deterministic != 0 ||
        info.device_bytes <= want)
        fail("HOLA: algorithm %d, deterministic %d, device_bytes %llu (CSR alone: %llu)",
             (int)info.algorithm, (int)info.deterministic,
             (unsigned long long)info.device_bytes, (unsigned long long)want);
    TS(tessera_analyze(h, A64, TESSERA_ALGORITHM_CSR_VECTOR, TESSERA_TUNING_NONE));
    memset(&info, 0x55, sizeof info);
    TS(tessera_matrix_get_info(A64, &info));
    if (info.algorithm != TESSERA_ALGORITHM_CSR_VECTOR)
        fail("algorithm %d, expected TESSERA_ALGORITHM_CSR_VECTOR (%d)", (int)info.algorithm,
             (int)TESSERA_ALGORITHM_CSR_VECTOR);
    else if (info.rows != R || info.cols != C || info.nnz != nnz)
        fail("rows/cols/nnz %lld/%lld/%lld, expected %d/%d/%lld", (long long)info.rows,
             (long long)info.cols, (long long)info.nnz, (int)R, (int)C, (long long)nnz);
    else if (info.device_bytes != want)
        fail("device_bytes %llu, expected (rows+1)*4 + nnz*4 + nnz*8 = %llu",
             (unsigned long long)info.device_bytes, (unsigned long long)want);
    else if (memchr(info.params, 0, sizeof info.params) == NULL)
        fail("params is not NUL-terminated");
    else if (info.params[0] == 0)
        fail("params is empty");
    else if (!(info.analysis_ms >= 0.0))
        fail("analysis_ms = %g", info.analysis_ms);
out:;
}

/* ---- main ---- */

#define LOAD(field, name)                                                                        \
    do {                                                                                         \
        if (!load_symbol(lib, name, (void *)&cu.field, sizeof cu.field)) {                       \
            fail("libcuda.so.1 has no symbol %s", name);                                         \
            goto out;                                                                            \
        }                                                                                        \
    } while (0)

int main(void) {
    void *lib = NULL;
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    int retained = 0;
    tessera_status st;

    /* The CUDA backend, whatever the environment says (TESSERA_BACKEND=host would make
       tessera dereference device pointers on the host). */
    setenv("TESSERA_BACKEND", "cuda", 1);
    st = tessera_create(&h);
    if (st == TESSERA_STATUS_NO_DEVICE) {
        printf("skipped: no CUDA device (%s)\n", last_error());
        return 0;
    }
    if (st != TESSERA_STATUS_SUCCESS || h == NULL) {
        printf("FAIL create: tessera_create returned %s: %s\n", status_name(st), last_error());
        return 1;
    }

    /* The driver, and device 0's primary context (the one tessera uses) made current. */
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        fail("tessera_create succeeded but dlopen(libcuda.so.1) failed: %s", why ? why : "?");
        goto out;
    }
    LOAD(GetErrorName, "cuGetErrorName");
    LOAD(Init, "cuInit");
    LOAD(DeviceGet, "cuDeviceGet");
    LOAD(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(CtxSetCurrent, "cuCtxSetCurrent");
    LOAD(MemAlloc, "cuMemAlloc_v2");
    LOAD(MemAllocManaged, "cuMemAllocManaged");
    LOAD(MemFree, "cuMemFree_v2");
    LOAD(MemcpyHtoD, "cuMemcpyHtoD_v2");
    LOAD(MemcpyDtoH, "cuMemcpyDtoH_v2");
    LOAD(StreamCreate, "cuStreamCreate");
    LOAD(StreamSynchronize, "cuStreamSynchronize");
    LOAD(StreamDestroy, "cuStreamDestroy_v2");
    if (!load_symbol(lib, "cuDevicePrimaryCtxRelease_v2", (void *)&cu.DevicePrimaryCtxRelease,
                     sizeof cu.DevicePrimaryCtxRelease))
        cu.DevicePrimaryCtxRelease = NULL;
    CU(cu.Init(0));
    CU(cu.DeviceGet(&dev, 0));
    CU(cu.DevicePrimaryCtxRetain(&ctx, dev));
    retained = 1;
    CU(cu.CtxSetCurrent(ctx));
    CU(cu.MemAlloc(&dx64, MAXN * sizeof(double)));
    CU(cu.MemAlloc(&dy64, MAXN * sizeof(double)));
    CU(cu.MemAlloc(&dx32, MAXN * sizeof(float)));
    CU(cu.MemAlloc(&dy32, MAXN * sizeof(float)));
out:
    if (detail[0] != 0) report("setup"); /* printed only when it failed */
    if (failed_cases == 0) {
        build_matrix();
        case_device_csr();
        report("csr-device-arrays-i32-f64");
        case_host_i64_base1_f32();
        report("host-arrays-i64-base1-f32");
        case_transpose();
        report("transpose-beta-0.5");
        case_stream();
        report("custom-stream");
        case_update_values();
        report("update-values");
        case_managed();
        report("managed-memory");
        case_host_pointer();
        report("host-pointer-rejected");
        case_info();
        report("matrix-info");
    }

    /* Free everything. */
    if (cu.StreamSynchronize != NULL && cu.StreamSynchronize(NULL) != CUDA_SUCCESS)
        fail("cuStreamSynchronize(NULL) before freeing failed");
    st = tessera_destroy_matrix(A64);
    if (st != TESSERA_STATUS_SUCCESS) fail("tessera_destroy_matrix(A64): %s", status_name(st));
    st = tessera_destroy_matrix(A32);
    if (st != TESSERA_STATUS_SUCCESS) fail("tessera_destroy_matrix(A32): %s", status_name(st));
    if (cu.MemFree != NULL) {
        free_device(&dx64);
        free_device(&dy64);
        free_device(&dx32);
        free_device(&dy32);
    }
    /* The memory the destroyed matrices leave in tessera's pool goes back to the driver. */
    st = tessera_release_cached_memory(h);
    if (st != TESSERA_STATUS_SUCCESS) fail("tessera_release_cached_memory: %s", status_name(st));
    st = tessera_destroy(h);
    if (st != TESSERA_STATUS_SUCCESS) fail("tessera_destroy: %s", status_name(st));
    if (retained && cu.DevicePrimaryCtxRelease != NULL) {
        CUresult r;
        cu.CtxSetCurrent(NULL);
        r = cu.DevicePrimaryCtxRelease(dev);
        if (r != CUDA_SUCCESS) fail("cuDevicePrimaryCtxRelease returned %s", cu_error_name(r));
    }
    free(ci32);
    free(ci64b1);
    free(val);
    free(valf);
    if (detail[0] != 0) report("cleanup");
    if (lib != NULL) dlclose(lib);
    if (failed_cases != 0) {
        printf("FAILED: %d case(s)\n", failed_cases);
        return 1;
    }
    return 0;
}
