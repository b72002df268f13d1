/* A stand-in for libcusparse.so.12 in the shim's CI tests (no GPU, no CUDA there): its
 * descriptors and handle are the test's own structs, its getters read them, and its
 * cusparseSpMV / cusparseSpMV_preprocess only record what reached them and answer a status
 * the test chooses, so that a forwarded call can be told apart from one the shim answered. */
#include <stdint.h>

struct fake_mat {
    int format, bad;
    int64_t rows, cols, nnz;
    const void *row_ptr, *col_ind, *values;
    int row_type, col_type, base, value_type;
};
struct fake_vec {
    int64_t size;
    const void *values;
    int value_type;
};
struct fake_handle {
    void *stream;
    int pointer_mode;
};
struct fake_record {
    int spmv_calls, preprocess_calls, op, alg, compute;
    const void *handle, *alpha, *mat, *x, *beta, *y, *buffer;
    int answer;
};

static struct fake_record rec = {0};

struct fake_record *fake_record(void) { return &rec; }

int cusparseSpMatGetFormat(const void *d, int *format) {
    const struct fake_mat *m = d;
    if (m == 0 || m->bad) return 3;
    *format = m->format;
    return 0;
}

int cusparseConstCsrGet(const void *d, int64_t *rows, int64_t *cols, int64_t *nnz,
                        const void **row_ptr, const void **col_ind, const void **values,
                        int *row_type, int *col_type, int *base, int *value_type) {
    const struct fake_mat *m = d;
    if (m == 0 || m->bad) return 3;
    *rows = m->rows;
    *cols = m->cols;
    *nnz = m->nnz;
    *row_ptr = m->row_ptr;
    *col_ind = m->col_ind;
    *values = m->values;
    *row_type = m->row_type;
    *col_type = m->col_type;
    *base = m->base;
    *value_type = m->value_type;
    return 0;
}

int cusparseConstDnVecGet(const void *d, int64_t *size, const void **values, int *value_type) {
    const struct fake_vec *v = d;
    if (v == 0) return 3;
    *size = v->size;
    *values = v->values;
    *value_type = v->value_type;
    return 0;
}

int cusparseGetStream(void *h, void **stream) {
    const struct fake_handle *fh = h;
    if (fh == 0) return 1;
    *stream = fh->stream;
    return 0;
}

int cusparseGetPointerMode(void *h, int *mode) {
    const struct fake_handle *fh = h;
    if (fh == 0) return 1;
    *mode = fh->pointer_mode;
    return 0;
}

static void record(void *h, int op, const void *alpha, const void *mat, const void *x,
                   const void *beta, void *y, int compute, int alg, void *buffer) {
    rec.handle = h;
    rec.op = op;
    rec.alpha = alpha;
    rec.mat = mat;
    rec.x = x;
    rec.beta = beta;
    rec.y = y;
    rec.compute = compute;
    rec.alg = alg;
    rec.buffer = buffer;
}

int cusparseSpMV(void *h, int op, const void *alpha, const void *mat, const void *x,
                 const void *beta, void *y, int compute, int alg, void *buffer) {
    rec.spmv_calls++;
    record(h, op, alpha, mat, x, beta, y, compute, alg, buffer);
    return rec.answer;
}

int cusparseSpMV_preprocess(void *h, int op, const void *alpha, const void *mat, const void *x,
                            const void *beta, void *y, int compute, int alg, void *buffer) {
    rec.preprocess_calls++;
    record(h, op, alpha, mat, x, beta, y, compute, alg, buffer);
    return rec.answer;
}
