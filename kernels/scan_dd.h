/* scan_dd.h — the arithmetic of the prefix scans (gp_backend.cumsum / cumint), inline
 * for the host (the CPU twin, kernels/cpu_scan.c; the job's rank offsets, src/ph_scan.c) and
 * the device (kernels/cuda_scan.cu), so that every side computes a term, a carry step and an
 * output value with the same operations.
 *
 * A running total is a pair (hi, lo) whose value is hi + lo: hi the float64 sum, lo the
 * rounding errors of the additions into hi (compensated summation); gp_dd_add keeps it a
 * double-double (|lo| <= ulp(hi) / 2). A non-finite hi is the total itself (as a sequential
 * float64 sum has it: +inf, -inf, or NaN once both or a NaN came), and lo then means nothing.
 * No fused multiply-add can change these results: every product is rounded before it is
 * added (the C side is ISO C11, which does not contract; the CUDA side uses __dmul_rn).
 */
#ifndef GP_SCAN_DD_H
#define GP_SCAN_DD_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "gpuprim/kernels.h" /* GP_HD */

#ifdef __CUDA_ARCH__
#define GP_DMUL(a, b) __dmul_rn((a), (b))
#else
#define GP_DMUL(a, b) ((a) * (b))
#endif

/* The rounding error of s = fl(a + b) (Knuth's TwoSum: exact for any finite a, b). */
static inline GP_HD double gp_two_sum_err(double a, double b, double s)
{
    const double bb = s - a;
    return (a - (s - bb)) + (b - bb);
}

/* The value (hi + lo) + p rounded once more to float64: the output of one element whose
 * float64 prefix inside its block is p, after the blocks before it totalled (hi, lo). A zero
 * keeps the sign IEEE addition gives hi + p; a non-finite hi + p is the result itself. */
static inline GP_HD double gp_dd_round(double hi, double lo, double p)
{
    const double s = hi + p;
    const double t = gp_two_sum_err(hi, p, s) + lo;
    const double r = (t == 0.0) ? s : s + t;
    return (fabs(s) <= DBL_MAX) ? r : s;
}

/* (hi, lo) += a, renormalised to a double-double (|lo| <= ulp(hi) / 2); a non-finite sum
 * leaves (sum, 0). */
static inline GP_HD void gp_dd_add(double *hi, double *lo, double a)
{
    const double s = *hi + a;
    if (!(fabs(s) <= DBL_MAX)) {
        *hi = s;
        *lo = 0.0;
        return;
    }
    const double t = gp_two_sum_err(*hi, a, s) + *lo;
    if (t == 0.0) { /* keeps the sign of a zero s */
        *hi = s;
        *lo = t;
        return;
    }
    const double h = s + t;
    *lo = gp_two_sum_err(s, t, h);
    *hi = h;
}

/* (hi, lo) as a double-double: the same value (up to a rounding of lo), |lo| <= ulp(hi) / 2;
 * a non-finite hi leaves (hi, 0). */
static inline GP_HD void gp_dd_norm(double *hi, double *lo)
{
    if (!(fabs(*hi) <= DBL_MAX)) {
        *lo = 0.0;
        return;
    }
    if (*lo == 0.0) return; /* keeps the sign of a zero hi */
    const double h = *hi + *lo;
    *lo = (fabs(h) <= DBL_MAX) ? gp_two_sum_err(*hi, *lo, h) : 0.0;
    *hi = h;
}

/* (hi, lo) += (bhi, blo): a piece's total added to the total of the pieces before it. */
static inline GP_HD void gp_dd_add2(double *hi, double *lo, double bhi, double blo)
{
    gp_dd_add(hi, lo, bhi);
    if (fabs(*hi) <= DBL_MAX && blo != 0.0) gp_dd_add(hi, lo, blo);
}

/* The cumulative trapezoid rule's term of the sample y after the sample yp: (h * (y + yp))
 * / 2 with h = x - xp, or dx when has_x is 0 (scipy's d * (y[1:] + y[:-1]) / 2.0). */
static inline GP_HD double gp_trap_term(double y, double yp, double x, double xp, double dx,
                                        int has_x)
{
    const double h = has_x ? x - xp : dx;
    return GP_DMUL(GP_DMUL(h, y + yp), 0.5);
}

/* 1 when no prefix of n elements of the 4-byte integer type t can leave the output type from
 * the running total c (int64 for GP_I32: |c| + n * 2^31 <= 2^63 - 1; uint64 for GP_U32:
 * c + n * (2^32 - 1) <= 2^64 - 1; n < 2^32): a plain 64-bit running sum is then exact and
 * needs no check (both backends' fast path). 0 for every other type. Host only. */
static inline int gp_scan_int_fast(gp_dtype t, gp_i128 c, int64_t n)
{
    if ((t != GP_I32 && t != GP_U32) || n < 0 || n >= ((int64_t)1 << 32)) return 0;
    const uint64_t span = (uint64_t)n * (t == GP_I32 ? ((uint64_t)1 << 31) : 0xFFFFFFFFull);
    if (t == GP_U32) return c.hi == 0 && c.lo <= UINT64_MAX - span;
    const int fits = c.hi == ((int64_t)c.lo < 0 ? -1 : 0);
    const uint64_t mag = (int64_t)c.lo < 0 ? (uint64_t)0 - c.lo : c.lo;
    return fits && mag <= (uint64_t)INT64_MAX - span;
}

#endif /* GP_SCAN_DD_H */
