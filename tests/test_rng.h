/* test_rng.h — the host unit tests' random stream and clock (test_cpu_kernels.c,
 * test_cpu_pairs_sums.c): splitmix64, gp_mix64 of a state that steps by the golden ratio, so
 * a seed set in g_rng reproduces a run. Include once, in the test's one source file. */
#ifndef TEST_RNG_H
#define TEST_RNG_H

#include <stdint.h>
#include <time.h>

#include "gpuprim/kernels.h" /* gp_mix64 */

static uint64_t g_rng;

static uint64_t rnd(void)
{
    const uint64_t r = gp_mix64(g_rng);
    g_rng += 0x9E3779B97F4A7C15ull;
    return r;
}

/* uniform in [0, 1) */
static inline double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }

/* wall-clock seconds */
static inline double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif /* TEST_RNG_H */
