/* cpu_trap.c — the CPU twins of the trapezoid rules (gp_backend.trap_x and trap_fn): plain
 * one-thread loops whose terms add in the fixed, chunked order of the statistics
 * (cpu_stats_ref.c's file comment; psum, cpu_stats.h), so that the result depends only on
 * the input.
 */
#include "cpu_common.h"
#include "cpu_stats.h"
#include "cpu_twins.h"

/* Trapezoid rule over non-uniform samples — the CPU twin of gp_backend.trap_x.
 *
 * t: type of y; y: n elements of type t; x: n float64 coordinates (host memory; either may
 * be NULL only when n == 0); io: in/out record.
 * Sets io->trap = sum over i in [0, n-1) of (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (y as
 * (double)value; terms summed in the fixed order of cpu_stats_ref.c, term i being the
 * pair (i, i+1)), io->xfirst = x[0], io->xlast = x[n-1] and io->has_x = 1; every other
 * field of *io is left as it was. For n == 0: trap = xfirst = xlast = 0 and has_x = 1
 * (like gp_stats_empty(), so that an empty piece never clears has_x in a combine); for
 * n == 1: trap = 0, xfirst = xlast = x[0]. x need not be sorted; NaN/inf propagate.
 * Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL pointers). */
int gp_cpu_trap_x(gp_dtype t, const void *y, const double *x, int64_t n, gp_stats *io)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!io) return CPU_FAIL(GP_EINVAL, "io is NULL");
    if (n > 0 && (!y || !x))
        return CPU_FAIL(GP_EINVAL, "%s is NULL with n = %lld", !y ? "y" : "x", (long long)n);

    if (n == 0) {
        io->trap = 0.0;
        io->xfirst = 0.0;
        io->xlast = 0.0;
        io->has_x = 1;
        return GP_OK;
    }

    double yb[GP_CPU_CHUNK + 1]; /* y[c .. c+len] as double */
    psum acc;
    psum_init(&acc);
    const int64_t nterms = n - 1;
    for (int64_t c = 0; c < nterms; c += GP_CPU_CHUNK) {
        const int64_t len = (nterms - c > GP_CPU_CHUNK) ? GP_CPU_CHUNK : nterms - c;
        gp_cpu_load_doubles(t, y, c, len + 1, yb);
        double l[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t j = 0; j < len; j++)
            l[j & 3] += (x[c + j + 1] - x[c + j]) * (yb[j] + yb[j + 1]) * 0.5;
        psum_push(&acc, (l[0] + l[1]) + (l[2] + l[3]));
    }
    io->trap = psum_total(&acc);
    io->xfirst = x[0];
    io->xlast = x[n - 1];
    io->has_x = 1;
    return GP_OK;
}

/* Weighted trapezoid sum of a built-in integrand — the CPU twin of gp_backend.trap_fn.
 *
 * f: integrand; a: left end; h: step (> 0 for an ordinary integral, any value accepted);
 * n: number of trapezoids (the points are i = 0..n, x_i = a + (double)i * h in float64);
 * [i0, i1): the points this caller owns, 0 <= i0 <= i1 <= n+1.
 * *wsum = sum over i in [i0, i1) of w_i * f(x_i) with w_i = 1/2 when i == 0 or i == n and
 * 1 otherwise (so with n == 0 the single point has weight 1/2); terms summed in the fixed
 * order of cpu_stats_ref.c, chunks counted from i0. The integral over [a, a + n*h] is h
 * times the sum of all callers' wsum. f is evaluated with gp_func_eval (libm, double).
 * Returns GP_OK, or GP_EINVAL (unknown f, n < 0, bad range, NULL wsum). */
int gp_cpu_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                   double *wsum)
{
    if ((unsigned)f >= GP_NFUNCS) return CPU_FAIL(GP_EINVAL, "unknown integrand %d", (int)f);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!wsum) return CPU_FAIL(GP_EINVAL, "wsum is NULL");
    if (!(0 <= i0 && i0 <= i1 && i1 - 1 <= n)) /* i1 <= n+1 without overflowing n+1 */
        return CPU_FAIL(GP_EINVAL, "range [%lld, %lld) not inside [0, n+1] with n = %lld",
                        (long long)i0, (long long)i1, (long long)n);

    psum acc;
    psum_init(&acc);
    for (int64_t c = i0; c < i1; c += GP_CPU_CHUNK) {
        const int64_t e = (i1 - c > GP_CPU_CHUNK) ? c + GP_CPU_CHUNK : i1;
        double l[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t i = c; i < e; i++) {
            const double w = (i == 0 || i == n) ? 0.5 : 1.0;
            l[(i - c) & 3] += w * gp_func_eval(f, a + (double)i * h);
        }
        psum_push(&acc, (l[0] + l[1]) + (l[2] + l[3]));
    }
    *wsum = psum_total(&acc);
    return GP_OK;
}
