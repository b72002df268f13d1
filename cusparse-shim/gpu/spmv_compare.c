/* spmv_compare.c: cuSPARSE's generic SpMV on real matrices, checked against a host reference and
 * timed. Run it as is, then with libtessera_cusparse.so preloaded (LD_PRELOAD), and compare: the
 * program only calls cuSPARSE, so whatever the shim takes or forwards must come out right.
 *
 * Build (C99 and C++ both: nvcc builds a .c file as C, and the same text builds as C++):
 *   nvcc -O2 -o spmv_compare spmv_compare.c -lcusparse -lcudart -ldl -lpthread
 *
 * Usage:
 *   spmv_compare [--check] [--time N] [--overhead N] [--no-check] [--cases NAME,NAME...]
 *                [--tol64 E] [--tol32 E] MATRIX...
 * MATRIX is a Matrix Market file (coordinate; real, integer or pattern; general, symmetric or
 * skew-symmetric: the mirror is stored too) or a built-in matrix: gen:empty-rows (every third
 * row empty), gen:nnz0 (no entries), gen:long-row (one full row among rows of 3: the rows are not
 * alike, so the shim forwards), gen:wide (64 rows of 4000 entries, 300000 columns); and, large,
 * gen:stencil27:K (the 27-point stencil on a K^3 grid, 26 on the diagonal, -1 off it), and
 * gen:lap3d:K (the 7-point Laplacian on a K^3 grid, row x + K y + K^2 z: 6 on the diagonal, -1
 * off it; K = 128: 2097152 rows, 14581760 entries) and gen:uniform:ROWS,PERROW,SEED (ROWS x ROWS,
 * PERROW distinct columns in each row: candidates (unit(r PERROW + t, 100 + SEED) + 1) / 2 ROWS,
 * t < PERROW, sorted, then made distinct as min(max_{s<=t}(c_s - s) + t, ROWS - PERROW + t); the
 * values as a pattern matrix's). A pattern matrix's entry (i, j), 0-based, is
 * 1 + ((7i + 13j) mod 17) / 16 (cupy_spmv.py and torch_spmv.py use the same, and mtxio.py builds
 * every gen: matrix the same way). Duplicate entries are summed; columns are sorted in each row.
 * With none of --check, --time and --overhead the program checks. --cases may also come between
 * matrices: it then holds for the matrices after it.
 *
 * N calls per timing (or per block) is for matrices up to 2^21 entries; a larger one gets
 * N * 2^21 / nnz calls, at least 20 (cupy_spmv.py and torch_spmv.py do the same).
 *
 * Output, one line each (stdout):
 *   MATRIX <matrix> rows=.. cols=.. nnz=.. mean_row=.. max_row=..
 *   CASE <matrix> <f64|f32> <case> <ok|FAIL> maxrel=<e>
 *   TIME <matrix> <f64|f32> spmv_us=<..> percall_us=<..> calls=<n> check=<ok|FAIL|skip>
 *   OVERHEAD <matrix> <f64|f32> real_us=<..> linked_us=<..> diff_us=<..> iqr_us=<..> calls=<n> check=<..>
 *   OVERHEAD_PERCALL <matrix> <f64|f32> real_us=<..> linked_us=<..> diff_us=<..> iqr_us=<..> calls=<n> check=<..>
 *   HOSTCALL <matrix> <f64|f32> real_us=<..> linked_us=<..> diff_us=<..> iqr_us=<..>
 *   ERROR <matrix> <type> <case>: line <n>: <call>: <status>   (a failed CUDA or cuSPARSE call)
 *   SUMMARY ok=<n> fail=<m>                                     (exit 1 when m > 0)
 *
 * Each check compares y with a host reference in double (from the values and vectors as the type
 * holds them): per entry |y - ref| / (|alpha| sum_j |a_ij x_j| + |beta y0_i|) must stay within
 * 1e-12 (f64) or 1e-5 (f32), and a NaN anywhere fails. Every case starts from the same device
 * state (values, x) and ends with its descriptors and buffers freed, the handle back on the
 * default stream in host pointer mode. The cases (f64 and f32 each), in the order run:
 *   default_beta0   ALG_DEFAULT, alpha 1.5, beta 0, y full of NaN (beta 0 must not read y)
 *   beta            alpha 2, beta -0.5, y = y0
 *   alg1, alg2      CUSPARSE_SPMV_CSR_ALG1 (beta 0 over NaN) and CSR_ALG2 (beta -0.5)
 *   const           cusparseCreateConstCsr / cusparseCreateConstDnVec for A and x
 *   inplace_same    values rewritten in place (cudaMemcpy into the same array), the same
 *                   descriptor used again: y must follow the new values
 *   inplace_new     as CuPy does: descriptors destroyed, values rewritten, new descriptors over
 *                   the same pointers; then the first values again under a third set
 *   setvalues       cusparseSpMatSetValues to a second values array, then back to the first
 *   transpose       CUSPARSE_OPERATION_TRANSPOSE (forwarded), beta 0 over NaN, then beta -0.5
 *   base1           int32 arrays copied to base one (forwarded)
 *   int64           int64 copies of the index arrays
 *   ptr_device      CUSPARSE_POINTER_MODE_DEVICE, alpha and beta in device memory (forwarded)
 *   preprocess      cusparseSpMV_preprocess, then two products on its buffer (x changed between)
 *   stream          a non-blocking stream set with cusparseSetStream, kept busy by a large
 *                   memset; x uploaded and y downloaded asynchronously on it around the product:
 *                   a product on any other stream reads the old x or is read before it is done
 *   beta_one_twice  alpha 1, beta 1, twice in a row: y = y0 + 2 A x
 *   alpha0          alpha 0, beta 0.5: y = 0.5 y0 (A is not to matter)
 *   graph           one product outside any capture (the shim meets the matrix there), then on the
 *                   non-blocking stream cusparseSpMV captured into a CUDA graph
 *                   (cudaStreamCaptureModeGlobal) and instantiated; three launches, each after a
 *                   new x copied into the same device x (and NaN into y) on that stream, y copied
 *                   back and compared; the values rewritten in place (same array) between the
 *                   2nd and the 3rd launch: the 3rd must use them. A shim that knows the matrix
 *                   takes the captured call: its kernel must land in the graph, on that stream
 *   graph_first     a matrix seen for the first time inside a capture: fresh device copies of
 *                   the three arrays (new addresses, so a new key for the shim, which forwards
 *                   this first call: its analysis would wait), captured (while x holds the second
 *                   x), instantiated; the first x and NaN into y on the stream, launched and
 *                   compared; then one product outside any capture on the same descriptor (the
 *                   second x, beta -0.5)
 *   threads         4 threads, each with its own cuSPARSE handle, non-blocking stream, x, y,
 *                   buffer and descriptors over the same (read-only, shared) device matrix
 *                   arrays; they start together, each runs 50 products back to back with a new
 *                   alpha each (beta 0 over a NaN y), its y checked after the 25th and the 50th;
 *                   one CASE line, FAIL when any thread failed
 * Timing (--time N), per matrix and type, host clock, cudaDeviceSynchronize at both ends:
 *   spmv_us      one set of descriptors, one buffer: N warm cusparseSpMV calls, mean per call
 *   percall_us   CuPy's pattern: create SpMat + 2 DnVec, bufferSize, the buffer reused (grown
 *                only when too small), cusparseSpMV, destroy the three; N times, mean per call
 *   check        y after the timed calls against the reference (skip with --no-check)
 * The shim's own cost (--overhead N), per matrix and type, in one process: "real" is the real
 * library's cusparseSpMV, from dlopen("libcusparse.so.12", RTLD_NOLOAD) and dlsym on that handle
 * (which a preloaded shim does not come between; failing that, the library cusparseCreate came
 * from), "linked" the program's own cusparseSpMV (the shim's when it is preloaded, else the same
 * function). After 5 warm-up calls of each (the shim analyzes a matrix on its first), 22 blocks,
 * real and linked in turn, each N back-to-back calls then cudaStreamSynchronize; host clock:
 *   OVERHEAD          alpha 1, beta 0 on one set of descriptors: wall time per call, median of
 *                     each one's 11 blocks, diff = linked - real; iqr_us is the larger of the
 *                     two interquartile ranges (the blocks' spread)
 *   OVERHEAD_PERCALL  the same for CuPy's pattern (descriptors made, bufferSize, SpMV, destroyed
 *                     in every call; only the SpMV differs)
 *   HOSTCALL          from OVERHEAD's blocks: the time inside the call alone (clock read around
 *                     it, summed over the block) per call, median of the 11 blocks: what the
 *                     call costs the host, the shim's own work included
 *   check             y after the last (linked) block against the reference (skip: --no-check)
 * An INFO line says where the two functions are. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime; dladdr, RTLD_NOLOAD and RTLD_NEXT */
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cusparse.h>

/* ---- small helpers ---- */

static double dabs(double v) { return v < 0 ? -v : v; }

/* A deterministic value in [-1, 1) for (k, salt): splitmix64. */
static double unit(uint64_t k, uint64_t salt) {
    uint64_t z = k * 0x9E3779B97F4A7C15ull + salt * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 4503599627370496.0 - 1.0; /* 2^52 */
}

/* The value of a pattern matrix's entry (i, j), 0-based; shared with the Python scripts. */
static double pattern_value(int64_t i, int64_t j) { return 1.0 + (double)((i * 7 + j * 13) % 17) / 16.0; }

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* ---- reporting ---- */

static char g_label[512]; /* "<matrix> <type> <case>" of the work in progress */
static int g_ok = 0, g_fail = 0;

static void report_error(int line, const char *call, const char *name, const char *text) {
    printf("ERROR %s: line %d: %s: %s (%s)\n", g_label, line, call, name ? name : "?", text ? text : "?");
    fflush(stdout);
}

/* A CUDA or cuSPARSE call that must succeed; on failure report it and return -1. */
#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            report_error(__LINE__, #call, cudaGetErrorName(e_), cudaGetErrorString(e_));           \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

#define SK(call)                                                                                   \
    do {                                                                                           \
        cusparseStatus_t s_ = (call);                                                              \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                       \
            report_error(__LINE__, #call, cusparseGetErrorName(s_), cusparseGetErrorString(s_));   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* A helper returning nonzero has already reported: pass the failure on. */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        if ((call) != 0) return -1;                                                                \
    } while (0)

/* ---- what a case allocates, freed by the driver after it (also when it fails half-way) ---- */

enum { R_DEV, R_PINNED, R_HOST, R_MAT, R_VEC, R_GRAPH, R_GEXEC };
typedef struct {
    int kind;
    const void *p;
} Res;
static Res g_res[64];
static int g_nres = 0;

static void track(int kind, const void *p) {
    if (g_nres == (int)(sizeof g_res / sizeof g_res[0])) {
        fprintf(stderr, "too many tracked resources\n");
        exit(2);
    }
    g_res[g_nres].kind = kind;
    g_res[g_nres].p = p;
    ++g_nres;
}

static void untrack(const void *p) {
    int i;
    for (i = 0; i < g_nres; ++i)
        if (g_res[i].p == p) g_res[i].p = NULL;
}

static void release_all(void) {
    while (g_nres > 0) {
        Res r = g_res[--g_nres];
        if (r.p == NULL) continue;
        switch (r.kind) {
        case R_DEV: cudaFree((void *)r.p); break;
        case R_PINNED: cudaFreeHost((void *)r.p); break;
        case R_HOST: free((void *)r.p); break;
        case R_MAT: cusparseDestroySpMat((cusparseConstSpMatDescr_t)r.p); break;
        case R_GRAPH: cudaGraphDestroy((cudaGraph_t)r.p); break;
        case R_GEXEC: cudaGraphExecDestroy((cudaGraphExec_t)r.p); break;
        default: cusparseDestroyDnVec((cusparseConstDnVecDescr_t)r.p); break;
        }
    }
}

static int dev_alloc(void **p, size_t bytes) {
    CK(cudaMalloc(p, bytes ? bytes : 1));
    track(R_DEV, *p);
    return 0;
}

static int pinned_alloc(void **p, size_t bytes) {
    CK(cudaMallocHost(p, bytes ? bytes : 1));
    track(R_PINNED, *p);
    return 0;
}

/* Plain host memory of a case (freed by the driver after it). */
static void *host_alloc(size_t bytes) {
    void *p = xmalloc(bytes);
    track(R_HOST, p);
    return p;
}

/* ---- matrices: Matrix Market files and the built-in edge cases ---- */

typedef struct {
    char name[256];
    int64_t rows, cols, nnz;
    int32_t *rowptr, *colind; /* base 0, columns sorted and distinct in each row */
    double *val;
    int64_t max_row;
} HostCsr;

typedef struct {
    int32_t col;
    double v;
} Ent;

static int ent_cmp(const void *a, const void *b) {
    int32_t x = ((const Ent *)a)->col, y = ((const Ent *)b)->col;
    return (x > y) - (x < y);
}

/* Coordinate triplets (base 0) to CSR: bucket by row, sort each row, sum duplicates. */
static void build_csr(HostCsr *m, int64_t rows, int64_t cols, int64_t n, const int32_t *ri, const int32_t *ci,
                      const double *v) {
    int64_t *start = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)(rows + 1));
    int64_t *fill = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)(rows + 1));
    Ent *e = (Ent *)xmalloc(sizeof(Ent) * (size_t)n);
    int64_t r, k, out = 0;
    memset(start, 0, sizeof(int64_t) * (size_t)(rows + 1));
    for (k = 0; k < n; ++k) ++start[ri[k] + 1];
    for (r = 0; r < rows; ++r) start[r + 1] += start[r];
    memcpy(fill, start, sizeof(int64_t) * (size_t)(rows + 1));
    for (k = 0; k < n; ++k) {
        Ent *d = &e[fill[ri[k]]++];
        d->col = ci[k];
        d->v = v[k];
    }
    m->rows = rows;
    m->cols = cols;
    m->rowptr = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)(rows + 1));
    m->colind = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)n);
    m->val = (double *)xmalloc(sizeof(double) * (size_t)n);
    m->max_row = 0;
    m->rowptr[0] = 0;
    for (r = 0; r < rows; ++r) {
        int64_t b = start[r], end = start[r + 1], row_start = out;
        if (end - b > 1) qsort(e + b, (size_t)(end - b), sizeof(Ent), ent_cmp);
        for (k = b; k < end; ++k) {
            if (out > row_start && m->colind[out - 1] == e[k].col) {
                m->val[out - 1] += e[k].v;
            } else {
                m->colind[out] = e[k].col;
                m->val[out] = e[k].v;
                ++out;
            }
        }
        m->rowptr[r + 1] = (int32_t)out;
        if (out - row_start > m->max_row) m->max_row = out - row_start;
    }
    m->nnz = out;
    free(start);
    free(fill);
    free(e);
}

static void lower(char *s) {
    for (; *s; ++s)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

/* Read a coordinate Matrix Market file; on failure write a reason into err and return -1. */
static int read_mtx(const char *path, HostCsr *m, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL, *p, *end;
    char obj[32], fmt[32], field[32], sym[32];
    long size;
    int pattern, symmetry; /* 0 general, 1 symmetric, 2 skew-symmetric */
    int64_t rows, cols, nnz, k, n = 0;
    int32_t *ri = NULL, *ci = NULL;
    double *v = NULL;
    int rc = -1;

    if (f == NULL) {
        snprintf(err, errlen, "cannot open");
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot size the file");
        fclose(f);
        return -1;
    }
    buf = (char *)xmalloc((size_t)size + 1);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        snprintf(err, errlen, "short read");
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    buf[size] = 0;

    if (strncmp(buf, "%%MatrixMarket", 14) != 0 ||
        sscanf(buf + 14, "%31s %31s %31s %31s", obj, fmt, field, sym) != 4) {
        snprintf(err, errlen, "no Matrix Market banner");
        goto done;
    }
    lower(obj);
    lower(fmt);
    lower(field);
    lower(sym);
    if (strcmp(obj, "matrix") != 0 || strcmp(fmt, "coordinate") != 0) {
        snprintf(err, errlen, "only coordinate matrices (this is %s %s)", obj, fmt);
        goto done;
    }
    if (strcmp(field, "real") == 0 || strcmp(field, "integer") == 0 || strcmp(field, "double") == 0) {
        pattern = 0;
    } else if (strcmp(field, "pattern") == 0) {
        pattern = 1;
    } else {
        snprintf(err, errlen, "field %s not supported", field);
        goto done;
    }
    if (strcmp(sym, "general") == 0) {
        symmetry = 0;
    } else if (strcmp(sym, "symmetric") == 0) {
        symmetry = 1;
    } else if (strcmp(sym, "skew-symmetric") == 0) {
        symmetry = 2;
    } else {
        snprintf(err, errlen, "symmetry %s not supported", sym);
        goto done;
    }

    /* Past the banner and the comment lines to the size line. */
    p = strchr(buf, '\n');
    while (p != NULL) {
        ++p;
        while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
        if (*p == '%' || *p == '\n') {
            p = strchr(p, '\n');
            continue;
        }
        break;
    }
    if (p == NULL || *p == 0) {
        snprintf(err, errlen, "no size line");
        goto done;
    }
    rows = strtoll(p, &end, 10);
    cols = strtoll(end, &end, 10);
    nnz = strtoll(end, &end, 10);
    if (end == p || rows < 0 || cols < 0 || nnz < 0 || rows >= INT32_MAX || cols >= INT32_MAX ||
        nnz * (symmetry ? 2 : 1) >= INT32_MAX) {
        snprintf(err, errlen, "bad or too large size line");
        goto done;
    }
    p = end;
    ri = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)(2 * nnz));
    ci = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)(2 * nnz));
    v = (double *)xmalloc(sizeof(double) * (size_t)(2 * nnz));
    for (k = 0; k < nnz; ++k) {
        int64_t i = strtoll(p, &end, 10), j;
        double x = 0.0;
        if (end == p) break;
        p = end;
        j = strtoll(p, &end, 10);
        if (end == p) break;
        p = end;
        if (!pattern) {
            x = strtod(p, &end);
            if (end == p) break;
            p = end;
        }
        if (i < 1 || i > rows || j < 1 || j > cols) {
            snprintf(err, errlen, "entry %lld out of range", (long long)k + 1);
            goto done;
        }
        ri[n] = (int32_t)(i - 1);
        ci[n] = (int32_t)(j - 1);
        v[n++] = x;
        if (symmetry && i != j) {
            ri[n] = (int32_t)(j - 1);
            ci[n] = (int32_t)(i - 1);
            v[n++] = symmetry == 2 ? -x : x;
        }
    }
    if (k < nnz) {
        snprintf(err, errlen, "truncated at entry %lld of %lld", (long long)k + 1, (long long)nnz);
        goto done;
    }
    if (pattern)
        for (k = 0; k < n; ++k) v[k] = pattern_value(ri[k], ci[k]);
    build_csr(m, rows, cols, n, ri, ci, v);
    rc = 0;
done:
    free(buf);
    free(ri);
    free(ci);
    free(v);
    return rc;
}

/* CSR arrays for `rows` rows and `nnz` entries (filled by the caller). */
static void alloc_csr(HostCsr *m, int64_t rows, int64_t cols, int64_t nnz) {
    m->rows = rows;
    m->cols = cols;
    m->nnz = nnz;
    m->rowptr = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)(rows + 1));
    m->colind = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)nnz);
    m->val = (double *)xmalloc(sizeof(double) * (size_t)nnz);
    m->max_row = 0;
    m->rowptr[0] = 0;
}

/* gen:lap3d:K, built row by row in order (columns come out sorted). */
static void gen_lap3d(HostCsr *m, int64_t K) {
    int64_t x, y, z, r = 0, n = 0, kk = K * K;
    alloc_csr(m, kk * K, kk * K, 7 * kk * K - 6 * kk);
#define LAP_PUT(col, v)                                                                            \
    do {                                                                                           \
        m->colind[n] = (int32_t)(col);                                                             \
        m->val[n++] = (v);                                                                         \
    } while (0)
    for (z = 0; z < K; ++z)
        for (y = 0; y < K; ++y)
            for (x = 0; x < K; ++x, ++r) {
                if (z > 0) LAP_PUT(r - kk, -1.0);
                if (y > 0) LAP_PUT(r - K, -1.0);
                if (x > 0) LAP_PUT(r - 1, -1.0);
                LAP_PUT(r, 6.0);
                if (x < K - 1) LAP_PUT(r + 1, -1.0);
                if (y < K - 1) LAP_PUT(r + K, -1.0);
                if (z < K - 1) LAP_PUT(r + kk, -1.0);
                m->rowptr[r + 1] = (int32_t)n;
                if (n - m->rowptr[r] > m->max_row) m->max_row = n - m->rowptr[r];
            }
#undef LAP_PUT
}

/* gen:stencil27:K, the 27-point stencil on a K^3 grid (26 on the diagonal, -1 for each
   neighbour), built row by row in order (columns come out sorted). */
static void gen_stencil27(HostCsr *m, int64_t K) {
    int64_t x, y, z, r = 0, n = 0, kk = K * K;
    /* Entries: per axis, 3 neighbours for an inner point and 2 at each end (1 when K = 1). */
    int64_t per_axis = 3 * (K > 1 ? K - 2 : 0) + (K > 1 ? 4 : 1);
    int dx, dy, dz;
    alloc_csr(m, kk * K, kk * K, per_axis * per_axis * per_axis);
    for (z = 0; z < K; ++z)
        for (y = 0; y < K; ++y)
            for (x = 0; x < K; ++x, ++r) {
                for (dz = -1; dz <= 1; ++dz)
                    for (dy = -1; dy <= 1; ++dy)
                        for (dx = -1; dx <= 1; ++dx) {
                            if (z + dz < 0 || z + dz >= K || y + dy < 0 || y + dy >= K ||
                                x + dx < 0 || x + dx >= K)
                                continue;
                            m->colind[n] = (int32_t)(r + dz * kk + dy * K + dx);
                            m->val[n++] = (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0;
                        }
                m->rowptr[r + 1] = (int32_t)n;
                if (n - m->rowptr[r] > m->max_row) m->max_row = n - m->rowptr[r];
            }
}

/* gen:uniform:ROWS,PERROW,SEED: PERROW random columns a row, sorted, then made distinct (see the
   head of the file; mtxio.py does the same with whole arrays). */
static int i64_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void gen_uniform(HostCsr *m, int64_t rows, int64_t per, uint64_t seed) {
    int64_t *c = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)per);
    int64_t r, t, s, n = 0;
    alloc_csr(m, rows, rows, rows * per);
    for (r = 0; r < rows; ++r) {
        int64_t run = INT64_MIN;
        for (t = 0; t < per; ++t) {
            int64_t v = (int64_t)((unit((uint64_t)(r * per + t), 100 + seed) + 1.0) * 0.5 * (double)rows);
            if (v >= rows) v = rows - 1;
            if (per > 64) {
                c[t] = v; /* sorted below */
                continue;
            }
            for (s = t; s > 0 && c[s - 1] > v; --s) c[s] = c[s - 1]; /* into the sorted c[0..t) */
            c[s] = v;
        }
        if (per > 64) qsort(c, (size_t)per, sizeof(int64_t), i64_cmp);
        for (t = 0; t < per; ++t) {
            int64_t col;
            if (c[t] - t > run) run = c[t] - t;
            col = run + t;
            if (col > rows - per + t) col = rows - per + t;
            m->colind[n] = (int32_t)col;
            m->val[n++] = pattern_value(r, col);
        }
        m->rowptr[r + 1] = (int32_t)n;
    }
    m->max_row = rows > 0 ? per : 0;
    free(c);
}

/* The large built-in matrices: 1 when `what` names one (0 done, -1 bad sizes in err). */
static int gen_large(const char *what, HostCsr *m, int *rc, char *err, size_t errlen) {
    long long a = 0, b = 0, c = 0;
    char tail = 0;
    if (strncmp(what, "lap3d:", 6) == 0) {
        /* 7 K^3 entries must stay below 2^31 (int32 indices): K <= 675 */
        if (sscanf(what + 6, "%lld%c", &a, &tail) != 1 || a < 1 || a > 675) {
            snprintf(err, errlen, "gen:lap3d:K wants 1 <= K <= 675");
            *rc = -1;
        } else {
            gen_lap3d(m, a);
            *rc = 0;
        }
        return 1;
    }
    if (strncmp(what, "stencil27:", 10) == 0) {
        /* 27 K^3 entries must stay below 2^31 (int32 indices): K <= 430 */
        if (sscanf(what + 10, "%lld%c", &a, &tail) != 1 || a < 1 || a > 430) {
            snprintf(err, errlen, "gen:stencil27:K wants 1 <= K <= 430");
            *rc = -1;
        } else {
            gen_stencil27(m, a);
            *rc = 0;
        }
        return 1;
    }
    if (strncmp(what, "uniform:", 8) == 0) {
        if (sscanf(what + 8, "%lld,%lld,%lld%c", &a, &b, &c, &tail) != 3 || a < 1 || b < 1 || b > a ||
            c < 0 || a >= INT32_MAX || a * b >= INT32_MAX) {
            snprintf(err, errlen, "gen:uniform:ROWS,PERROW,SEED wants 1 <= PERROW <= ROWS, "
                                  "ROWS * PERROW < 2^31, SEED >= 0");
            *rc = -1;
        } else {
            gen_uniform(m, a, b, (uint64_t)c);
            *rc = 0;
        }
        return 1;
    }
    return 0;
}

/* The built-in edge cases; -1 for an unknown name. */
static int gen_matrix(const char *what, HostCsr *m) {
    int64_t rows, cols, cap, n = 0, r, t;
    int32_t *ri, *ci;
    double *v;
    if (strcmp(what, "empty-rows") == 0) {
        rows = 5000;
        cols = 4000;
        cap = rows * 12;
    } else if (strcmp(what, "nnz0") == 0) {
        rows = 100;
        cols = 100;
        cap = 0;
    } else if (strcmp(what, "long-row") == 0) {
        rows = 20000;
        cols = 20000;
        cap = cols + 3 * rows;
    } else if (strcmp(what, "wide") == 0) {
        rows = 64;
        cols = 300000;
        cap = rows * 4000;
    } else {
        return -1;
    }
    ri = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)cap);
    ci = (int32_t *)xmalloc(sizeof(int32_t) * (size_t)cap);
    v = (double *)xmalloc(sizeof(double) * (size_t)cap);
    for (r = 0; r < rows && cap > 0; ++r) {
        int64_t len;
        if (strcmp(what, "empty-rows") == 0)
            len = r % 3 == 0 ? 0 : 1 + (int64_t)((unit((uint64_t)r, 7) + 1.0) * 5.5); /* 1..12 */
        else if (strcmp(what, "long-row") == 0)
            len = r == 7 ? cols : 3;
        else
            len = 4000;
        for (t = 0; t < len; ++t) {
            int64_t c = len == cols ? t : (int64_t)((unit((uint64_t)(r * 4099 + t), 8) + 1.0) * 0.5 * (double)cols);
            if (c >= cols) c = cols - 1;
            ri[n] = (int32_t)r;
            ci[n] = (int32_t)c;
            v[n] = unit((uint64_t)n, 9);
            ++n;
        }
    }
    build_csr(m, rows, cols, n, ri, ci, v);
    free(ri);
    free(ci);
    free(v);
    return 0;
}

static int load_matrix(const char *arg, HostCsr *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (strncmp(arg, "gen:", 4) == 0) {
        int rc;
        snprintf(m->name, sizeof m->name, "%s", arg);
        if (gen_large(arg + 4, m, &rc, err, errlen)) return rc;
        if (gen_matrix(arg + 4, m) != 0) {
            snprintf(err, errlen, "unknown built-in matrix");
            return -1;
        }
        return 0;
    } else {
        const char *base = strrchr(arg, '/');
        size_t len;
        snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : arg);
        len = strlen(m->name);
        if (len > 4 && strcmp(m->name + len - 4, ".mtx") == 0) m->name[len - 4] = 0;
        return read_mtx(arg, m, err, errlen);
    }
}

static void free_matrix(HostCsr *m) {
    free(m->rowptr);
    free(m->colind);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* ---- one matrix in one value type on the device ---- */

typedef struct {
    const HostCsr *m;
    cusparseHandle_t h;
    cudaStream_t stream; /* non-blocking, for the stream case */
    int is32;
    cudaDataType dt;
    size_t esz;
    int64_t n; /* max(rows, cols): the length of x, y and their host copies */
    /* The values and vectors as the type holds them: in double for the reference, and in the type. */
    double *val, *val2, *x, *x2, *y0;
    void *t_val, *t_val2, *t_x, *t_x2, *t_y0, *t_nan, *t_y;
    int32_t *d_rowptr, *d_colind;
    void *d_val, *d_val2, *d_x, *d_y;
    double *ref, *scale; /* the reference, length n */
} Ctx;

typedef struct {
    double maxrel;
    int nan;
} Out;

typedef struct {
    double d;
    float f;
} Scal;

static Scal scal(double v) {
    Scal s;
    s.d = v;
    s.f = (float)v;
    return s;
}

static const void *sp(const Ctx *c, const Scal *s) { return c->is32 ? (const void *)&s->f : (const void *)&s->d; }

/* The value rounded to the type (so the reference sees what the GPU sees). */
static double in_type(const Ctx *c, double v) { return c->is32 ? (double)(float)v : v; }

static void to_type(const Ctx *c, void *dst, const double *src, int64_t n) {
    int64_t i;
    if (c->is32)
        for (i = 0; i < n; ++i) ((float *)dst)[i] = (float)src[i];
    else
        memcpy(dst, src, sizeof(double) * (size_t)n);
}

/* A case's own device copy of host bytes (freed after the case). */
static int dev_copy(void **dst, const void *src, size_t bytes) {
    TRY(dev_alloc(dst, bytes));
    CK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return 0;
}

static int upload(const Ctx *c, void *dst, const void *src, int64_t n) {
    CK(cudaMemcpy(dst, src, c->esz * (size_t)n, cudaMemcpyHostToDevice));
    return 0;
}

/* y = alpha op(A) x + beta y0 in double, and the scale of each entry's error bound. beta 0 never
   reads y0. */
static void reference(const Ctx *c, const double *val, int trans, double alpha, const double *x, double beta) {
    const HostCsr *m = c->m;
    int64_t n_out = trans ? m->cols : m->rows, i, r, k;
    for (i = 0; i < n_out; ++i) c->ref[i] = c->scale[i] = 0.0;
    for (r = 0; r < m->rows; ++r) {
        for (k = m->rowptr[r]; k < m->rowptr[r + 1]; ++k) {
            int64_t col = m->colind[k];
            double prod = val[k] * (trans ? x[r] : x[col]);
            int64_t o = trans ? col : r;
            c->ref[o] += prod;
            c->scale[o] += dabs(prod);
        }
    }
    for (i = 0; i < n_out; ++i) {
        c->ref[i] *= alpha;
        c->scale[i] *= dabs(alpha);
        if (beta != 0.0) {
            c->ref[i] += beta * c->y0[i];
            c->scale[i] += dabs(beta * c->y0[i]);
        }
    }
}

/* Compare a y held on the host (in the type) with the reference. */
static void compare_host(const Ctx *c, const void *y, int64_t n, Out *o) {
    int64_t i;
    for (i = 0; i < n; ++i) {
        double v = c->is32 ? (double)((const float *)y)[i] : ((const double *)y)[i];
        double d, e;
        if (v != v) {
            o->nan = 1;
            continue;
        }
        d = dabs(v - c->ref[i]);
        e = c->scale[i] > 0.0 ? d / c->scale[i] : (d > 0.0 ? 1e300 : 0.0);
        if (!(e <= o->maxrel)) o->maxrel = e; /* also catches inf */
    }
}

/* Wait for the device, download y (n entries) and compare. */
static int check_y(const Ctx *c, int64_t n, Out *o) {
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(c->t_y, c->d_y, c->esz * (size_t)n, cudaMemcpyDeviceToHost));
    compare_host(c, c->t_y, n, o);
    return 0;
}

/* y before a product: NaN when beta is 0 (it must not be read), else y0. */
static int prefill_y(const Ctx *c, int64_t n, double beta) {
    return upload(c, c->d_y, beta == 0.0 ? c->t_nan : c->t_y0, n);
}

static int make_csr(const Ctx *c, cusparseSpMatDescr_t *a, void *rowptr, void *colind, void *val,
                    cusparseIndexType_t it, cusparseIndexBase_t base) {
    SK(cusparseCreateCsr(a, c->m->rows, c->m->cols, c->m->nnz, rowptr, colind, val, it, it, base, c->dt));
    track(R_MAT, *a);
    return 0;
}

/* The plain descriptor: int32, base 0, over the shared index arrays. */
static int make_a(const Ctx *c, cusparseSpMatDescr_t *a, void *val) {
    return make_csr(c, a, c->d_rowptr, c->d_colind, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO);
}

static int make_vec(const Ctx *c, cusparseDnVecDescr_t *v, int64_t n, void *p) {
    SK(cusparseCreateDnVec(v, n, p, c->dt));
    track(R_VEC, *v);
    return 0;
}

/* x (cols) and y (rows) over the shared device vectors. */
static int make_xy(const Ctx *c, cusparseDnVecDescr_t *x, cusparseDnVecDescr_t *y) {
    TRY(make_vec(c, x, c->m->cols, c->d_x));
    return make_vec(c, y, c->m->rows, c->d_y);
}

static int drop_mat(cusparseSpMatDescr_t a) {
    untrack(a);
    SK(cusparseDestroySpMat(a));
    return 0;
}

static int drop_vec(cusparseDnVecDescr_t v) {
    untrack(v);
    SK(cusparseDestroyDnVec(v));
    return 0;
}

/* bufferSize, a fresh buffer, SpMV: how most callers do it. */
static int product(const Ctx *c, cusparseOperation_t op, const void *alpha, cusparseConstSpMatDescr_t a,
                   cusparseConstDnVecDescr_t x, const void *beta, cusparseDnVecDescr_t y, cusparseSpMVAlg_t alg) {
    size_t bytes = 0;
    void *buf = NULL;
    SK(cusparseSpMV_bufferSize(c->h, op, alpha, a, x, beta, y, c->dt, alg, &bytes));
    if (bytes > 0) TRY(dev_alloc(&buf, bytes));
    SK(cusparseSpMV(c->h, op, alpha, a, x, beta, y, c->dt, alg, buf));
    return 0;
}

/* y = alpha A x + beta y with the plain descriptors over values `val` (device) / `hval` (host). */
static int plain_product(const Ctx *c, Out *o, cusparseSpMVAlg_t alg, double alpha, double beta, void *val,
                         const double *hval) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(alpha), be = scal(beta);
    TRY(prefill_y(c, c->m->rows, beta));
    TRY(make_a(c, &a, val));
    TRY(make_xy(c, &x, &y));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, alg));
    reference(c, hval, 0, alpha, c->x, beta);
    return check_y(c, c->m->rows, o);
}

/* ---- the cases ---- */

static int case_default_beta0(Ctx *c, Out *o) {
    return plain_product(c, o, CUSPARSE_SPMV_ALG_DEFAULT, 1.5, 0.0, c->d_val, c->val);
}

static int case_beta(Ctx *c, Out *o) {
    return plain_product(c, o, CUSPARSE_SPMV_ALG_DEFAULT, 2.0, -0.5, c->d_val, c->val);
}

static int case_alg1(Ctx *c, Out *o) {
    return plain_product(c, o, CUSPARSE_SPMV_CSR_ALG1, 1.5, 0.0, c->d_val, c->val);
}

static int case_alg2(Ctx *c, Out *o) {
    return plain_product(c, o, CUSPARSE_SPMV_CSR_ALG2, 2.0, -0.5, c->d_val, c->val);
}

static int case_const(Ctx *c, Out *o) {
    cusparseConstSpMatDescr_t a;
    cusparseConstDnVecDescr_t x;
    cusparseDnVecDescr_t y;
    Scal al = scal(1.5), be = scal(0.0);
    TRY(prefill_y(c, c->m->rows, 0.0));
    SK(cusparseCreateConstCsr(&a, c->m->rows, c->m->cols, c->m->nnz, c->d_rowptr, c->d_colind, c->d_val,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, c->dt));
    track(R_MAT, a);
    SK(cusparseCreateConstDnVec(&x, c->m->cols, c->d_x, c->dt));
    track(R_VEC, x);
    TRY(make_vec(c, &y, c->m->rows, c->d_y));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 1.5, c->x, 0.0);
    return check_y(c, c->m->rows, o);
}

static int case_inplace_same(Ctx *c, Out *o) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.5), be = scal(0.0);
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    TRY(prefill_y(c, c->m->rows, 0.0));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 1.5, c->x, 0.0);
    TRY(check_y(c, c->m->rows, o));
    /* New values in the same array; nothing tells cuSPARSE. */
    TRY(upload(c, c->d_val, c->t_val2, c->m->nnz));
    TRY(prefill_y(c, c->m->rows, 0.0));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val2, 0, 1.5, c->x, 0.0);
    return check_y(c, c->m->rows, o);
}

static int case_inplace_new(Ctx *c, Out *o) {
    const void *vals_dev[3];
    const double *vals_ref[3];
    int round;
    Scal al = scal(1.5), be = scal(0.0);
    vals_dev[0] = c->t_val;
    vals_dev[1] = c->t_val2;
    vals_dev[2] = c->t_val;
    vals_ref[0] = c->val;
    vals_ref[1] = c->val2;
    vals_ref[2] = c->val;
    for (round = 0; round < 3; ++round) {
        cusparseSpMatDescr_t a;
        cusparseDnVecDescr_t x, y;
        /* As CuPy: the values rewritten while no descriptor exists, then fresh descriptors
           (often at the addresses just freed) over the same pointers. */
        TRY(upload(c, c->d_val, vals_dev[round], c->m->nnz));
        TRY(make_a(c, &a, c->d_val));
        TRY(make_xy(c, &x, &y));
        TRY(prefill_y(c, c->m->rows, 0.0));
        TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y,
                   CUSPARSE_SPMV_ALG_DEFAULT));
        reference(c, vals_ref[round], 0, 1.5, c->x, 0.0);
        TRY(check_y(c, c->m->rows, o));
        TRY(drop_mat(a));
        TRY(drop_vec(x));
        TRY(drop_vec(y));
    }
    return 0;
}

static int case_setvalues(Ctx *c, Out *o) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(2.0), be = scal(-0.5);
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    TRY(prefill_y(c, c->m->rows, -0.5));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 2.0, c->x, -0.5);
    TRY(check_y(c, c->m->rows, o));
    SK(cusparseSpMatSetValues(a, c->d_val2));
    TRY(prefill_y(c, c->m->rows, -0.5));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val2, 0, 2.0, c->x, -0.5);
    TRY(check_y(c, c->m->rows, o));
    SK(cusparseSpMatSetValues(a, c->d_val));
    TRY(prefill_y(c, c->m->rows, -0.5));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 2.0, c->x, -0.5);
    return check_y(c, c->m->rows, o);
}

static int case_transpose(Ctx *c, Out *o) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    int round;
    TRY(make_a(c, &a, c->d_val));
    TRY(make_vec(c, &x, c->m->rows, c->d_x));
    TRY(make_vec(c, &y, c->m->cols, c->d_y));
    for (round = 0; round < 2; ++round) {
        double alpha = round == 0 ? 1.5 : 2.0, beta = round == 0 ? 0.0 : -0.5;
        Scal al = scal(alpha), be = scal(beta);
        TRY(prefill_y(c, c->m->cols, beta));
        TRY(product(c, CUSPARSE_OPERATION_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
        reference(c, c->val, 1, alpha, c->x, beta);
        TRY(check_y(c, c->m->cols, o));
    }
    return 0;
}

static int case_base1(Ctx *c, Out *o) {
    const HostCsr *m = c->m;
    size_t rbytes = sizeof(int32_t) * (size_t)(m->rows + 1), cbytes = sizeof(int32_t) * (size_t)m->nnz;
    int32_t *hr = (int32_t *)xmalloc(rbytes), *hc = (int32_t *)xmalloc(cbytes);
    void *dr = NULL, *dc = NULL;
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(2.0), be = scal(-0.5);
    int64_t i;
    int rc;
    for (i = 0; i <= m->rows; ++i) hr[i] = m->rowptr[i] + 1;
    for (i = 0; i < m->nnz; ++i) hc[i] = m->colind[i] + 1;
    rc = dev_copy(&dr, hr, rbytes) || dev_copy(&dc, hc, cbytes);
    free(hr);
    free(hc);
    TRY(rc);
    TRY(make_csr(c, &a, dr, dc, c->d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ONE));
    TRY(make_xy(c, &x, &y));
    TRY(prefill_y(c, m->rows, -0.5));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 2.0, c->x, -0.5);
    return check_y(c, m->rows, o);
}

static int case_int64(Ctx *c, Out *o) {
    const HostCsr *m = c->m;
    size_t rbytes = sizeof(int64_t) * (size_t)(m->rows + 1), cbytes = sizeof(int64_t) * (size_t)m->nnz;
    int64_t *hr = (int64_t *)xmalloc(rbytes), *hc = (int64_t *)xmalloc(cbytes);
    void *dr = NULL, *dc = NULL;
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.5), be = scal(0.0);
    int64_t i;
    int rc;
    for (i = 0; i <= m->rows; ++i) hr[i] = m->rowptr[i];
    for (i = 0; i < m->nnz; ++i) hc[i] = m->colind[i];
    rc = dev_copy(&dr, hr, rbytes) || dev_copy(&dc, hc, cbytes);
    free(hr);
    free(hc);
    TRY(rc);
    TRY(make_csr(c, &a, dr, dc, c->d_val, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO));
    TRY(make_xy(c, &x, &y));
    TRY(prefill_y(c, m->rows, 0.0));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 1.5, c->x, 0.0);
    return check_y(c, m->rows, o);
}

static int case_ptr_device(Ctx *c, Out *o) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(2.0), be = scal(-0.5);
    void *d_scalars = NULL;
    char *d_al, *d_be;
    TRY(dev_alloc(&d_scalars, 2 * c->esz));
    d_al = (char *)d_scalars;
    d_be = d_al + c->esz;
    CK(cudaMemcpy(d_al, sp(c, &al), c->esz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_be, sp(c, &be), c->esz, cudaMemcpyHostToDevice));
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    TRY(prefill_y(c, c->m->rows, -0.5));
    SK(cusparseSetPointerMode(c->h, CUSPARSE_POINTER_MODE_DEVICE));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, d_al, a, x, d_be, y, CUSPARSE_SPMV_ALG_DEFAULT));
    reference(c, c->val, 0, 2.0, c->x, -0.5);
    return check_y(c, c->m->rows, o);
}

static int case_preprocess(Ctx *c, Out *o) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.5), be = scal(0.0);
    size_t bytes = 0;
    void *buf = NULL;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    SK(cusparseSpMV_bufferSize(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, &bytes));
    if (bytes > 0) TRY(dev_alloc(&buf, bytes));
    SK(cusparseSpMV_preprocess(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
    TRY(prefill_y(c, c->m->rows, 0.0));
    SK(cusparseSpMV(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
    reference(c, c->val, 0, 1.5, c->x, 0.0);
    TRY(check_y(c, c->m->rows, o));
    /* A second product on the same buffer with another x. */
    TRY(upload(c, c->d_x, c->t_x2, c->m->cols));
    TRY(prefill_y(c, c->m->rows, 0.0));
    SK(cusparseSpMV(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
    reference(c, c->val, 0, 1.5, c->x2, 0.0);
    return check_y(c, c->m->rows, o);
}

static int case_stream(Ctx *c, Out *o) {
    const size_t busy_bytes = (size_t)256 << 20; /* about 0.1 ms of memset on an H100 */
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.5), be = scal(0.0);
    size_t bytes = 0;
    void *buf = NULL, *busy = NULL, *px = NULL, *py = NULL, *pnan = NULL;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
    /* Pinned host memory, so the copies are truly asynchronous. */
    TRY(pinned_alloc(&px, c->esz * (size_t)c->n));
    TRY(pinned_alloc(&py, c->esz * (size_t)c->n));
    TRY(pinned_alloc(&pnan, c->esz * (size_t)c->n));
    memcpy(px, c->t_x2, c->esz * (size_t)c->n);
    memcpy(pnan, c->t_nan, c->esz * (size_t)c->n);
    TRY(dev_alloc(&busy, busy_bytes));
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    SK(cusparseSetStream(c->h, c->stream));
    SK(cusparseSpMV_bufferSize(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, &bytes));
    if (bytes > 0) TRY(dev_alloc(&buf, bytes));
    CK(cudaDeviceSynchronize());
    /* All on the stream, nothing waited for in between: busy work, the new x, NaN into y, the
       product, y back. */
    CK(cudaMemsetAsync(busy, 0, busy_bytes, c->stream));
    CK(cudaMemcpyAsync(c->d_x, px, c->esz * (size_t)c->m->cols, cudaMemcpyHostToDevice, c->stream));
    CK(cudaMemcpyAsync(c->d_y, pnan, c->esz * (size_t)c->m->rows, cudaMemcpyHostToDevice, c->stream));
    SK(cusparseSpMV(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
    CK(cudaMemcpyAsync(py, c->d_y, c->esz * (size_t)c->m->rows, cudaMemcpyDeviceToHost, c->stream));
    CK(cudaStreamSynchronize(c->stream));
    reference(c, c->val, 0, 1.5, c->x2, 0.0);
    compare_host(c, py, c->m->rows, o);
    return 0;
}

static int case_beta_one_twice(Ctx *c, Out *o) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.0), be = scal(1.0);
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    TRY(prefill_y(c, c->m->rows, 1.0));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    TRY(product(c, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, CUSPARSE_SPMV_ALG_DEFAULT));
    /* y0 + 2 A x: twice A x, plus y0 once. */
    reference(c, c->val, 0, 2.0, c->x, 1.0);
    return check_y(c, c->m->rows, o);
}

static int case_alpha0(Ctx *c, Out *o) {
    return plain_product(c, o, CUSPARSE_SPMV_ALG_DEFAULT, 0.0, 0.5, c->d_val, c->val);
}

/* ---- CUDA graphs and threads ---- */

/* Capture one cusparseSpMV (A x, ALG_DEFAULT) on stream s, which must be the handle's stream, into
   a graph (cudaStreamCaptureModeGlobal) and instantiate it; both tracked. The capture is ended
   also when the call fails inside it, so the stream is never left capturing. */
static int capture_spmv(const Ctx *c, cudaStream_t s, const void *alpha, cusparseConstSpMatDescr_t a,
                        cusparseConstDnVecDescr_t x, const void *beta, cusparseDnVecDescr_t y, void *buf,
                        cudaGraph_t *graph, cudaGraphExec_t *exec) {
    cusparseStatus_t st;
    cudaError_t end;
    *graph = NULL;
    *exec = NULL;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    st = cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, a, x, beta, y, c->dt, CUSPARSE_SPMV_ALG_DEFAULT,
                      buf);
    end = cudaStreamEndCapture(s, graph);
    if (*graph != NULL) track(R_GRAPH, *graph);
    SK(st);
    if (end != cudaSuccess) {
        report_error(__LINE__, "cudaStreamEndCapture(s, graph)", cudaGetErrorName(end), cudaGetErrorString(end));
        return -1;
    }
    CK(cudaGraphInstantiate(exec, *graph, 0)); /* the CUDA 12+ signature: flags, no error node */
    track(R_GEXEC, *exec);
    return 0;
}

static int drop_graph(cudaGraph_t graph, cudaGraphExec_t exec) {
    untrack(exec);
    CK(cudaGraphExecDestroy(exec));
    untrack(graph);
    CK(cudaGraphDestroy(graph));
    return 0;
}

static int case_graph(Ctx *c, Out *o) {
    const HostCsr *m = c->m;
    const cudaStream_t s = c->stream;
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.5), be = scal(0.0);
    size_t bytes = 0;
    void *buf = NULL, *px = NULL, *py = NULL, *pnan = NULL;
    double *hx = (double *)host_alloc(sizeof(double) * (size_t)c->n);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    int round;
    int64_t i;
    TRY(pinned_alloc(&px, c->esz * (size_t)c->n));
    TRY(pinned_alloc(&py, c->esz * (size_t)c->n));
    TRY(pinned_alloc(&pnan, c->esz * (size_t)c->n));
    memcpy(pnan, c->t_nan, c->esz * (size_t)c->n);
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    SK(cusparseSpMV_bufferSize(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, c->dt,
                               CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    if (bytes > 0) TRY(dev_alloc(&buf, bytes));
    /* Outside any capture, on the default stream: the shim meets (analyzes) the matrix here. */
    TRY(prefill_y(c, m->rows, 0.0));
    SK(cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, c->dt,
                    CUSPARSE_SPMV_ALG_DEFAULT, buf));
    reference(c, c->val, 0, 1.5, c->x, 0.0);
    TRY(check_y(c, m->rows, o));
    /* Captured on the non-blocking stream: nothing runs until the graph is launched. */
    SK(cusparseSetStream(c->h, s));
    TRY(capture_spmv(c, s, sp(c, &al), a, x, sp(c, &be), y, buf, &graph, &exec));
    for (round = 0; round < 3; ++round) {
        for (i = 0; i < c->n; ++i) hx[i] = in_type(c, unit((uint64_t)i, 10 + (uint64_t)round));
        to_type(c, px, hx, c->n);
        /* All on the stream: the new x into the same device x, NaN into y (beta 0 must not read
           it, and a launch that writes nothing shows), before the 3rd launch the second values
           into the same values array, the launch, y back. */
        CK(cudaMemcpyAsync(c->d_x, px, c->esz * (size_t)m->cols, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(c->d_y, pnan, c->esz * (size_t)m->rows, cudaMemcpyHostToDevice, s));
        if (round == 2) CK(cudaMemcpyAsync(c->d_val, c->t_val2, c->esz * (size_t)m->nnz, cudaMemcpyHostToDevice, s));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaMemcpyAsync(py, c->d_y, c->esz * (size_t)m->rows, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        reference(c, round == 2 ? c->val2 : c->val, 0, 1.5, hx, 0.0);
        compare_host(c, py, m->rows, o);
    }
    return drop_graph(graph, exec);
}

static int case_graph_first(Ctx *c, Out *o) {
    const HostCsr *m = c->m;
    const cudaStream_t s = c->stream;
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.5), be = scal(0.0), al2 = scal(2.0), be2 = scal(-0.5);
    size_t bytes = 0;
    void *buf = NULL, *dr = NULL, *dc = NULL, *dv = NULL;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    /* Fresh copies of all three arrays while the originals are still allocated: addresses the
       shim has not met for this matrix (only a freed copy of an earlier matrix of the same sizes
       could give them back). */
    TRY(dev_copy(&dr, m->rowptr, sizeof(int32_t) * (size_t)(m->rows + 1)));
    TRY(dev_copy(&dc, m->colind, sizeof(int32_t) * (size_t)m->nnz));
    TRY(dev_copy(&dv, c->t_val, c->esz * (size_t)m->nnz));
    TRY(make_csr(c, &a, dr, dc, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO));
    TRY(make_xy(c, &x, &y));
    SK(cusparseSpMV_bufferSize(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), a, x, sp(c, &be), y, c->dt,
                               CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    if (bytes > 0) TRY(dev_alloc(&buf, bytes));
    /* The second x while capturing: a product run then instead of captured would use it. */
    TRY(upload(c, c->d_x, c->t_x2, m->cols));
    CK(cudaDeviceSynchronize()); /* the uploads (default stream) done before the other stream reads */
    /* The first product of this matrix, inside a capture: the shim forwards it. */
    SK(cusparseSetStream(c->h, s));
    TRY(capture_spmv(c, s, sp(c, &al), a, x, sp(c, &be), y, buf, &graph, &exec));
    /* The first x and NaN into y on the stream, then the launch. */
    CK(cudaMemcpyAsync(c->d_x, c->t_x, c->esz * (size_t)m->cols, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(c->d_y, c->t_nan, c->esz * (size_t)m->rows, cudaMemcpyHostToDevice, s));
    CK(cudaGraphLaunch(exec, s));
    reference(c, c->val, 0, 1.5, c->x, 0.0);
    TRY(check_y(c, m->rows, o));
    TRY(drop_graph(graph, exec));
    /* Then outside any capture, same descriptors and stream (the shim's first analysis of it),
       the second x, beta -0.5. */
    TRY(upload(c, c->d_x, c->t_x2, m->cols));
    TRY(prefill_y(c, m->rows, -0.5));
    CK(cudaDeviceSynchronize());
    SK(cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al2), a, x, sp(c, &be2), y, c->dt,
                    CUSPARSE_SPMV_ALG_DEFAULT, buf));
    reference(c, c->val, 0, 2.0, c->x2, -0.5);
    return check_y(c, m->rows, o);
}

enum { N_THREADS = 4, THREAD_PRODUCTS = 50 };

/* The threads wait for each other to be set up, then start their products together. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready, go;
} Start;

/* One thread's work. Nothing here is tracked (the resource list is the main thread's): the thread
   frees what it made. */
typedef struct {
    const Ctx *c; /* the case's: matrix, shared device arrays, values in double */
    Start *start;
    int id, rc;
    Out o;
    /* The thread's own: a copy of the Ctx with its own handle, stream, x (double, for the
       reference), d_x, d_y, t_y (y on the host), ref and scale; and its descriptors and buffer. */
    Ctx t;
    void *t_x;
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    void *buf;
} Job;

/* The alpha of product k of thread id: a new one each time, exact in f32. */
static double thread_alpha(int id, int k) { return 0.5 + 0.125 * k + 0.0625 * id; }

static int thread_setup(Job *j) {
    const Ctx *c = j->c;
    Ctx *t = &j->t;
    const HostCsr *m = c->m;
    Scal al = scal(1.0), be = scal(0.0);
    size_t bytes = 0;
    int64_t i;
    t->x = (double *)xmalloc(sizeof(double) * (size_t)c->n);
    t->ref = (double *)xmalloc(sizeof(double) * (size_t)c->n);
    t->scale = (double *)xmalloc(sizeof(double) * (size_t)c->n);
    t->t_y = xmalloc(c->esz * (size_t)c->n);
    j->t_x = xmalloc(c->esz * (size_t)c->n);
    for (i = 0; i < c->n; ++i) t->x[i] = in_type(c, unit((uint64_t)i, 20 + (uint64_t)j->id));
    to_type(c, j->t_x, t->x, c->n);
    SK(cusparseCreate(&t->h));
    CK(cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking));
    SK(cusparseSetStream(t->h, t->stream));
    CK(cudaMalloc(&t->d_x, c->esz * (size_t)c->n));
    CK(cudaMalloc(&t->d_y, c->esz * (size_t)c->n));
    /* Pageable host memory: stream-ordered all the same. NaN into y: beta 0 must not read it. */
    CK(cudaMemcpyAsync(t->d_x, j->t_x, c->esz * (size_t)m->cols, cudaMemcpyHostToDevice, t->stream));
    CK(cudaMemcpyAsync(t->d_y, c->t_nan, c->esz * (size_t)m->rows, cudaMemcpyHostToDevice, t->stream));
    SK(cusparseCreateCsr(&j->a, m->rows, m->cols, m->nnz, c->d_rowptr, c->d_colind, c->d_val, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, c->dt));
    SK(cusparseCreateDnVec(&j->x, m->cols, t->d_x, c->dt));
    SK(cusparseCreateDnVec(&j->y, m->rows, t->d_y, c->dt));
    SK(cusparseSpMV_bufferSize(t->h, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(c, &al), j->a, j->x, sp(c, &be), j->y,
                               c->dt, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    if (bytes > 0) CK(cudaMalloc(&j->buf, bytes));
    return 0;
}

/* THREAD_PRODUCTS products back to back on the thread's stream, y checked after the middle one and
   the last. */
static int thread_run(Job *j) {
    Ctx *t = &j->t;
    const HostCsr *m = t->m;
    int k;
    for (k = 0; k < THREAD_PRODUCTS; ++k) {
        double alpha = thread_alpha(j->id, k);
        Scal al = scal(alpha), be = scal(0.0);
        SK(cusparseSpMV(t->h, CUSPARSE_OPERATION_NON_TRANSPOSE, sp(t, &al), j->a, j->x, sp(t, &be), j->y, t->dt,
                        CUSPARSE_SPMV_ALG_DEFAULT, j->buf));
        if (k == THREAD_PRODUCTS / 2 - 1 || k == THREAD_PRODUCTS - 1) {
            CK(cudaMemcpyAsync(t->t_y, t->d_y, t->esz * (size_t)m->rows, cudaMemcpyDeviceToHost, t->stream));
            CK(cudaStreamSynchronize(t->stream));
            reference(t, t->val, 0, alpha, t->x, 0.0);
            compare_host(t, t->t_y, m->rows, &j->o);
        }
    }
    return 0;
}

static void *thread_main(void *arg) {
    Job *j = (Job *)arg;
    Ctx *t = &j->t;
    int rc = thread_setup(j);
    pthread_mutex_lock(&j->start->lock);
    ++j->start->ready;
    pthread_cond_broadcast(&j->start->cond);
    while (!j->start->go) pthread_cond_wait(&j->start->cond, &j->start->lock);
    pthread_mutex_unlock(&j->start->lock);
    if (rc == 0) rc = thread_run(j);
    if (j->a != NULL) cusparseDestroySpMat(j->a);
    if (j->x != NULL) cusparseDestroyDnVec(j->x);
    if (j->y != NULL) cusparseDestroyDnVec(j->y);
    if (t->stream != NULL) {
        cudaError_t e = cudaStreamSynchronize(t->stream);
        if (e != cudaSuccess) {
            report_error(__LINE__, "cudaStreamSynchronize(t->stream)", cudaGetErrorName(e), cudaGetErrorString(e));
            rc = -1;
        }
    }
    cudaFree(j->buf);
    cudaFree(t->d_x);
    cudaFree(t->d_y);
    if (t->stream != NULL) cudaStreamDestroy(t->stream);
    if (t->h != NULL) cusparseDestroy(t->h);
    free(t->x);
    free(t->ref);
    free(t->scale);
    free(t->t_y);
    free(j->t_x);
    j->rc = rc;
    return NULL;
}

static int case_threads(Ctx *c, Out *o) {
    Job jobs[N_THREADS];
    pthread_t tid[N_THREADS];
    Start start;
    int i, started = 0, rc = 0;
    memset(&start, 0, sizeof start);
    if (pthread_mutex_init(&start.lock, NULL) != 0 || pthread_cond_init(&start.cond, NULL) != 0) {
        report_error(__LINE__, "pthread_mutex_init / pthread_cond_init", "failed", "?");
        return -1;
    }
    for (i = 0; i < N_THREADS; ++i) {
        Job *j = &jobs[i];
        memset(j, 0, sizeof *j);
        j->c = c;
        j->start = &start;
        j->id = i;
        j->rc = -1;
        j->o.maxrel = 0.0;
        j->o.nan = 0;
        /* The thread's own fields start empty: the thread fills them, and frees what it filled. */
        j->t = *c;
        j->t.h = NULL;
        j->t.stream = NULL;
        j->t.x = j->t.ref = j->t.scale = NULL;
        j->t.t_y = NULL;
        j->t.d_x = j->t.d_y = NULL;
    }
    for (i = 0; i < N_THREADS; ++i) {
        if (pthread_create(&tid[i], NULL, thread_main, &jobs[i]) != 0) {
            report_error(__LINE__, "pthread_create", "failed", "?");
            rc = -1;
            break;
        }
        ++started;
    }
    /* All set up (or failed to), then all go at once. */
    pthread_mutex_lock(&start.lock);
    while (start.ready < started) pthread_cond_wait(&start.cond, &start.lock);
    start.go = 1;
    pthread_cond_broadcast(&start.cond);
    pthread_mutex_unlock(&start.lock);
    for (i = 0; i < started; ++i) {
        pthread_join(tid[i], NULL);
        if (jobs[i].rc != 0) rc = -1;
        if (!(jobs[i].o.maxrel <= o->maxrel)) o->maxrel = jobs[i].o.maxrel;
        if (jobs[i].o.nan) o->nan = 1;
    }
    pthread_cond_destroy(&start.cond);
    pthread_mutex_destroy(&start.lock);
    return rc;
}

typedef struct {
    const char *name;
    int (*run)(Ctx *, Out *);
} Case;

static const Case CASES[] = {
    {"default_beta0", case_default_beta0},
    {"beta", case_beta},
    {"alg1", case_alg1},
    {"alg2", case_alg2},
    {"const", case_const},
    {"inplace_same", case_inplace_same},
    {"inplace_new", case_inplace_new},
    {"setvalues", case_setvalues},
    {"transpose", case_transpose},
    {"base1", case_base1},
    {"int64", case_int64},
    {"ptr_device", case_ptr_device},
    {"preprocess", case_preprocess},
    {"stream", case_stream},
    {"beta_one_twice", case_beta_one_twice},
    {"alpha0", case_alpha0},
    {"graph", case_graph},
    {"graph_first", case_graph_first},
    {"threads", case_threads},
};
#define N_CASES ((int)(sizeof CASES / sizeof CASES[0]))

/* Every case starts here: the first values in d_val, the second in d_val2, x in d_x; host pointer
   mode on the default stream. */
static int reset_state(const Ctx *c) {
    TRY(upload(c, c->d_val, c->t_val, c->m->nnz));
    TRY(upload(c, c->d_val2, c->t_val2, c->m->nnz));
    TRY(upload(c, c->d_x, c->t_x, c->n));
    SK(cusparseSetPointerMode(c->h, CUSPARSE_POINTER_MODE_HOST));
    SK(cusparseSetStream(c->h, (cudaStream_t)0));
    CK(cudaDeviceSynchronize());
    return 0;
}

/* ---- timing ---- */

/* Calls per timing or block: n, scaled down past 2^21 entries (n * 2^21 / nnz, at least 20). */
static int calls_for(int n, int64_t nnz) {
    const int64_t big = (int64_t)1 << 21;
    int64_t k;
    if (nnz <= big) return n;
    k = (int64_t)n * big / nnz;
    if (k < 20) k = 20;
    return k < n ? (int)k : n;
}

static int time_products(Ctx *c, int iters, int check, double *spmv_us, double *percall_us, Out *o) {
    const int warm = 10;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.0), be = scal(0.0);
    size_t bytes = 0, cap = 0;
    void *buf = NULL;
    double t0 = 0.0;
    int i;

    /* (i) warm products on one set of descriptors */
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    SK(cusparseSpMV_bufferSize(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, &bytes));
    if (bytes > 0) TRY(dev_alloc(&buf, bytes));
    for (i = 0; i < warm + iters; ++i) {
        if (i == warm) {
            CK(cudaDeviceSynchronize());
            t0 = now_s();
        }
        SK(cusparseSpMV(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
    }
    CK(cudaDeviceSynchronize());
    *spmv_us = (now_s() - t0) * 1e6 / iters;
    if (check) {
        reference(c, c->val, 0, 1.0, c->x, 0.0);
        TRY(check_y(c, c->m->rows, o));
    }
    release_all();

    /* (ii) CuPy's pattern: new descriptors every call, one buffer grown when too small */
    buf = NULL;
    for (i = 0; i < warm + iters; ++i) {
        if (i == warm) {
            CK(cudaDeviceSynchronize());
            t0 = now_s();
        }
        SK(cusparseCreateCsr(&a, c->m->rows, c->m->cols, c->m->nnz, c->d_rowptr, c->d_colind, c->d_val,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, c->dt));
        SK(cusparseCreateDnVec(&x, c->m->cols, c->d_x, c->dt));
        SK(cusparseCreateDnVec(&y, c->m->rows, c->d_y, c->dt));
        SK(cusparseSpMV_bufferSize(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, &bytes));
        if (bytes > cap) {
            if (buf != NULL) {
                untrack(buf);
                CK(cudaFree(buf));
            }
            TRY(dev_alloc(&buf, bytes));
            cap = bytes;
        }
        SK(cusparseSpMV(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
        SK(cusparseDestroySpMat(a));
        SK(cusparseDestroyDnVec(x));
        SK(cusparseDestroyDnVec(y));
    }
    CK(cudaDeviceSynchronize());
    *percall_us = (now_s() - t0) * 1e6 / iters;
    return check ? check_y(c, c->m->rows, o) : 0;
}

/* ---- the shim's own cost: the real cusparseSpMV and the linked one, in turn ---- */

typedef cusparseStatus_t (*SpmvFn)(cusparseHandle_t, cusparseOperation_t, const void *, cusparseConstSpMatDescr_t,
                                   cusparseConstDnVecDescr_t, const void *, cusparseDnVecDescr_t, cudaDataType,
                                   cusparseSpMVAlg_t, void *);

static SpmvFn g_real_spmv = NULL, g_linked_spmv = NULL;

/* The file of the loaded object holding address p ("?" when none). */
static const char *object_of(const void *p) {
    Dl_info di;
    if (p == NULL || dladdr(p, &di) == 0 || di.dli_fname == NULL) return "?";
    return di.dli_fname;
}

/* The real cusparseSpMV (dlsym on the real library's own handle: a preloaded shim is not searched
   there) and the linked one; prints where each is. -1 (reported) when the real one is not found. */
static int find_spmv(void) {
    void *h = dlopen("libcusparse.so.12", RTLD_LAZY | RTLD_NOLOAD), *sym, *next;
    const char *how = "libcusparse.so.12";
    if (h == NULL) {
        /* Not under that name: the library cusparseCreate came from (the shim defines only the two
           SpMV calls). */
        cusparseStatus_t (*create)(cusparseHandle_t *) = cusparseCreate;
        void *p;
        Dl_info di;
        memcpy(&p, &create, sizeof p);
        if (dladdr(p, &di) != 0 && di.dli_fname != NULL) {
            how = di.dli_fname;
            h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        }
    }
    sym = h != NULL ? dlsym(h, "cusparseSpMV") : NULL;
    if (sym == NULL) {
        const char *why = dlerror();
        printf("ERROR overhead: the real cusparseSpMV not found (%s: %s)\n", how, why ? why : "?");
        fflush(stdout);
        return -1;
    }
    memcpy(&g_real_spmv, &sym, sizeof sym);
    g_linked_spmv = cusparseSpMV;
    /* What the program's calls reach: the first definition after the program itself. */
    next = dlsym(RTLD_NEXT, "cusparseSpMV");
    printf("INFO overhead real=%s linked=%s same=%s\n", object_of(sym), object_of(next),
           next == sym ? "yes" : "no");
    fflush(stdout);
    return 0;
}

static void sort_doubles(double *v, int n) {
    int i, j;
    for (i = 1; i < n; ++i) {
        double t = v[i];
        for (j = i; j > 0 && v[j - 1] > t; --j) v[j] = v[j - 1];
        v[j] = t;
    }
}

/* Median and interquartile range of n values (sorted in place). */
static double median_of(double *v, int n, double *iqr) {
    sort_doubles(v, n);
    *iqr = v[(3 * (n - 1)) / 4] - v[(n - 1) / 4];
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { OVH_BLOCKS = 11, OVH_WARM = 5 };

/* One block: `calls` products through fn on a, x, y (percall: on descriptors made and destroyed
   around each, as CuPy), then cudaStreamSynchronize. Wall time and in-call time per call, us. */
static int ovh_block(Ctx *c, SpmvFn fn, int calls, int percall, cusparseSpMatDescr_t a, cusparseDnVecDescr_t x,
                     cusparseDnVecDescr_t y, void *buf, size_t cap, double *wall_us, double *host_us) {
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
    Scal al = scal(1.0), be = scal(0.0);
    double t0, t1, host = 0.0;
    size_t bytes = 0;
    int i;
    CK(cudaStreamSynchronize((cudaStream_t)0));
    t0 = now_s();
    for (i = 0; i < calls; ++i) {
        if (percall) {
            SK(cusparseCreateCsr(&a, c->m->rows, c->m->cols, c->m->nnz, c->d_rowptr, c->d_colind, c->d_val,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, c->dt));
            SK(cusparseCreateDnVec(&x, c->m->cols, c->d_x, c->dt));
            SK(cusparseCreateDnVec(&y, c->m->rows, c->d_y, c->dt));
            SK(cusparseSpMV_bufferSize(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, &bytes));
            if (bytes > cap) {
                report_error(__LINE__, "cusparseSpMV_bufferSize", "more than at the warm-up", "?");
                return -1;
            }
        }
        t1 = now_s();
        SK(fn(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, buf));
        host += now_s() - t1;
        if (percall) {
            SK(cusparseDestroySpMat(a));
            SK(cusparseDestroyDnVec(x));
            SK(cusparseDestroyDnVec(y));
        }
    }
    CK(cudaStreamSynchronize((cudaStream_t)0));
    *wall_us = (now_s() - t0) * 1e6 / calls;
    *host_us = host * 1e6 / calls;
    return 0;
}

/* res[pattern][0 real, 1 linked][0 wall, 1 host] medians and iqr[...] their spreads; y checked after
   each pattern's last (linked) block when `check`. */
static int overhead(Ctx *c, int calls, int check, double res[2][2][2], double iqr[2][2][2], Out *o) {
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
    SpmvFn fns[2];
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t x, y;
    Scal al = scal(1.0), be = scal(0.0);
    size_t bytes = 0;
    void *buf = NULL;
    double wall[2][OVH_BLOCKS], host[2][OVH_BLOCKS], w, hc;
    int pattern, b, f;
    fns[0] = g_real_spmv;
    fns[1] = g_linked_spmv;
    TRY(make_a(c, &a, c->d_val));
    TRY(make_xy(c, &x, &y));
    SK(cusparseSpMV_bufferSize(c->h, op, sp(c, &al), a, x, sp(c, &be), y, c->dt, alg, &bytes));
    TRY(dev_alloc(&buf, bytes));
    /* Warm-up: both functions, both patterns (the shim analyzes the matrix on its first call). */
    for (b = 0; b < 2 * 2; ++b) TRY(ovh_block(c, fns[b % 2], OVH_WARM, b / 2, a, x, y, buf, bytes, &w, &hc));
    if (check) reference(c, c->val, 0, 1.0, c->x, 0.0);
    for (pattern = 0; pattern < 2; ++pattern) {
        for (b = 0; b < 2 * OVH_BLOCKS; ++b) {
            f = b % 2;
            TRY(ovh_block(c, fns[f], calls, pattern, a, x, y, buf, bytes, &wall[f][b / 2], &host[f][b / 2]));
        }
        if (check) TRY(check_y(c, c->m->rows, o));
        for (f = 0; f < 2; ++f) {
            res[pattern][f][0] = median_of(wall[f], OVH_BLOCKS, &iqr[pattern][f][0]);
            res[pattern][f][1] = median_of(host[f], OVH_BLOCKS, &iqr[pattern][f][1]);
        }
    }
    return 0;
}

/* ---- the driver ---- */

static int tol_ok(const Out *o, double tol) { return !o->nan && o->maxrel <= tol; }

static void set_label(const HostCsr *m, const char *type, const char *what) {
    snprintf(g_label, sizeof g_label, "%s %s %s", m->name, type, what);
}

/* Host copies in the type (and their double twins), device arrays; -1 when a call failed. */
static int setup_type(Ctx *c, int is32) {
    const HostCsr *m = c->m;
    int64_t i, n = c->n;
    double *nan_src;
    c->is32 = is32;
    c->dt = is32 ? CUDA_R_32F : CUDA_R_64F;
    c->esz = is32 ? sizeof(float) : sizeof(double);
    c->val = (double *)xmalloc(sizeof(double) * (size_t)m->nnz);
    c->val2 = (double *)xmalloc(sizeof(double) * (size_t)m->nnz);
    c->x = (double *)xmalloc(sizeof(double) * (size_t)n);
    c->x2 = (double *)xmalloc(sizeof(double) * (size_t)n);
    c->y0 = (double *)xmalloc(sizeof(double) * (size_t)n);
    nan_src = (double *)xmalloc(sizeof(double) * (size_t)n);
    for (i = 0; i < m->nnz; ++i) {
        c->val[i] = in_type(c, m->val[i]);
        c->val2[i] = in_type(c, -0.75 * m->val[i] + 0.25 * unit((uint64_t)i, 4));
    }
    for (i = 0; i < n; ++i) {
        c->x[i] = in_type(c, unit((uint64_t)i, 1));
        c->x2[i] = in_type(c, unit((uint64_t)i, 2));
        c->y0[i] = in_type(c, unit((uint64_t)i, 3));
        nan_src[i] = 0.0;
        nan_src[i] = nan_src[i] / nan_src[i]; /* NaN without <math.h> */
    }
    c->t_val = xmalloc(c->esz * (size_t)m->nnz);
    c->t_val2 = xmalloc(c->esz * (size_t)m->nnz);
    c->t_x = xmalloc(c->esz * (size_t)n);
    c->t_x2 = xmalloc(c->esz * (size_t)n);
    c->t_y0 = xmalloc(c->esz * (size_t)n);
    c->t_nan = xmalloc(c->esz * (size_t)n);
    c->t_y = xmalloc(c->esz * (size_t)n);
    to_type(c, c->t_val, c->val, m->nnz);
    to_type(c, c->t_val2, c->val2, m->nnz);
    to_type(c, c->t_x, c->x, n);
    to_type(c, c->t_x2, c->x2, n);
    to_type(c, c->t_y0, c->y0, n);
    to_type(c, c->t_nan, nan_src, n);
    free(nan_src);
    c->ref = (double *)xmalloc(sizeof(double) * (size_t)n);
    c->scale = (double *)xmalloc(sizeof(double) * (size_t)n);
    c->d_val = c->d_val2 = c->d_x = c->d_y = NULL;
    CK(cudaMalloc(&c->d_val, c->esz * (size_t)(m->nnz ? m->nnz : 1)));
    CK(cudaMalloc(&c->d_val2, c->esz * (size_t)(m->nnz ? m->nnz : 1)));
    CK(cudaMalloc(&c->d_x, c->esz * (size_t)n));
    CK(cudaMalloc(&c->d_y, c->esz * (size_t)n));
    return 0;
}

static void teardown_type(Ctx *c) {
    free(c->val);
    free(c->val2);
    free(c->x);
    free(c->x2);
    free(c->y0);
    free(c->t_val);
    free(c->t_val2);
    free(c->t_x);
    free(c->t_x2);
    free(c->t_y0);
    free(c->t_nan);
    free(c->t_y);
    free(c->ref);
    free(c->scale);
    cudaFree(c->d_val);
    cudaFree(c->d_val2);
    cudaFree(c->d_x);
    cudaFree(c->d_y);
}

static int upload_indices(Ctx *c) {
    const HostCsr *m = c->m;
    c->d_rowptr = c->d_colind = NULL;
    CK(cudaMalloc((void **)&c->d_rowptr, sizeof(int32_t) * (size_t)(m->rows + 1)));
    CK(cudaMalloc((void **)&c->d_colind, sizeof(int32_t) * (size_t)(m->nnz ? m->nnz : 1)));
    CK(cudaMemcpy(c->d_rowptr, m->rowptr, sizeof(int32_t) * (size_t)(m->rows + 1), cudaMemcpyHostToDevice));
    if (m->nnz > 0)
        CK(cudaMemcpy(c->d_colind, m->colind, sizeof(int32_t) * (size_t)m->nnz, cudaMemcpyHostToDevice));
    return 0;
}

static int case_selected(const char *list, const char *name) {
    size_t len = strlen(name);
    const char *p = list;
    if (list == NULL) return 1;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == list || p[-1] == ',') && (p[len] == 0 || p[len] == ',')) return 1;
        p += len;
    }
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: spmv_compare [--check] [--time N] [--overhead N] [--no-check] [--cases a,b] "
                    "[--tol64 E] [--tol32 E] MATRIX.mtx|gen:NAME...\n");
    exit(2);
}

int main(int argc, char **argv) {
    int check = 0, iters = 0, ovh_n = 0, verify = 1, i, first_matrix = argc, t, k;
    const char *cases = NULL;
    double tol64 = 1e-12, tol32 = 1e-5;
    cusparseHandle_t h;
    cudaStream_t stream;
    int sp_version = 0, rt_version = 0;

    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
            if (iters < 1) usage();
        } else if (strcmp(argv[i], "--overhead") == 0 && i + 1 < argc) {
            ovh_n = atoi(argv[++i]);
            if (ovh_n < 1) usage();
        } else if (strcmp(argv[i], "--no-check") == 0) {
            verify = 0;
        } else if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc) {
            cases = argv[++i];
        } else if (strcmp(argv[i], "--tol64") == 0 && i + 1 < argc) {
            tol64 = atof(argv[++i]);
        } else if (strcmp(argv[i], "--tol32") == 0 && i + 1 < argc) {
            tol32 = atof(argv[++i]);
        } else if (strncmp(argv[i], "--", 2) == 0) {
            usage();
        } else {
            first_matrix = i;
            break;
        }
    }
    if (first_matrix >= argc) usage();
    if (!check && iters == 0 && ovh_n == 0) check = 1;

    snprintf(g_label, sizeof g_label, "setup");
    if (cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS ||
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        printf("ERROR setup: cusparseCreate or cudaStreamCreateWithFlags failed\nSUMMARY ok=0 fail=1\n");
        return 1;
    }
    cusparseGetVersion(h, &sp_version);
    cudaRuntimeGetVersion(&rt_version);
    printf("INFO cusparse_version=%d cudart_version=%d\n", sp_version, rt_version);
    fflush(stdout);
    if (ovh_n > 0 && find_spmv() != 0) {
        ++g_fail;
        ovh_n = 0;
    }

    for (i = first_matrix; i < argc; ++i) {
        HostCsr m;
        Ctx c;
        char err[256];
        double t_load = now_s();
        if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc) { /* for the matrices after it */
            cases = argv[++i];
            continue;
        }
        if (load_matrix(argv[i], &m, err, sizeof err) != 0) {
            printf("ERROR %s: %s\n", argv[i], err);
            ++g_fail;
            continue;
        }
        printf("MATRIX %s rows=%lld cols=%lld nnz=%lld mean_row=%.1f max_row=%lld load_s=%.2f\n", m.name,
               (long long)m.rows, (long long)m.cols, (long long)m.nnz, m.rows ? (double)m.nnz / (double)m.rows : 0.0,
               (long long)m.max_row, now_s() - t_load);
        fflush(stdout);
        memset(&c, 0, sizeof c);
        c.m = &m;
        c.h = h;
        c.stream = stream;
        c.n = m.rows > m.cols ? m.rows : m.cols;
        if (c.n == 0) c.n = 1;
        set_label(&m, "-", "upload");
        if (upload_indices(&c) != 0) {
            ++g_fail;
            cudaFree(c.d_rowptr);
            cudaFree(c.d_colind);
            free_matrix(&m);
            continue;
        }
        for (t = 0; t < 2; ++t) {
            const char *type = t == 0 ? "f64" : "f32";
            double tol = t == 0 ? tol64 : tol32;
            set_label(&m, type, "setup");
            if (setup_type(&c, t == 1) != 0) {
                ++g_fail;
                teardown_type(&c);
                continue;
            }
            if (check) {
                for (k = 0; k < N_CASES; ++k) {
                    Out o;
                    int rc, ok;
                    if (!case_selected(cases, CASES[k].name)) continue;
                    o.maxrel = 0.0;
                    o.nan = 0;
                    set_label(&m, type, CASES[k].name);
                    rc = reset_state(&c);
                    if (rc == 0) rc = CASES[k].run(&c, &o);
                    release_all();
                    if (rc == 0 && cudaDeviceSynchronize() != cudaSuccess) rc = -1;
                    ok = rc == 0 && tol_ok(&o, tol);
                    printf("CASE %s %s %s %s maxrel=%.3e%s\n", m.name, type, CASES[k].name, ok ? "ok" : "FAIL",
                           rc == 0 ? o.maxrel : -1.0, o.nan ? " nan=yes" : (rc ? " error=yes" : ""));
                    fflush(stdout);
                    if (ok)
                        ++g_ok;
                    else
                        ++g_fail;
                }
            }
            if (iters > 0) {
                Out o;
                double us_spmv = -1.0, us_call = -1.0;
                int rc, ok, calls = calls_for(iters, m.nnz);
                o.maxrel = 0.0;
                o.nan = 0;
                set_label(&m, type, "time");
                rc = reset_state(&c);
                if (rc == 0) rc = time_products(&c, calls, verify, &us_spmv, &us_call, &o);
                release_all();
                ok = rc == 0 && tol_ok(&o, tol);
                printf("TIME %s %s spmv_us=%.2f percall_us=%.2f calls=%d check=%s\n", m.name, type, us_spmv, us_call,
                       calls, !ok ? "FAIL" : verify ? "ok" : "skip");
                fflush(stdout);
                if (ok)
                    ++g_ok;
                else
                    ++g_fail;
            }
            if (ovh_n > 0) {
                static const char *const WHAT[2] = {"OVERHEAD", "OVERHEAD_PERCALL"};
                Out o;
                double res[2][2][2], iqr[2][2][2];
                int rc, ok, p, calls = calls_for(ovh_n, m.nnz);
                const char *verdict;
                o.maxrel = 0.0;
                o.nan = 0;
                set_label(&m, type, "overhead");
                rc = reset_state(&c);
                if (rc == 0) rc = overhead(&c, calls, verify, res, iqr, &o);
                release_all();
                ok = rc == 0 && tol_ok(&o, tol);
                verdict = !ok ? "FAIL" : verify ? "ok" : "skip";
                if (rc == 0) {
                    for (p = 0; p < 2; ++p)
                        printf("%s %s %s real_us=%.3f linked_us=%.3f diff_us=%.3f iqr_us=%.3f calls=%d check=%s\n",
                               WHAT[p], m.name, type, res[p][0][0], res[p][1][0], res[p][1][0] - res[p][0][0],
                               iqr[p][0][0] > iqr[p][1][0] ? iqr[p][0][0] : iqr[p][1][0], calls, verdict);
                    printf("HOSTCALL %s %s real_us=%.3f linked_us=%.3f diff_us=%.3f iqr_us=%.3f\n", m.name, type,
                           res[0][0][1], res[0][1][1], res[0][1][1] - res[0][0][1],
                           iqr[0][0][1] > iqr[0][1][1] ? iqr[0][0][1] : iqr[0][1][1]);
                } else {
                    printf("OVERHEAD %s %s real_us=-1 linked_us=-1 diff_us=0 iqr_us=0 calls=%d check=FAIL\n", m.name,
                           type, calls);
                }
                fflush(stdout);
                if (ok)
                    ++g_ok;
                else
                    ++g_fail;
            }
            teardown_type(&c);
        }
        cudaFree(c.d_rowptr);
        cudaFree(c.d_colind);
        free_matrix(&m);
    }
    cudaStreamDestroy(stream);
    cusparseDestroy(h);
    printf("SUMMARY ok=%d fail=%d\n", g_ok, g_fail);
    return g_fail > 0 ? 1 : 0;
}
