/* header_twice.c: tessera.h has an include guard, its version macros are plain integers usable
 * by the preprocessor, and they equal what tessera_get_version() reports.
 *
 * Also: the header is self-contained (included first, before any system header), declares the
 * documented type names, and the struct tags of the opaque handles
 * (`struct tessera_matrix_info`, `struct tessera_handle_s *`, `struct tessera_matrix_s *`).
 *
 * Build: cc -std=c99 -Wall -Wextra -Wpedantic -Werror -I include c-tests/header_twice.c -ltessera */
#include "tessera.h"
#include "tessera.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#if !defined(TESSERA_VERSION_MAJOR) || !defined(TESSERA_VERSION_MINOR) || !defined(TESSERA_VERSION_PATCH)
#error "tessera.h must define TESSERA_VERSION_MAJOR/MINOR/PATCH"
#endif
#if TESSERA_VERSION_MAJOR < 0 || TESSERA_VERSION_MINOR < 0 || TESSERA_VERSION_PATCH < 0
#error "tessera.h version macros must be non-negative integers"
#endif

/* a compile-time version test, the way applications write one */
#if TESSERA_VERSION_MAJOR > 0 || TESSERA_VERSION_MINOR >= 1
#define HAVE_TESSERA_0_1 1
#else
#define HAVE_TESSERA_0_1 0
#endif

int main(void) {
    int major = -1, minor = -1, patch = -1;
    char macro_version[64], lib_version[64];

    /* the documented names, all usable as types */
    tessera_status st = TESSERA_STATUS_SUCCESS;
    tessera_backend backend = TESSERA_BACKEND_HOST;
    tessera_value_type vt = TESSERA_VALUE_TYPE_F64;
    tessera_index_type it = TESSERA_INDEX_TYPE_I32;
    tessera_index_base base = TESSERA_INDEX_BASE_ZERO;
    tessera_operation op = TESSERA_OPERATION_NON_TRANSPOSE;
    tessera_algorithm alg = TESSERA_ALGORITHM_AUTO;
    tessera_tuning tune = TESSERA_TUNING_NONE;
    struct tessera_handle_s *hp = NULL;
    struct tessera_matrix_s *mp = NULL;
    tessera_handle h = hp;
    tessera_matrix A = mp;
    struct tessera_matrix_info tagged_info;
    tessera_matrix_info info;

    memset(&tagged_info, 0, sizeof tagged_info);
    memset(&info, 0, sizeof info);
    CHECK(sizeof(tessera_status) == 4 && sizeof(tessera_backend) == 4 && sizeof(vt) == 4 &&
          sizeof(it) == 4 && sizeof(base) == 4 && sizeof(op) == 4 && sizeof(alg) == 4 &&
          sizeof(tune) == 4);
    CHECK(sizeof info.params == 256);
    CHECK(sizeof tagged_info == sizeof info);
    CHECK(st == 0 && backend == 1 && h == NULL && A == NULL);

    CHECK_OK(tessera_get_version(&major, &minor, &patch));
    sprintf(macro_version, "%d.%d.%d", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR,
            TESSERA_VERSION_PATCH);
    sprintf(lib_version, "%d.%d.%d", major, minor, patch);
    if (strcmp(macro_version, lib_version) != 0)
        fprintf(stderr, "header says %s, library says %s\n", macro_version, lib_version);
    CHECK(major == TESSERA_VERSION_MAJOR);
    CHECK(minor == TESSERA_VERSION_MINOR);
    CHECK(patch == TESSERA_VERSION_PATCH);
    CHECK(HAVE_TESSERA_0_1 == (major > 0 || minor >= 1));
#ifdef EXPECT_VERSION
    /* the harness passes Cargo.toml's version */
    CHECK(strcmp(lib_version, EXPECT_VERSION) == 0);
    if (strcmp(lib_version, EXPECT_VERSION) != 0)
        fprintf(stderr, "library version %s, Cargo.toml version %s\n", lib_version, EXPECT_VERSION);
#endif
    return check_finish();
}
