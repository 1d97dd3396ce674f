/* scan_dd.h — the arithmetic of the prefix scans (gp_backend.cumsum / cumint), inline
 * for the host (the CPU twin, kernels/cpu_scan.c; the job's rank offsets, src/ph_scan.c) and
 * the device (kernels/cuda_scan.cu), so that every side computes a term, a carry step and an
 * output value with the same operations.
 *
 * A running total is a pair (hi, lo) whose value is hi + lo: hi the float64 sum, lo the
 * rounding errors of the additions into hi (compensated summation); gp_dd_add keeps it a
 * double-double (|lo| <= ulp(hi) / 2). A non-finite hi is the total itself (as a sequential
 * float64 sum has it: +inf, -inf, or NaN once both or a NaN came), and lo is then 0.
 * No fused multiply-add can change these results: every product is rounded before it is
 * added (the C side is ISO C11, which does not contract; the CUDA side uses __dmul_rn).
 *
 * NaN: IEEE 754 leaves the sign and payload of a NaN result open (an addition of two NaNs
 * may return either; inf - inf gives the machine's own default NaN), and compilers commute
 * the operands of an addition freely, so two inlined copies of one addition can give two
 * NaNs from the same operands. Every non-finite total and output therefore leaves these
 * functions as its value class only: +inf, -inf, or GP_SCAN_NAN (gp_scan_class), so that no
 * choice of NaN reaches a carry or an output, whichever code computed it.
 */
#ifndef GP_SCAN_DD_H
#define GP_SCAN_DD_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpuprim/kernels.h" /* GP_HD */

#ifdef __CUDA_ARCH__
#define GP_DMUL(a, b) __dmul_rn((a), (b))
#else
#define GP_DMUL(a, b) ((a) * (b))
#endif

/* The additions below where two NaNs can meet. A test may define it first
 * (tests/test_scan_fold.c: an addition that keeps either operand's NaN). */
#ifndef GP_SCAN_ADD
#define GP_SCAN_ADD(a, b) ((a) + (b))
#endif

#define GP_SCAN_NAN_BITS 0x7FF8000000000000ull /* quiet, positive, payload 0: numpy.nan */
#define GP_SCAN_RENORM 32 /* gp_scan_step renormalises after every 32nd piece */

/* The one NaN the scans give (GP_SCAN_NAN_BITS). */
static inline GP_HD double gp_scan_nan(void)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)GP_SCAN_NAN_BITS);
#else
    const uint64_t b = GP_SCAN_NAN_BITS;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
#endif
}

/* A non-finite s as its value class: +inf and -inf themselves, any NaN GP_SCAN_NAN. */
static inline GP_HD double gp_scan_class(double s)
{
    return (s != s) ? gp_scan_nan() : s;
}

/* The rounding error of s = fl(a + b) (Knuth's TwoSum: exact for any finite a, b). */
static inline GP_HD double gp_two_sum_err(double a, double b, double s)
{
    const double bb = s - a;
    return (a - (s - bb)) + (b - bb);
}

/* The value (hi + lo) + p rounded once more to float64: the output of one element whose
 * float64 prefix inside its block is p, after the blocks before it totalled (hi, lo). A zero
 * keeps the sign IEEE addition gives hi + p; a non-finite hi + p gives its value class. */
static inline GP_HD double gp_dd_round(double hi, double lo, double p)
{
    const double s = GP_SCAN_ADD(hi, p);
    const double t = gp_two_sum_err(hi, p, s) + lo;
    const double r = (t == 0.0) ? s : s + t;
    return (fabs(s) <= DBL_MAX) ? r : gp_scan_class(s);
}

/* (hi, lo) += a, renormalised to a double-double (|lo| <= ulp(hi) / 2); a non-finite sum
 * leaves (its value class, 0). */
static inline GP_HD void gp_dd_add(double *hi, double *lo, double a)
{
    const double s = GP_SCAN_ADD(*hi, a);
    if (!(fabs(s) <= DBL_MAX)) {
        *hi = gp_scan_class(s);
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
 * a non-finite hi leaves (its value class, 0). */
static inline GP_HD void gp_dd_norm(double *hi, double *lo)
{
    if (!(fabs(*hi) <= DBL_MAX)) {
        *hi = gp_scan_class(*hi);
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

/* The carry after piece j (a tile of the CUDA scans) whose float64 total is a, from the
 * carry (s, c) after the pieces before it: s the float64 sum of the totals, c the sum of its
 * rounding errors (compensated), renormalised to a double-double after every
 * GP_SCAN_RENORM-th piece so that c stays small. The carry after piece j is thus a function
 * of the totals up to j alone, whichever earlier carry a look-back starts from. A non-finite
 * s + a leaves (its value class, 0), and stays so: the class is all a later step reads. */
static inline GP_HD void gp_scan_step(double *s, double *c, double a, int64_t j)
{
    const double t = GP_SCAN_ADD(*s, a);
    if (!(fabs(t) <= DBL_MAX)) {
        *s = gp_scan_class(t);
        *c = 0.0;
        return;
    }
    *c += gp_two_sum_err(*s, a, t);
    *s = t;
    if ((j & (GP_SCAN_RENORM - 1)) == GP_SCAN_RENORM - 1) gp_dd_norm(s, c);
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
