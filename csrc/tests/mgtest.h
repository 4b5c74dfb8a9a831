/*
 * mgtest.h - a minimal test harness for the C-level tests (each test file is its own program).
 *
 *   MG_CHECK(cond)              records a failure (with file:line and the expression) and goes on
 *   MG_CHECK_EQ_U64(a, b)       same, printing both values
 *   MG_TEST_MAIN_END()          prints "N passed, N failed" and returns the exit code
 *
 * mg_test_data_dir() gives the shared reference data directory (env MG_SHARED_DATA, else
 * ../shared/data relative to the working directory) or NULL when it does not exist.
 */
#ifndef MG_TEST_H
#define MG_TEST_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

typedef struct mg_test_counts {
    long passed, failed;
} mg_test_counts;

#define MG_CHECK_T(t, cond)                                                                    \
    do {                                                                                       \
        if (cond) {                                                                            \
            (t)->passed++;                                                                     \
        } else {                                                                               \
            (t)->failed++;                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
        }                                                                                      \
    } while (0)

#define MG_CHECK_EQ_U64_T(t, a, b)                                                             \
    do {                                                                                       \
        uint64_t mg_a_ = (uint64_t)(a), mg_b_ = (uint64_t)(b);                                 \
        if (mg_a_ == mg_b_) {                                                                  \
            (t)->passed++;                                                                     \
        } else {                                                                               \
            (t)->failed++;                                                                     \
            fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", __FILE__,  \
                    __LINE__, #a, #b, mg_a_, mg_b_);                                           \
        }                                                                                      \
    } while (0)

/* Convenience forms for a test file that keeps one `mg_test_counts T` in scope. */
#define MG_CHECK(cond) MG_CHECK_T(&T, cond)
#define MG_CHECK_EQ_U64(a, b) MG_CHECK_EQ_U64_T(&T, a, b)

#define MG_TEST_MAIN_END(name)                                                                 \
    do {                                                                                       \
        printf("%s: %ld passed, %ld failed\n", (name), T.passed, T.failed);                   \
        return T.failed ? 1 : 0;                                                               \
    } while (0)

static inline const char *mg_test_data_dir(void)
{
    const char *d = getenv("MG_SHARED_DATA");
    if (!d)
        d = "../shared/data";
    struct stat sb;
    if (stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return NULL;
    return d;
}

#endif
