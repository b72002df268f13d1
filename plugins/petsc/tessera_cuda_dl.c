/*
 * CUDA driver API loaded at run time (see tessera_cuda_dl.h). Only the entry points below are
 * used; their versioned names (`_v2`) are the ones cuda.h maps the plain names to since CUDA
 * 4.0 (11.0 for cuDevicePrimaryCtxRelease).
 */
#include "tessera_cuda_dl.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

static struct {
  int tried, ok;
  char why[256];
  CUresult (*Init)(unsigned int);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);
  CUresult (*CtxPush)(CUcontext);
  CUresult (*CtxPop)(CUcontext *);
  CUresult (*CtxSynchronize)(void);
  CUresult (*StreamCreate)(CUstream *, unsigned int);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemAllocHost)(void **, size_t);
  CUresult (*MemFreeHost)(void *);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*GetErrorName)(CUresult, const char **);
} cu;

struct tpcu_s {
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  size_t cap;
  CUdeviceptr d[2];
  void *h[2];
};

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  if (err && errlen) {
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static const char *cu_name(CUresult r) {
  const char *s = NULL;
  if (cu.GetErrorName && cu.GetErrorName(r, &s) == 0 && s) return s;
  return "CUDA_ERROR_UNKNOWN";
}

/* Looks one symbol up; a missing one is remembered in cu.why. */
static void *sym(void *lib, const char *name, const char *fallback) {
  void *p = dlsym(lib, name);
  if (!p && fallback) p = dlsym(lib, fallback);
  if (!p && !cu.why[0]) snprintf(cu.why, sizeof cu.why, "libcuda.so.1 has no symbol %s", name);
  return p;
}

static int load(char *err, size_t errlen) {
  if (!cu.tried) {
    void *lib;
    cu.tried = 1;
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      snprintf(cu.why, sizeof cu.why, "cannot load libcuda.so.1 (%s)", e ? e : "unknown reason");
      return fail(err, errlen, "%s", cu.why);
    }
    /* Assigning a data pointer to a function pointer goes through memcpy: ISO C has no cast
       between them, and POSIX guarantees the representations agree. */
#define TPCU_SYM(field, name, fallback)                 \
  do {                                                  \
    void *p_ = sym(lib, name, fallback);                \
    memcpy(&cu.field, &p_, sizeof p_);                  \
  } while (0)
    TPCU_SYM(Init, "cuInit", NULL);
    TPCU_SYM(DeviceGet, "cuDeviceGet", NULL);
    TPCU_SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
    TPCU_SYM(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
    TPCU_SYM(CtxPush, "cuCtxPushCurrent_v2", NULL);
    TPCU_SYM(CtxPop, "cuCtxPopCurrent_v2", NULL);
    TPCU_SYM(CtxSynchronize, "cuCtxSynchronize", NULL);
    TPCU_SYM(StreamCreate, "cuStreamCreate", NULL);
    TPCU_SYM(StreamDestroy, "cuStreamDestroy_v2", NULL);
    TPCU_SYM(StreamSynchronize, "cuStreamSynchronize", NULL);
    TPCU_SYM(MemAlloc, "cuMemAlloc_v2", NULL);
    TPCU_SYM(MemFree, "cuMemFree_v2", NULL);
    TPCU_SYM(MemAllocHost, "cuMemAllocHost_v2", NULL);
    TPCU_SYM(MemFreeHost, "cuMemFreeHost", NULL);
    TPCU_SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL);
    TPCU_SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL);
    TPCU_SYM(GetErrorName, "cuGetErrorName", NULL);
#undef TPCU_SYM
    if (cu.why[0]) return fail(err, errlen, "%s", cu.why);
    {
      CUresult r = cu.Init(0);
      if (r) {
        snprintf(cu.why, sizeof cu.why, "cuInit failed: %s", cu_name(r));
        return fail(err, errlen, "%s", cu.why);
      }
    }
    cu.ok = 1;
  }
  return cu.ok ? 0 : fail(err, errlen, "%s", cu.why);
}

/* Runs one driver call with the context pushed; names the call in the error. */
#define TPCU_CALL(c, call, what)                                                     \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_) {                                                                        \
      CUcontext popped_;                                                             \
      cu.CtxPop(&popped_);                                                           \
      return fail(err, errlen, "%s failed: %s", (what), cu_name(r_));                \
    }                                                                                \
  } while (0)

static int push(tpcu *c, char *err, size_t errlen) {
  CUresult r = cu.CtxPush(c->ctx);
  return r ? fail(err, errlen, "cuCtxPushCurrent failed: %s", cu_name(r)) : 0;
}

static void pop(void) {
  CUcontext popped;
  cu.CtxPop(&popped);
}

int tpcu_open(tpcu **out, int device, char *err, size_t errlen) {
  tpcu *c;
  CUresult r;
  if (load(err, errlen)) return -1;
  c = (tpcu *)calloc(1, sizeof *c);
  if (!c) return fail(err, errlen, "out of host memory");
  r = cu.DeviceGet(&c->dev, device);
  if (r) {
    free(c);
    return fail(err, errlen, "cuDeviceGet(%d) failed: %s", device, cu_name(r));
  }
  r = cu.PrimaryCtxRetain(&c->ctx, c->dev);
  if (r) {
    free(c);
    return fail(err, errlen, "cuDevicePrimaryCtxRetain(%d) failed: %s", device, cu_name(r));
  }
  if (push(c, err, errlen)) {
    cu.PrimaryCtxRelease(c->dev);
    free(c);
    return -1;
  }
  r = cu.StreamCreate(&c->stream, 0);
  pop();
  if (r) {
    cu.PrimaryCtxRelease(c->dev);
    free(c);
    return fail(err, errlen, "cuStreamCreate failed: %s", cu_name(r));
  }
  *out = c;
  return 0;
}

static void free_buffers(tpcu *c) {
  int i;
  for (i = 0; i < 2; i++) {
    if (c->d[i]) cu.MemFree(c->d[i]);
    if (c->h[i]) cu.MemFreeHost(c->h[i]);
    c->d[i] = 0;
    c->h[i] = NULL;
  }
  c->cap = 0;
}

int tpcu_reserve(tpcu *c, size_t bytes, char *err, size_t errlen) {
  int i;
  if (bytes <= c->cap) return 0;
  if (push(c, err, errlen)) return -1;
  TPCU_CALL(c, cu.StreamSynchronize(c->stream), "cuStreamSynchronize");
  free_buffers(c);
  for (i = 0; i < 2; i++) {
    TPCU_CALL(c, cu.MemAlloc(&c->d[i], bytes), "cuMemAlloc");
    TPCU_CALL(c, cu.MemAllocHost(&c->h[i], bytes), "cuMemAllocHost");
  }
  c->cap = bytes;
  pop();
  return 0;
}

int tpcu_upload(tpcu *c, int which, const void *src, size_t bytes, char *err, size_t errlen) {
  if (bytes > c->cap) return fail(err, errlen, "upload of %zu bytes exceeds the %zu-byte buffer", bytes, c->cap);
  if (!bytes) return 0;
  if (push(c, err, errlen)) return -1;
  /* The pinned twin may still be the source of an earlier copy on the stream. */
  TPCU_CALL(c, cu.StreamSynchronize(c->stream), "cuStreamSynchronize");
  memcpy(c->h[which], src, bytes);
  TPCU_CALL(c, cu.MemcpyHtoDAsync(c->d[which], c->h[which], bytes, c->stream), "cuMemcpyHtoDAsync");
  pop();
  return 0;
}

int tpcu_download(tpcu *c, int which, void *dst, size_t bytes, char *err, size_t errlen) {
  if (bytes > c->cap) return fail(err, errlen, "download of %zu bytes exceeds the %zu-byte buffer", bytes, c->cap);
  if (!bytes) return 0;
  if (push(c, err, errlen)) return -1;
  TPCU_CALL(c, cu.MemcpyDtoHAsync(c->h[which], c->d[which], bytes, c->stream), "cuMemcpyDtoHAsync");
  TPCU_CALL(c, cu.StreamSynchronize(c->stream), "cuStreamSynchronize");
  pop();
  memcpy(dst, c->h[which], bytes);
  return 0;
}

void *tpcu_device_ptr(const tpcu *c, int which) { return (void *)(size_t)c->d[which]; }

void *tpcu_stream(const tpcu *c) { return (void *)c->stream; }

int tpcu_sync_context(tpcu *c, char *err, size_t errlen) {
  if (push(c, err, errlen)) return -1;
  TPCU_CALL(c, cu.CtxSynchronize(), "cuCtxSynchronize");
  pop();
  return 0;
}

int tpcu_sync_stream(tpcu *c, char *err, size_t errlen) {
  if (push(c, err, errlen)) return -1;
  TPCU_CALL(c, cu.StreamSynchronize(c->stream), "cuStreamSynchronize");
  pop();
  return 0;
}

void tpcu_close(tpcu *c) {
  if (!c) return;
  if (cu.CtxPush(c->ctx) == 0) {
    cu.StreamSynchronize(c->stream);
    free_buffers(c);
    cu.StreamDestroy(c->stream);
    pop();
  }
  cu.PrimaryCtxRelease(c->dev);
  free(c);
}
