/*
 * PETSc program that checks the tessera matrix types against PETSc's own AIJ. It does not link
 * tessera: the types come from the plugin given with -dll_append.
 *
 *   tessera_petsc_test -dll_append .../libtessera_petsc.so -mat_type seqaijtessera \
 *       -problem laplace2d|convdiff2d|mtx [-n 64] [-mtx FILE.mtx[.xz]] -expect_type seqaijtessera \
 *       [-check_updates] [-check_convert] [-expect_path device|staged] [-ksp_type cg -pc_type jacobi ...]
 *
 * The same matrix is built twice: `ref` (type aij unless -ref_mat_type says otherwise, e.g.
 * aijcusparse; options prefix ref_) and `A` (MatSetFromOptions:
 * -mat_type picks its type, as in any PETSc application). Then:
 *  - MatMult, MatMultAdd (z != y and z == y), MatMultTranspose, MatMultTransposeAdd agree with
 *    ref to -product_rtol (default 1e-12, relative 2-norm);
 *  - KSPSolve with the command line's KSP options: same iteration count and converged reason,
 *    solutions equal to -solution_rtol (default 1e-10, relative 2-norm);
 *  - -check_updates: a values-only change (MatSetValues + assembly) is a tessera value update
 *    and no new analysis; MatScale (no assembly) likewise at the next product; a pattern change
 *    is a new analysis; with several processes also a new off-process column (the off-diagonal
 *    block is rebuilt by PETSc); every step is checked as above;
 *  - -check_convert: MatDuplicate, MatConvert to and from aij (new and in place) and
 *    MatSetType on an assembled aij matrix keep the products right.
 * -expect_path: every product of A (all local blocks) took that vector path of the CUDA backend:
 * `device` (CUDA vectors' device arrays; give -ref_mat_type aijcusparse so that the vectors are
 * CUDA ones, and the products are compared with aijcusparse's) or `staged` (host vectors).
 * The counters come from the plugin's composed functions MatTesseraGetStats_C and
 * MatTesseraGetProductPaths_C.
 * Prints "ok: N checks" and exits 0, or lists the failures and exits 1.
 */
#include <petscksp.h>

#include <stdio.h>
#include <string.h>

static const char help[] = "Checks the tessera PETSc matrix types against aij.\n";

typedef struct {
  PetscInt rows, cols;
  PetscInt *rowptr, *colind;
  PetscScalar *vals;
} Csr;

static int n_checks, n_failures;

/* One collective check: fails if it fails on any process. */
static PetscErrorCode Check(PetscBool local_ok, const char *what) {
  PetscMPIInt ok = local_ok ? 1 : 0, all = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  n_checks++;
  if (!all) {
    n_failures++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s\n", what));
  }
  PetscFunctionReturn(0);
}

/* ---- matrices ---------------------------------------------------------------------------- */

static PetscErrorCode CsrFromTriplets(PetscInt rows, PetscInt cols, PetscInt nz, const PetscInt *ri, const PetscInt *ci,
                                      const PetscScalar *v, Csr *a) {
  PetscInt k, *fill;

  PetscFunctionBegin;
  a->rows = rows;
  a->cols = cols;
  PetscCall(PetscCalloc1(rows + 1, &a->rowptr));
  PetscCall(PetscMalloc2(nz, &a->colind, nz, &a->vals));
  for (k = 0; k < nz; k++) a->rowptr[ri[k] + 1]++;
  for (k = 0; k < rows; k++) a->rowptr[k + 1] += a->rowptr[k];
  PetscCall(PetscMalloc1(rows, &fill));
  PetscCall(PetscArraycpy(fill, a->rowptr, rows));
  for (k = 0; k < nz; k++) {
    PetscInt p = fill[ri[k]]++;
    a->colind[p] = ci[k];
    a->vals[p] = v[k];
  }
  PetscCall(PetscFree(fill));
  PetscFunctionReturn(0);
}

/* 5-point stencil on an n x n grid: -Laplace (conv = 0) or -Laplace + b.grad, first-order upwind
   with b = (conv, conv/2): non-symmetric, diagonally dominant. */
static PetscErrorCode Grid2d(PetscInt n, PetscReal conv, Csr *a) {
  PetscInt N = n * n, nz = 0, i, j, *ri, *ci;
  PetscScalar *v;
  PetscReal h = 1.0 / (PetscReal)(n + 1), bx = conv * h, by = 0.5 * conv * h;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(5 * N, &ri, 5 * N, &ci, 5 * N, &v));
  for (i = 0; i < n; i++) {
    for (j = 0; j < n; j++) {
      PetscInt row = i * n + j;
#define PUT(c, val) \
  do {              \
    ri[nz] = row;   \
    ci[nz] = (c);   \
    v[nz] = (val);  \
    nz++;           \
  } while (0)
      if (i > 0) PUT(row - n, -1.0 - by);
      if (j > 0) PUT(row - 1, -1.0 - bx);
      PUT(row, 4.0 + bx + by);
      if (j < n - 1) PUT(row + 1, -1.0);
      if (i < n - 1) PUT(row + n, -1.0);
#undef PUT
    }
  }
  PetscCall(CsrFromTriplets(N, N, nz, ri, ci, v, a));
  PetscCall(PetscFree3(ri, ci, v));
  PetscFunctionReturn(0);
}

/* Matrix Market coordinate file (real, integer or pattern; general, symmetric or
   skew-symmetric), read through `xz -dc` when the name ends in .xz. Every process reads it. */
static PetscErrorCode ReadMatrixMarket(const char *path, Csr *a) {
  FILE *f;
  char line[1024], object[64], format[64], field[64], symmetry[64], cmd[PETSC_MAX_PATH_LEN + 32];
  size_t len = strlen(path);
  PetscBool xz = (PetscBool)(len > 3 && !strcmp(path + len - 3, ".xz"));
  long rows, cols, entries, k, nz = 0;
  PetscInt *ri, *ci;
  PetscScalar *v;
  int pattern, sym, skew;

  PetscFunctionBegin;
  PetscCheck(!strchr(path, '\''), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-mtx path must not contain a quote: %s", path);
  if (xz) {
    PetscCall(PetscSNPrintf(cmd, sizeof cmd, "xz -dc '%s'", path));
    f = popen(cmd, "r");
  } else f = fopen(path, "r");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open %s%s", path, xz ? " through xz -dc" : "");
  PetscCheck(fgets(line, sizeof line, f) && sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", object, format, field, symmetry) == 4,
             PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no %%%%MatrixMarket header", path);
  PetscCheck(!strcmp(format, "coordinate"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: only coordinate files are read", path);
  pattern = !strcmp(field, "pattern");
  PetscCheck(pattern || !strcmp(field, "real") || !strcmp(field, "integer"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: field %s not read", path,
             field);
  sym = !strcmp(symmetry, "symmetric");
  skew = !strcmp(symmetry, "skew-symmetric");
  PetscCheck(sym || skew || !strcmp(symmetry, "general"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: symmetry %s not read", path, symmetry);
  do {
    PetscCheck(fgets(line, sizeof line, f), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no size line", path);
  } while (line[0] == '%');
  PetscCheck(sscanf(line, "%ld %ld %ld", &rows, &cols, &entries) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: bad size line", path);
  PetscCall(PetscMalloc3(2 * entries, &ri, 2 * entries, &ci, 2 * entries, &v));
  for (k = 0; k < entries; k++) {
    long r, c;
    double x = 1.0;
    int got;
    PetscCheck(fgets(line, sizeof line, f), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %ld entries, expected %ld", path, k, entries);
    got = pattern ? sscanf(line, "%ld %ld", &r, &c) : sscanf(line, "%ld %ld %lf", &r, &c, &x);
    PetscCheck(got == (pattern ? 2 : 3) && r >= 1 && r <= rows && c >= 1 && c <= cols, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: bad entry line %ld: %s", path, k + 1, line);
    ri[nz] = (PetscInt)(r - 1);
    ci[nz] = (PetscInt)(c - 1);
    v[nz++] = (PetscScalar)x;
    if ((sym || skew) && r != c) {
      ri[nz] = (PetscInt)(c - 1);
      ci[nz] = (PetscInt)(r - 1);
      v[nz++] = (PetscScalar)(skew ? -x : x);
    }
  }
  if (xz) PetscCheck(pclose(f) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "xz -dc %s failed", path);
  else fclose(f);
  PetscCall(CsrFromTriplets((PetscInt)rows, (PetscInt)cols, (PetscInt)nz, ri, ci, v, a));
  PetscCall(PetscFree3(ri, ci, v));
  PetscFunctionReturn(0);
}

/* A matrix of the CSR's size: type `type` (NULL: from the options database), its local rows
   filled from the CSR. */
static PetscErrorCode BuildMatrix(const Csr *a, const char *prefix, MatType type, Mat *A) {
  PetscInt rstart, rend, cstart, cend, i, k, *dnz, *onz;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, a->rows, a->cols));
  if (prefix) PetscCall(MatSetOptionsPrefix(*A, prefix));
  if (type) PetscCall(MatSetType(*A, type)); /* the default; -<prefix>mat_type overrides it */
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(*A, &cstart, &cend));
  PetscCall(PetscCalloc2(rend - rstart, &dnz, rend - rstart, &onz));
  for (i = rstart; i < rend; i++)
    for (k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
      if (a->colind[k] >= cstart && a->colind[k] < cend) dnz[i - rstart]++;
      else onz[i - rstart]++;
    }
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  PetscCall(PetscFree2(dnz, onz));
  for (i = rstart; i < rend; i++) {
    PetscInt nrow = a->rowptr[i + 1] - a->rowptr[i];
    PetscCall(MatSetValues(*A, 1, &i, nrow, a->colind + a->rowptr[i], a->vals + a->rowptr[i], ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* ---- checks ------------------------------------------------------------------------------ */

static PetscErrorCode RelDiff(Vec a, Vec ref, PetscReal *rel) {
  Vec d;
  PetscReal nd, nr;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, ref, a));
  PetscCall(VecNorm(d, NORM_2, &nd));
  PetscCall(VecNorm(ref, NORM_2, &nr));
  PetscCall(VecDestroy(&d));
  *rel = nr > 0 ? nd / nr : nd;
  if (PetscIsInfOrNanReal(*rel)) *rel = PETSC_MAX_REAL;
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckClose(Vec a, Vec ref, PetscReal tol, const char *what, const char *label) {
  PetscReal rel;
  char msg[256];

  PetscFunctionBegin;
  PetscCall(RelDiff(a, ref, &rel));
  PetscCall(PetscSNPrintf(msg, sizeof msg, "%s: %s differs from aij by %g relative (limit %g)", label, what, (double)rel, (double)tol));
  PetscCall(Check((PetscBool)(rel <= tol), msg));
  PetscFunctionReturn(0);
}

/* All four products (and MatMultAdd in place) of A against ref on random vectors. */
static PetscErrorCode CheckProducts(Mat ref, Mat A, PetscRandom rnd, PetscReal tol, const char *label) {
  Vec x, y, yr, w, z, zr, u, t, tr, s, q;
  PetscReal rel;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(ref, &x, &y));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(VecDuplicate(y, &w));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &zr));
  PetscCall(VecDuplicate(y, &u));
  PetscCall(VecDuplicate(x, &t));
  PetscCall(VecDuplicate(x, &tr));
  PetscCall(VecDuplicate(x, &s));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(w, rnd));
  PetscCall(VecSetRandom(u, rnd));
  PetscCall(VecSetRandom(s, rnd));

  PetscCall(MatMult(ref, x, yr));
  PetscCall(MatMult(A, x, y));
  PetscCall(CheckClose(y, yr, tol, "MatMult", label));

  PetscCall(MatMultAdd(ref, x, w, zr));
  PetscCall(MatMultAdd(A, x, w, z));
  PetscCall(CheckClose(z, zr, tol, "MatMultAdd", label));
  PetscCall(VecCopy(w, z));
  PetscCall(MatMultAdd(A, x, z, z));
  PetscCall(CheckClose(z, zr, tol, "MatMultAdd in place", label));

  PetscCall(MatMultTranspose(ref, u, tr));
  PetscCall(MatMultTranspose(A, u, t));
  PetscCall(CheckClose(t, tr, tol, "MatMultTranspose", label));

  /* The reference is ref's MatMultTranspose plus s: PETSc 3.26.1's aijcusparse gives another
     MatMultTransposeAdd than its own MatMultTranspose + VecAXPY (reported, not checked). */
  PetscCall(VecDuplicate(tr, &q));
  PetscCall(MatMultTransposeAdd(ref, u, s, q));
  PetscCall(VecAXPY(tr, 1.0, s));
  PetscCall(RelDiff(q, tr, &rel));
  if (rel > tol) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "note: %s: the reference's own MatMultTransposeAdd differs from its MatMultTranspose + VecAXPY by %g relative\n", label, (double)rel));
  PetscCall(VecDestroy(&q));
  PetscCall(MatMultTransposeAdd(A, u, s, t));
  PetscCall(CheckClose(t, tr, tol, "MatMultTransposeAdd", label));
  PetscCall(VecCopy(s, t));
  PetscCall(MatMultTransposeAdd(A, u, t, t));
  PetscCall(CheckClose(t, tr, tol, "MatMultTransposeAdd in place", label));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&zr));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&tr));
  PetscCall(VecDestroy(&s));
  PetscFunctionReturn(0);
}

/* Solves ref x = b and A x = b with the command line's KSP options; compares. */
static PetscErrorCode CheckSolve(Mat ref, Mat A, PetscRandom rnd, PetscReal tol, const char *label) {
  KSP kr, ka;
  Vec xt, b, xr, xa;
  PetscInt itr, ita;
  KSPConvergedReason rr, ra;
  PetscReal rel;
  KSPType kt;
  PCType pt;
  PC pc;
  char msg[256];

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(ref, &xt, &b));
  PetscCall(VecDuplicate(xt, &xr));
  PetscCall(VecDuplicate(xt, &xa));
  PetscCall(VecSetRandom(xt, rnd));
  PetscCall(MatMult(ref, xt, b));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &kr));
  PetscCall(KSPSetOperators(kr, ref, ref));
  PetscCall(KSPSetFromOptions(kr));
  PetscCall(KSPSolve(kr, b, xr));
  PetscCall(KSPGetIterationNumber(kr, &itr));
  PetscCall(KSPGetConvergedReason(kr, &rr));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ka));
  PetscCall(KSPSetOperators(ka, A, A));
  PetscCall(KSPSetFromOptions(ka));
  PetscCall(KSPSolve(ka, b, xa));
  PetscCall(KSPGetIterationNumber(ka, &ita));
  PetscCall(KSPGetConvergedReason(ka, &ra));
  PetscCall(KSPGetType(ka, &kt));
  PetscCall(KSPGetPC(ka, &pc));
  PetscCall(PCGetType(pc, &pt));

  PetscCall(RelDiff(xa, xr, &rel));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "%s: %s/%s iterations aij %" PetscInt_FMT " tessera %" PetscInt_FMT
                        ", reasons %s %s, solution difference %.3g\n",
                        label, kt, pt, itr, ita, KSPConvergedReasons[rr], KSPConvergedReasons[ra], (double)rel));
  PetscCall(PetscSNPrintf(msg, sizeof msg, "%s: aij did not converge (%s)", label, KSPConvergedReasons[rr]));
  PetscCall(Check((PetscBool)(rr > 0), msg));
  PetscCall(PetscSNPrintf(msg, sizeof msg,
                          "%s: iteration counts differ: aij %" PetscInt_FMT ", tessera %" PetscInt_FMT " (reasons %s, %s)", label,
                          itr, ita, KSPConvergedReasons[rr], KSPConvergedReasons[ra]));
  PetscCall(Check((PetscBool)(itr == ita && rr == ra), msg));
  PetscCall(PetscSNPrintf(msg, sizeof msg, "%s: solutions differ by %g relative (limit %g)", label, (double)rel, (double)tol));
  PetscCall(Check((PetscBool)(rel <= tol), msg));

  PetscCall(KSPDestroy(&kr));
  PetscCall(KSPDestroy(&ka));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xr));
  PetscCall(VecDestroy(&xa));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt64 analyses, updates, products;
} Stats;

typedef PetscErrorCode (*StatsFn)(Mat, PetscInt64 *, PetscInt64 *, PetscInt64 *);

/* The plugin's counters of `A` (its diagonal block when A is MPI). */
static PetscErrorCode GetStats(Mat A, Stats *s) {
  StatsFn f = NULL;
  Mat blk = A;
  MatType type;
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &type));
  PetscCall(PetscStrbeginswith(type, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &blk, NULL, NULL));
  PetscCall(PetscObjectQueryFunction((PetscObject)blk, "MatTesseraGetStats_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "matrix of type %s has no MatTesseraGetStats_C: not a tessera type", type);
  PetscCall(f(blk, &s->analyses, &s->updates, &s->products));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckStats(Mat A, const Stats *before, PetscInt64 more_analyses, PetscInt64 more_updates, const char *what) {
  Stats now;
  char msg[256];

  PetscFunctionBegin;
  PetscCall(GetStats(A, &now));
  PetscCall(PetscSNPrintf(msg, sizeof msg, "%s: expected %lld more analyses and %lld more value updates, got %lld and %lld", what,
                          (long long)more_analyses, (long long)more_updates, (long long)(now.analyses - before->analyses),
                          (long long)(now.updates - before->updates)));
  PetscCall(Check((PetscBool)(now.analyses - before->analyses == more_analyses && now.updates - before->updates == more_updates), msg));
  PetscFunctionReturn(0);
}

typedef PetscErrorCode (*PathsFn)(Mat, PetscInt64 *, PetscInt64 *);

/* Every product of A so far took vector path `expect` (device or staged), on every process. */
static PetscErrorCode CheckPath(Mat A, const char *expect) {
  PathsFn f = NULL;
  PetscInt64 device = 0, staged = 0;
  PetscBool want_device;
  char msg[256];

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatTesseraGetProductPaths_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "A has no MatTesseraGetProductPaths_C: not a tessera type");
  PetscCall(f(A, &device, &staged));
  PetscCall(PetscStrcmp(expect, "device", &want_device));
  PetscCall(PetscSNPrintf(msg, sizeof msg, "-expect_path %s: %lld products on CUDA vectors, %lld staged through host buffers", expect,
                          (long long)device, (long long)staged));
  PetscCall(Check((PetscBool)(want_device ? device > 0 && staged == 0 : staged > 0 && device == 0), msg));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "product paths (rank 0): %lld on CUDA vectors, %lld staged\n", (long long)device, (long long)staged));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckType(Mat A, const char *expect, const char *what) {
  PetscBool same;
  MatType type;
  char msg[256];

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &type));
  PetscCall(PetscStrcmp(type, expect, &same));
  PetscCall(PetscSNPrintf(msg, sizeof msg, "%s: type %s, expected %s", what, type, expect));
  PetscCall(Check(same, msg));
  PetscFunctionReturn(0);
}

/* mpiaijtessera: both local blocks must be seqaijtessera (also after PETSc rebuilt one). */
static PetscErrorCode CheckBlockTypes(Mat A, const char *label) {
  MatType type;
  PetscBool is;
  Mat Ad, Ao;
  char what[128];

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &type));
  PetscCall(PetscStrcmp(type, "mpiaijtessera", &is));
  if (!is) PetscFunctionReturn(0);
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  PetscCall(PetscSNPrintf(what, sizeof what, "%s: diagonal block", label));
  PetscCall(CheckType(Ad, "seqaijtessera", what));
  PetscCall(PetscSNPrintf(what, sizeof what, "%s: off-diagonal block", label));
  PetscCall(CheckType(Ao, "seqaijtessera", what));
  PetscFunctionReturn(0);
}

/* Adds v*[1 1; 1 1] at rows/columns i, j of both matrices (keeps symmetric positive definite
   matrices so), v = frac * min(d_i, d_j) from the diagonal d. Row i must be local. */
static PetscErrorCode AddCoupling(Mat ref, Mat A, PetscInt i, PetscInt j, PetscScalar v) {
  PetscInt idx[2] = {i, j};
  PetscScalar blk[4] = {v, v, v, v};

  PetscFunctionBegin;
  PetscCall(MatSetValues(ref, 2, idx, 2, idx, blk, ADD_VALUES));
  PetscCall(MatSetValues(A, 2, idx, 2, idx, blk, ADD_VALUES));
  PetscFunctionReturn(0);
}

static PetscErrorCode AssembleBoth(Mat ref, Mat A) {
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(ref, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(ref, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckUpdates(Mat ref, Mat A, PetscRandom rnd, PetscReal ptol, PetscReal stol, PetscBool solve) {
  Stats s0, s1;
  Vec d;
  const PetscScalar *da;
  PetscInt rstart, rend, m, i, N;
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetSize(A, &N, NULL));
  m = rend - rstart;
  PetscCall(MatCreateVecs(ref, NULL, &d));

  /* 1. values only, through MatSetValues and an assembly: +10% on the diagonal */
  PetscCall(GetStats(A, &s0));
  PetscCall(Check((PetscBool)(s0.analyses >= 1), "the tessera copy exists before the update checks"));
  PetscCall(MatGetDiagonal(ref, d));
  PetscCall(VecGetArrayRead(d, &da));
  for (i = rstart; i < rend; i++) {
    PetscScalar v = 0.1 * PetscAbsScalar(da[i - rstart]);
    PetscCall(MatSetValues(ref, 1, &i, 1, &i, &v, ADD_VALUES));
    PetscCall(MatSetValues(A, 1, &i, 1, &i, &v, ADD_VALUES));
  }
  PetscCall(VecRestoreArrayRead(d, &da));
  PetscCall(AssembleBoth(ref, A));
  PetscCall(CheckStats(A, &s0, 0, 1, "values-only change by MatSetValues + assembly"));
  PetscCall(CheckProducts(ref, A, rnd, ptol, "after a values-only change"));
  if (solve) PetscCall(CheckSolve(ref, A, rnd, stol, "solve after a values-only change"));
  PetscCall(CheckStats(A, &s0, 0, 1, "products after a values-only change"));

  /* 2. values only, without an assembly */
  PetscCall(GetStats(A, &s1));
  PetscCall(MatScale(ref, 2.0));
  PetscCall(MatScale(A, 2.0));
  PetscCall(CheckProducts(ref, A, rnd, ptol, "after MatScale"));
  PetscCall(CheckStats(A, &s1, 0, 1, "MatScale (no assembly), then products"));

  /* 3. a new nonzero pattern in the diagonal block: couple rows k and k + m/2 of this process */
  PetscCall(GetStats(A, &s1));
  PetscCall(MatSetOption(ref, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetDiagonal(ref, d));
  PetscCall(VecGetArrayRead(d, &da));
  for (i = 0; i + m / 2 < m && m >= 4; i += 7) {
    PetscReal di = PetscAbsScalar(da[i]), dj = PetscAbsScalar(da[i + m / 2]);
    PetscCall(AddCoupling(ref, A, rstart + i, rstart + i + m / 2, 0.01 * PetscMin(di, dj)));
  }
  PetscCall(VecRestoreArrayRead(d, &da));
  PetscCall(AssembleBoth(ref, A));
  PetscCall(CheckStats(A, &s1, 1, 0, "pattern change by MatSetValues + assembly"));
  PetscCall(CheckProducts(ref, A, rnd, ptol, "after a pattern change"));
  if (solve) PetscCall(CheckSolve(ref, A, rnd, stol, "solve after a pattern change"));
  PetscCall(CheckStats(A, &s1, 1, 0, "products after a pattern change"));

  /* 4. several processes: a coupling to a column of another process that no row here had, so
     PETSc rebuilds the off-diagonal block (the new block is seqaijtessera by type name) */
  if (size > 1) {
    if (rank == 0 && m > 0) {
      PetscInt j = (rstart + N / 2) % N;
      PetscCall(AddCoupling(ref, A, rstart, j, 1e-3));
    }
    PetscCall(AssembleBoth(ref, A));
    PetscCall(CheckBlockTypes(A, "after a new off-process column"));
    PetscCall(CheckProducts(ref, A, rnd, ptol, "after a new off-process column"));
    if (solve) PetscCall(CheckSolve(ref, A, rnd, stol, "solve after a new off-process column"));
  }
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckConvert(Mat ref, Mat A, PetscRandom rnd, PetscReal ptol) {
  Mat B, C, D, E;
  MatType tt;
  PetscMPIInt size;
  const char *plain;
  Stats s;
  char tess[64];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  plain = size == 1 ? MATSEQAIJ : MATMPIAIJ;
  PetscCall(MatGetType(A, &tt));
  PetscCall(PetscStrncpy(tess, tt, sizeof tess));

  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(CheckType(B, tess, "MatDuplicate"));
  PetscCall(CheckProducts(ref, B, rnd, ptol, "MatDuplicate"));
  PetscCall(GetStats(B, &s));
  PetscCall(Check((PetscBool)(s.analyses == 1), "MatDuplicate: the duplicate has its own tessera copy"));

  PetscCall(MatConvert(A, plain, MAT_INITIAL_MATRIX, &C));
  PetscCall(CheckType(C, plain, "MatConvert to aij"));
  PetscCall(CheckProducts(ref, C, rnd, ptol, "MatConvert to aij"));

  PetscCall(MatConvert(ref, tess, MAT_INITIAL_MATRIX, &D));
  PetscCall(CheckType(D, tess, "MatConvert from aij"));
  PetscCall(CheckProducts(ref, D, rnd, ptol, "MatConvert from aij"));
  PetscCall(GetStats(D, &s));
  PetscCall(Check((PetscBool)(s.products > 0), "MatConvert from aij: products run through tessera"));

  PetscCall(MatConvert(B, plain, MAT_INPLACE_MATRIX, &B));
  PetscCall(CheckType(B, plain, "MatConvert to aij in place"));
  PetscCall(CheckProducts(ref, B, rnd, ptol, "MatConvert to aij in place"));
  PetscCall(MatConvert(B, tess, MAT_INPLACE_MATRIX, &B));
  PetscCall(CheckType(B, tess, "MatConvert back in place"));
  PetscCall(CheckProducts(ref, B, rnd, ptol, "MatConvert back in place"));

  PetscCall(MatConvert(ref, plain, MAT_INITIAL_MATRIX, &E)); /* ref may be aijcusparse */
  PetscCall(MatSetType(E, tess));
  PetscCall(CheckType(E, tess, "MatSetType on an assembled aij matrix"));
  PetscCall(CheckProducts(ref, E, rnd, ptol, "MatSetType on an assembled aij matrix"));

  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&E));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  Csr a = {0, 0, NULL, NULL, NULL};
  Mat ref, A;
  PetscRandom rnd;
  char problem[64] = "laplace2d", mtx[PETSC_MAX_PATH_LEN] = "", expect[64] = "", path[16] = "";
  PetscInt n = 32;
  PetscReal ptol = 1e-12, stol = 1e-10, conv = 20.0;
  PetscBool updates = PETSC_FALSE, convert = PETSC_FALSE, solve = PETSC_TRUE, is_lap, is_cd, is_mtx, has_expect, has_path;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof problem, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mtx", mtx, sizeof mtx, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_type", expect, sizeof expect, &has_expect));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-convection", &conv, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-product_rtol", &ptol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-solution_rtol", &stol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check_updates", &updates, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check_convert", &convert, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-solve", &solve, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_path", path, sizeof path, &has_path));

  PetscCall(PetscStrcmp(problem, "laplace2d", &is_lap));
  PetscCall(PetscStrcmp(problem, "convdiff2d", &is_cd));
  PetscCall(PetscStrcmp(problem, "mtx", &is_mtx));
  if (is_lap) PetscCall(Grid2d(n, 0.0, &a));
  else if (is_cd) PetscCall(Grid2d(n, conv, &a));
  else if (is_mtx) PetscCall(ReadMatrixMarket(mtx, &a));
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-problem %s: use laplace2d, convdiff2d or mtx", problem);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "problem %s%s%s: %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscInt_FMT "\n", problem,
                        is_mtx ? " " : "", is_mtx ? mtx : "", a.rows, a.cols, a.rowptr[a.rows]));

  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 20240521));
  PetscCall(PetscRandomSeed(rnd));

  PetscCall(BuildMatrix(&a, "ref_", MATAIJ, &ref));
  PetscCall(BuildMatrix(&a, NULL, NULL, &A));
  if (has_expect) PetscCall(CheckType(A, expect, "-mat_type"));
  PetscCall(CheckBlockTypes(A, "-mat_type"));

  PetscCall(CheckProducts(ref, A, rnd, ptol, "first products"));
  if (solve) PetscCall(CheckSolve(ref, A, rnd, stol, "solve"));
  if (updates) PetscCall(CheckUpdates(ref, A, rnd, ptol, stol, solve));
  if (convert) PetscCall(CheckConvert(ref, A, rnd, ptol));
  if (has_path) PetscCall(CheckPath(A, path));
  if (has_expect && (updates || convert)) {
    Stats s;
    PetscCall(GetStats(A, &s));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "tessera counters (rank 0, diagonal block): analyses %lld, value updates %lld, products %lld\n",
                          (long long)s.analyses, (long long)s.updates, (long long)s.products));
  }

  PetscCall(MatDestroy(&ref));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFree(a.rowptr));
  PetscCall(PetscFree2(a.colind, a.vals));
  if (n_failures) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: %d of %d checks\n", n_failures, n_checks));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %d checks\n", n_checks));
  PetscCall(PetscFinalize());
  return n_failures ? 1 : 0;
}
