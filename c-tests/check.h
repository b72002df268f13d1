/* Tiny check helpers shared by the C test programs (C99, header-only).
 *
 * Every failed check prints "FAIL file:line: what" and counts; main() ends with
 * `return check_finish();` which prints "ok: N checks" (exit 0) or a failure summary (exit 1). */
#ifndef TESSERA_CHECK_H
#define TESSERA_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

static int check_count = 0;
static int check_failures = 0;

static inline void check_report(int ok, const char *file, int line, const char *what) {
    ++check_count;
    if (!ok) {
        ++check_failures;
        fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
    }
}

#define CHECK(cond) check_report((cond) ? 1 : 0, __FILE__, __LINE__, #cond)

static inline const char *check_name(tessera_status s) {
    const char *n = tessera_status_name(s);
    return n ? n : "(NULL name)";
}

/* The exact status, and on failure a non-empty sentence in tessera_last_error(). */
static inline void check_status_at(tessera_status got, tessera_status want, const char *file, int line,
                            const char *call) {
    ++check_count;
    if (got != want) {
        ++check_failures;
        fprintf(stderr, "FAIL %s:%d: %s\n      returned %d (%s), expected %d (%s); last error: %s\n",
                file, line, call, (int)got, check_name(got), (int)want, check_name(want),
                tessera_last_error() ? tessera_last_error() : "(NULL)");
        return;
    }
    if (want != TESSERA_STATUS_SUCCESS) {
        const char *e = tessera_last_error();
        ++check_count;
        /* "a sentence": something longer than a word, with at least one space in it. */
        if (e == NULL || strlen(e) < 8 || strchr(e, ' ') == NULL) {
            ++check_failures;
            fprintf(stderr, "FAIL %s:%d: %s\n      returned %s as expected, but tessera_last_error() is "
                            "not a sentence: %s%s%s\n",
                    file, line, call, check_name(got), e ? "\"" : "", e ? e : "(NULL)", e ? "\"" : "");
        }
    }
}

#define CHECK_STATUS(call, want) check_status_at((call), (want), __FILE__, __LINE__, #call)
#define CHECK_OK(call) check_status_at((call), TESSERA_STATUS_SUCCESS, __FILE__, __LINE__, #call)

/* |got - want| <= tol * max(1, |want|); NaN never passes. */
static inline void check_close_at(double got, double want, double tol, const char *file, int line,
                           const char *what) {
    double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
    int ok = !(got != got) && fabs(got - want) <= tol * scale;
    ++check_count;
    if (!ok) {
        ++check_failures;
        fprintf(stderr, "FAIL %s:%d: %s: got %.17g, expected %.17g\n", file, line, what, got, want);
    }
}

#define CHECK_CLOSE(got, want, tol) check_close_at((got), (want), (tol), __FILE__, __LINE__, #got)

/* The last error mentions `word` (used for the detail of malformed-matrix errors). */
static inline void check_error_mentions_at(const char *word, const char *file, int line) {
    const char *e = tessera_last_error();
    int ok = e != NULL && strstr(e, word) != NULL;
    ++check_count;
    if (!ok) {
        ++check_failures;
        fprintf(stderr, "FAIL %s:%d: tessera_last_error() should name \"%s\": %s\n", file, line, word,
                e ? e : "(NULL)");
    }
}

#define CHECK_ERROR_MENTIONS(word) check_error_mentions_at((word), __FILE__, __LINE__)

static inline int check_finish(void) {
    if (check_failures != 0) {
        fprintf(stderr, "FAILED: %d of %d checks\n", check_failures, check_count);
        return 1;
    }
    printf("ok: %d checks\n", check_count);
    return 0;
}

#endif /* TESSERA_CHECK_H */
