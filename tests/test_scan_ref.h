/* test_scan_ref.h — what the scan tests (test_cpu_scan.c, test_gpu_scan.c) share: the inputs
 * (every dtype; uniform, cancelling, special values, -0.0, integer extremes) and the exact
 * references written independently of kernels/: float prefix sums through the exact (Kulisch)
 * accumulator of exact_sum.h, rounded once, with the sequential rule of infinities and NaN
 * kept as flags; integer prefix sums in __int128. The check of a float output is the bound of
 * gpuprim/kernels.h: |y_i - exact_i| <= 2^-45 * sum_{j<=i} |term_j| (plus the reference's own
 * rounding, half an ulp of exact_i), the non-finite values exactly (a NaN as the bits
 * 0x7FF8000000000000, whatever NaNs the data hold), and -0.0 while every term so far is
 * -0.0 (past 2^18 elements every 31st output and the last). Include once, in the test's one
 * source file. */
#ifndef TEST_SCAN_REF_H
#define TEST_SCAN_REF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpuprim/exact_sum.h"
#include "gpuprim/kernels.h"

__extension__ typedef __int128 ref_i128;

#define SCAN_BOUND 0x1.0p-45 /* the error bound of the float scans, per unit of sum |term| */

enum { SD_UNIFORM, SD_CANCEL, SD_SPECIAL, SD_NEGZERO, SD_EXTREME, SD_COUNT };
static const char *const scan_dist_names[SD_COUNT] = {"uniform", "cancel", "special", "negzero",
                                                      "extreme"};

/* Element i of y (type t) as a double, and as an exact integer (integer types). */
static double ref_elem_d(gp_dtype t, const void *y, int64_t i)
{
    return gp_elem_to_double(t, (const unsigned char *)y + (size_t)i * gp_dtype_size(t));
}
static ref_i128 ref_elem_i(gp_dtype t, const void *y, int64_t i)
{
    const unsigned char *p = (const unsigned char *)y + (size_t)i * gp_dtype_size(t);
    switch (t) {
    case GP_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case GP_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case GP_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* Fills y[0, n) of type t with distribution d from the random stream draw (64 random bits a
 * call): uniform values (floats in [-1000, 1000), integers small and signed where the type is);
 * cancel: large terms of both signs with small ones between (floats; integers: uniform);
 * special: floats with NaN (of both signs, some with a payload), +-inf, -0.0, subnormals
 * among uniform values, integers at their extremes; negzero: all -0.0 (floats; integers 0);
 * extreme: integers of the whole range (floats: values up to 1e300). */
static void ref_fill(gp_dtype t, int d, void *y, int64_t n, uint64_t (*draw)(void))
{
    unsigned char *p = (unsigned char *)y;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t r = draw();
        const double u = (double)(r >> 11) * 0x1.0p-53;
        double v = u * 2000.0 - 1000.0;
        int64_t iv = (int64_t)(r % 2001) - 1000;
        if (d == SD_CANCEL) v = (r & 3) ? ((r & 4) ? 1e15 : -1e15) * (1.0 + u) : u - 0.5;
        if (d == SD_SPECIAL) {
            static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0x1.0p-1074, -0x1.0p-1060};
            if (r % 17 == 0) v = sp[(r >> 8) % 6];
            if (v != v && (r & 32)) { /* a NaN of the other sign or with a payload */
                const uint64_t nb = (r & 64) ? 0xFFF8000000000000ull : 0x7FF800000000BEEFull;
                memcpy(&v, &nb, 8);
            }
        }
        if (d == SD_NEGZERO) v = -0.0, iv = 0;
        if (d == SD_EXTREME) v = (u - 0.5) * 2e300;
        const int ext = d == SD_SPECIAL || d == SD_EXTREME, top = d == SD_SPECIAL && (r & 8);
        const float f = (float)(d == SD_EXTREME ? (u - 0.5) * 6e38 : v);
        int32_t i32 = ext ? (int32_t)(uint32_t)r : (int32_t)iv;
        if (top) i32 = (r & 16) ? INT32_MAX : INT32_MIN;
        const uint32_t u32 = top ? UINT32_MAX : ext ? (uint32_t)r : (uint32_t)(iv + 1000);
        const int64_t big = (int64_t)(r >> (d == SD_EXTREME ? 8 : 1)) * ((r & 1) ? -1 : 1);
        const int64_t i64 = ext ? big : iv;
        const uint64_t u64 = ext ? (r >> 12) : (uint64_t)(iv + 1000);
        const void *src = t == GP_F32 ? (const void *)&f : t == GP_F64 ? (const void *)&v
                          : t == GP_I32 ? (const void *)&i32 : t == GP_U32 ? (const void *)&u32
                          : t == GP_I64 ? (const void *)&i64 : (const void *)&u64;
        memcpy(p + (size_t)i * gp_dtype_size(t), src, gp_dtype_size(t));
    }
}

/* The state of a float reference: the exact sum so far, sum |term|, the sequential flags. */
typedef struct ref_f {
    gp_superacc acc;
    double abs;          /* sum of |term| (float64 upward is enough: a tolerance) */
    int pinf, ninf, nan; /* an infinity of each sign, a NaN term (cumint) seen */
    int allneg;          /* every term so far was -0.0 */
} ref_f;

static void ref_f_start(ref_f *r)
{
    gp_superacc_zero(&r->acc);
    r->abs = 0.0;
    r->pinf = r->ninf = r->nan = 0;
    r->allneg = 1;
}

/* Adds one term (cumsum: a NaN element is the term +0.0, as numpy.nancumsum has it). */
static void ref_f_add(ref_f *r, double term)
{
    if (isnan(term)) r->nan = 1;
    else if (isinf(term) && term > 0) r->pinf = 1;
    else if (isinf(term)) r->ninf = 1;
    else {
        gp_superacc_add_double(&r->acc, term);
        r->abs += fabs(term);
    }
    if (!(term == 0.0 && signbit(term))) r->allneg = 0;
}

/* The bits of v; 1 when v is the one NaN the scans give (gpuprim/kernels.h). */
static uint64_t ref_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
}
static int ref_is_scan_nan(double v) { return ref_bits(v) == 0x7FF8000000000000ull; }

/* 1 when got is the output the reference allows after the terms added so far; *err gets
 * |got - exact| / (sum |term|) (0 for exact or special values). */
static int ref_f_ok(const ref_f *r, double got, double *err)
{
    *err = 0.0;
    if (r->nan || (r->pinf && r->ninf)) return ref_is_scan_nan(got);
    if (r->pinf) return isinf(got) && got > 0;
    if (r->ninf) return isinf(got) && got < 0;
    if (r->allneg) return got == 0.0 && signbit(got);
    const double e = gp_superacc_to_double(&r->acc);
    if (!isfinite(got)) return 0;
    const double d = fabs(got - e);
    *err = r->abs > 0 ? d / r->abs : d;
    return d <= SCAN_BOUND * r->abs + 0x1.0p-53 * fabs(e);
}

/* The cumint term of sample i after sample i-1, scipy's d * (y[1:] + y[:-1]) / 2.0. */
static double ref_trap_term(double y, double yp, const double *x, int64_t i, double dx)
{
    const double h = x ? x[i] - x[i - 1] : dx;
    return h * (y + yp) / 2.0;
}

/* The fit of an exact integer prefix s in the cumsum's output type of t. */
static int ref_fits(gp_dtype t, ref_i128 s)
{
    if (t == GP_I32 || t == GP_I64) return s >= (ref_i128)INT64_MIN && s <= (ref_i128)INT64_MAX;
    return s >= 0 && s <= (ref_i128)UINT64_MAX;
}

/* Whether the float output i of n is compared with its exact prefix (rounding the exact
 * accumulator is the reference's cost): every one up to 2^18 elements, beyond that every 31st
 * and the last. */
static int ref_checked(int64_t i, int64_t n)
{
    return n <= ((int64_t)1 << 18) || i % 31 == 0 || i == n - 1;
}

/* The cumsum of y[0, n) (type t) in out (8-byte outputs: float64, int64 or uint64) from a
 * carry of total 0, checked element by element against the exact reference (integers up to
 * the first prefix that does not fit: the values from there on are unspecified). Returns the
 * failures, the first described in why[0, len); *maxerr: the largest float error / sum |x|. */
static long ref_check_cumsum(gp_dtype t, const void *y, int64_t n, const void *out,
                             double *maxerr, char *why, size_t len)
{
    long bad = 0;
    ref_f r;
    ref_f_start(&r);
    ref_i128 s = 0;
    for (int64_t i = 0; i < n; i++) {
        if (gp_dtype_is_float(t)) {
            const double v = ref_elem_d(t, y, i);
            ref_f_add(&r, isnan(v) ? 0.0 : v);
            double got, err;
            memcpy(&got, (const char *)out + 8 * i, 8);
            if (!ref_checked(i, n)) continue;
            if (!ref_f_ok(&r, got, &err) && bad++ == 0)
                snprintf(why, len, "cumsum[%lld] = %.17g, exact %.17g (sum |x| %.3g)",
                         (long long)i, got, gp_superacc_to_double(&r.acc), r.abs);
            if (err > *maxerr) *maxerr = err;
            continue;
        }
        s += ref_elem_i(t, y, i);
        if (!ref_fits(t, s)) break;
        uint64_t got;
        memcpy(&got, (const char *)out + 8 * i, 8);
        if (got != (uint64_t)s && bad++ == 0)
            snprintf(why, len, "cumsum[%lld] = %#llx, exact %#llx", (long long)i,
                     (unsigned long long)got, (unsigned long long)(uint64_t)s);
    }
    return bad;
}

/* The cumint of y[0, n) (type t; coordinates x or, with x NULL, spacing dx) in out, from a
 * fresh carry, against scipy's terms summed exactly; as ref_check_cumsum. */
static long ref_check_cumint(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                             const double *out, double *maxerr, char *why, size_t len)
{
    ref_f r;
    ref_f_start(&r);
    long bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double err = 0.0;
        int ok;
        if (i == 0) {
            ok = out[0] == 0.0 && !signbit(out[0]); /* initial=0 */
        } else {
            ref_f_add(&r, ref_trap_term(ref_elem_d(t, y, i), ref_elem_d(t, y, i - 1), x, i, dx));
            if (!ref_checked(i, n)) continue;
            ok = ref_f_ok(&r, out[i], &err);
        }
        if (!ok && bad++ == 0)
            snprintf(why, len, "cumint[%lld] = %.17g, exact %.17g (sum |t| %.3g)", (long long)i,
                     out[i], gp_superacc_to_double(&r.acc), r.abs);
        if (err > *maxerr) *maxerr = err;
    }
    return bad;
}

#endif /* TEST_SCAN_REF_H */
