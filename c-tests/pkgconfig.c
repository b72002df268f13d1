/* pkgconfig.c: the smallest complete tessera program, built by tests/install.rs against an
 * installed prefix with nothing but `pkg-config --cflags --libs tessera`.
 *
 * A = [1 0 2; 0 3 0] (2x3), x = [1 2 3]: A x = [7 6]. Host backend. Prints "ok: N checks". */
#include <stdio.h>
#include <tessera.h>

static int checks = 0, failures = 0;

static void check(int ok, const char *what) {
    ++checks;
    if (!ok) {
        ++failures;
        fprintf(stderr, "FAIL: %s (last error: %s)\n", what, tessera_last_error());
    }
}

int main(void) {
    const int32_t row_ptr[] = {0, 2, 3};
    const int32_t col_ind[] = {0, 2, 1};
    const double values[] = {1, 2, 3};
    const double x[] = {1, 2, 3};
    double y[2] = {-1, -1};
    const double alpha = 1.0, beta = 0.0;
    int major = -1, minor = -1, patch = -1;
    tessera_handle h = NULL;
    tessera_matrix A = NULL;

    check(tessera_create_with(&h, TESSERA_BACKEND_HOST, 0) == TESSERA_STATUS_SUCCESS, "create_with(host)");
    if (h == NULL) return 1;
    check(tessera_create_csr(h, &A, 2, 3, 3, row_ptr, col_ind, values, TESSERA_INDEX_TYPE_I32,
                             TESSERA_INDEX_BASE_ZERO, TESSERA_VALUE_TYPE_F64) == TESSERA_STATUS_SUCCESS,
          "create_csr");
    if (A == NULL) return 1;
    check(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) == TESSERA_STATUS_SUCCESS,
          "analyze");
    check(tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &alpha, A, x, &beta, y) == TESSERA_STATUS_SUCCESS,
          "spmv");
    check(y[0] == 7.0 && y[1] == 6.0, "A x == [7 6]");
    check(tessera_get_version(&major, &minor, &patch) == TESSERA_STATUS_SUCCESS, "get_version");
    check(major == TESSERA_VERSION_MAJOR && minor == TESSERA_VERSION_MINOR && patch == TESSERA_VERSION_PATCH,
          "installed header and library have the same version");
    check(tessera_destroy_matrix(A) == TESSERA_STATUS_SUCCESS, "destroy_matrix");
    check(tessera_destroy(h) == TESSERA_STATUS_SUCCESS, "destroy");
    if (failures != 0) {
        fprintf(stderr, "FAILED: %d of %d checks\n", failures, checks);
        return 1;
    }
    printf("ok: %d checks (tessera %d.%d.%d)\n", checks, major, minor, patch);
    return 0;
}
