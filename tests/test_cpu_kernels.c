/* test_cpu_kernels.c — checks the CPU twins (kernels/cpu_*.c, cpu_twins.h) against brute-force
 * references written independently here (long double sums, an element comparator written
 * from the order definition in gpuprim/kernels.h, merge = concatenate + sort).
 *
 * Exit status 0 when every check passes, 1 otherwise. Prints one line per failed check,
 * then "N passed, N failed". The random seed is printed; set GPUPRIM_TEST_SEED=<seed> to
 * reproduce a run.
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"
#include "gpuprim/kernels.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_check.h" /* CHECK, g_ctx, g_pass, g_fail */

/* ---- random numbers (splitmix64, test_rng.h) ----------------------------------------- */

#include "test_rng.h" /* g_rng, rnd, rnd_unit, now_s */
/* uniform integer in [0, k] */
static int64_t rnd_upto(int64_t k) { return (int64_t)(rnd() % (uint64_t)(k + 1)); }

/* outputs are poisoned explicitly before each call (xmalloc: test_check.h) */
static void poison(void *p, size_t bytes) { memset(p, 0xA5, bytes); }

/* ---- elements ---------------------------------------------------------------------------- */

static const gp_dtype all_types[GP_NDTYPES] = {GP_F32, GP_F64, GP_I32, GP_I64, GP_U32, GP_U64};

/* element size, written out here so the hot reference loops need no call into common.c */
static size_t esz(gp_dtype t) { return (t == GP_F64 || t == GP_I64 || t == GP_U64) ? 8 : 4; }
static const void *elem(gp_dtype t, const void *buf, int64_t i)
{
    return (const unsigned char *)buf + (size_t)i * esz(t);
}
static uint64_t get_bits(gp_dtype t, const void *buf, int64_t i)
{
    if (esz(t) == 4) {
        uint32_t u;
        memcpy(&u, elem(t, buf, i), 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, elem(t, buf, i), 8);
    return u;
}
static void put_bits(gp_dtype t, void *buf, int64_t i, uint64_t bits)
{
    unsigned char *p = (unsigned char *)buf + (size_t)i * esz(t);
    if (esz(t) == 4) {
        uint32_t u = (uint32_t)bits;
        memcpy(p, &u, 4);
    } else {
        memcpy(p, &bits, 8);
    }
}
/* Stores a small/real value v as an element of type t (floats rounded, ints truncated). */
static void put_value(gp_dtype t, void *buf, int64_t i, double v)
{
    unsigned char *p = (unsigned char *)buf + (size_t)i * esz(t);
    switch (t) {
    case GP_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case GP_F64: memcpy(p, &v, 8); break;
    case GP_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case GP_I64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    case GP_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case GP_U64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    default: break;
    }
}

static int ref_isnan(gp_dtype t, const void *e)
{
    if (t == GP_F32) { float f; memcpy(&f, e, 4); return isnan(f); }
    if (t == GP_F64) { double d; memcpy(&d, e, 8); return isnan(d); }
    return 0;
}

/* The element as the double the stats definition uses: (double)value. */
static double ref_double(gp_dtype t, const void *e)
{
    union { float f; double d; int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } v;
    memcpy(&v, e, esz(t));
    switch (t) {
    case GP_F32: return (double)v.f;
    case GP_F64: return v.d;
    case GP_I32: return (double)v.i32;
    case GP_I64: return (double)v.i64;
    case GP_U32: return (double)v.u32;
    case GP_U64: return (double)v.u64;
    default: return 0.0;
    }
}

/* Three-way comparisons of two elements written from the order definition (not from the
 * key maps): numbers by value, -0.0 before +0.0, every NaN equal to every NaN and after
 * everything else; integers by value. One function per type (qsort takes no context). */
static int cmp_float_values(double p, double q)
{
    int np = isnan(p) != 0, nq = isnan(q) != 0;
    if (np || nq) return np - nq;
    if (p < q) return -1;
    if (p > q) return 1;
    return (signbit(q) != 0) - (signbit(p) != 0); /* -0 < +0 */
}
static int ref_cmp_f32(const void *a, const void *b)
{
    float x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return cmp_float_values(x, y);
}
static int ref_cmp_f64(const void *a, const void *b)
{
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return cmp_float_values(x, y);
}
#define REF_CMP_INT(NAME, CT)                                                                \
    static int NAME(const void *a, const void *b)                                            \
    {                                                                                        \
        CT x, y;                                                                             \
        memcpy(&x, a, sizeof x);                                                             \
        memcpy(&y, b, sizeof y);                                                             \
        return (x > y) - (x < y);                                                            \
    }
REF_CMP_INT(ref_cmp_i32, int32_t)
REF_CMP_INT(ref_cmp_i64, int64_t)
REF_CMP_INT(ref_cmp_u32, uint32_t)
REF_CMP_INT(ref_cmp_u64, uint64_t)

typedef int (*cmp_fn)(const void *, const void *);
static cmp_fn ref_cmp_for(gp_dtype t)
{
    switch (t) {
    case GP_F32: return ref_cmp_f32;
    case GP_F64: return ref_cmp_f64;
    case GP_I32: return ref_cmp_i32;
    case GP_I64: return ref_cmp_i64;
    case GP_U32: return ref_cmp_u32;
    default: return ref_cmp_u64;
    }
}
static int ref_cmp(gp_dtype t, const void *a, const void *b) { return ref_cmp_for(t)(a, b); }

/* Reference sort of elements: insertion sort for small n, qsort otherwise. */
static void ref_sort_elems(gp_dtype t, void *buf, int64_t n)
{
    const size_t es = esz(t);
    if (n <= 48) {
        unsigned char tmp[8], *p = (unsigned char *)buf;
        for (int64_t i = 1; i < n; i++) {
            memcpy(tmp, p + (size_t)i * es, es);
            int64_t j = i;
            while (j > 0 && ref_cmp(t, p + (size_t)(j - 1) * es, tmp) > 0) {
                memcpy(p + (size_t)j * es, p + (size_t)(j - 1) * es, es);
                j--;
            }
            memcpy(p + (size_t)j * es, tmp, es);
        }
        return;
    }
    qsort(buf, (size_t)n, es, ref_cmp_for(t));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
static uint64_t get_key(int width, const void *keys, int64_t i)
{
    if (width == 4) return ((const uint32_t *)keys)[i];
    return ((const uint64_t *)keys)[i];
}

/* ---- data sets -------------------------------------------------------------------------- */

enum { D_UNIFORM, D_EQUAL, D_SORTED, D_REVERSED, D_FEW, D_SPECIAL, D_NDIST };
static const char *const dist_names[D_NDIST] = {"uniform", "all-equal", "sorted",
                                                "reversed", "few-unique", "special"};

static const uint32_t special_f32[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu,
    0x7FA5A5A5u,                             /* NaNs: quiet, signalling, signs, payloads */
    0x7F800000u, 0xFF800000u,                /* +inf, -inf */
    0x00000000u, 0x80000000u,                /* +0, -0 */
    0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, /* denormals */
    0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu,   /* FLT_MIN, +-FLT_MAX */
    0x3F800000u, 0xBF800000u};               /* +-1 */
static const uint64_t special_f64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
    0xFFF0000000000001ull, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull,
    0x7FF5A5A5A5A5A5A5ull,
    0x7FF0000000000000ull, 0xFFF0000000000000ull,
    0x0000000000000000ull, 0x8000000000000000ull,
    0x0000000000000001ull, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull,
    0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
    0x3FF0000000000000ull, 0xBFF0000000000000ull};
static const uint64_t special_i32[] = {0x80000000u, 0x7FFFFFFFu, 0, 0xFFFFFFFFu, 1, 0x80000001u};
static const uint64_t special_i64[] = {0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0,
                                       0xFFFFFFFFFFFFFFFFull, 1, 0x8000000000000001ull,
                                       0x80000000u, 0x7FFFFFFFu};
static const uint64_t special_u32[] = {0, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 1};
static const uint64_t special_u64[] = {0, 0xFFFFFFFFFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull,
                                       0x8000000000000000ull, 1, 0xFFFFFFFFu};
#define NELEMS(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static uint64_t special_bits(gp_dtype t)
{
    switch (t) {
    case GP_F32: return special_f32[rnd_upto(NELEMS(special_f32) - 1)];
    case GP_F64: return special_f64[rnd_upto(NELEMS(special_f64) - 1)];
    case GP_I32: return special_i32[rnd_upto(NELEMS(special_i32) - 1)];
    case GP_I64: return special_i64[rnd_upto(NELEMS(special_i64) - 1)];
    case GP_U32: return special_u32[rnd_upto(NELEMS(special_u32) - 1)];
    default: return special_u64[rnd_upto(NELEMS(special_u64) - 1)];
    }
}

/* One uniform random element: floats uniform in [-1000, 1000), ints uniform random bits. */
static void put_uniform(gp_dtype t, void *buf, int64_t i)
{
    if (gp_dtype_is_float(t)) put_value(t, buf, i, rnd_unit() * 2000.0 - 1000.0);
    else put_bits(t, buf, i, rnd());
}

static void gen(gp_dtype t, int dist, int64_t n, void *buf)
{
    switch (dist) {
    case D_UNIFORM:
        for (int64_t i = 0; i < n; i++) put_uniform(t, buf, i);
        break;
    case D_EQUAL:
        if (n > 0) put_uniform(t, buf, 0);
        for (int64_t i = 1; i < n; i++)
            memcpy((unsigned char *)buf + (size_t)i * esz(t), buf, esz(t));
        break;
    case D_SORTED:
    case D_REVERSED:
        for (int64_t i = 0; i < n; i++) put_uniform(t, buf, i);
        ref_sort_elems(t, buf, n);
        if (dist == D_REVERSED)
            for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
                uint64_t a = get_bits(t, buf, i), b = get_bits(t, buf, j);
                put_bits(t, buf, i, b);
                put_bits(t, buf, j, a);
            }
        break;
    case D_FEW:
        for (int64_t i = 0; i < n; i++) put_value(t, buf, i, (double)rnd_upto(3));
        break;
    default: /* D_SPECIAL: half special values, half uniform */
        for (int64_t i = 0; i < n; i++) {
            if (rnd() & 1) put_bits(t, buf, i, special_bits(t));
            else put_uniform(t, buf, i);
        }
        break;
    }
}

/* ---- stats -------------------------------------------------------------------------------- */

/* The compiler's 128-bit integers: the tests' independent reference for the exact sums
 * (the library itself uses two 64-bit words, gp_i128). */
__extension__ typedef __int128 i128_t;

static i128_t from_gp(gp_i128 a) { return (i128_t)a.hi * ((i128_t)1 << 64) + (i128_t)a.lo; }

/* The exact value of an integer element. */
static i128_t ref_int(gp_dtype t, const void *e)
{
    union { int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } v;
    memcpy(&v, e, esz(t));
    switch (t) {
    case GP_I32: return v.i32;
    case GP_I64: return v.i64;
    case GP_U32: return v.u32;
    default: return v.u64;
    }
}

typedef struct ref_stats {
    int64_t count, nan_count, descents;
    long double sum, sumsq, abssum; /* abssum: sum |x| (the scale of the rounding error) */
    i128_t isum;                    /* integer types: the exact sum */
    int has_inf;
    uint64_t hash, min_key, max_key;
} ref_stats;

static ref_stats ref_stats_of(gp_dtype t, const void *y, int64_t n)
{
    ref_stats r;
    memset(&r, 0, sizeof r);
    r.count = n;
    int64_t imin = -1, imax = -1;
    const cmp_fn cmp = ref_cmp_for(t);
    for (int64_t i = 0; i < n; i++) {
        const void *e = elem(t, y, i);
        r.hash += gp_mix64(gp_key_of(t, e));
        if (i + 1 < n && cmp(e, elem(t, y, i + 1)) > 0) r.descents++;
        if (ref_isnan(t, e)) {
            r.nan_count++;
            continue;
        }
        double d = ref_double(t, e);
        if (!gp_dtype_is_float(t)) r.isum += ref_int(t, e);
        if (isinf(d)) r.has_inf = 1;
        r.sum += (long double)d;
        r.sumsq += (long double)d * (long double)d;
        r.abssum += fabsl((long double)d);
        if (imin < 0 || cmp(e, elem(t, y, imin)) < 0) imin = i;
        if (imax < 0 || cmp(e, elem(t, y, imax)) > 0) imax = i;
    }
    r.min_key = imin < 0 ? UINT64_MAX : gp_key_of(t, elem(t, y, imin));
    r.max_key = imax < 0 ? 0 : gp_key_of(t, elem(t, y, imax));
    return r;
}

static int same_double(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* |got - ref| <= rel * scale + abs_slack */
static int close_to(double got, long double ref, long double scale, long double rel,
                    long double abs_slack)
{
    if (!isfinite(got)) return 0;
    return fabsl((long double)got - ref) <= rel * scale + abs_slack;
}

/* Checks the sum fields of s against r (skipping what overflow makes undefined). Integer
 * types: isum exact, sum = isum rounded once (the compiler's conversion), bitwise. */
static void check_sums(gp_dtype t, const gp_stats *s, const ref_stats *r, const char *what)
{
    if (!gp_dtype_is_float(t)) {
        const double want = (double)r->isum;
        CHECK(s->has_isum == 1 && from_gp(s->isum) == r->isum && same_double(s->sum, want),
              "%s: has_isum %d, isum %#" PRIx64 ":%016" PRIx64 ", sum %.17g (want %.17g)", what,
              (int)s->has_isum, (uint64_t)s->isum.hi, s->isum.lo, s->sum, want);
    } else {
        CHECK(s->has_isum == 0 && s->isum.lo == 0 && s->isum.hi == 0,
              "%s: float record has has_isum %d or a non-zero isum", what, (int)s->has_isum);
    }
    const long double slack = (long double)r->count * DBL_TRUE_MIN * 4;
    if (r->has_inf) {
        CHECK(!isfinite(s->sum), "%s: sum = %.17g with an infinite element", what, s->sum);
        CHECK(isinf(s->sumsq) && s->sumsq > 0, "%s: sumsq = %.17g with an infinite element",
              what, s->sumsq);
        return;
    }
    if (r->abssum < (long double)DBL_MAX / 4)
        CHECK(close_to(s->sum, r->sum, r->abssum, 1e-12L, slack),
              "%s: sum = %.17g, reference %.17Lg (scale %.3Lg)", what, s->sum, r->sum, r->abssum);
    if (r->sumsq < (long double)DBL_MAX / 4)
        CHECK(close_to(s->sumsq, r->sumsq, r->sumsq, 1e-12L, slack),
              "%s: sumsq = %.17g, reference %.17Lg", what, s->sumsq, r->sumsq);
    else if (r->sumsq > (long double)DBL_MAX * 2)
        CHECK(isinf(s->sumsq), "%s: sumsq = %.17g, reference %.17Lg overflows", what, s->sumsq,
              r->sumsq);
}

static void check_stats(gp_dtype t, const void *y, int64_t n)
{
    const ref_stats r = ref_stats_of(t, y, n);
    for (unsigned flags = 0; flags <= (GP_STATS_ORDER | GP_STATS_NOHASH); flags++) {
        gp_stats s, s2;
        poison(&s, sizeof s);
        int rc = gp_cpu_stats(t, y, n, flags, &s);
        if (!CHECK(rc == GP_OK, "stats(flags=%u) returned %d", flags, rc)) continue;
        poison(&s2, sizeof s2);
        gp_cpu_stats(t, y, n, flags, &s2);
        CHECK(memcmp(&s, &s2, sizeof s) == 0, "stats(flags=%u) not bitwise reproducible", flags);
        /* the SIMD loops (where the CPU has them) against the frozen plain ones, also from
         * an element offset that breaks the buffer's alignment */
        for (int64_t off = 0; off <= (n > 1 ? 1 : 0); off++) {
            gp_stats f, r;
            poison(&f, sizeof f);
            poison(&r, sizeof r);
            rc = gp_cpu_stats(t, elem(t, y, off), n - off, flags, &f);
            rc |= gp_cpu_stats_ref(t, elem(t, y, off), n - off, flags, &r);
            CHECK(rc == GP_OK && memcmp(&f, &r, sizeof f) == 0,
                  "stats(flags=%u, from element %" PRId64 ") differs from stats_ref", flags, off);
        }
        if (n == 0) {
            gp_stats e = gp_stats_empty();
            e.has_x = 0;
            e.order_valid = (int32_t)(flags & GP_STATS_ORDER);
            e.has_isum = !gp_dtype_is_float(t);
            CHECK(memcmp(&s, &e, sizeof s) == 0, "stats(n=0, flags=%u) is not the empty record",
                  flags);
            continue;
        }
        CHECK(s.count == n, "count = %" PRId64, s.count);
        CHECK(s.nan_count == r.nan_count, "nan_count = %" PRId64 ", reference %" PRId64,
              s.nan_count, r.nan_count);
        CHECK(s.min_key == r.min_key, "min_key = %#" PRIx64 ", reference %#" PRIx64, s.min_key,
              r.min_key);
        CHECK(s.max_key == r.max_key, "max_key = %#" PRIx64 ", reference %#" PRIx64, s.max_key,
              r.max_key);
        const uint64_t want_hash = (flags & GP_STATS_NOHASH) ? 0 : r.hash;
        CHECK(s.hash == want_hash, "hash = %#" PRIx64 ", reference %#" PRIx64, s.hash, want_hash);
        CHECK(s.first_key == gp_key_of(t, y), "first_key = %#" PRIx64, s.first_key);
        CHECK(s.last_key == gp_key_of(t, elem(t, y, n - 1)), "last_key = %#" PRIx64, s.last_key);
        CHECK(same_double(s.yfirst, ref_double(t, y)), "yfirst = %.17g", s.yfirst);
        CHECK(same_double(s.ylast, ref_double(t, elem(t, y, n - 1))), "ylast = %.17g", s.ylast);
        CHECK(s.order_valid == (int32_t)(flags & GP_STATS_ORDER), "order_valid = %d with flags %u",
              (int)s.order_valid, flags);
        if (flags & GP_STATS_ORDER)
            CHECK(s.descents == r.descents, "descents = %" PRId64 ", reference %" PRId64,
                  s.descents, r.descents);
        CHECK(s.has_x == 0 && s.trap == 0.0 && s.xfirst == 0.0 && s.xlast == 0.0,
              "x fields not zero (has_x %d trap %g xfirst %g xlast %g)", (int)s.has_x, s.trap,
              s.xfirst, s.xlast);
        check_sums(t, &s, &r, flags ? "stats(ORDER)" : "stats");
    }

    /* two adjacent pieces combined == the whole (the record's combine contract) */
    int64_t k = rnd_upto(n);
    gp_stats a, b, whole;
    poison(&a, sizeof a);
    poison(&b, sizeof b);
    poison(&whole, sizeof whole);
    int rc = gp_cpu_stats(t, y, k, GP_STATS_ORDER, &a);
    rc |= gp_cpu_stats(t, elem(t, y, k), n - k, GP_STATS_ORDER, &b);
    rc |= gp_cpu_stats(t, y, n, GP_STATS_ORDER, &whole);
    if (!CHECK(rc == 0, "stats of pieces failed")) return;
    gp_stats c = gp_stats_combine(&a, &b);
    CHECK(c.count == whole.count && c.nan_count == whole.nan_count &&
              c.min_key == whole.min_key && c.max_key == whole.max_key && c.hash == whole.hash &&
              c.descents == whole.descents && c.order_valid == 1,
          "combine(split at %" PRId64 ") differs from the whole in an exact field", k);
    if (n > 0)
        CHECK(c.first_key == whole.first_key && c.last_key == whole.last_key &&
                  same_double(c.yfirst, whole.yfirst) && same_double(c.ylast, whole.ylast),
              "combine(split at %" PRId64 "): first/last differ", k);
    char what[64];
    snprintf(what, sizeof what, "combine(split at %" PRId64 ")", k);
    check_sums(t, &c, &r, what);
    if (!gp_dtype_is_float(t))
        CHECK(same_double(c.sum, whole.sum), "%s: sum %.17g, whole %.17g", what, c.sum, whole.sum);
}

/* ---- keys and sort ------------------------------------------------------------------------ */

static void check_keys_and_sort(gp_dtype t, const void *y, int64_t n)
{
    const size_t es = esz(t);
    const int width = (int)es;
    void *k = xmalloc((size_t)n * es);
    memcpy(k, y, (size_t)n * es);

    int rc = gp_cpu_to_keys(t, k, n);
    CHECK(rc == GP_OK, "to_keys returned %d", rc);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (get_key(width, k, i) != gp_key_of(t, elem(t, y, i))) bad = i;
    CHECK(bad < 0, "to_keys[%" PRId64 "] = %#" PRIx64 ", gp_key_of = %#" PRIx64, bad,
          bad < 0 ? 0 : get_key(width, k, bad), bad < 0 ? 0 : gp_key_of(t, elem(t, y, bad)));

    /* keys -> elements: every non-NaN bit for bit, NaN -> canonical */
    void *back = xmalloc((size_t)n * es);
    memcpy(back, k, (size_t)n * es);
    rc = gp_cpu_from_keys(t, back, n);
    CHECK(rc == GP_OK, "from_keys returned %d", rc);
    const uint64_t canon = es == 4 ? 0x7FC00000ull : 0x7FF8000000000000ull;
    bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        uint64_t want = ref_isnan(t, elem(t, y, i)) ? canon : get_bits(t, y, i);
        if (get_bits(t, back, i) != want) bad = i;
    }
    CHECK(bad < 0, "from_keys(to_keys(y))[%" PRId64 "] = %#" PRIx64 ", want %#" PRIx64, bad,
          bad < 0 ? 0 : get_bits(t, back, bad), bad < 0 ? 0 : get_bits(t, y, bad));

    /* sort the keys; compare with the keys of the reference-sorted elements */
    rc = gp_cpu_sort_keys(width, k, n);
    CHECK(rc == GP_OK, "sort_keys returned %d", rc);
    memcpy(back, y, (size_t)n * es);
    ref_sort_elems(t, back, n);
    bad = -1;
    uint64_t h_sorted = 0, h_ref = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t got = get_key(width, k, i), want = gp_key_of(t, elem(t, back, i));
        if (got != want && bad < 0) bad = i;
        h_sorted += gp_mix64(got);
        h_ref += gp_mix64(gp_key_of(t, elem(t, y, i)));
    }
    CHECK(bad < 0, "sorted keys differ from the reference order first at %" PRId64, bad);
    CHECK(h_sorted == h_ref, "sorted keys are not a permutation of the input keys (hash)");

    /* sort_values: the elements of the sorted keys (from_keys of them), in one call */
    rc = gp_cpu_from_keys(t, k, n);
    CHECK(rc == GP_OK, "from_keys of the sorted keys returned %d", rc);
    memcpy(back, y, (size_t)n * es);
    rc = gp_cpu_sort_values(t, back, n);
    CHECK(rc == GP_OK, "sort_values returned %d", rc);
    CHECK(n == 0 || memcmp(back, k, (size_t)n * es) == 0,
          "sort_values differs from from_keys(sort_keys(to_keys(y)))");
    free(back);
    free(k);
}

/* ---- merge-split ------------------------------------------------------------------------- */

/* nkeys sorted keys (width of t) drawn from distribution dist of type t. */
static void *sorted_keys(gp_dtype t, int dist, int64_t nkeys)
{
    const int width = (int)esz(t);
    void *buf = xmalloc((size_t)nkeys * (size_t)width);
    gen(t, dist, nkeys, buf);
    for (int64_t i = 0; i < nkeys; i++) {
        uint64_t key = gp_key_of(t, elem(t, buf, i));
        if (width == 4) ((uint32_t *)buf)[i] = (uint32_t)key;
        else ((uint64_t *)buf)[i] = key;
    }
    qsort(buf, (size_t)nkeys, (size_t)width, width == 4 ? cmp_u32 : cmp_u64);
    return buf;
}

static void check_merge_split(gp_dtype t, int dist, int64_t m, int64_t nlo, int64_t nhi)
{
    const int width = (int)esz(t);
    const size_t w = (size_t)width;
    const int64_t total = nlo + nhi, guard = 8;
    void *lo = sorted_keys(t, dist, nlo), *hi = sorted_keys(t, dist, nhi);
    /* naive merge: concatenate + sort */
    void *ref = xmalloc((size_t)total * w);
    memcpy(ref, lo, (size_t)nlo * w);
    memcpy((unsigned char *)ref + (size_t)nlo * w, hi, (size_t)nhi * w);
    qsort(ref, (size_t)total, w, width == 4 ? cmp_u32 : cmp_u64);

    void *out[2];
    int64_t nout[2];
    for (int up = 0; up < 2; up++) {
        out[up] = xmalloc((size_t)(m + guard) * w);
        poison(out[up], (size_t)(m + guard) * w);
        poison(&nout[up], sizeof nout[up]);
        int rc = gp_cpu_merge_split_keys(width, lo, nlo, hi, nhi, m, up, out[up], &nout[up]);
        if (!CHECK(rc == GP_OK, "merge_split(m=%" PRId64 ", nlo=%" PRId64 ", nhi=%" PRId64
                                ", upper=%d) returned %d", m, nlo, nhi, up, rc)) {
            nout[up] = 0;
            continue;
        }
        const int64_t want_n = up ? (total > m ? total - m : 0) : (total < m ? total : m);
        const int64_t off = up ? m : 0;
        if (!CHECK(nout[up] == want_n, "merge_split(m=%" PRId64 ", nlo=%" PRId64 ", nhi=%" PRId64
                                       ", upper=%d): nout = %" PRId64 ", want %" PRId64,
                   m, nlo, nhi, up, nout[up], want_n)) {
            nout[up] = 0;
            continue;
        }
        int64_t bad = -1;
        for (int64_t i = 0; i < want_n && bad < 0; i++)
            if (get_key(width, out[up], i) != get_key(width, ref, off + i)) bad = i;
        CHECK(bad < 0, "merge_split(m=%" PRId64 ", nlo=%" PRId64 ", nhi=%" PRId64
                       ", upper=%d): out[%" PRId64 "] differs from the merged reference",
              m, nlo, nhi, up, bad);
        /* nothing past the kept part was written */
        const unsigned char *tail = (const unsigned char *)out[up] + (size_t)want_n * w;
        int clean = 1;
        for (size_t b = 0; b < (size_t)(m + guard - want_n) * w; b++)
            if (tail[b] != 0xA5) clean = 0;
        CHECK(clean, "merge_split(m=%" PRId64 ", nlo=%" PRId64 ", nhi=%" PRId64
                     ", upper=%d) wrote past its %" PRId64 " kept keys", m, nlo, nhi, up, want_n);
    }
    /* both halves together are the whole merge */
    if (nout[0] + nout[1] == total) {
        int same = memcmp(out[0], ref, (size_t)nout[0] * w) == 0 &&
                   memcmp(out[1], (unsigned char *)ref + (size_t)nout[0] * w,
                          (size_t)nout[1] * w) == 0;
        CHECK(same, "merge_split(m=%" PRId64 ", nlo=%" PRId64 ", nhi=%" PRId64
                    "): lower ++ upper != merge", m, nlo, nhi);
    } else {
        CHECK(0, "merge_split(m=%" PRId64 ", nlo=%" PRId64 ", nhi=%" PRId64
                 "): halves hold %" PRId64 " keys, want %" PRId64,
              m, nlo, nhi, nout[0] + nout[1], total);
    }
    free(out[0]);
    free(out[1]);
    free(ref);
    free(lo);
    free(hi);
}

static void test_merge_split_all(void)
{
    static const int64_t ms[] = {1, 2, 7, 33, 64, 1024, 4097, 65537};
    for (int ti = 0; ti < GP_NDTYPES; ti++)
        for (int d = 0; d < D_NDIST; d++) {
            gp_dtype t = all_types[ti];
            snprintf(g_ctx, sizeof g_ctx, "merge_split %s %s", gp_dtype_name(t), dist_names[d]);
            check_merge_split(t, d, 0, 0, 0);
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
                int64_t m = ms[mi];
                if (m > 5000 && !(d == D_UNIFORM || d == D_FEW || d == D_SPECIAL)) continue;
                check_merge_split(t, d, m, 0, 0);
                check_merge_split(t, d, m, 0, m);
                check_merge_split(t, d, m, m, 0);
                check_merge_split(t, d, m, m, m);
                check_merge_split(t, d, m, rnd_upto(m), rnd_upto(m));
                check_merge_split(t, d, m, m, rnd_upto(m));
                check_merge_split(t, d, m, rnd_upto(m), m);
                check_merge_split(t, d, m, rnd_upto(m), 0);
                check_merge_split(t, d, m + rnd_upto(m), rnd_upto(m), rnd_upto(m)); /* m > both */
            }
        }

    /* invalid arguments */
    snprintf(g_ctx, sizeof g_ctx, "merge_split invalid arguments");
    uint32_t a[4] = {1, 2, 3, 4}, b[4] = {2, 3, 4, 5}, o[8];
    int64_t no = -7;
    {
        gp_stats st;
        const float one = 1.0f;
        CHECK(gp_cpu_stats(GP_F32, &one, 1, 4u, &st) == GP_EINVAL, "stats: unknown flag 4 accepted");
    }
    CHECK(gp_cpu_merge_split_keys(4, a, 4, b, 4, 3, 0, o, &no) == GP_EINVAL, "nlo > m accepted");
    CHECK(gp_cpu_merge_split_keys(4, a, 2, b, 4, 3, 1, o, &no) == GP_EINVAL, "nhi > m accepted");
    CHECK(gp_cpu_merge_split_keys(3, a, 2, b, 2, 4, 0, o, &no) == GP_EINVAL, "width 3 accepted");
    CHECK(gp_cpu_merge_split_keys(16, a, 2, b, 2, 4, 0, o, &no) == GP_EINVAL, "width 16 accepted");
    CHECK(gp_cpu_merge_split_keys(4, a, -1, b, 2, 4, 0, o, &no) == GP_EINVAL, "nlo < 0 accepted");
    CHECK(gp_cpu_merge_split_keys(4, a, 2, b, -1, 4, 0, o, &no) == GP_EINVAL, "nhi < 0 accepted");
    CHECK(gp_cpu_merge_split_keys(4, a, 0, b, 0, -1, 0, o, &no) == GP_EINVAL, "m < 0 accepted");
    CHECK(gp_cpu_merge_split_keys(4, a, 2, b, 2, 4, 0, o, NULL) == GP_EINVAL, "nout NULL accepted");
    CHECK(gp_cpu_merge_split_keys(4, a, 4, b, 4, 4, 0, a, &no) == GP_EINVAL, "out == lo accepted");
    CHECK(no == -7, "nout written on failure");
    CHECK(strstr(gp_backend_cpu()->last_error(), "merge_split") != NULL,
          "last_error does not name the failing call: \"%s\"", gp_backend_cpu()->last_error());

    /* the merge-path split (the rank exchange's; its adversarial cases are in
     * test_mpi_pipeline's split tests) and the exchange's table entries */
    snprintf(g_ctx, sizeof g_ctx, "merge_path and the exchange's entries");
    const gp_backend *be = gp_backend_cpu();
    uint64_t v[4] = {0, 1, 2, 3};
    int64_t sp = -7;
    CHECK(be->merge_path(4, a, NULL, 4, b, NULL, 4, 4, 0, &sp) == GP_OK && sp == 3,
          "merge_path of {1,2,3,4} {2,3,4,5} at 4: %lld, not 3", (long long)sp);
    CHECK(be->merge_path(4, a, v, 4, b, v, 4, 4, 1, &sp) == GP_OK && sp == 2,
          "stable merge_path (values 0..3 both) at 4: %lld, not 2", (long long)sp);
    CHECK(be->merge_path(4, a, NULL, 4, b, NULL, 4, 9, 0, &sp) == GP_EINVAL, "t > nlo + nhi accepted");
    CHECK(be->merge_path(4, a, NULL, 4, b, NULL, 4, -1, 0, &sp) == GP_EINVAL, "t < 0 accepted");
    CHECK(be->merge_path(8, a, NULL, 2, b, NULL, 2, 1, 1, &sp) == GP_EINVAL, "stable without values accepted");
    CHECK(be->merge_path(5, a, NULL, 2, b, NULL, 2, 1, 0, &sp) == GP_EINVAL, "width 5 accepted");
    CHECK(be->merge_path(4, a, NULL, 2, b, NULL, 2, 1, 0, NULL) == GP_EINVAL, "NULL split accepted");
    CHECK(be->merge_path(4, NULL, NULL, 0, NULL, NULL, 0, 0, 0, &sp) == GP_OK && sp == 0, "empty runs");
    CHECK((be->caps & GP_CAP_HOST_MEMORY) && !(be->caps & GP_CAP_IPC), "caps %#x", be->caps);
    unsigned char h[GP_IPC_HANDLE_BYTES];
    void *mp = NULL;
    CHECK(be->ipc_get(o, h) == GP_EINVAL && be->ipc_open(h, &mp) == GP_EINVAL &&
              be->ipc_close(o) == GP_EINVAL && mp == NULL, "ipc entries not refused");
    CHECK(be->copy(o, a, 16) == GP_OK && memcmp(o, a, 16) == 0, "copy");
    CHECK(be->download_async(o, b, 16) == GP_OK && be->download_wait() == GP_OK &&
              memcmp(o, b, 16) == 0 && be->synchronize() == GP_OK, "download_async");
    CHECK(be->copy(NULL, a, 4) == GP_EINVAL && be->copy(o, NULL, 0) == GP_OK, "copy NULL");
}

/* ---- trapezoids --------------------------------------------------------------------------- */

static void check_trap_x(gp_dtype t, const void *y, int64_t n)
{
    double *x = (double *)xmalloc((size_t)n * sizeof *x);
    double xv = rnd_unit() * 20.0 - 10.0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = xv;
        if (rnd() % 16) xv += rnd_unit(); /* 1 step in 16 is zero */
    }
    long double ref = 0, scale = 0;
    for (int64_t i = 0; i + 1 < n; i++) {
        long double dx = (long double)x[i + 1] - (long double)x[i];
        long double ya = ref_double(t, elem(t, y, i)), yb = ref_double(t, elem(t, y, i + 1));
        ref += dx * (ya + yb) / 2;
        scale += fabsl(dx) * (fabsl(ya) + fabsl(yb)) / 2;
    }

    gp_stats io, before;
    poison(&io, sizeof io);
    before = io;
    int rc = gp_cpu_trap_x(t, y, x, n, &io);
    if (CHECK(rc == GP_OK, "trap_x returned %d", rc)) {
        CHECK(close_to(io.trap, ref, scale, 1e-12L, 1e-300L),
              "trap_x = %.17g, reference %.17Lg (scale %.3Lg)", io.trap, ref, scale);
        CHECK(io.has_x == 1, "trap_x: has_x = %d", (int)io.has_x);
        CHECK(io.xfirst == (n ? x[0] : 0.0) && io.xlast == (n ? x[n - 1] : 0.0),
              "trap_x: xfirst %.17g xlast %.17g", io.xfirst, io.xlast);
        before.trap = io.trap;
        before.xfirst = io.xfirst;
        before.xlast = io.xlast;
        before.has_x = io.has_x;
        CHECK(memcmp(&before, &io, sizeof io) == 0, "trap_x changed fields other than the x ones");
    }

    /* stats + trap_x of two pieces, combined == trap of the whole */
    if (n > 0) {
        int64_t k = rnd_upto(n);
        gp_stats a, b;
        rc = gp_cpu_stats(t, y, k, 0, &a);
        rc |= gp_cpu_trap_x(t, y, x, k, &a);
        rc |= gp_cpu_stats(t, elem(t, y, k), n - k, 0, &b);
        rc |= gp_cpu_trap_x(t, elem(t, y, k), x + k, n - k, &b);
        if (CHECK(rc == 0, "trap_x of pieces failed")) {
            gp_stats c = gp_stats_combine(&a, &b);
            CHECK(c.has_x == 1 && close_to(c.trap, ref, scale, 1e-12L, 1e-300L) &&
                      c.xfirst == x[0] && c.xlast == x[n - 1],
                  "combine(split at %" PRId64 "): trap %.17g, reference %.17Lg, has_x %d", k,
                  c.trap, ref, (int)c.has_x);
        }
    }
    free(x);
}

static long double ref_f(gp_func f, long double x)
{
    switch (f) {
    case GP_FN_X2: return x * x;
    case GP_FN_SIN: return sinl(x);
    case GP_FN_EXP: return expl(x);
    default: return expl(-x * x);
    }
}

/* long double weighted sum over [i0, i1) and its scale sum |w f| */
static long double ref_wsum(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                            long double *scale)
{
    long double s = 0, sc = 0;
    for (int64_t i = i0; i < i1; i++) {
        long double w = (i == 0 || i == n) ? 0.5L : 1.0L;
        long double v = w * ref_f(f, (long double)(a + (double)i * h));
        s += v;
        sc += fabsl(v);
    }
    *scale = sc;
    return s;
}

static void test_trap_fn(void)
{
    const double pi = 3.14159265358979323846;
    double ws;
    int rc;

    /* x^2 on [0, 1], n = 1000: error = (b-a) h^2/12 max|f''| */
    snprintf(g_ctx, sizeof g_ctx, "trap_fn x2 [0,1] n=1000");
    {
        int64_t n = 1000;
        double h = 1.0 / (double)n;
        poison(&ws, sizeof ws);
        rc = gp_cpu_trap_fn(GP_FN_X2, 0.0, h, n, 0, n + 1, &ws);
        double T = h * ws;
        CHECK(rc == GP_OK && fabs(T - 1.0 / 3.0) < 1.0 * h * h / 12.0 * 2.0 + 1e-12,
              "T = %.17g, |T - 1/3| = %.3g", T, fabs(T - 1.0 / 3.0));
    }
    /* sin on [0, pi] ~ 2 */
    static const int64_t sin_ns[] = {1000, 12345, 1000003};
    for (size_t q = 0; q < 3; q++) {
        int64_t n = sin_ns[q];
        double h = pi / (double)n;
        snprintf(g_ctx, sizeof g_ctx, "trap_fn sin [0,pi] n=%" PRId64, n);
        poison(&ws, sizeof ws);
        rc = gp_cpu_trap_fn(GP_FN_SIN, 0.0, h, n, 0, n + 1, &ws);
        double T = h * ws;
        CHECK(rc == GP_OK && fabs(T - 2.0) < pi * h * h / 12.0 * 1.0 + 1e-12,
              "T = %.17g, |T - 2| = %.3g", T, fabs(T - 2.0));
    }
    /* exp on [0, 1] (max f'' = e), gauss on [-2, 2] (max |f''| = 2) vs gp_func_exact */
    {
        int64_t n = 4096;
        double h = 1.0 / (double)n;
        snprintf(g_ctx, sizeof g_ctx, "trap_fn exp [0,1] n=%" PRId64, n);
        rc = gp_cpu_trap_fn(GP_FN_EXP, 0.0, h, n, 0, n + 1, &ws);
        double ex = gp_func_exact(GP_FN_EXP, 0.0, 1.0);
        CHECK(rc == GP_OK && fabs(h * ws - ex) < h * h / 12.0 * exp(1.0) + 1e-12,
              "T = %.17g, exact %.17g", h * ws, ex);
        h = 4.0 / (double)n;
        snprintf(g_ctx, sizeof g_ctx, "trap_fn gauss [-2,2] n=%" PRId64, n);
        rc = gp_cpu_trap_fn(GP_FN_GAUSS, -2.0, h, n, 0, n + 1, &ws);
        ex = gp_func_exact(GP_FN_GAUSS, -2.0, 2.0);
        CHECK(rc == GP_OK && fabs(h * ws - ex) < 4.0 * h * h / 12.0 * 2.0 + 1e-12,
              "T = %.17g, exact %.17g", h * ws, ex);
    }
    /* brute force (long double) on random intervals, every function, sizes around chunks */
    static const int64_t ns[] = {0, 1, 2, 7, 1023, 4095, 4096, 4097, 8193, 65537};
    for (int f = 0; f < GP_NFUNCS; f++)
        for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
            int64_t n = ns[q];
            double a = rnd_unit() * 4.0 - 2.0, h = (rnd_unit() * 3.0 + 0.01) / (double)(n + 1);
            snprintf(g_ctx, sizeof g_ctx, "trap_fn %s n=%" PRId64 " a=%.17g h=%.17g",
                     gp_func_name((gp_func)f), n, a, h);
            long double scale, ref = ref_wsum((gp_func)f, a, h, n, 0, n + 1, &scale);
            poison(&ws, sizeof ws);
            rc = gp_cpu_trap_fn((gp_func)f, a, h, n, 0, n + 1, &ws);
            CHECK(rc == GP_OK && close_to(ws, ref, scale, 1e-12L, 1e-300L),
                  "wsum = %.17g, reference %.17Lg", ws, ref);
            int64_t i0 = rnd_upto(n + 1), i1 = i0 + rnd_upto(n + 1 - i0);
            ref = ref_wsum((gp_func)f, a, h, n, i0, i1, &scale);
            poison(&ws, sizeof ws);
            rc = gp_cpu_trap_fn((gp_func)f, a, h, n, i0, i1, &ws);
            CHECK(rc == GP_OK && close_to(ws, ref, scale, 1e-12L, 1e-300L),
                  "[%" PRId64 ", %" PRId64 "): wsum = %.17g, reference %.17Lg", i0, i1, ws, ref);
        }
    /* n == 0: the single point has weight 1/2 (i == 0 == n); empty range gives 0 */
    snprintf(g_ctx, sizeof g_ctx, "trap_fn edge cases");
    rc = gp_cpu_trap_fn(GP_FN_EXP, 1.0, 0.5, 0, 0, 1, &ws);
    CHECK(rc == GP_OK && ws == 0.5 * exp(1.0), "n=0: wsum = %.17g", ws);
    rc = gp_cpu_trap_fn(GP_FN_EXP, 1.0, 0.5, 1, 0, 2, &ws);
    CHECK(rc == GP_OK && ws == 0.5 * exp(1.0) + 0.5 * exp(1.5), "n=1: wsum = %.17g", ws);
    poison(&ws, sizeof ws);
    rc = gp_cpu_trap_fn(GP_FN_SIN, 0.0, 0.1, 100, 37, 37, &ws);
    CHECK(rc == GP_OK && ws == 0.0, "empty range: wsum = %.17g", ws);

    /* split ranges [i0, i1) sum to the full range */
    for (int rep = 0; rep < 6; rep++) {
        gp_func f = (gp_func)(rep % GP_NFUNCS);
        int64_t n = rep < 3 ? 1000003 : 100 + rnd_upto(20000);
        double a = rep % 2 ? 0.0 : -1.0, h = 2.0 / (double)n;
        int parts = 1 + (int)rnd_upto(8);
        snprintf(g_ctx, sizeof g_ctx, "trap_fn %s split n=%" PRId64 " into %d parts",
                 gp_func_name(f), n, parts);
        double full;
        rc = gp_cpu_trap_fn(f, a, h, n, 0, n + 1, &full);
        long double scale;
        (void)ref_wsum(f, a, h, n, 0, n + 1, &scale);
        double acc = 0.0;
        int64_t lo = 0;
        for (int p = 0; p < parts; p++) {
            int64_t hi = p == parts - 1 ? n + 1 : lo + rnd_upto(n + 1 - lo);
            double piece;
            poison(&piece, sizeof piece);
            rc |= gp_cpu_trap_fn(f, a, h, n, lo, hi, &piece);
            acc += piece;
            lo = hi;
        }
        CHECK(rc == GP_OK && close_to(acc, (long double)full, scale, 1e-12L, 1e-300L),
              "sum of parts %.17g, full range %.17g", acc, full);
    }

    /* invalid arguments; *wsum untouched on failure */
    snprintf(g_ctx, sizeof g_ctx, "trap_fn invalid arguments");
    double keep = -123.0;
    ws = keep;
    CHECK(gp_cpu_trap_fn(GP_FN_X2, 0, 1, 10, -1, 5, &ws) == GP_EINVAL, "i0 < 0 accepted");
    CHECK(gp_cpu_trap_fn(GP_FN_X2, 0, 1, 10, 0, 12, &ws) == GP_EINVAL, "i1 > n+1 accepted");
    CHECK(gp_cpu_trap_fn(GP_FN_X2, 0, 1, 10, 6, 5, &ws) == GP_EINVAL, "i0 > i1 accepted");
    CHECK(gp_cpu_trap_fn(GP_FN_X2, 0, 1, -1, 0, 0, &ws) == GP_EINVAL, "n < 0 accepted");
    CHECK(gp_cpu_trap_fn(GP_NFUNCS, 0, 1, 10, 0, 11, &ws) == GP_EINVAL, "bad f accepted");
    CHECK(gp_cpu_trap_fn(GP_FN_X2, 0, 1, 10, 0, 11, NULL) == GP_EINVAL, "NULL wsum accepted");
    CHECK(ws == keep, "wsum written on failure");
    CHECK(gp_cpu_trap_fn(GP_FN_X2, 0, 1, 10, 0, 11, &ws) == GP_OK, "i1 == n+1 rejected");
}

/* ---- exact 128-bit integers, the exact integer sums ---------------------------------------- */

__extension__ typedef unsigned __int128 u128_t;

static gp_i128 to_gp(i128_t v)
{
    gp_i128 r;
    r.lo = (uint64_t)(u128_t)v;
    r.hi = (int64_t)(uint64_t)((u128_t)v >> 64);
    return r;
}

#define I128_MAX ((i128_t)(((u128_t)1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)

/* A random 128-bit integer of one of several shapes: small, 64-bit, any width, an edge. */
static i128_t rnd_i128(void)
{
    static const int64_t small_edges[] = {0, 1, -1, 2, -2, 3, INT64_MAX, INT64_MIN};
    const u128_t full = ((u128_t)rnd() << 64) | rnd();
    switch (rnd() % 6) {
    case 0: return (i128_t)(int64_t)rnd() / (int64_t)(1 + rnd_upto(1000000));
    case 1: return (i128_t)rnd();
    case 2: return (i128_t)full >> rnd_upto(126); /* arithmetic shift: any width */
    case 3: return (i128_t)full;
    case 4: { /* near a power of two: 2^k - 1, 2^k, 2^k + 1, and their negatives */
        const int k = (int)rnd_upto(126);
        i128_t v = ((i128_t)1 << k) + (i128_t)rnd_upto(2) - 1;
        return (rnd() & 1) ? -v : v;
    }
    default: {
        const int64_t e = small_edges[rnd_upto(NELEMS(small_edges) - 1)];
        const int which = (int)rnd_upto(3);
        return which == 0 ? I128_MAX - (e < 0 ? 0 : e) : which == 1 ? I128_MIN + (e < 0 ? 0 : e) : (i128_t)e;
    }
    }
}

/* 1 when r is x / d (d >= 1) rounded once to the nearest double, ties to even. Exact
 * integer comparisons in quarter units of r's last place (|x| < 2^124). */
static int is_rounded_ratio(i128_t x, int64_t d, double r)
{
    if (x == 0) return r == 0.0 && !signbit(r);
    if ((x < 0) != (r < 0) || !isfinite(r) || r == 0.0) return 0;
    const u128_t u = (u128_t)(x < 0 ? -x : x);
    int e;
    const double f = frexp(fabs(r), &e);
    const u128_t m = (u128_t)ldexp(f, 53); /* r = m * 2^k, 2^52 <= m < 2^53 */
    const int k = e - 53, sh = 2 - k;      /* quarter-ulp units: scale by 2^(2-k) */
    u128_t a = u, b = m * (u128_t)d * 4u, unit = (u128_t)d; /* a quarter ulp, times d */
    if (sh >= 0) {
        if (sh >= 127 || u > (~(u128_t)0 >> sh)) return 0;
        a = u << sh;
    } else {
        if (-sh >= 127 || b > (~(u128_t)0 >> -sh)) return 0;
        b <<= -sh;
        unit <<= -sh;
    }
    const u128_t half = 2u * unit;
    const int even = (int)(m & 1u) == 0;
    if (a >= b) return a - b < half || (a - b == half && even);
    /* below r: when m is a power of two the next double down is half as far */
    const u128_t lhalf = m == ((u128_t)1 << 52) ? unit : half;
    return b - a < lhalf || (b - a == lhalf && even);
}

/* a in decimal, independently of gp_i128_to_dec: the digits of |a| by repeated division. */
static const char *ref_dec(i128_t a, char *buf)
{
    char rev[48];
    int k = 0;
    u128_t u = (u128_t)(a < 0 ? -(u128_t)a : (u128_t)a);
    do {
        rev[k++] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u);
    int j = 0;
    if (a < 0) buf[j++] = '-';
    while (k) buf[j++] = rev[--k];
    buf[j] = '\0';
    return buf;
}

static void test_i128(void)
{
    snprintf(g_ctx, sizeof g_ctx, "gp_i128 fixed values");
    static const struct { i128_t v; const char *dec; } fixed[] = {
        {0, "0"}, {-1, "-1"}, {(i128_t)UINT64_MAX, "18446744073709551615"},
        {(i128_t)UINT64_MAX + 1, "18446744073709551616"},
        {(i128_t)INT64_MIN, "-9223372036854775808"},
        {(i128_t)INT64_MIN - 1, "-9223372036854775809"},
        {I128_MAX, "170141183460469231731687303715884105727"},
        {I128_MIN, "-170141183460469231731687303715884105728"}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        char buf[GP_I128_DEC_LEN];
        const size_t len = gp_i128_to_dec(to_gp(fixed[i].v), buf, sizeof buf);
        CHECK(len == strlen(fixed[i].dec) && strcmp(buf, fixed[i].dec) == 0, "to_dec: %s, want %s",
              buf, fixed[i].dec);
    }
    char tiny[40]; /* one short of the most negative value's 40 characters + NUL */
    CHECK(gp_i128_to_dec(to_gp(I128_MIN), tiny, sizeof tiny) == 0 && tiny[0] == '\0',
          "to_dec: a too-short buffer was not refused");
    CHECK(from_gp(gp_i128_from_i64(INT64_MIN)) == INT64_MIN &&
              from_gp(gp_i128_from_u64(UINT64_MAX)) == (i128_t)UINT64_MAX,
          "from_i64 / from_u64");
    CHECK(isnan(gp_i128_div(to_gp(5), 0)) && isnan(gp_i128_div(to_gp(5), -3)), "div by d <= 0");
    CHECK(gp_i128_to_double(to_gp(I128_MIN)) == -0x1p127 && gp_i128_to_double(to_gp(I128_MAX)) == 0x1p127,
          "to_double at the ends");

    snprintf(g_ctx, sizeof g_ctx, "gp_i128 random values");
    for (int it = 0; it < 60000; it++) {
        const i128_t a = rnd_i128(), b = rnd_i128();
        const gp_i128 ga = to_gp(a), gb = to_gp(b);
        const i128_t sum = (i128_t)((u128_t)a + (u128_t)b); /* mod 2^128, like the library */
        if (!CHECK(from_gp(gp_i128_add(ga, gb)) == sum, "add")) break;
        if (!CHECK(gp_i128_cmp(ga, gb) == (a < b ? -1 : a > b), "cmp")) break;
        if (!CHECK(same_double(gp_i128_to_double(ga), (double)a), "to_double %.17g vs %.17g",
                   gp_i128_to_double(ga), (double)a))
            break;
        char got[GP_I128_DEC_LEN], want[48];
        gp_i128_to_dec(ga, got, sizeof got);
        if (!CHECK(strcmp(got, ref_dec(a, want)) == 0, "to_dec %s, want %s", got, want)) break;
        /* the quotient, for |a| < 2^124 and divisors of every size */
        const i128_t x = a >> 4;
        const int64_t d = (int64_t)(rnd() >> (2 + rnd_upto(61))) + 1; /* 1 .. 2^62 */
        const double q = gp_i128_div(to_gp(x), d);
        if (!CHECK(is_rounded_ratio(x, d, q), "div: %s / %" PRId64 " gave %.17g", ref_dec(x, want), d, q))
            break;
        /* the checker itself: neither neighbour of the answer passes it */
        if (x != 0 && !CHECK(!is_rounded_ratio(x, d, nextafter(q, INFINITY)) &&
                                 !is_rounded_ratio(x, d, nextafter(q, -INFINITY)),
                             "div: a neighbour of %.17g passes the rounding check", q))
            break;
        if (x > -((i128_t)1 << 53) && x < ((i128_t)1 << 53) && d < ((int64_t)1 << 53))
            if (!CHECK(same_double(q, (double)x / (double)d), "div: small %s / %" PRId64,
                       ref_dec(x, want), d))
                break;
    }
    /* ties: (2k+1) * 2^(e) / 2^(e+1)-type quotients land on midpoints */
    snprintf(g_ctx, sizeof g_ctx, "gp_i128_div midpoints");
    for (int it = 0; it < 2000; it++) {
        const i128_t m = ((i128_t)1 << 53) + (i128_t)rnd_upto(((int64_t)1 << 53) - 1); /* 54 bits */
        const int64_t d = (int64_t)1 << rnd_upto(40);
        const i128_t x = (rnd() & 1) ? -(m * d) : m * d; /* x / d = m: a tie at 54 bits when m is odd */
        const double q = gp_i128_div(to_gp(x), d);
        if (!CHECK(is_rounded_ratio(x, d, q) && same_double(q, (double)x / (double)d),
                   "tie %.17g", q))
            break;
    }
}

/* The exact trapezoid bracket and the mean of integer records, against the references. */
static void check_int_derived(gp_dtype t, const void *y, int64_t n, const gp_stats *s)
{
    char want[48];
    const i128_t sum = from_gp(s->isum);
    if (n >= 1) {
        const double mean = gp_stats_mean(s);
        CHECK(is_rounded_ratio(sum, n, mean), "mean %.17g of %s / %" PRId64, mean,
              ref_dec(sum, want), n);
    } else {
        CHECK(isnan(gp_stats_mean(s)), "mean of nothing is %.17g", gp_stats_mean(s));
    }
    if (n >= 2) {
        const i128_t x = 2 * sum - ref_int(t, y) - ref_int(t, elem(t, y, n - 1));
        const double b = gp_stats_int_trap_bracket(t, s);
        CHECK(same_double(b, (double)x * 0.5), "trapezoid bracket %.17g, want %.17g", b, (double)x * 0.5);
    } else {
        CHECK(gp_stats_int_trap_bracket(t, s) == 0.0, "trapezoid bracket of %" PRId64 " samples", n);
    }
}

/* Adds -v into acc exactly, in pieces a double holds exactly (32-bit digits). */
static void superacc_sub(gp_superacc *acc, i128_t v)
{
    for (int k = 0; k < 4; k++) {
        const i128_t digit = k < 3 ? (i128_t)((u128_t)v & 0xFFFFFFFFu) : v;
        gp_superacc_add_double(acc, -ldexp((double)digit, 32 * k));
        v = (v - digit) / ((i128_t)1 << 32);
    }
}

/* Integer data at the extremes through the twin: every pattern and length, pieces combined,
 * the mean and trapezoid bracket, and --reproducible's exact sum agreeing with isum. */
static void test_int_extremes(void)
{
    static const gp_dtype ints[] = {GP_I32, GP_I64, GP_U32, GP_U64};
    static const int64_t sizes[] = {1, 2, 3, 4095, 4096, 4097, 8193, 100003};
    const int64_t maxn = 100003;
    void *y = xmalloc((size_t)maxn * 8);
    for (size_t ti = 0; ti < sizeof ints / sizeof ints[0]; ti++) {
        const gp_dtype t = ints[ti];
        const int w = (int)esz(t) * 8, sgn = t == GP_I32 || t == GP_I64;
        const uint64_t top = sgn ? ((uint64_t)1 << (w - 1)) - 1 : (w == 64 ? UINT64_MAX : 0xFFFFFFFFu);
        const uint64_t bottom = sgn ? (uint64_t)1 << (w - 1) : 0; /* bits of the minimum */
        for (int pat = 0; pat < 5; pat++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                const int64_t n = sizes[si];
                static const char *const pats[] = {"all max", "all min", "max/min alternating",
                                                   "max with small values", "random edges"};
                snprintf(g_ctx, sizeof g_ctx, "%s n=%" PRId64 " %s", gp_dtype_name(t), n, pats[pat]);
                for (int64_t i = 0; i < n; i++) {
                    uint64_t b = top;
                    if (pat == 1 || (pat == 2 && (i & 1))) b = bottom;
                    if (pat == 3 && rnd() % 3 == 0) b = (uint64_t)rnd_upto(9) - (sgn ? 4 : 0);
                    if (pat == 4) b = special_bits(t);
                    put_bits(t, y, i, b);
                }
                gp_stats s;
                poison(&s, sizeof s);
                if (!CHECK(gp_cpu_stats(t, y, n, 0, &s) == GP_OK, "stats failed")) continue;
                const ref_stats r = ref_stats_of(t, y, n);
                check_sums(t, &s, &r, "stats");
                check_int_derived(t, y, n, &s);
                /* pieces of random lengths, combined in order, give the same record sums */
                gp_stats acc = gp_stats_empty();
                for (int64_t at = 0; at < n;) {
                    const int64_t len = 1 + rnd_upto(n - at - 1 < 5000 ? n - at - 1 : 5000);
                    gp_stats piece;
                    gp_cpu_stats(t, elem(t, y, at), len, 0, &piece);
                    acc = gp_stats_combine(&acc, &piece);
                    at += len;
                }
                CHECK(from_gp(acc.isum) == r.isum && acc.has_isum == 1 && same_double(acc.sum, s.sum),
                      "pieces combined: isum or sum differs");
                /* --reproducible's exact sum: the same value, to the last bit */
                gp_superacc sa;
                gp_superacc_zero(&sa);
                CHECK(gp_cpu_exact_sum(t, y, n, GP_SA_VALUES, &sa) == GP_OK &&
                          same_double(gp_superacc_to_double(&sa), s.sum),
                      "exact_sum rounds to %.17g, isum to %.17g", gp_superacc_to_double(&sa), s.sum);
                superacc_sub(&sa, r.isum);
                CHECK(gp_superacc_sign(&sa) == 0, "exact_sum - isum is not zero");
            }
    }
    free(y);

    /* records made by hand: brackets that need 129 bits, and one that ends in a half */
    snprintf(g_ctx, sizeof g_ctx, "trapezoid bracket edges");
    gp_stats s = gp_stats_empty();
    s.count = 3;
    s.has_isum = 1;
    s.isum = to_gp(I128_MAX); /* 2 isum = 2^128 - 2 */
    s.first_key = s.last_key = 0;
    CHECK(gp_stats_int_trap_bracket(GP_U64, &s) == 0x1p127, "bracket of 2^127 - 1");
    s.isum = to_gp(I128_MIN);
    s.first_key = s.last_key = UINT64_MAX; /* INT64_MAX as an i64 key */
    CHECK(gp_stats_int_trap_bracket(GP_I64, &s) == -0x1p127, "bracket of -2^127 - 2^63 + 1");
    s.isum = to_gp(3);
    s.first_key = 0;
    s.last_key = 1; /* u64: y0 = 0, y_last = 1: 3 - 1/2 */
    CHECK(gp_stats_int_trap_bracket(GP_U64, &s) == 2.5, "bracket 2.5: %.17g",
          gp_stats_int_trap_bracket(GP_U64, &s));
    CHECK(isnan(gp_stats_int_trap_bracket(GP_F64, &s)), "bracket of a float type");
    s.has_isum = 0;
    CHECK(isnan(gp_stats_int_trap_bracket(GP_U64, &s)), "bracket without has_isum");
    s.count = 4;
    s.sum = 10.0;
    CHECK(gp_stats_mean(&s) == 2.5, "float mean");
}

/* gp_func_exact in both orders: minus the other order bitwise, +0.0 for an empty interval. */
static void test_func_exact_order(void)
{
    snprintf(g_ctx, sizeof g_ctx, "gp_func_exact order");
    static const double ab[][2] = {{0, 3}, {-2, 5}, {1e-3, 700}, {-30, -1}, {-1e300, 1e300}, {0.1, 0.3}};
    for (int f = 0; f < GP_NFUNCS; f++)
        for (size_t i = 0; i < sizeof ab / sizeof ab[0]; i++) {
            const double a = ab[i][0], b = ab[i][1];
            const double fw = gp_func_exact((gp_func)f, a, b), bw = gp_func_exact((gp_func)f, b, a);
            CHECK(same_double(bw, -fw), "%s [%g, %g]: %.17g vs %.17g", gp_func_name((gp_func)f), a,
                  b, fw, bw);
            const double z = gp_func_exact((gp_func)f, a, a);
            CHECK(z == 0.0 && !signbit(z), "%s over [%g, %g]: %.17g", gp_func_name((gp_func)f), a, a, z);
        }
    CHECK(same_double(gp_func_exact(GP_FN_X2, 3, 0), -9.0), "x2 from 3 to 0: %.17g",
          gp_func_exact(GP_FN_X2, 3, 0));
}

/* ---- the per-type, per-size, per-distribution sweep --------------------------------------- */

static void test_sweep(void)
{
    static const int64_t sizes[] = {0,    1,    2,    7,     8,     9,     31,    32,
                                    33,   63,   64,   65,    1023,  1024,  1025,  4095,
                                    4096, 4097, 12289, 65537, 1000003};
    const int64_t maxn = 1000003;
    void *y = xmalloc((size_t)maxn * 8);
    for (int ti = 0; ti < GP_NDTYPES; ti++) {
        gp_dtype t = all_types[ti];
        for (int d = 0; d < D_NDIST; d++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                int64_t n = sizes[si];
                snprintf(g_ctx, sizeof g_ctx, "%s n=%" PRId64 " %s", gp_dtype_name(t), n,
                         dist_names[d]);
                gen(t, d, n, y);
                check_stats(t, y, n);
                check_keys_and_sort(t, y, n);
                if (d != D_SPECIAL) check_trap_x(t, y, n);
            }
    }
    free(y);
}

/* gp_cpu_stats against gp_cpu_stats_ref, bit for bit, on data that make every lane's
 * rounding and every order-free field count: random bit patterns (floats of every
 * magnitude, NaNs among them), all NaNs, and a run of NaNs longer than a chunk before
 * ordinary values; at the sizes around the SIMD width and the chunk, from element offsets
 * 0-3. (check_stats compares them on the sweep's data too.) */
static void test_stats_simd(void)
{
    static const int64_t sizes[] = {1, 7, 8, 9, 15, 16, 17, 4095, 4096, 4097, 8200, 65537};
    const int64_t maxn = 65537 + 3;
    void *y = xmalloc((size_t)maxn * 8);
    for (int ti = 0; ti < GP_NDTYPES; ti++) {
        const gp_dtype t = all_types[ti];
        for (int kind = 0; kind < 3; kind++) {
            if (kind > 0 && !gp_dtype_is_float(t)) continue;
            const uint64_t qnan = t == GP_F32 ? 0x7FC00000u : 0x7FF8000000000000ull;
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                const int64_t n = sizes[si] + 3;
                for (int64_t i = 0; i < n; i++) {
                    const int nan = kind == 1 || (kind == 2 && i < 4096 + 5);
                    put_bits(t, y, i, nan ? qnan ^ (rnd() & 1 ? 0 : (uint64_t)1 << (esz(t) * 8 - 1)) : rnd());
                }
                for (int64_t off = 0; off <= 3; off++)
                    for (unsigned flags = 0; flags <= (GP_STATS_ORDER | GP_STATS_NOHASH); flags++) {
                        snprintf(g_ctx, sizeof g_ctx, "stats simd %s n=%" PRId64 " from %" PRId64 " %s",
                                 gp_dtype_name(t), n - off, off,
                                 kind == 0 ? "random bits" : kind == 1 ? "all NaN" : "NaN run first");
                        gp_stats f, r;
                        poison(&f, sizeof f);
                        poison(&r, sizeof r);
                        int rc = gp_cpu_stats(t, elem(t, y, off), n - off, flags, &f);
                        rc |= gp_cpu_stats_ref(t, elem(t, y, off), n - off, flags, &r);
                        CHECK(rc == GP_OK && memcmp(&f, &r, sizeof f) == 0,
                              "flags %u: differs from stats_ref (sum %.17g / %.17g, sumsq %.17g / "
                              "%.17g, min %#" PRIx64 " / %#" PRIx64 ")",
                              flags, f.sum, r.sum, f.sumsq, r.sumsq, f.min_key, r.min_key);
                    }
            }
        }
    }
    free(y);
}

/* ---- extra sort cases, invalid arguments, the backend table, a large sort ------------------ */

static void test_sort_extra(void)
{
    /* keys that differ only in the top digit / only in a middle digit (passes skipped) */
    for (int width = 4; width <= 8; width += 4)
        for (int shape = 0; shape < 3; shape++) {
            int64_t n = 5000;
            snprintf(g_ctx, sizeof g_ctx, "sort_keys width %d shape %d", width, shape);
            uint64_t *ref = (uint64_t *)xmalloc((size_t)n * 8);
            void *k = xmalloc((size_t)n * (size_t)width);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = rnd();
                uint64_t v = shape == 0 ? (r << (width * 8 - 5)) : shape == 1 ? (r & 0x3F) << 13
                                                                              : r;
                if (width == 4) v &= 0xFFFFFFFFu;
                ref[i] = v;
                if (width == 4) ((uint32_t *)k)[i] = (uint32_t)v;
                else ((uint64_t *)k)[i] = v;
            }
            qsort(ref, (size_t)n, 8, cmp_u64);
            int rc = gp_cpu_sort_keys(width, k, n);
            int64_t bad = -1;
            for (int64_t i = 0; i < n && bad < 0; i++)
                if (get_key(width, k, i) != ref[i]) bad = i;
            CHECK(rc == GP_OK && bad < 0, "rc %d, first difference at %" PRId64, rc, bad);
            free(k);
            free(ref);
        }
    snprintf(g_ctx, sizeof g_ctx, "sort_keys invalid arguments");
    uint32_t one = 5;
    CHECK(gp_cpu_sort_keys(2, &one, 1) == GP_EINVAL, "width 2 accepted");
    CHECK(gp_cpu_sort_keys(4, &one, -1) == GP_EINVAL, "n < 0 accepted");
    CHECK(gp_cpu_sort_keys(8, NULL, 3) == GP_EINVAL, "NULL keys accepted");
    CHECK(gp_cpu_sort_keys(8, NULL, 0) == GP_OK, "NULL keys with n = 0 rejected");
    CHECK(strstr(gp_backend_cpu()->last_error(), "sort_keys") != NULL,
          "last_error = \"%s\"", gp_backend_cpu()->last_error());
    CHECK(gp_cpu_sort_values((gp_dtype)99, &one, 1) == GP_EINVAL, "sort_values: bad dtype accepted");
    CHECK(gp_cpu_sort_values(GP_F32, &one, -1) == GP_EINVAL, "sort_values: n < 0 accepted");
    CHECK(gp_cpu_sort_values(GP_F64, NULL, 3) == GP_EINVAL, "sort_values: NULL buf accepted");
}

static void test_invalid_and_table(void)
{
    snprintf(g_ctx, sizeof g_ctx, "invalid arguments");
    gp_stats s, p;
    poison(&s, sizeof s);
    p = s;
    float f = 1.0f;
    double x = 0.0;
    CHECK(gp_cpu_stats((gp_dtype)7, &f, 1, 0, &s) == GP_EINVAL, "stats: bad dtype accepted");
    CHECK(gp_cpu_stats(GP_F32, &f, -1, 0, &s) == GP_EINVAL, "stats: n < 0 accepted");
    CHECK(gp_cpu_stats(GP_F32, NULL, 1, 0, &s) == GP_EINVAL, "stats: NULL y accepted");
    CHECK(gp_cpu_stats(GP_F32, &f, 1, 0, NULL) == GP_EINVAL, "stats: NULL out accepted");
    CHECK(memcmp(&s, &p, sizeof s) == 0, "stats wrote *out on failure");
    CHECK(gp_cpu_trap_x(GP_NDTYPES, &f, &x, 1, &s) == GP_EINVAL, "trap_x: bad dtype accepted");
    CHECK(gp_cpu_trap_x(GP_F32, &f, NULL, 1, &s) == GP_EINVAL, "trap_x: NULL x accepted");
    CHECK(gp_cpu_trap_x(GP_F32, &f, &x, -2, &s) == GP_EINVAL, "trap_x: n < 0 accepted");
    CHECK(memcmp(&s, &p, sizeof s) == 0, "trap_x wrote *io on failure");
    CHECK(gp_cpu_to_keys((gp_dtype)-1, &f, 1) == GP_EINVAL, "to_keys: bad dtype accepted");
    CHECK(gp_cpu_from_keys(GP_F64, NULL, 2) == GP_EINVAL, "from_keys: NULL accepted");
    CHECK(gp_cpu_to_keys(GP_I64, NULL, 0) == GP_OK, "to_keys: n = 0 rejected");
    CHECK(gp_cpu_trap_x(GP_F64, NULL, NULL, 0, &s) == GP_OK && s.has_x == 1 && s.trap == 0.0,
          "trap_x: n = 0 not an empty x piece");

    for (int i = 0; i < GP_NDTYPES; i++)
        CHECK(esz(all_types[i]) == gp_dtype_size(all_types[i]), "test's esz(%s) is wrong",
              gp_dtype_name(all_types[i]));

    snprintf(g_ctx, sizeof g_ctx, "backend table");
    const gp_backend *b = gp_backend_cpu();
    if (!CHECK(b != NULL, "gp_backend_cpu() is NULL")) return;
    CHECK(b == gp_backend_cpu(), "gp_backend_cpu() not a single static table");
    CHECK(b->name && strcmp(b->name, "cpu") == 0, "name = %s", b->name ? b->name : "(null)");
    CHECK(b->stats == gp_cpu_stats && b->trap_x == gp_cpu_trap_x && b->trap_fn == gp_cpu_trap_fn &&
              b->sort_values == gp_cpu_sort_values,
          "kernel entries are not the gp_cpu_* twins");
    /* to_keys, from_keys, sort and merge_split dispatch to the twins (test_cpu_pairs_sums checks
     * that they give the twins' results) */
    CHECK(b->to_keys && b->from_keys && b->sort && b->merge_split, "a sort entry is NULL");
    CHECK(b->alloc && b->free && b->host_alloc && b->host_free && b->upload && b->download &&
              b->last_error && b->upload_async && b->upload_wait && b->download_async &&
              b->download_wait,
          "a table entry is NULL");
    void *z1 = b->alloc(0), *z2 = b->alloc(0), *hz = b->host_alloc(0);
    CHECK(z1 && z2 && hz && z1 != z2, "alloc(0) does not give valid unique pointers");
    b->free(z1);
    b->free(z2);
    b->host_free(hz);
    unsigned char src[1000], dst[1000];
    for (int i = 0; i < 1000; i++) src[i] = (unsigned char)rnd();
    poison(dst, sizeof dst);
    void *dev = b->alloc(sizeof src);
    unsigned char *host = (unsigned char *)b->host_alloc(sizeof dst);
    int rc = b->upload(dev, src, sizeof src);
    rc |= b->download(host, dev, sizeof src);
    memcpy(dst, host, sizeof dst);
    CHECK(rc == 0 && memcmp(src, dst, sizeof src) == 0, "upload/download round trip failed");
    CHECK(b->upload(dev, src, 0) == 0 && b->download(host, dev, 0) == 0, "0-byte copy failed");
    b->free(dev);
    b->host_free(host);
    CHECK(b->sort(5, NULL, NULL, 0, 0) == GP_EINVAL && strlen(b->last_error()) > 0,
          "last_error empty after a failure");
}

static void test_large_sort(void)
{
    const int64_t n = 10000000;
    for (int width = 4; width <= 8; width += 4) {
        snprintf(g_ctx, sizeof g_ctx, "sort_keys width %d n=%" PRId64, width, n);
        void *k = xmalloc((size_t)n * (size_t)width);
        uint64_t h0 = 0, h1 = 0;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = rnd();
            if (width == 4) ((uint32_t *)k)[i] = (uint32_t)v;
            else ((uint64_t *)k)[i] = v;
            h0 += gp_mix64(get_key(width, k, i));
        }
        double t0 = now_s();
        int rc = gp_cpu_sort_keys(width, k, n);
        double dt = now_s() - t0;
        int64_t bad = -1;
        for (int64_t i = 0; i < n; i++) {
            h1 += gp_mix64(get_key(width, k, i));
            if (i > 0 && bad < 0 && get_key(width, k, i - 1) > get_key(width, k, i)) bad = i;
        }
        CHECK(rc == GP_OK && bad < 0 && h0 == h1, "rc %d, unsorted at %" PRId64 ", hash %s", rc,
              bad, h0 == h1 ? "same" : "differs");
        printf("sort_keys: %" PRId64 " random %d-byte keys in %.3f s\n", n, width, dt);
        free(k);
    }
}

int main(void)
{
    const char *env = getenv("GPUPRIM_TEST_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        seed = gp_mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
                        (uint64_t)(uintptr_t)&ts);
    }
    g_rng = seed;
    printf("test_cpu_kernels: seed %" PRIu64 " (rerun with GPUPRIM_TEST_SEED=%" PRIu64 ")\n",
           seed, seed);
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    printf("test_cpu_kernels: %s\n", __builtin_cpu_supports("avx2")
                                         ? "AVX2: gp_cpu_stats's AVX2 loops checked against stats_ref"
                                         : "no AVX2: gp_cpu_stats runs the plain loops of stats_ref");
#endif
    fflush(stdout);

    const double t0 = now_s();
    double t = t0;
    struct { const char *name; void (*fn)(void); } parts[] = {
        {"invalid arguments and backend table", test_invalid_and_table},
        {"128-bit integers", test_i128},
        {"integer sums at the extremes", test_int_extremes},
        {"gp_func_exact in both orders", test_func_exact_order},
        {"trap_fn", test_trap_fn},
        {"sort extras", test_sort_extra},
        {"merge_split", test_merge_split_all},
        {"stats against stats_ref (SIMD)", test_stats_simd},
        {"stats/keys/sort/trap_x sweep", test_sweep},
        {"large sort", test_large_sort},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        parts[i].fn();
        double t1 = now_s();
        printf("  %-40s %.2f s\n", parts[i].name, t1 - t);
        t = t1;
    }
    printf("%ld passed, %ld failed (%.2f s, seed %" PRIu64 ")\n", g_pass, g_fail, now_s() - t0,
           seed);
    return g_fail == 0 ? 0 : 1;
}
