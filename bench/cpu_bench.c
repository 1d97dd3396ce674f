/* cpu_bench.c — the CPU backend's kernels on one large array, timed (wall and this
 * process's CPU time; the minimum over the repetitions): the order-key map, the sort of
 * keys, the stable sort of (key, input position) pairs, and the statistics, on float32
 * uniform in [-1, 1) (the job's local work per rank); the prefix sum of the same values as
 * float64 (numpy.cumsum's case: bench/README.md has the command that times numpy's). The CPU time is the figure to read
 * on a machine shared with other work. Not a test; bench/README.md.
 *
 *   gpuprim_cpu_bench [N [REPS]]     (default N = 2^27, REPS = 3)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "gpuprim/kernels.h"
#include "cpu_twins.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { OP_KEYS, OP_SORT, OP_PAIRS, OP_STATS, OP_CUMSUM, OP_N };
static const char *op_names[OP_N] = {"to_keys f32", "sort keys (4 B)",
                                     "sort pairs, stable, values = positions", "stats f32",
                                     "cumsum f64 -> f64"};

/* One timed run of op on a fresh copy of the input; 0 on success. */
static int run_op(int op, const float *in, void *k, uint64_t *v, int64_t n, double *wall,
                  double *cpu)
{
    memcpy(k, in, (size_t)n * 4);
    if (op == OP_SORT || op == OP_PAIRS) gp_cpu_keys(GP_F32, 0, 0, k, n);
    if (op == OP_PAIRS)
        for (int64_t i = 0; i < n; i++) v[i] = (uint64_t)i;
    double *d = (double *)v; /* cumsum: the input as float64 in v, the output in k */
    if (op == OP_CUMSUM)
        for (int64_t i = 0; i < n; i++) d[i] = (double)in[i];
    gp_scan_carry carry = gp_scan_carry_start(0);
    gp_stats st;
    const double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc = 0;
    switch (op) {
    case OP_KEYS: rc = gp_cpu_keys(GP_F32, 0, 0, k, n); break;
    case OP_SORT: rc = gp_cpu_sort(4, k, NULL, n, 0); break;
    case OP_PAIRS: rc = gp_cpu_sort(4, k, v, n, 1); break;
    case OP_CUMSUM: rc = gp_cpu_cumsum(GP_F64, d, n, &carry, k); break;
    default: rc = gp_cpu_stats(GP_F32, k, n, 0, &st); break;
    }
    *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *wall = clock_s(CLOCK_MONOTONIC) - w0;
    return rc;
}

int main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? strtoll(argv[1], NULL, 0) : (int64_t)1 << 27;
    const int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: gpuprim_cpu_bench [N >= 1 [REPS >= 1]]\n");
        return 2;
    }
    float *in = malloc((size_t)n * 4);
    void *k = malloc((size_t)n * 8);
    uint64_t *v = malloc((size_t)n * 8);
    if (!in || !k || !v) {
        fprintf(stderr, "gpuprim_cpu_bench: cannot allocate %lld elements\n", (long long)n);
        return 1;
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        in[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    printf("gpuprim_cpu_bench: n = %lld float32, %d repetitions; seconds, minimum\n",
           (long long)n, reps);
    printf("%-40s %9s %9s %11s\n", "op", "wall", "cpu", "cpu ns/elem");
    for (int op = 0; op < OP_N; op++) {
        double bw = 1e30, bc = 1e30;
        for (int r = 0; r < reps; r++) {
            double w, c;
            if (run_op(op, in, k, v, n, &w, &c) != GP_OK) {
                fprintf(stderr, "gpuprim_cpu_bench: %s failed: %s\n", op_names[op],
                        gp_backend_cpu()->last_error());
                return 1;
            }
            bw = w < bw ? w : bw;
            bc = c < bc ? c : bc;
        }
        printf("%-40s %9.3f %9.3f %11.2f\n", op_names[op], bw, bc, bc / (double)n * 1e9);
    }
    free(in), free(k), free(v);
    return 0;
}
