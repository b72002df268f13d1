/*
 * The few CUDA driver calls the PETSc plugin needs to stage host vectors through device buffers
 * when a tessera handle runs on the CUDA backend. libcuda.so.1 is opened at run time with
 * dlopen, never linked: the plugin loads and runs on machines without a GPU or driver.
 *
 * This file knows nothing of PETSc (so it can be compiled and tested on its own). Every
 * function returns 0 on success, or -1 with a sentence in err[0..errlen).
 */
#ifndef TESSERA_CUDA_DL_H
#define TESSERA_CUDA_DL_H

#include <stddef.h>

/* One CUDA device's primary context, a stream, and two device buffers (x and y) with their
   pinned host staging twins. */
typedef struct tpcu_s tpcu;

/* Which staging buffer. */
enum { TPCU_X = 0, TPCU_Y = 1 };

/* Retains the primary context of `device` and creates a stream on it. */
int tpcu_open(tpcu **out, int device, char *err, size_t errlen);

/* Grows both buffer pairs to at least `bytes` each (no-op when large enough). */
int tpcu_reserve(tpcu *c, size_t bytes, char *err, size_t errlen);

/* Copies `bytes` from host memory `src` into device buffer `which`, through its pinned twin.
   Asynchronous on the stream with respect to the device; `src` may be reused at return. */
int tpcu_upload(tpcu *c, int which, const void *src, size_t bytes, char *err, size_t errlen);

/* Copies `bytes` of device buffer `which` into host memory `dst` (through its pinned twin),
   after all work queued on the stream so far; synchronous. */
int tpcu_download(tpcu *c, int which, void *dst, size_t bytes, char *err, size_t errlen);

/* The device address of buffer `which`, as the pointer tessera_spmv takes. */
void *tpcu_device_ptr(const tpcu *c, int which);

/* The stream (a CUstream), for tessera_set_stream. */
void *tpcu_stream(const tpcu *c);

/* Waits for all work of the context (any stream) to finish. */
int tpcu_sync_context(tpcu *c, char *err, size_t errlen);

/* Waits for the stream. */
int tpcu_sync_stream(tpcu *c, char *err, size_t errlen);

/* Frees the buffers and the stream and releases the primary context. NULL is a no-op. */
void tpcu_close(tpcu *c);

#endif /* TESSERA_CUDA_DL_H */
