/* test_cpu_scan.c — the CPU twins of the prefix scans (kernels/cpu_scan.c: gp_cpu_cumsum,
 * gp_cpu_cumint) against the exact references of test_scan_ref.h:
 *   - every dtype, sizes 0, 1, 2, 2^k - 1, 2^k, 2^k + 1 around the 64-element blocks, primes
 *     and 10^6 + 3, the distributions uniform, cancel, special (NaN, +-inf, -0.0,
 *     subnormals; integer extremes), negzero, extreme: each float output within 2^-45 of
 *     sum |term| of its exact prefix (non-finite values as a sequential sum has them, -0.0
 *     while every term is -0.0), each integer output exact, the first overflowing index
 *     reported (integers of the whole range), the carry's total and index;
 *   - the same sequence in 1 to 6 random pieces, each call from the carry the last left:
 *     integers bit for bit the whole scan, floats within the bound; a totals-only call
 *     (out == NULL) leaves the scan's carry bit for bit;
 *   - cumint with --x coordinates and with a uniform dx, against scipy's terms summed
 *     exactly (the first value +0.0, a NaN sample poisoning the rest);
 *   - every NaN output and NaN total the one NaN 0x7FF8000000000000, from NaNs of both
 *     signs and with payloads, and from inf - inf;
 *   - integer overflow at the edge: the largest prefixes that still fit, the first index
 *     that does not (from a carry near the limit too, past the 4-byte fast path), never a
 *     wrap of the values before it;
 *   - argument errors give GP_EINVAL.
 * Prints the largest float error per dtype, the seed (GPUPRIM_TEST_SEED reproduces a run) and
 * "N passed, N failed"; exit 0 / 1.
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h" /* CHECK, CTX, xmalloc */
#include "test_cuts.h"  /* gp_test_random_cuts */
#include "test_rng.h"   /* g_rng, rnd, now_s */
#include "test_scan_ref.h"

static const gp_dtype all_types[GP_NDTYPES] = {GP_F32, GP_F64, GP_I32, GP_I64, GP_U32, GP_U64};
static const int64_t sizes[] = {0,    1,    2,    3,    31,   32,    33,    63,     64,
                                65,   127,  128,  129,  1023, 1024,  1025,  4095,   4096,
                                4097, 8191, 8193, 1009, 65537, 262147, 1000003};
static double g_maxerr[GP_NDTYPES][2]; /* largest float error per dtype: cumsum, cumint */

/* The checks of test_scan_ref.h, failures reported with the context. */
static long check_cumsum_out(gp_dtype t, const void *y, int64_t n, const void *out)
{
    char why[300] = "";
    const long bad = ref_check_cumsum(t, y, n, out, &g_maxerr[t][0], why, sizeof why);
    CHECK(bad == 0, "%ld wrong outputs, the first: %s", bad, why);
    return bad;
}
static long check_cumint_out(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                             const double *out)
{
    char why[300] = "";
    const long bad = ref_check_cumint(t, y, x, dx, n, out, &g_maxerr[t][1], why, sizeof why);
    CHECK(bad == 0, "%ld wrong outputs, the first: %s", bad, why);
    return bad;
}

/* The first index whose exact integer prefix does not fit the output type (-1: none), and
 * the exact total. */
static int64_t ref_overflow(gp_dtype t, const void *y, int64_t n, ref_i128 *total)
{
    ref_i128 s = 0;
    int64_t first = -1;
    for (int64_t i = 0; i < n; i++) {
        s += ref_elem_i(t, y, i);
        if (first < 0 && !ref_fits(t, s)) first = i;
    }
    *total = s;
    return first;
}

/* 1 to 6 random pieces of [0, n): their count, the bounds in cut[0 .. count]. */
static int random_pieces(int64_t cut[7], int64_t n)
{
    const int np = 1 + (int)(rnd() % 6);
    gp_test_random_cuts(cut, np, n, rnd);
    return np;
}

/* One cumsum case: whole, in pieces, totals only. */
static void case_cumsum(gp_dtype t, int d, int64_t n)
{
    CTX("cumsum %s %s n=%lld", gp_dtype_name(t), scan_dist_names[d], (long long)n);
    void *y = xmalloc((size_t)n * gp_dtype_size(t));
    ref_fill(t, d, y, n, rnd);
    uint64_t *out = xmalloc((size_t)n * 8), *out2 = xmalloc((size_t)n * 8);
    gp_scan_carry c = gp_scan_carry_start(0);
    CHECK(gp_cpu_cumsum(t, y, n, &c, out) == GP_OK, "cumsum: %s", gp_cpu_last_error());
    CHECK(check_cumsum_out(t, y, n, out) == 0, "outputs");
    CHECK(c.index == n, "index %lld", (long long)c.index);
    if (!gp_dtype_is_float(t)) {
        ref_i128 total;
        const int64_t first = ref_overflow(t, y, n, &total);
        CHECK(c.overflow == first, "overflow at %lld, want %lld", (long long)c.overflow,
              (long long)first);
        CHECK(c.isum.lo == (uint64_t)total && c.isum.hi == (int64_t)(total >> 64), "exact total");
    }
    /* pieces, each from the carry the last left */
    int64_t cut[7];
    const int np = random_pieces(cut, n);
    gp_scan_carry p = gp_scan_carry_start(0), q = gp_scan_carry_start(0);
    for (int k = 0; k < np; k++) {
        const void *yk = (const char *)y + (size_t)cut[k] * gp_dtype_size(t);
        CHECK(gp_cpu_cumsum(t, yk, cut[k + 1] - cut[k], &p, out2 + cut[k]) == GP_OK, "piece");
        CHECK(gp_cpu_cumsum(t, yk, cut[k + 1] - cut[k], &q, NULL) == GP_OK, "totals only");
        CHECK(memcmp(&p.hi, &q.hi, 8) == 0 && memcmp(&p.lo, &q.lo, 8) == 0 &&
                  p.isum.lo == q.isum.lo && p.isum.hi == q.isum.hi && p.index == q.index,
              "totals-only carry differs from the scan's after piece %d", k);
    }
    if (gp_dtype_is_float(t)) CHECK(check_cumsum_out(t, y, n, out2) == 0, "%d pieces", np);
    else if (c.overflow < 0) CHECK(memcmp(out, out2, (size_t)n * 8) == 0, "%d pieces: bits", np);
    if (!gp_dtype_is_float(t)) CHECK(p.overflow == c.overflow, "pieces: overflow index");
    free(y);
    free(out);
    free(out2);
}

static void case_cumint(gp_dtype t, int d, int64_t n, int with_x)
{
    CTX("cumint %s %s n=%lld %s", gp_dtype_name(t), scan_dist_names[d], (long long)n,
        with_x ? "--x" : "dx");
    void *y = xmalloc((size_t)n * gp_dtype_size(t));
    ref_fill(t, d, y, n, rnd);
    double *x = with_x ? xmalloc((size_t)n * 8) : NULL, dx = 0.375;
    for (int64_t i = 0; x && i < n; i++) x[i] = (i ? x[i - 1] : -3.0) + rnd_unit() * 0.01;
    double *out = xmalloc((size_t)n * 8), *out2 = xmalloc((size_t)n * 8);
    gp_scan_carry c = gp_scan_carry_start(0);
    CHECK(gp_cpu_cumint(t, y, x, dx, n, &c, out) == GP_OK, "cumint: %s", gp_cpu_last_error());
    CHECK(check_cumint_out(t, y, x, dx, n, out) == 0, "outputs");
    CHECK(c.index == n && c.has_prev == (n > 0), "carry index / has_prev");
    if (n > 0) {
        const double yl = ref_elem_d(t, y, n - 1);
        CHECK(memcmp(&c.yprev, &yl, 8) == 0 && (!x || c.xprev == x[n - 1]), "last sample");
    }
    int64_t cut[7];
    const int np = random_pieces(cut, n);
    gp_scan_carry p = gp_scan_carry_start(0), q = gp_scan_carry_start(0);
    for (int k = 0; k < np; k++) {
        const void *yk = (const char *)y + (size_t)cut[k] * gp_dtype_size(t);
        const double *xk = x ? x + cut[k] : NULL;
        const int64_t m = cut[k + 1] - cut[k];
        CHECK(gp_cpu_cumint(t, yk, xk, dx, m, &p, out2 + cut[k]) == GP_OK, "piece");
        CHECK(gp_cpu_cumint(t, yk, xk, dx, m, &q, NULL) == GP_OK, "totals");
        CHECK(memcmp(&p.hi, &q.hi, 8) == 0 && memcmp(&p.lo, &q.lo, 8) == 0 &&
                  p.has_prev == q.has_prev && memcmp(&p.yprev, &q.yprev, 8) == 0,
              "totals-only carry differs after piece %d", k);
    }
    CHECK(check_cumint_out(t, y, x, dx, n, out2) == 0, "%d pieces", np);
    free(y);
    free(x);
    free(out);
    free(out2);
}

/* Overflow at the edge: values chosen so that the prefix reaches the limit exactly, then
 * passes it; from a carry near the limit for the 4-byte types. */
static void test_overflow(void)
{
    CTX("overflow");
    const int64_t i64[] = {INT64_MAX - 3, 3, -5, 5, 1, 7};          /* fits, fits, ..., 1 past */
    const uint64_t u64[] = {UINT64_MAX - 1, 1, 0, 1, 5};
    const int64_t neg[] = {INT64_MIN + 2, -2, 0, -1};
    const struct { gp_dtype t; const void *y; int64_t n, want; } k[] = {
        {GP_I64, i64, 6, 4}, {GP_I64, i64, 4, -1}, {GP_U64, u64, 5, 3}, {GP_U64, u64, 3, -1},
        {GP_I64, neg, 4, 3}, {GP_I64, neg, 3, -1},
    };
    for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
        uint64_t out[8];
        gp_scan_carry cr = gp_scan_carry_start(100);
        CHECK(gp_cpu_cumsum(k[c].t, k[c].y, k[c].n, &cr, out) == GP_OK, "case %zu", c);
        CHECK(cr.overflow == (k[c].want < 0 ? -1 : 100 + k[c].want), "case %zu: overflow %lld",
              c, (long long)cr.overflow);
        CHECK(check_cumsum_out(k[c].t, k[c].y, k[c].n, out) == 0, "case %zu: values", c);
    }
    /* 4-byte data from a carry near the limit: past the fast path, exact, the first index */
    const int32_t ones[6] = {1, 1, 1, 1, 1, 1};
    const uint32_t big[3] = {UINT32_MAX, UINT32_MAX, 7};
    gp_scan_carry a = gp_scan_carry_start(0);
    a.isum = gp_i128_from_i64(INT64_MAX - 5);
    int64_t oa[6];
    CHECK(gp_cpu_cumsum(GP_I32, ones, 6, &a, oa) == GP_OK && a.overflow == 5 &&
              oa[4] == INT64_MAX && oa[0] == INT64_MAX - 4,
          "i32 from INT64_MAX - 5: %lld", (long long)a.overflow);
    a = gp_scan_carry_start(0);
    a.isum = gp_i128_from_u64(UINT64_MAX - 2 * (uint64_t)UINT32_MAX);
    uint64_t ob[3];
    CHECK(gp_cpu_cumsum(GP_U32, big, 3, &a, ob) == GP_OK && a.overflow == 2 && ob[1] == UINT64_MAX,
          "u32 from the top: %lld", (long long)a.overflow);
    /* an overflow in an earlier piece is kept */
    gp_scan_carry b = gp_scan_carry_start(0);
    uint64_t o2[6];
    gp_cpu_cumsum(GP_I64, i64, 6, &b, o2);
    gp_cpu_cumsum(GP_I64, neg, 4, &b, o2);
    CHECK(b.overflow == 4 && b.index == 10, "the first overflow stays: %lld",
          (long long)b.overflow);
}

/* -0.0 and the non-finite values, exactly. */
static void test_special(void)
{
    CTX("special values");
    const double y[] = {-0.0, -0.0, NAN, -0.0, 1.0, INFINITY, 2.0, -INFINITY, 3.0};
    double o[9];
    gp_scan_carry c = gp_scan_carry_start(0);
    gp_cpu_cumsum(GP_F64, y, 9, &c, o);
    CHECK(o[0] == 0.0 && signbit(o[0]) && signbit(o[1]) && !signbit(o[2]) && !signbit(o[3]),
          "-0.0 until the NaN (as +0.0)");
    CHECK(o[4] == 1.0 && isinf(o[5]) && o[6] > 0 && isinf(o[6]) && isnan(o[7]) && isnan(o[8]),
          "inf, then NaN once -inf came: %g %g %g %g", o[5], o[6], o[7], o[8]);
    const double z[] = {-0.0, -0.0, -0.0, 1.0, NAN, 2.0};
    double oi[6];
    c = gp_scan_carry_start(0);
    gp_cpu_cumint(GP_F64, z, NULL, 1.0, 6, &c, oi);
    CHECK(oi[0] == 0.0 && !signbit(oi[0]) && signbit(oi[1]) && signbit(oi[2]) && oi[3] == 0.5 &&
              isnan(oi[4]) && isnan(oi[5]), "cumint: +0.0 first, -0.0 terms, NaN from the NaN on");
    /* every NaN out is the one NaN, whatever NaNs came in (signs, payloads) or inf - inf made */
    const uint64_t nb[3] = {0xFFF8000000000000ull, 0x7FF8000000000000ull, 0xFFFC00000000BEEFull};
    double w[8] = {1.0, 0, 2.0, 0, INFINITY, -INFINITY, 3.0, 0};
    memcpy(&w[1], &nb[0], 8);
    memcpy(&w[3], &nb[2], 8);
    memcpy(&w[7], &nb[1], 8);
    double os[8], oc[8];
    gp_scan_carry cs = gp_scan_carry_start(0), cc = cs;
    gp_cpu_cumsum(GP_F64, w, 8, &cs, os);
    gp_cpu_cumint(GP_F64, w, NULL, 1.0, 8, &cc, oc);
    int one = ref_is_scan_nan(cs.hi) && ref_is_scan_nan(cc.hi) && cs.lo == 0.0 && cc.lo == 0.0;
    for (int i = 0; i < 8; i++) {
        one &= isnan(os[i]) == (i >= 5) && isnan(oc[i]) == (i >= 1);
        one &= !isnan(os[i]) || ref_is_scan_nan(os[i]);
        one &= !isnan(oc[i]) || ref_is_scan_nan(oc[i]);
    }
    CHECK(one, "NaN outputs and totals are 0x7FF8000000000000 (cumsum[5] %#llx, cumint[1] %#llx)",
          (unsigned long long)ref_bits(os[5]), (unsigned long long)ref_bits(oc[1]));
}

static void test_errors(void)
{
    CTX("arguments");
    double y[4] = {1, 2, 3, 4}, o[4];
    gp_scan_carry c = gp_scan_carry_start(0);
    CHECK(gp_cpu_cumsum((gp_dtype)9, y, 4, &c, o) == GP_EINVAL, "bad dtype");
    CHECK(gp_cpu_cumsum(GP_F64, y, -1, &c, o) == GP_EINVAL, "n < 0");
    CHECK(gp_cpu_cumsum(GP_F64, NULL, 4, &c, o) == GP_EINVAL, "NULL y");
    CHECK(gp_cpu_cumsum(GP_F64, y, 4, NULL, o) == GP_EINVAL, "NULL carry");
    CHECK(gp_cpu_cumsum(GP_F64, y, 4, &c, y + 1) == GP_EINVAL, "overlap");
    CHECK(gp_cpu_cumint(GP_F64, y, NULL, INFINITY, 4, &c, o) == GP_EINVAL, "dx inf");
    CHECK(gp_cpu_cumint(GP_F64, y, y, 1.0, 4, &c, y) == GP_EINVAL, "out overlaps x");
    CHECK(gp_cpu_cumsum(GP_F64, NULL, 0, &c, NULL) == GP_OK && c.index == 0, "n = 0");
}

int main(void)
{
    uint64_t seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_cpu_scan: seed %" PRIu64 " (GPUPRIM_TEST_SEED)\n", seed);
    for (int ti = 0; ti < GP_NDTYPES; ti++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int d = 0; d < SD_COUNT; d++) {
                if (sizes[s] > 70000 && d != SD_UNIFORM && d != SD_CANCEL) continue;
                case_cumsum(all_types[ti], d, sizes[s]);
                if (sizes[s] <= 70000 || d == SD_UNIFORM)
                    case_cumint(all_types[ti], d, sizes[s], (int)(rnd() & 1));
            }
    test_overflow();
    test_special();
    test_errors();
    CTX("%s", "");
    for (int ti = 0; ti < GP_NDTYPES; ti++)
        printf("largest error / sum |term|: %s cumsum %.2e, cumint %.2e (bound %.2e)\n",
               gp_dtype_name(all_types[ti]), g_maxerr[ti][0], g_maxerr[ti][1], SCAN_BOUND);
    /* the speed of the float64 cumsum (not checked: bench/cpu_bench.c times it) */
    const int64_t n = (int64_t)1 << 24;
    double *y = xmalloc((size_t)n * 8), *o = xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) y[i] = rnd_unit() - 0.25;
    gp_scan_carry c = gp_scan_carry_start(0);
    const double t0 = now_s();
    gp_cpu_cumsum(GP_F64, y, n, &c, o);
    printf("cumsum f64 of 2^24 elements: %.1f ms\n", (now_s() - t0) * 1e3);
    free(y);
    free(o);
    return gp_check_done("test_cpu_scan");
}
