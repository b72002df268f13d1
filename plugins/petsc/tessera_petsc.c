/*
 * tessera as PETSc matrix types, loaded at run time:
 *
 *   -dll_append /path/libtessera_petsc.so -mat_type seqaijtessera   (or mpiaijtessera, aijtessera)
 *
 * seqaijtessera is a SeqAIJ matrix (MatSetType(A, MATSEQAIJ), then its operations are read with
 * MatGetOperation and replaced with MatSetOperation) that keeps a tessera copy of itself and runs
 * MatMult, MatMultAdd, MatMultTranspose and MatMultTransposeAdd through tessera_spmv. Everything
 * else (MatSetValues, factorizations, MatGetRow...) is SeqAIJ's own. Only public PETSc API is
 * used; the plugin's per-matrix data is a PetscContainer composed with the matrix.
 *
 * The tessera copy is created and analyzed at the first product (or ascii_info view). After
 * that, MatAssemblyEnd (chained) brings it up to date at once: same nonzero state ->
 * tessera_update_values; new nonzero state -> destroy, create and analyze again. Changes made
 * without an assembly (MatScale, MatZeroEntries, MatSeqAIJRestoreArray...) raise the object
 * state and are picked up the same way at the next product.
 *
 * mpiaijtessera is an MPIAIJ matrix whose diagonal and off-diagonal blocks are seqaijtessera: the
 * local products run through tessera, PETSc does the ghost exchange. aijtessera is the root name
 * (seqaijtessera on one process, mpiaijtessera otherwise), registered with MatRegisterRootName.
 */
#include <petscdevice.h>
#include <petscmat.h>
#include <tessera.h>

#include <stdlib.h>
#include <string.h>

#include "tessera_cuda_dl.h"

/* The one function used that no public header of PETSc 3.18 declares: PetscObjectStateGet is
   exported by libpetsc and has a manual page (Level: advanced), but its prototype lives in
   petsc/private/petscimpl.h. It is how value changes made without an assembly (MatScale,
   MatZeroEntries, MatSeqAIJRestoreArray...) are noticed; PETSc's own aijsell reads the same
   counter. */
PETSC_EXTERN PetscErrorCode PetscObjectStateGet(PetscObject, PetscObjectState *);

#define MATSEQAIJTESSERA "seqaijtessera"
#define MATMPIAIJTESSERA "mpiaijtessera"
#define MATAIJTESSERA "aijtessera"

#if defined(PETSC_USE_COMPLEX)
#error "tessera multiplies real matrices only: build against a real-scalar PETSc (Debian: libpetsc-real-dev)"
#endif
#if defined(PETSC_USE_REAL_SINGLE)
#define TP_VALUE_TYPE TESSERA_VALUE_TYPE_F32
#elif defined(PETSC_USE_REAL_DOUBLE)
#define TP_VALUE_TYPE TESSERA_VALUE_TYPE_F64
#else
#error "tessera supports float and double scalars only"
#endif
#if defined(PETSC_USE_64BIT_INDICES)
#define TP_INDEX_TYPE TESSERA_INDEX_TYPE_I64
#else
#define TP_INDEX_TYPE TESSERA_INDEX_TYPE_I32
#endif

/* PETSc versions differ in three places the plugin touches. build.sh decides each by compiling a
   probe against the PETSc it builds for (TP_* given with -D); without it, the release that made
   the change decides:
   - TP_OPTION_ITEMS_IS_POINTER: PetscOptionItems is itself a pointer (XXXSetFromOptions takes
     PetscOptionItems), where 3.18 passed PetscOptionItems *;
   - TP_HAVE_CTX_DESTROY: PetscContainerSetCtxDestroy, whose destroy function receives the address
     of the context; it deprecates PetscContainerSetUserDestroy;
   - TP_HAVE_STREAM_HANDLE: PetscDeviceContextGetStreamHandle, the stream PETSc's device context
     (and so its CUDA vectors) runs on. */
#ifndef TP_OPTION_ITEMS_IS_POINTER
#if PETSC_VERSION_GE(3, 23, 0)
#define TP_OPTION_ITEMS_IS_POINTER 1
#else
#define TP_OPTION_ITEMS_IS_POINTER 0
#endif
#endif
#ifndef TP_HAVE_CTX_DESTROY
#if PETSC_VERSION_GE(3, 23, 0)
#define TP_HAVE_CTX_DESTROY 1
#else
#define TP_HAVE_CTX_DESTROY 0
#endif
#endif
#ifndef TP_HAVE_STREAM_HANDLE
#if PETSC_VERSION_GE(3, 19, 0)
#define TP_HAVE_STREAM_HANDLE 1
#else
#define TP_HAVE_STREAM_HANDLE 0
#endif
#endif
#if TP_OPTION_ITEMS_IS_POINTER
typedef PetscOptionItems TpOptionItems;
#else
typedef PetscOptionItems *TpOptionItems;
#endif

/* The device-array path for CUDA vectors exists only in a CUDA-enabled PETSc. It can be
   compile-checked elsewhere with -DTESSERA_PETSC_CHECK_CUDA_VEC_PATH (the VecCUDA functions are
   declared in every PETSc 3.18; the result cannot be loaded there). */
#if defined(PETSC_HAVE_CUDA) || defined(TESSERA_PETSC_CHECK_CUDA_VEC_PATH)
#define TP_CUDA_VEC_PATH 1
#else
#define TP_CUDA_VEC_PATH 0
#endif

static const char *const tp_alg_names[] = {"auto", "csr_vector", "hola", "bccoo", "brc", "tile"};
static const char *const tp_tuning_names[] = {"none", "quick", "exhaustive", "online"};
static const char *const tp_backend_names[] = {"cuda", "host"}; /* TESSERA_BACKEND_CUDA, _HOST */
#define TP_N(a) ((PetscInt)(sizeof(a) / sizeof((a)[0])))

#define TP_BACKEND_UNSET (-1)

static const char *TpAlgName(tessera_algorithm a) { return a >= 0 && a < TP_N(tp_alg_names) ? tp_alg_names[a] : "?"; }

/* What the options ask for. */
typedef struct {
  tessera_algorithm alg;
  tessera_tuning tuning;
  int backend; /* TESSERA_BACKEND_CUDA, TESSERA_BACKEND_HOST, or TP_BACKEND_UNSET */
  int device;
  PetscBool device_set; /* -mat_tessera_device given; else PETSc's own device (CUDA PETSc) or 0 */
} TpSettings;

typedef PetscErrorCode (*TpMultFn)(Mat, Vec, Vec);
typedef PetscErrorCode (*TpMultAddFn)(Mat, Vec, Vec, Vec);
typedef PetscErrorCode (*TpAssemblyEndFn)(Mat, MatAssemblyType);
typedef PetscErrorCode (*TpDestroyFn)(Mat);
typedef PetscErrorCode (*TpDuplicateFn)(Mat, MatDuplicateOption, Mat *);
typedef PetscErrorCode (*TpViewFn)(Mat, PetscViewer);
typedef PetscErrorCode (*TpSetFromOptionsFn)(Mat, TpOptionItems);
typedef PetscErrorCode (*TpPreallocFn)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]);

/* Per-matrix data of seqaijtessera. */
typedef struct {
  /* SeqAIJ's operations, chained to and restored on conversion back to seqaij */
  TpMultFn mult, multtranspose;
  TpMultAddFn multadd, multtransposeadd;
  TpAssemblyEndFn assemblyend;
  TpDestroyFn destroy;
  TpDuplicateFn duplicate;
  TpViewFn view;
  TpSetFromOptionsFn setfromoptions;

  TpSettings set; /* requested */

  /* the tessera copy */
  tessera_handle h;
  int h_backend, h_device; /* what the handle runs on */
  int h_backend_requested; /* set.backend when the handle was made */
  tessera_matrix tm;
  tessera_algorithm tm_alg; /* requested algorithm and tuning of the current analysis */
  tessera_tuning tm_tuning;
  PetscInt rows, cols, nnz;
  PetscObjectState state, nzstate; /* of A when the copy was last brought up to date */
  PetscObjectState hook_state;     /* state seen by the MatAssemblyEnd hook ... */
  PetscBool after_hook;            /* ... whose caller raises it once more on return */
  tpcu *cuda;                      /* staging buffers when h runs on CUDA */
  void *h_stream;                  /* the stream h's work is ordered on (tessera_set_stream) */

  /* counters (MatView ascii_info, MatTesseraGetStats_C) */
  PetscInt64 analyses, updates, products;
  /* products by vector path (MatTesseraGetProductPaths_C): CUDA vectors' device arrays, host
     vectors staged through the pinned buffers (the rest ran on the host backend) */
  PetscInt64 products_device, products_staged;
} Mat_SeqAIJTessera;

/* Per-matrix data of mpiaijtessera. */
typedef struct {
  TpPreallocFn prealloc;
  TpAssemblyEndFn assemblyend;
  TpDestroyFn destroy;
  TpViewFn view;
  TpSetFromOptionsFn setfromoptions;
  TpSettings set;
} Mat_MPIAIJTessera;

static const char TP_SEQ_KEY[] = "MatSeqAIJTessera_data";

/* -log_view event: bringing the tessera copy up to date (create + analyze, or a value update),
   the counterpart of aijcusparse's MatCUSPARSCopyTo. */
static PetscLogEvent TP_EVENT_SYNC;
static const char TP_MPI_KEY[] = "MatMPIAIJTessera_data";

/* ------------------------------------------------------------------------------------------ */
/* small helpers */

static PetscErrorCode TpStatusError(tessera_status s) {
  switch (s) {
  case TESSERA_STATUS_ALLOC_FAILED:
    return PETSC_ERR_MEM;
  case TESSERA_STATUS_NOT_SUPPORTED:
  case TESSERA_STATUS_ARCH_MISMATCH:
  case TESSERA_STATUS_NO_DEVICE:
    return PETSC_ERR_SUP;
  case TESSERA_STATUS_INVALID_VALUE:
  case TESSERA_STATUS_INVALID_SIZE:
  case TESSERA_STATUS_INVALID_MATRIX:
    return PETSC_ERR_ARG_OUTOFRANGE;
  default:
    return PETSC_ERR_LIB;
  }
}

/* Any tessera failure becomes a PETSc error naming the call, the status and tessera's detail. */
#define TpCallTessera(call, what)                                                              \
  do {                                                                                         \
    tessera_status s_ = (call);                                                                \
    PetscCheck(s_ == TESSERA_STATUS_SUCCESS, PETSC_COMM_SELF, TpStatusError(s_), "%s failed: %s: %s", \
               (what), tessera_status_name(s_), tessera_last_error());                        \
  } while (0)

static PetscErrorCode TpParse(const char *option, const char *value, const char *const names[], PetscInt n,
                              PetscInt *idx) {
  char list[128] = "";
  PetscInt i;
  PetscBool eq;

  PetscFunctionBegin;
  for (i = 0; i < n; i++) {
    PetscCall(PetscStrcasecmp(value, names[i], &eq));
    if (eq) {
      *idx = i;
      PetscFunctionReturn(0);
    }
  }
  for (i = 0; i < n; i++) {
    PetscCall(PetscStrlcat(list, names[i], sizeof list));
    if (i + 1 < n) PetscCall(PetscStrlcat(list, ", ", sizeof list));
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s%s%s: unknown value; use one of %s", option,
          option[0] == '-' ? " " : "=", value, list);
}

static void TpDefaults(TpSettings *s) {
  s->alg = TESSERA_ALGORITHM_AUTO;
  s->tuning = TESSERA_TUNING_NONE;
  s->backend = TP_BACKEND_UNSET;
  s->device = 0;
  s->device_set = PETSC_FALSE;
}

/* Applies one option value (NULL: not given) to the settings. */
static PetscErrorCode TpApplyOption(TpSettings *s, const char *option, const char *value) {
  PetscInt idx = 0;

  PetscFunctionBegin;
  if (!value) PetscFunctionReturn(0);
  if (!strcmp(option, "-mat_tessera_algorithm")) {
    PetscCall(TpParse(option, value, tp_alg_names, TP_N(tp_alg_names), &idx));
    s->alg = (tessera_algorithm)idx;
  } else if (!strcmp(option, "-mat_tessera_tuning")) {
    PetscCall(TpParse(option, value, tp_tuning_names, TP_N(tp_tuning_names), &idx));
    s->tuning = (tessera_tuning)idx;
  } else {
    PetscCall(TpParse(option, value, tp_backend_names, TP_N(tp_backend_names), &idx));
    s->backend = (int)idx;
  }
  PetscFunctionReturn(0);
}

/* Reads the settings from the options database (no PetscOptionsObject: used at creation, where
   MatSetFromOptions may never be called, e.g. for the blocks of an MPIAIJ matrix). */
static PetscErrorCode TpReadOptionsDB(Mat A, TpSettings *s) {
  static const char *const opts[] = {"-mat_tessera_algorithm", "-mat_tessera_tuning", "-mat_tessera_backend"};
  const char *prefix;
  char value[64];
  PetscBool set;
  PetscInt i, dev;

  PetscFunctionBegin;
  PetscCall(MatGetOptionsPrefix(A, &prefix));
  for (i = 0; i < TP_N(opts); i++) {
    PetscCall(PetscOptionsGetString(NULL, prefix, opts[i], value, sizeof value, &set));
    if (set) PetscCall(TpApplyOption(s, opts[i], value));
  }
  PetscCall(PetscOptionsGetInt(NULL, prefix, "-mat_tessera_device", &dev, &set));
  if (set) {
    PetscCheck(dev >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_tessera_device %" PetscInt_FMT ": must be >= 0",
               dev);
    s->device = (int)dev;
    s->device_set = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

/* The same options inside MatSetFromOptions (so that -help lists them). */
static PetscErrorCode TpSetFromOptionsItems(TpOptionItems PetscOptionsObject, TpSettings *s) {
  char value[64];
  PetscBool set;
  PetscInt dev = s->device;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "tessera SpMV options (seqaijtessera, mpiaijtessera)");
  PetscCall(PetscOptionsString("-mat_tessera_algorithm", "SpMV method: auto, csr_vector, hola, bccoo, brc, tile", "MATSEQAIJTESSERA",
                               tp_alg_names[s->alg], value, sizeof value, &set));
  if (set) PetscCall(TpApplyOption(s, "-mat_tessera_algorithm", value));
  PetscCall(PetscOptionsString("-mat_tessera_tuning", "How much analysis may measure: none, quick, exhaustive, online",
                               "MATSEQAIJTESSERA", tp_tuning_names[s->tuning], value, sizeof value, &set));
  if (set) PetscCall(TpApplyOption(s, "-mat_tessera_tuning", value));
  PetscCall(PetscOptionsString("-mat_tessera_backend",
                               "Where products run: cuda, host (default: $TESSERA_BACKEND, else cuda with a fall back to host)",
                               "MATSEQAIJTESSERA", s->backend == TP_BACKEND_UNSET ? "unset" : tp_backend_names[s->backend], value,
                               sizeof value, &set));
  if (set) PetscCall(TpApplyOption(s, "-mat_tessera_backend", value));
  PetscCall(PetscOptionsInt("-mat_tessera_device", "CUDA device ordinal (default: the device of PETSc's device context with a CUDA PETSc, else 0)",
                            "MATSEQAIJTESSERA", dev, &dev, &set));
  if (set) {
    PetscCheck(dev >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_tessera_device %" PetscInt_FMT ": must be >= 0",
               dev);
    s->device = (int)dev;
    s->device_set = PETSC_TRUE;
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode TpGetSeq(Mat A, Mat_SeqAIJTessera **t) {
  PetscContainer c = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, TP_SEQ_KEY, (PetscObject *)&c));
  *t = NULL;
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)t));
  PetscFunctionReturn(0);
}

static PetscErrorCode TpGetSeqChecked(Mat A, Mat_SeqAIJTessera **t) {
  PetscFunctionBegin;
  PetscCall(TpGetSeq(A, t));
  PetscCheck(*t, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matrix has no seqaijtessera data (was it converted back to seqaij?)");
  PetscFunctionReturn(0);
}

static PetscErrorCode TpGetMPI(Mat A, Mat_MPIAIJTessera **t) {
  PetscContainer c = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, TP_MPI_KEY, (PetscObject *)&c));
  *t = NULL;
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)t));
  PetscFunctionReturn(0);
}

/* Composes `data` with A under `key` in a PetscContainer that frees it with `destroy`. */
typedef PetscErrorCode (*TpDataDestroyFn)(void *);
#if TP_HAVE_CTX_DESTROY
/* PetscContainerSetCtxDestroy passes the address of the context */
#define TP_CONTAINER_DESTROY(name, fn) \
  static PetscErrorCode name(void *pctx) { return fn(*(void **)pctx); }
#define TpContainerSetDestroy PetscContainerSetCtxDestroy
#else
#define TP_CONTAINER_DESTROY(name, fn) \
  static PetscErrorCode name(void *ctx) { return fn(ctx); }
#define TpContainerSetDestroy PetscContainerSetUserDestroy
#endif

static PetscErrorCode TpComposeData(Mat A, const char *key, void *data, TpDataDestroyFn destroy) {
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, data));
  PetscCall(TpContainerSetDestroy(c, destroy));
  PetscCall(PetscObjectCompose((PetscObject)A, key, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------ */
/* the tessera copy */

static void TpReleaseCopy(Mat_SeqAIJTessera *t) {
  tessera_destroy_matrix(t->tm);
  t->tm = NULL;
}

static void TpReleaseAll(Mat_SeqAIJTessera *t) {
  TpReleaseCopy(t);
  tessera_destroy(t->h);
  t->h = NULL;
  tpcu_close(t->cuda);
  t->cuda = NULL;
}

static PetscErrorCode TpFreeSeqData(void *ctx) {
  Mat_SeqAIJTessera *t = (Mat_SeqAIJTessera *)ctx;

  PetscFunctionBegin;
  TpReleaseAll(t);
  PetscCall(PetscFree(t));
  PetscFunctionReturn(0);
}
TP_CONTAINER_DESTROY(TpDestroySeqData, TpFreeSeqData)

/* The backend the settings and $TESSERA_BACKEND ask for; *fallback when a missing GPU may fall
   back to the host backend (neither the option nor the variable named one). */
static PetscErrorCode TpWantedBackend(const TpSettings *s, int *backend, PetscBool *fallback) {
  const char *env = getenv("TESSERA_BACKEND");
  PetscInt idx = 0;

  PetscFunctionBegin;
  *fallback = PETSC_FALSE;
  if (s->backend != TP_BACKEND_UNSET) *backend = s->backend;
  else if (env && env[0]) {
    PetscCall(TpParse("TESSERA_BACKEND", env, tp_backend_names, TP_N(tp_backend_names), &idx));
    *backend = (int)idx;
  } else {
    *backend = TESSERA_BACKEND_CUDA;
    *fallback = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

/* With a CUDA PETSc, a matrix whose products run on the CUDA backend makes CUDA vectors
   (MatCreateVecs), as aijcusparse does; on the host backend, standard ones. */
static PetscErrorCode TpSetDefaultVecType(Mat A, const TpSettings *s) {
  PetscFunctionBegin;
#if TP_CUDA_VEC_PATH
  {
    int backend;
    PetscBool fallback;
    PetscCall(TpWantedBackend(s, &backend, &fallback));
    PetscCall(MatSetVecType(A, backend == TESSERA_BACKEND_CUDA ? VECCUDA : VECSTANDARD));
  }
#else
  (void)A;
  (void)s;
#endif
  PetscFunctionReturn(0);
}

/* The CUDA device the settings ask for: -mat_tessera_device, else (CUDA PETSc) the device of
   PETSc's current device context, so that tessera runs where PETSc's CUDA vectors live; else 0. */
static PetscErrorCode TpWantedDevice(const TpSettings *s, int *device) {
  PetscFunctionBegin;
  *device = s->device;
#if defined(PETSC_HAVE_CUDA)
  if (!s->device_set) {
    PetscDeviceContext dctx;
    PetscDevice dev;
    PetscInt id;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetDevice(dctx, &dev));
    PetscCall(PetscDeviceGetDeviceId(dev, &id));
    *device = (int)id;
  }
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode TpMakeHandle(Mat A, Mat_SeqAIJTessera *t) {
  int backend, device = 0;
  PetscBool fallback;
  tessera_status s;
  char err[256];

  PetscFunctionBegin;
  TpReleaseAll(t);
  PetscCall(TpWantedBackend(&t->set, &backend, &fallback));
  if (backend == TESSERA_BACKEND_CUDA) PetscCall(TpWantedDevice(&t->set, &device));
  s = tessera_create_with(&t->h, backend, device);
  if (s == TESSERA_STATUS_NO_DEVICE && fallback) {
    PetscCall(PetscInfo(A, "tessera: no CUDA device (%s); using the host backend\n", tessera_last_error()));
    backend = TESSERA_BACKEND_HOST;
    s = tessera_create_with(&t->h, backend, 0);
  }
  if (s != TESSERA_STATUS_SUCCESS) t->h = NULL;
  PetscCheck(s == TESSERA_STATUS_SUCCESS, PETSC_COMM_SELF, TpStatusError(s),
             "tessera_create_with(backend=%s, device=%d) failed: %s: %s", tp_backend_names[backend], device,
             tessera_status_name(s), tessera_last_error());
  t->h_backend = backend;
  t->h_device = backend == TESSERA_BACKEND_HOST ? 0 : device;
  t->h_backend_requested = t->set.backend;
  if (backend == TESSERA_BACKEND_CUDA) {
    if (tpcu_open(&t->cuda, t->h_device, err, sizeof err)) {
      TpReleaseAll(t);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tessera: CUDA staging buffers: %s", err);
    }
    t->h_stream = tpcu_stream(t->cuda);
    TpCallTessera(tessera_set_stream(t->h, t->h_stream), "tessera_set_stream");
  }
  PetscCall(PetscInfo(A, "tessera: handle on the %s backend, device %d\n", tp_backend_names[t->h_backend], t->h_device));
  PetscFunctionReturn(0);
}

static PetscErrorCode TpLogInfo(Mat A, Mat_SeqAIJTessera *t, const char *what) {
  tessera_matrix_info info;

  PetscFunctionBegin;
  TpCallTessera(tessera_matrix_get_info(t->tm, &info), "tessera_matrix_get_info");
  PetscCall(PetscInfo(A,
                      "tessera: %s %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscInt_FMT
                      ": algorithm %s, params %s, device bytes %llu, analysis %g ms\n",
                      what, t->rows, t->cols, t->nnz, TpAlgName(info.algorithm),
                      info.params, (unsigned long long)info.device_bytes, info.analysis_ms));
  PetscFunctionReturn(0);
}

/* Brings the tessera copy up to date with A (assembled). `force`: the caller knows values may
   have changed without the object state showing it yet (the MatAssemblyEnd hook). */
static PetscErrorCode TpSync(Mat A, Mat_SeqAIJTessera *t, PetscBool force) {
  PetscObjectState st, nz;
  const PetscInt *ia, *ja;
  const PetscScalar *va;
  PetscInt m, n, nrows;
  PetscBool done, need_handle, reanalyze, recreate, updated = PETSC_FALSE;
  tessera_status s;
  int backend;
  PetscBool fallback;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (t->after_hook) {
    /* MatAssemblyEnd raises the state once after its hook returned: that is no change */
    t->after_hook = PETSC_FALSE;
    if (t->tm && st == t->hook_state + 1) t->state = st;
  }
  need_handle = !t->h || t->set.backend != t->h_backend_requested ||
                (t->h_backend == TESSERA_BACKEND_CUDA && t->set.device_set && t->set.device != t->h_device);
  if (!need_handle && t->h && t->set.backend == TP_BACKEND_UNSET) {
    /* $TESSERA_BACKEND may have been set since (tests do); a fallen-back handle stays */
    PetscCall(TpWantedBackend(&t->set, &backend, &fallback));
    if (!fallback && backend != t->h_backend) need_handle = PETSC_TRUE;
  }
  reanalyze = (PetscBool)(t->tm && (t->tm_alg != t->set.alg || t->tm_tuning != t->set.tuning));
  if (t->tm && !force && !need_handle && !reanalyze && st == t->state) PetscFunctionReturn(0);

  PetscCall(PetscLogEventBegin(TP_EVENT_SYNC, A, 0, 0, 0));
  if (need_handle) PetscCall(TpMakeHandle(A, t)); /* drops any copy made on the old handle */
  PetscCall(MatGetNonzeroState(A, &nz));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  PetscCheck(done && nrows == m, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "MatGetRowIJ did not give the CSR arrays of a %" PetscInt_FMT "-row SeqAIJ matrix", m);
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  recreate = (PetscBool)(!t->tm || nz != t->nzstate || m != t->rows || n != t->cols || ia[m] != t->nnz);
  if (recreate) {
    TpReleaseCopy(t);
    s = tessera_create_csr(t->h, &t->tm, (int64_t)m, (int64_t)n, (int64_t)ia[m], ia, ja, va, TP_INDEX_TYPE,
                           TESSERA_INDEX_BASE_ZERO, TP_VALUE_TYPE);
    if (s != TESSERA_STATUS_SUCCESS) t->tm = NULL;
    else {
      t->rows = m;
      t->cols = n;
      t->nnz = ia[m];
    }
  } else if (force || st != t->state) {
    s = tessera_update_values(t->h, t->tm, va);
    updated = PETSC_TRUE;
  } else s = TESSERA_STATUS_SUCCESS;
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  TpCallTessera(s, recreate ? "tessera_create_csr" : "tessera_update_values");
  if (t->h_backend == TESSERA_BACKEND_CUDA) {
    /* what went to the device, for -log_view's CpuToGpu column */
    if (recreate) PetscCall(PetscLogCpuToGpu((PetscLogDouble)((m + 1 + t->nnz) * sizeof(PetscInt) + t->nnz * sizeof(PetscScalar))));
    else if (updated) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(t->nnz * sizeof(PetscScalar))));
  }

  if (recreate || reanalyze) {
    s = tessera_analyze(t->h, t->tm, t->set.alg, t->set.tuning);
    if (s != TESSERA_STATUS_SUCCESS) TpReleaseCopy(t);
    PetscCheck(s == TESSERA_STATUS_SUCCESS, PETSC_COMM_SELF, TpStatusError(s),
               "tessera_analyze(algorithm=%s, tuning=%s) failed: %s: %s", tp_alg_names[t->set.alg],
               tp_tuning_names[t->set.tuning], tessera_status_name(s), tessera_last_error());
    t->tm_alg = t->set.alg;
    t->tm_tuning = t->set.tuning;
    t->analyses++;
    PetscCall(TpLogInfo(A, t, recreate ? "created and analyzed" : "re-analyzed"));
  }
  if (updated) {
    t->updates++;
    PetscCall(PetscInfo(A, "tessera: values updated (same nonzero pattern, no re-analysis), nnz %" PetscInt_FMT "\n", t->nnz));
  }
  t->state = st;
  t->nzstate = nz;
  PetscCall(PetscLogEventEnd(TP_EVENT_SYNC, A, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------ */
/* products */

/* Orders h's work on `stream` from now on. */
static PetscErrorCode TpUseStream(Mat_SeqAIJTessera *t, void *stream) {
  PetscFunctionBegin;
  if (t->h_stream != stream) {
    TpCallTessera(tessera_set_stream(t->h, stream), "tessera_set_stream");
    t->h_stream = stream;
  }
  PetscFunctionReturn(0);
}

#if TP_CUDA_VEC_PATH
/* y = op(A) x + beta y with x and y CUDA vectors: their device arrays go to tessera_spmv as
   they are. With PetscDeviceContextGetStreamHandle the product is queued on the stream of
   PETSc's current device context, where PETSc queues its own work on these vectors: no copy,
   no host synchronisation. Without it (older PETSc) the device is synchronized before and the
   handle's stream after the product. */
static PetscErrorCode TpApplyCuda(Mat_SeqAIJTessera *t, tessera_operation op, Vec x, PetscScalar beta, Vec y) {
  const PetscScalar *xa;
  PetscScalar *ya;
  const PetscScalar one = 1.0;
  tessera_status s = TESSERA_STATUS_SUCCESS;
  char err[256] = "";

  PetscFunctionBegin;
#if TP_HAVE_STREAM_HANDLE
  {
    PetscDeviceContext dctx;
    void *handle = NULL;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
    PetscCall(TpUseStream(t, handle ? *(void **)handle : NULL)); /* a cudaStream_t */
  }
#endif
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  if (beta == 0.0) PetscCall(VecCUDAGetArrayWrite(y, &ya));
  else PetscCall(VecCUDAGetArray(y, &ya));
  PetscCall(PetscLogGpuTimeBegin());
#if TP_HAVE_STREAM_HANDLE
  s = tessera_spmv(t->h, op, &one, t->tm, xa, &beta, ya);
  if (s != TESSERA_STATUS_SUCCESS) PetscCall(PetscSNPrintf(err, sizeof err, "%s", tessera_last_error()));
#else
  PetscCall(TpUseStream(t, tpcu_stream(t->cuda)));
  if (tpcu_sync_context(t->cuda, err, sizeof err)) s = TESSERA_STATUS_EXECUTION_FAILED;
  else {
    s = tessera_spmv(t->h, op, &one, t->tm, xa, &beta, ya);
    if (s == TESSERA_STATUS_SUCCESS && tpcu_sync_stream(t->cuda, err, sizeof err)) s = TESSERA_STATUS_EXECUTION_FAILED;
    else if (s != TESSERA_STATUS_SUCCESS) PetscCall(PetscSNPrintf(err, sizeof err, "%s", tessera_last_error()));
  }
#endif
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  if (beta == 0.0) PetscCall(VecCUDARestoreArrayWrite(y, &ya));
  else PetscCall(VecCUDARestoreArray(y, &ya));
  PetscCheck(s == TESSERA_STATUS_SUCCESS, PETSC_COMM_SELF, TpStatusError(s), "tessera_spmv on CUDA vectors failed: %s: %s",
             tessera_status_name(s), err);
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)t->nnz));
  PetscFunctionReturn(0);
}
#endif

/* y = op(A) x + beta y with host vectors on a CUDA handle: x (and y when beta != 0) go to the
   device through the matrix's pinned buffers, y comes back; waits for the product. */
static PetscErrorCode TpApplyStaged(Mat_SeqAIJTessera *t, tessera_operation op, Vec x, PetscScalar beta, Vec y) {
  const PetscScalar *xa;
  PetscScalar *ya;
  const PetscScalar one = 1.0;
  PetscInt nx = op == TESSERA_OPERATION_NON_TRANSPOSE ? t->cols : t->rows;
  PetscInt ny = op == TESSERA_OPERATION_NON_TRANSPOSE ? t->rows : t->cols;
  size_t len = (size_t)(t->rows > t->cols ? t->rows : t->cols) * sizeof(PetscScalar);
  char err[256];
  int rc;

  PetscFunctionBegin;
  PetscCheck(t->cuda, PETSC_COMM_SELF, PETSC_ERR_PLIB, "tessera: CUDA handle without staging buffers");
  PetscCheck(!tpcu_reserve(t->cuda, len, err, sizeof err), PETSC_COMM_SELF, PETSC_ERR_MEM, "tessera: CUDA staging buffers: %s", err);
  PetscCall(TpUseStream(t, tpcu_stream(t->cuda)));
  PetscCall(VecGetArrayRead(x, &xa));
  rc = tpcu_upload(t->cuda, TPCU_X, xa, (size_t)nx * sizeof(PetscScalar), err, sizeof err);
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "tessera: copying x to the device: %s", err);
  if (beta != 0.0) {
    PetscCall(VecGetArrayRead(y, &xa));
    rc = tpcu_upload(t->cuda, TPCU_Y, xa, (size_t)ny * sizeof(PetscScalar), err, sizeof err);
    PetscCall(VecRestoreArrayRead(y, &xa));
    PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "tessera: copying y to the device: %s", err);
  }
  TpCallTessera(tessera_spmv(t->h, op, &one, t->tm, tpcu_device_ptr(t->cuda, TPCU_X), &beta, tpcu_device_ptr(t->cuda, TPCU_Y)),
                "tessera_spmv");
  PetscCall(VecGetArrayWrite(y, &ya));
  rc = tpcu_download(t->cuda, TPCU_Y, ya, (size_t)ny * sizeof(PetscScalar), err, sizeof err);
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "tessera: copying y from the device: %s", err);
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)t->nnz));
  PetscFunctionReturn(0);
}

/* y = op(A) x, or y = yin + op(A) x when yin is given (y may be yin). */
static PetscErrorCode TpApply(Mat A, tessera_operation op, Vec x, Vec yin, Vec y) {
  Mat_SeqAIJTessera *t;
  const PetscScalar *xa;
  PetscScalar *ya;
  const PetscScalar one = 1.0;
  PetscScalar beta = 0.0;
  tessera_status s;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  PetscCall(TpSync(A, t, PETSC_FALSE));
  if (yin) {
    if (yin != y) PetscCall(VecCopy(yin, y));
    beta = 1.0;
  }
  if (t->h_backend == TESSERA_BACKEND_HOST) {
    PetscCall(VecGetArrayRead(x, &xa));
    if (beta == 0.0) PetscCall(VecGetArrayWrite(y, &ya));
    else PetscCall(VecGetArray(y, &ya));
    s = tessera_spmv(t->h, op, &one, t->tm, xa, &beta, ya);
    PetscCall(VecRestoreArrayRead(x, &xa));
    if (beta == 0.0) PetscCall(VecRestoreArrayWrite(y, &ya));
    else PetscCall(VecRestoreArray(y, &ya));
    TpCallTessera(s, "tessera_spmv");
    PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)t->nnz));
  } else {
    PetscBool xdev = PETSC_FALSE, ydev = PETSC_FALSE;
#if TP_CUDA_VEC_PATH
    PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &xdev, VECSEQCUDA, VECMPICUDA, ""));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)y, &ydev, VECSEQCUDA, VECMPICUDA, ""));
    if (xdev && ydev) {
      PetscCall(TpApplyCuda(t, op, x, beta, y));
      t->products_device++;
    }
#endif
    if (!(xdev && ydev)) {
      PetscCall(TpApplyStaged(t, op, x, beta, y));
      t->products_staged++;
    }
  }
  t->products++;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_SeqAIJTessera(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(TpApply(A, TESSERA_OPERATION_NON_TRANSPOSE, x, NULL, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultAdd_SeqAIJTessera(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  PetscCall(TpApply(A, TESSERA_OPERATION_NON_TRANSPOSE, x, y, z));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTranspose_SeqAIJTessera(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(TpApply(A, TESSERA_OPERATION_TRANSPOSE, x, NULL, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTransposeAdd_SeqAIJTessera(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  PetscCall(TpApply(A, TESSERA_OPERATION_TRANSPOSE, x, y, z));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------ */
/* chained SeqAIJ operations */

static PetscErrorCode MatAssemblyEnd_SeqAIJTessera(Mat A, MatAssemblyType mode) {
  Mat_SeqAIJTessera *t;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  PetscCall(t->assemblyend(A, mode));
  if (mode == MAT_FINAL_ASSEMBLY && t->tm) {
    /* the copy is in use: update it now (values or pattern), not at the next product */
    PetscCall(TpSync(A, t, PETSC_TRUE));
    PetscCall(PetscObjectStateGet((PetscObject)A, &t->hook_state));
    t->after_hook = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode TpDetach(Mat A);

static PetscErrorCode MatDestroy_SeqAIJTessera(Mat A) {
  Mat_SeqAIJTessera *t;
  TpDestroyFn destroy;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  destroy = t->destroy;
  PetscCall(TpDetach(A)); /* frees the tessera copy, the handle and the container */
  PetscCall(destroy(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode TpAttach(Mat A);

static PetscErrorCode MatDuplicate_SeqAIJTessera(Mat A, MatDuplicateOption op, Mat *B) {
  Mat_SeqAIJTessera *t, *tb;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  PetscCall(t->duplicate(A, op, B));
  PetscCall(TpAttach(*B)); /* no-op when SeqAIJ's duplicate already made it seqaijtessera */
  PetscCall(TpGetSeqChecked(*B, &tb));
  tb->set = t->set;
  PetscCall(TpSetDefaultVecType(*B, &tb->set));
  PetscFunctionReturn(0);
}

static PetscErrorCode TpViewSeqInfo(Mat A, PetscViewer v, PetscBool synchronized) {
  Mat_SeqAIJTessera *t;
  PetscBool assembled;
  tessera_matrix_info info;
  int backend;
  PetscBool fallback;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  PetscCall(MatAssembled(A, &assembled));
  if (assembled) PetscCall(TpSync(A, t, PETSC_FALSE));
#define TP_PRINTF(...)                                                      \
  do {                                                                      \
    if (synchronized) PetscCall(PetscViewerASCIISynchronizedPrintf(v, __VA_ARGS__)); \
    else PetscCall(PetscViewerASCIIPrintf(v, __VA_ARGS__));                 \
  } while (0)
  if (!t->tm) {
    PetscCall(TpWantedBackend(&t->set, &backend, &fallback));
    TP_PRINTF("tessera: not analyzed yet (matrix not assembled); requested algorithm %s, tuning %s, backend %s\n",
              tp_alg_names[t->set.alg], tp_tuning_names[t->set.tuning], fallback ? "cuda, else host" : tp_backend_names[backend]);
    PetscFunctionReturn(0);
  }
  TpCallTessera(tessera_matrix_get_info(t->tm, &info), "tessera_matrix_get_info");
  TP_PRINTF("tessera: backend %s (device %d), algorithm %s (requested %s, tuning %s)\n", tp_backend_names[t->h_backend], t->h_device,
            TpAlgName(info.algorithm), tp_alg_names[t->tm_alg],
            tp_tuning_names[t->tm_tuning]);
  TP_PRINTF("tessera: params %s\n", info.params);
  TP_PRINTF("tessera: device bytes %llu, analysis %.3f ms, deterministic %s\n", (unsigned long long)info.device_bytes, info.analysis_ms,
            info.deterministic ? "yes" : "no");
  TP_PRINTF("tessera: analyses %lld, value updates %lld, products %lld\n", (long long)t->analyses, (long long)t->updates,
            (long long)t->products);
#undef TP_PRINTF
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_SeqAIJTessera(Mat A, PetscViewer v) {
  Mat_SeqAIJTessera *t;
  PetscBool iascii;
  PetscViewerFormat fmt;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  if (t->view) PetscCall(t->view(A, v));
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(v, &fmt));
  if (fmt == PETSC_VIEWER_ASCII_INFO || fmt == PETSC_VIEWER_ASCII_INFO_DETAIL) PetscCall(TpViewSeqInfo(A, v, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_SeqAIJTessera(Mat A, TpOptionItems PetscOptionsObject) {
  Mat_SeqAIJTessera *t;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  if (t->setfromoptions) PetscCall(t->setfromoptions(A, PetscOptionsObject));
  PetscCall(TpSetFromOptionsItems(PetscOptionsObject, &t->set));
  PetscCall(TpSetDefaultVecType(A, &t->set));
  PetscFunctionReturn(0);
}

/* MatTesseraGetStats_C: how often the copy was analyzed, had its values updated, multiplied. */
static PetscErrorCode MatTesseraGetStats_SeqAIJTessera(Mat A, PetscInt64 *analyses, PetscInt64 *updates, PetscInt64 *products) {
  Mat_SeqAIJTessera *t;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  if (analyses) *analyses = t->analyses;
  if (updates) *updates = t->updates;
  if (products) *products = t->products;
  PetscFunctionReturn(0);
}

/* MatTesseraGetProductPaths_C: how many products took the CUDA-vector path and how many staged
   host vectors through pinned buffers. */
static PetscErrorCode MatTesseraGetProductPaths_SeqAIJTessera(Mat A, PetscInt64 *device, PetscInt64 *staged) {
  Mat_SeqAIJTessera *t;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  if (device) *device = t->products_device;
  if (staged) *staged = t->products_staged;
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------ */
/* seqaij <-> seqaijtessera */

static PetscErrorCode MatConvert_SeqAIJ_SeqAIJTessera(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqAIJTessera_SeqAIJ(Mat, MatType, MatReuse, Mat *);

#define TP_GET_OP(A, op, field) PetscCall(MatGetOperation((A), (op), (void (**)(void)) & (field)))
#define TP_SET_OP(A, op, fn) PetscCall(MatSetOperation((A), (op), (void (*)(void))(fn)))

/* Makes a SeqAIJ matrix (assembled or not) a seqaijtessera one, in place. Idempotent. */
static PetscErrorCode TpAttach(Mat A) {
  Mat_SeqAIJTessera *t;

  PetscFunctionBegin;
  PetscCall(TpGetSeq(A, &t));
  if (t) PetscFunctionReturn(0);
  PetscCall(PetscNew(&t));
  TpDefaults(&t->set);
  t->h_backend_requested = TP_BACKEND_UNSET;
  PetscCall(TpReadOptionsDB(A, &t->set));
  PetscCall(TpSetDefaultVecType(A, &t->set));
  TP_GET_OP(A, MATOP_MULT, t->mult);
  TP_GET_OP(A, MATOP_MULT_ADD, t->multadd);
  TP_GET_OP(A, MATOP_MULT_TRANSPOSE, t->multtranspose);
  TP_GET_OP(A, MATOP_MULT_TRANSPOSE_ADD, t->multtransposeadd);
  TP_GET_OP(A, MATOP_ASSEMBLY_END, t->assemblyend);
  TP_GET_OP(A, MATOP_DESTROY, t->destroy);
  TP_GET_OP(A, MATOP_DUPLICATE, t->duplicate);
  TP_GET_OP(A, MATOP_VIEW, t->view);
  TP_GET_OP(A, MATOP_SET_FROM_OPTIONS, t->setfromoptions);
  PetscCheck(t->assemblyend && t->destroy && t->duplicate, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "SeqAIJ has no assemblyend, destroy or duplicate operation to chain to");

  PetscCall(TpComposeData(A, TP_SEQ_KEY, t, TpDestroySeqData));

  TP_SET_OP(A, MATOP_MULT, MatMult_SeqAIJTessera);
  TP_SET_OP(A, MATOP_MULT_ADD, MatMultAdd_SeqAIJTessera);
  TP_SET_OP(A, MATOP_MULT_TRANSPOSE, MatMultTranspose_SeqAIJTessera);
  TP_SET_OP(A, MATOP_MULT_TRANSPOSE_ADD, MatMultTransposeAdd_SeqAIJTessera);
  TP_SET_OP(A, MATOP_ASSEMBLY_END, MatAssemblyEnd_SeqAIJTessera);
  TP_SET_OP(A, MATOP_DESTROY, MatDestroy_SeqAIJTessera);
  TP_SET_OP(A, MATOP_DUPLICATE, MatDuplicate_SeqAIJTessera);
  TP_SET_OP(A, MATOP_VIEW, MatView_SeqAIJTessera);
  TP_SET_OP(A, MATOP_SET_FROM_OPTIONS, MatSetFromOptions_SeqAIJTessera);

  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijtessera_seqaij_C", MatConvert_SeqAIJTessera_SeqAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqaijtessera_C", MatConvert_SeqAIJ_SeqAIJTessera));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetStats_C", MatTesseraGetStats_SeqAIJTessera));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetProductPaths_C", MatTesseraGetProductPaths_SeqAIJTessera));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAIJTESSERA));
  PetscFunctionReturn(0);
}

/* Makes a seqaijtessera matrix a plain SeqAIJ one again, in place, freeing the tessera copy. */
static PetscErrorCode TpDetach(Mat A) {
  Mat_SeqAIJTessera *t;

  PetscFunctionBegin;
  PetscCall(TpGetSeqChecked(A, &t));
  TP_SET_OP(A, MATOP_MULT, t->mult);
  TP_SET_OP(A, MATOP_MULT_ADD, t->multadd);
  TP_SET_OP(A, MATOP_MULT_TRANSPOSE, t->multtranspose);
  TP_SET_OP(A, MATOP_MULT_TRANSPOSE_ADD, t->multtransposeadd);
  TP_SET_OP(A, MATOP_ASSEMBLY_END, t->assemblyend);
  TP_SET_OP(A, MATOP_DESTROY, t->destroy);
  TP_SET_OP(A, MATOP_DUPLICATE, t->duplicate);
  TP_SET_OP(A, MATOP_VIEW, t->view);
  TP_SET_OP(A, MATOP_SET_FROM_OPTIONS, t->setfromoptions);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijtessera_seqaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqaijtessera_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetStats_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetProductPaths_C", NULL));
  PetscCall(PetscObjectCompose((PetscObject)A, TP_SEQ_KEY, NULL)); /* TpFreeSeqData */
#if TP_CUDA_VEC_PATH
  PetscCall(MatSetVecType(A, VECSTANDARD));
#endif
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAIJ));
  PetscFunctionReturn(0);
}

/* MatConvert between a base type and its tessera type, one body for all four directions: copy
   (MAT_REUSE_MATRIX), or duplicate (MAT_INITIAL_MATRIX) or keep (MAT_INPLACE_MATRIX) the matrix
   and then attach or detach tessera with `change`. */
static PetscErrorCode TpConvert(Mat A, MatReuse reuse, Mat *newmat, PetscErrorCode (*change)(Mat)) {
  Mat B = *newmat;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(change(B));
  *newmat = B;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_SeqAIJ_SeqAIJTessera(Mat A, MatType type, MatReuse reuse, Mat *newmat) {
  PetscFunctionBegin;
  (void)type;
  PetscCall(TpConvert(A, reuse, newmat, TpAttach));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_SeqAIJTessera_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat) {
  PetscFunctionBegin;
  (void)type;
  PetscCall(TpConvert(A, reuse, newmat, TpDetach));
  PetscFunctionReturn(0);
}

PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJTessera(Mat A) {
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(TpAttach(A));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------ */
/* mpiaijtessera: MPIAIJ whose two blocks are seqaijtessera */

static PetscErrorCode TpMPIBlocks(Mat A, Mat *Ad, Mat *Ao) {
  PetscFunctionBegin;
  *Ad = *Ao = NULL;
  /* before preallocation MPIAIJ has no blocks yet */
  PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, NULL));
  PetscFunctionReturn(0);
}

/* Makes the blocks seqaijtessera (in place) and gives them the parent's settings. */
static PetscErrorCode TpMPIConvertBlocks(Mat A, PetscBool attach) {
  Mat_MPIAIJTessera *mt;
  Mat blocks[2];
  Mat_SeqAIJTessera *t;
  PetscInt i;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  PetscCall(TpMPIBlocks(A, &blocks[0], &blocks[1]));
  for (i = 0; i < 2; i++) {
    if (!blocks[i]) continue;
    if (attach) {
      PetscCall(TpAttach(blocks[i]));
      PetscCall(TpGetSeqChecked(blocks[i], &t));
      if (mt) {
        t->set = mt->set;
        PetscCall(TpSetDefaultVecType(blocks[i], &t->set));
      }
    } else {
      PetscCall(TpGetSeq(blocks[i], &t));
      if (t) PetscCall(TpDetach(blocks[i]));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMPIAIJSetPreallocation_MPIAIJTessera(Mat A, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz,
                                                               const PetscInt o_nnz[]) {
  Mat_MPIAIJTessera *mt;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  PetscCheck(mt && mt->prealloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "mpiaijtessera without MPIAIJ's preallocation routine");
  PetscCall(mt->prealloc(A, d_nz, d_nnz, o_nz, o_nnz));
  PetscCall(TpMPIConvertBlocks(A, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatAssemblyEnd_MPIAIJTessera(Mat A, MatAssemblyType mode) {
  Mat_MPIAIJTessera *mt;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  PetscCall(mt->assemblyend(A, mode));
  /* a block replaced during assembly (new off-process columns) is seqaijtessera already, by
     type name; it gets the parent's settings here */
  PetscCall(TpMPIConvertBlocks(A, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode TpMPIDetach(Mat A);

static PetscErrorCode MatDestroy_MPIAIJTessera(Mat A) {
  Mat_MPIAIJTessera *mt;
  TpDestroyFn destroy;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  destroy = mt->destroy;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaijtessera_mpiaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_mpiaijtessera_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetStats_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetProductPaths_C", NULL));
  PetscCall(PetscObjectCompose((PetscObject)A, TP_MPI_KEY, NULL));
  PetscCall(destroy(A)); /* MPIAIJ's: destroys the blocks (seqaijtessera's destroy) */
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_MPIAIJTessera(Mat A, PetscViewer v) {
  Mat_MPIAIJTessera *mt;
  PetscBool iascii;
  PetscViewerFormat fmt;
  Mat blocks[2];
  PetscMPIInt rank;
  PetscInt i;
  static const char *const names[] = {"diagonal", "off-diagonal"};

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  if (mt->view) PetscCall(mt->view(A, v));
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(v, &fmt));
  if (fmt != PETSC_VIEWER_ASCII_INFO && fmt != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
  PetscCall(TpMPIBlocks(A, &blocks[0], &blocks[1]));
  PetscCall(PetscViewerASCIIPushSynchronized(v));
  for (i = 0; i < 2; i++) {
    if (!blocks[i]) continue;
    PetscCall(PetscViewerASCIISynchronizedPrintf(v, "[%d] %s block:\n", (int)rank, names[i]));
    PetscCall(TpViewSeqInfo(blocks[i], v, PETSC_TRUE));
  }
  PetscCall(PetscViewerFlush(v));
  PetscCall(PetscViewerASCIIPopSynchronized(v));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_MPIAIJTessera(Mat A, TpOptionItems PetscOptionsObject) {
  Mat_MPIAIJTessera *mt;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  if (mt->setfromoptions) PetscCall(mt->setfromoptions(A, PetscOptionsObject));
  PetscCall(TpSetFromOptionsItems(PetscOptionsObject, &mt->set));
  PetscCall(TpSetDefaultVecType(A, &mt->set));
  PetscCall(TpMPIConvertBlocks(A, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* The sums over this process's two blocks. */
static PetscErrorCode MatTesseraGetStats_MPIAIJTessera(Mat A, PetscInt64 *analyses, PetscInt64 *updates, PetscInt64 *products) {
  Mat blocks[2];
  PetscInt64 a = 0, u = 0, p = 0, ai, ui, pi;
  PetscInt i;

  PetscFunctionBegin;
  PetscCall(TpMPIBlocks(A, &blocks[0], &blocks[1]));
  for (i = 0; i < 2; i++) {
    if (!blocks[i]) continue;
    PetscCall(MatTesseraGetStats_SeqAIJTessera(blocks[i], &ai, &ui, &pi));
    a += ai;
    u += ui;
    p += pi;
  }
  if (analyses) *analyses = a;
  if (updates) *updates = u;
  if (products) *products = p;
  PetscFunctionReturn(0);
}

/* The sums over this process's two blocks. */
static PetscErrorCode MatTesseraGetProductPaths_MPIAIJTessera(Mat A, PetscInt64 *device, PetscInt64 *staged) {
  Mat blocks[2];
  PetscInt64 d = 0, st = 0, di, si;
  PetscInt i;

  PetscFunctionBegin;
  PetscCall(TpMPIBlocks(A, &blocks[0], &blocks[1]));
  for (i = 0; i < 2; i++) {
    if (!blocks[i]) continue;
    PetscCall(MatTesseraGetProductPaths_SeqAIJTessera(blocks[i], &di, &si));
    d += di;
    st += si;
  }
  if (device) *device = d;
  if (staged) *staged = st;
  PetscFunctionReturn(0);
}

static PetscErrorCode TpFreeMPIData(void *ctx) {
  PetscFunctionBegin;
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(0);
}
TP_CONTAINER_DESTROY(TpDestroyMPIData, TpFreeMPIData)

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJTessera(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_MPIAIJTessera_MPIAIJ(Mat, MatType, MatReuse, Mat *);

static PetscErrorCode TpMPIAttach(Mat A) {
  Mat_MPIAIJTessera *mt;
  void (*prealloc)(void) = NULL;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  if (mt) PetscFunctionReturn(0);
  PetscCall(PetscNew(&mt));
  TpDefaults(&mt->set);
  PetscCall(TpReadOptionsDB(A, &mt->set));
  PetscCall(TpSetDefaultVecType(A, &mt->set));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", &prealloc));
  PetscCheck(prealloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MPIAIJ has no MatMPIAIJSetPreallocation_C to chain to");
  memcpy(&mt->prealloc, &prealloc, sizeof prealloc);
  TP_GET_OP(A, MATOP_ASSEMBLY_END, mt->assemblyend);
  TP_GET_OP(A, MATOP_DESTROY, mt->destroy);
  TP_GET_OP(A, MATOP_VIEW, mt->view);
  TP_GET_OP(A, MATOP_SET_FROM_OPTIONS, mt->setfromoptions);
  PetscCheck(mt->assemblyend && mt->destroy, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "MPIAIJ has no assemblyend or destroy operation to chain to");

  PetscCall(TpComposeData(A, TP_MPI_KEY, mt, TpDestroyMPIData));

  TP_SET_OP(A, MATOP_ASSEMBLY_END, MatAssemblyEnd_MPIAIJTessera);
  TP_SET_OP(A, MATOP_DESTROY, MatDestroy_MPIAIJTessera);
  TP_SET_OP(A, MATOP_VIEW, MatView_MPIAIJTessera);
  TP_SET_OP(A, MATOP_SET_FROM_OPTIONS, MatSetFromOptions_MPIAIJTessera);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_MPIAIJTessera));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaijtessera_mpiaij_C", MatConvert_MPIAIJTessera_MPIAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_mpiaijtessera_C", MatConvert_MPIAIJ_MPIAIJTessera));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetStats_C", MatTesseraGetStats_MPIAIJTessera));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetProductPaths_C", MatTesseraGetProductPaths_MPIAIJTessera));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJTESSERA));
  PetscCall(TpMPIConvertBlocks(A, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode TpMPIDetach(Mat A) {
  Mat_MPIAIJTessera *mt;

  PetscFunctionBegin;
  PetscCall(TpGetMPI(A, &mt));
  PetscCheck(mt, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matrix has no mpiaijtessera data");
  PetscCall(TpMPIConvertBlocks(A, PETSC_FALSE));
  TP_SET_OP(A, MATOP_ASSEMBLY_END, mt->assemblyend);
  TP_SET_OP(A, MATOP_DESTROY, mt->destroy);
  TP_SET_OP(A, MATOP_VIEW, mt->view);
  TP_SET_OP(A, MATOP_SET_FROM_OPTIONS, mt->setfromoptions);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", mt->prealloc));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaijtessera_mpiaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_mpiaijtessera_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetStats_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatTesseraGetProductPaths_C", NULL));
  PetscCall(PetscObjectCompose((PetscObject)A, TP_MPI_KEY, NULL));
#if TP_CUDA_VEC_PATH
  PetscCall(MatSetVecType(A, VECSTANDARD));
#endif
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJ));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJTessera(Mat A, MatType type, MatReuse reuse, Mat *newmat) {
  PetscFunctionBegin;
  (void)type;
  PetscCall(TpConvert(A, reuse, newmat, TpMPIAttach));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_MPIAIJTessera_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat) {
  PetscFunctionBegin;
  (void)type;
  PetscCall(TpConvert(A, reuse, newmat, TpMPIDetach));
  PetscFunctionReturn(0);
}

PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJTessera(Mat A) {
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(TpMPIAttach(A));
  PetscFunctionReturn(0);
}

/* aijtessera: seqaijtessera on one process, mpiaijtessera on more (MatSetType maps the root name
   registered below before it gets here; this is the fallback). */
PETSC_EXTERN PetscErrorCode MatCreate_AIJTessera(Mat A) {
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatSetType(A, size == 1 ? MATSEQAIJTESSERA : MATMPIAIJTESSERA));
  PetscFunctionReturn(0);
}

/* Called by PETSc when the library is loaded with -dll_append (or PetscDLLibraryAppend). */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_tessera_petsc(void) {
  int major = 0, minor = 0, patch = 0;

  PetscFunctionBegin;
  TpCallTessera(tessera_get_version(&major, &minor, &patch), "tessera_get_version");
  PetscCheck(major == TESSERA_VERSION_MAJOR && (major > 0 || minor == TESSERA_VERSION_MINOR), PETSC_COMM_SELF, PETSC_ERR_LIB,
             "libtessera %d.%d.%d is loaded, but this plugin was built against tessera.h %d.%d.%d: rebuild the plugin", major, minor,
             patch, TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  PetscCall(PetscLogEventRegister("MatTesseraSync", MAT_CLASSID, &TP_EVENT_SYNC));
  PetscCall(MatRegister(MATSEQAIJTESSERA, MatCreate_SeqAIJTessera));
  PetscCall(MatRegister(MATMPIAIJTESSERA, MatCreate_MPIAIJTessera));
  PetscCall(MatRegister(MATAIJTESSERA, MatCreate_AIJTessera));
  PetscCall(MatRegisterRootName(MATAIJTESSERA, MATSEQAIJTESSERA, MATMPIAIJTESSERA));
  PetscCall(PetscInfo(NULL, "tessera PETSc plugin: registered %s, %s and %s (libtessera %d.%d.%d)\n", MATSEQAIJTESSERA, MATMPIAIJTESSERA,
                      MATAIJTESSERA, major, minor, patch));
  PetscFunctionReturn(0);
}
