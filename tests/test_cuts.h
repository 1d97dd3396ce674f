/* test_cuts.h — random splits of [0, n) for the tests that add up the pieces of an array
 * (test_cpu_pairs_sums.c, test_gpu_pairs_sums.c). Include once, in the test's one source. */
#ifndef TEST_CUTS_H
#define TEST_CUTS_H

#include <stdint.h>

/* cut[0] = 0 <= cut[1] <= ... <= cut[np] = n: the np - 1 inner cuts drawn as
 * draw() % (n + 1) (0 when n = 0), in that order, then sorted; cut holds np + 1 entries. */
static inline void gp_test_random_cuts(int64_t *cut, int np, int64_t n, uint64_t (*draw)(void))
{
    cut[0] = 0;
    cut[np] = n;
    for (int p = 1; p < np; p++) cut[p] = n ? (int64_t)(draw() % (uint64_t)(n + 1)) : 0;
    for (int p = 1; p < np; p++) /* insertion sort; cut[0] = 0 is the least already */
        for (int q = p; q > 1 && cut[q - 1] > cut[q]; q--) {
            const int64_t s = cut[q];
            cut[q] = cut[q - 1];
            cut[q - 1] = s;
        }
}

#endif /* TEST_CUTS_H */
