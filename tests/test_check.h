/* test_check.h — the pass / fail counters and CHECK(cond, printf-args...) of the small host
 * unit tests (test_binding.c, test_fault.c, test_tuning.c, test_progress.c): a failing
 * check prints "FAIL file:line: message" and is counted; main() reports g_pass / g_fail.
 * One translation unit each. */
#ifndef GP_TEST_CHECK_H
#define GP_TEST_CHECK_H

#include <stdio.h>

static int g_fail, g_pass;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (cond) {                                                                       \
            g_pass++;                                                                     \
        } else {                                                                          \
            g_fail++;                                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            printf(__VA_ARGS__);                                                          \
            printf("\n");                                                                 \
        }                                                                                 \
    } while (0)

#endif /* GP_TEST_CHECK_H */
