/*
 * Whole KSP solves on a 3D grid, for comparing matrix types on the GPU (plugins/petsc/bench/run).
 * Any matrix type works; the comparison is aijtessera (through -dll_append) with aijcusparse.
 *
 *   tessera_petsc_bench [-dll_append .../libtessera_petsc.so] -mat_type aijtessera|aijcusparse|aij \
 *       [-problem lap3d|convdiff3d] [-n 128] [-conv 0.5] [-solves 5] [-shift 0.05] [-mults 200] \
 *       [-first_mult 1] -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 [-log_view ...]
 *
 * The matrix: n^3 unknowns, 7-point stencil, Dirichlet boundaries, rows distributed by PETSc.
 * lap3d is the Laplacian (6 on the diagonal, -1 off it; symmetric positive definite);
 * convdiff3d adds first-order upwind convection of strength conv along x (diagonal 6 + conv,
 * west neighbour -1 - conv): nonsymmetric. Vectors come from MatCreateVecs, so each matrix type
 * picks its own vector type (CUDA vectors for aijcusparse, and for aijtessera with a CUDA PETSc).
 *
 * What is timed (wall clock, rank 0, the device synchronized before and after):
 *  1. -first_mult: on a freshly assembled matrix that is then destroyed, its first MatMult: what
 *     a matrix type does on first use (aijcusparse: its copy to the GPU; aijtessera: create and
 *     analyze) plus one product.
 *  2. -solves solves with b = 1, x0 = 0 on a second fresh matrix. Solve 1 includes the first
 *     MatMult's setup. Before each later solve every value is assembled again with the diagonal
 *     raised by shift*(solve-1) (MatSetValues with INSERT_VALUES, same pattern: a value-only
 *     reassembly), and KSPSetOperators is called again.
 *  3. -mults products back to back on the last matrix: the steady time per MatMult.
 * Each solve prints one line "RESULT ..." (iterations, converged reason, KSP's last residual
 * norm, the true relative residual ||b - A x|| / ||b||, KSPSolve seconds, reassembly seconds);
 * -log_view stages: "First solve", "Later solves", "MatMult loop".
 */
#include <petscdevice.h>
#include <petscksp.h>

static const char help[] = "KSP solves of a 3D 7-point stencil, timed end to end.\n";

typedef struct {
  PetscInt n;
  PetscReal conv, diag_extra;
} Grid;

/* Sets every locally owned row of A (INSERT_VALUES) and assembles. */
static PetscErrorCode Fill(Mat A, const Grid *g) {
  PetscInt rstart, rend, row, n = g->n;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt ix = row % n, iy = (row / n) % n, iz = row / (n * n), cols[7], k = 0;
    PetscScalar vals[7];
#define ENTRY(c, v) \
  do { \
    cols[k] = (c); \
    vals[k++] = (v); \
  } while (0)
    if (iz > 0) ENTRY(row - n * n, -1.0);
    if (iy > 0) ENTRY(row - n, -1.0);
    if (ix > 0) ENTRY(row - 1, -1.0 - g->conv);
    ENTRY(row, 6.0 + g->conv + g->diag_extra);
    if (ix < n - 1) ENTRY(row + 1, -1.0);
    if (iy < n - 1) ENTRY(row + n, -1.0);
    if (iz < n - 1) ENTRY(row + n * n, -1.0);
#undef ENTRY
    PetscCall(MatSetValues(A, 1, &row, k, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode Build(const Grid *g, Mat *A) {
  PetscInt N = g->n * g->n * g->n;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 2, NULL));
  PetscCall(Fill(*A, g));
  PetscFunctionReturn(0);
}

/* Waits for PETSc's device work (a no-op without a device). */
static PetscErrorCode Sync(void) {
  PetscDeviceContext dctx;

  PetscFunctionBegin;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  if (dctx) PetscCall(PetscDeviceContextSynchronize(dctx));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  Grid g = {128, 0.0, 0.0};
  char problem[32] = "lap3d";
  PetscInt solves = 5, mults = 200, i, s;
  PetscReal shift = 0.05;
  PetscBool first_mult = PETSC_TRUE, is_cd, is_lap;
  Mat A;
  Vec x, b, r;
  KSP ksp;
  MatType type;
  PetscMPIInt size;
  PetscLogDouble t0, t1;
  PetscLogStage st_first, st_later, st_mults;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof problem, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &g.n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-conv", &g.conv, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-solves", &solves, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mults", &mults, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-shift", &shift, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-first_mult", &first_mult, NULL));
  PetscCall(PetscStrcmp(problem, "convdiff3d", &is_cd));
  PetscCall(PetscStrcmp(problem, "lap3d", &is_lap));
  PetscCheck(is_cd || is_lap, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-problem %s: use lap3d or convdiff3d", problem);
  if (is_lap) g.conv = 0.0;
  else if (g.conv == 0.0) g.conv = 0.5;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscLogStageRegister("First solve", &st_first));
  PetscCall(PetscLogStageRegister("Later solves", &st_later));
  PetscCall(PetscLogStageRegister("MatMult loop", &st_mults));

  if (first_mult) {
    Mat A1;
    PetscCall(Build(&g, &A1));
    PetscCall(MatCreateVecs(A1, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    PetscCall(MatMult(A1, b, x));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT first_mult_ms=%.3f\n", (t1 - t0) * 1e3));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A1));
  }

  PetscCall(Build(&g, &A));
  PetscCall(MatGetType(A, &type));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetFromOptions(ksp));
  for (s = 1; s <= solves; s++) {
    PetscInt its;
    PetscReal rnorm, tnorm, bnorm;
    KSPConvergedReason reason;
    PetscLogDouble assembly = 0.0;

    if (s > 1) {
      PetscCall(PetscTime(&t0));
      g.diag_extra = shift * (PetscReal)(s - 1);
      PetscCall(Fill(A, &g));
      PetscCall(PetscTime(&t1));
      assembly = t1 - t0;
    }
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(VecSet(x, 0.0));
    PetscCall(PetscLogStagePush(s == 1 ? st_first : st_later));
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    PetscCall(PetscLogStagePop());
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetResidualNorm(ksp, &rnorm));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &tnorm));
    PetscCall(VecNorm(b, NORM_2, &bnorm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "RESULT type=%s problem=%s n=%" PetscInt_FMT " ranks=%d solve=%" PetscInt_FMT " its=%" PetscInt_FMT
                          " reason=%s rnorm=%.12e true_rel=%.12e ksp_s=%.6f reassembly_s=%.4f\n",
                          type, problem, g.n, (int)size, s, its, KSPConvergedReasons[reason], (double)rnorm,
                          (double)(tnorm / bnorm), t1 - t0, assembly));
  }

  if (mults > 0) {
    PetscCall(PetscLogStagePush(st_mults));
    PetscCall(MatMult(A, b, x)); /* the matrix is up to date after the last solve; warm */
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    for (i = 0; i < mults; i++) PetscCall(MatMult(A, b, x));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    PetscCall(PetscLogStagePop());
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT matmult_us=%.2f mults=%" PetscInt_FMT "\n", (t1 - t0) * 1e6 / (double)mults, mults));
  }
  PetscCall(MatViewFromOptions(A, NULL, "-final_mat_view"));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
