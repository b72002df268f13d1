/*
 * The plugin's CUDA staging path without PETSc: tessera_cuda_dl.c's round trips through pinned
 * and device buffers, then (when tessera opens a CUDA handle) the exact sequence the plugin runs
 * for host vectors on the CUDA backend: set the stream, upload x (and y), spmv on the device
 * buffers, download y. Without a CUDA driver it prints "skipped: ..." and exits 0 (1 when
 * TESSERA_EXPECT_CUDA=1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

#include "tessera_cuda_dl.h"

static int checks, failures;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL: %s\n", what);
  }
}

static int round_trips(tpcu *c, size_t n) {
  char err[256];
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  size_t i;
  int which;
  if (!a || !b) return -1;
  for (i = 0; i < n; i++) a[i] = (double)i * 0.5 - 3.0;
  if (tpcu_reserve(c, n * sizeof *a, err, sizeof err)) {
    printf("FAIL: tpcu_reserve(%zu): %s\n", n * sizeof *a, err);
    failures++;
    free(a);
    free(b);
    return -1;
  }
  for (which = TPCU_X; which <= TPCU_Y; which++) {
    memset(b, 0, n * sizeof *b);
    check(!tpcu_upload(c, which, a, n * sizeof *a, err, sizeof err), "tpcu_upload");
    check(!tpcu_download(c, which, b, n * sizeof *b, err, sizeof err), "tpcu_download");
    check(!memcmp(a, b, n * sizeof *a), "round trip through pinned and device memory");
  }
  check(tpcu_upload(c, TPCU_X, a, (n + 1) * sizeof *a, err, sizeof err) != 0, "an upload larger than the buffer is refused");
  free(a);
  free(b);
  return 0;
}

int main(void) {
  char err[256];
  tpcu *c = NULL;
  tessera_handle h = NULL;
  tessera_matrix A = NULL;
  tessera_status s;
  /* A = [[4 1 0], [0 3 0], [2 0 5]] */
  const int32_t row_ptr[] = {0, 2, 3, 5}, col_ind[] = {0, 1, 1, 0, 2};
  const double values[] = {4, 1, 3, 2, 5}, x[] = {1, 2, 3}, one = 1, zero = 0;
  const double want_ax[] = {6, 6, 17}, want_atx_plus[] = {10 + 1, 7 + 1, 15 + 1};
  double y[3], ones[3] = {1, 1, 1};
  int i, ok;

  if (tpcu_open(&c, 0, err, sizeof err)) {
    printf("skipped: no CUDA device for the staging buffers (%s)\n", err);
    return getenv("TESSERA_EXPECT_CUDA") && !strcmp(getenv("TESSERA_EXPECT_CUDA"), "1");
  }
  check(tpcu_stream(c) != NULL, "a stream was created");
  round_trips(c, 1000);
  round_trips(c, 300000); /* grows the buffers */
  check(!tpcu_sync_context(c, err, sizeof err), "tpcu_sync_context");

  s = tessera_create_with(&h, TESSERA_BACKEND_CUDA, 0);
  if (s != TESSERA_STATUS_SUCCESS) {
    printf("tessera has no CUDA handle here (%s: %s): staging round trips only\n", tessera_status_name(s), tessera_last_error());
  } else {
    check(tessera_set_stream(h, tpcu_stream(c)) == TESSERA_STATUS_SUCCESS, "tessera_set_stream");
    check(tessera_create_csr(h, &A, 3, 3, 5, row_ptr, col_ind, values, TESSERA_INDEX_TYPE_I32, TESSERA_INDEX_BASE_ZERO,
                             TESSERA_VALUE_TYPE_F64) == TESSERA_STATUS_SUCCESS,
          "tessera_create_csr");
    check(tessera_analyze(h, A, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) == TESSERA_STATUS_SUCCESS, "tessera_analyze");
    /* y = A x (beta = 0: y is not uploaded) */
    check(!tpcu_upload(c, TPCU_X, x, sizeof x, err, sizeof err), "upload x");
    s = tessera_spmv(h, TESSERA_OPERATION_NON_TRANSPOSE, &one, A, tpcu_device_ptr(c, TPCU_X), &zero, tpcu_device_ptr(c, TPCU_Y));
    if (s != TESSERA_STATUS_SUCCESS) printf("tessera_spmv: %s: %s\n", tessera_status_name(s), tessera_last_error());
    check(s == TESSERA_STATUS_SUCCESS, "tessera_spmv on the staging buffers");
    check(!tpcu_download(c, TPCU_Y, y, sizeof y, err, sizeof err), "download y");
    for (ok = 1, i = 0; i < 3; i++) ok &= fabs(y[i] - want_ax[i]) < 1e-12;
    check(ok, "y = A x through the staging buffers");
    /* y = A^T x + y (beta = 1: y is uploaded too) */
    check(!tpcu_upload(c, TPCU_X, x, sizeof x, err, sizeof err), "upload x");
    check(!tpcu_upload(c, TPCU_Y, ones, sizeof ones, err, sizeof err), "upload y");
    s = tessera_spmv(h, TESSERA_OPERATION_TRANSPOSE, &one, A, tpcu_device_ptr(c, TPCU_X), &one, tpcu_device_ptr(c, TPCU_Y));
    check(s == TESSERA_STATUS_SUCCESS, "tessera_spmv transpose on the staging buffers");
    check(!tpcu_download(c, TPCU_Y, y, sizeof y, err, sizeof err), "download y");
    for (ok = 1, i = 0; i < 3; i++) ok &= fabs(y[i] - want_atx_plus[i]) < 1e-12;
    check(ok, "y = A^T x + y through the staging buffers");
    printf("tessera CUDA product through the staging buffers: y = %g %g %g\n", y[0], y[1], y[2]);
    tessera_destroy_matrix(A);
    tessera_destroy(h);
  }
  tpcu_close(c);
  if (failures) printf("FAILED: %d of %d checks\n", failures, checks);
  else printf("ok: %d checks\n", checks);
  return failures != 0;
}
