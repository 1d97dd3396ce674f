/* test_cpu_select.c — the selection on the CPU (gpuprim/dist.h; kernels/dist.c,
 * cpu_select.c): the radix select (gp_select_* with the twin gp_cpu_radix_hist), numpy's
 * quantile index and interpolation, and the runs of equal values (gp_cpu_runs,
 * gp_runs_combine).
 *
 *   - select: every type, sizes 1, 2, 2^k +- 1, primes, data random, few distinct, all
 *     equal, with NaN, +-inf, -0.0 and the integer extremes, spread over 1 to 4 pieces; up
 *     to GP_SELECT_MAX ranks at once (0, n - 1, repeats, random): the keys found equal the
 *     keys at those ranks of a qsort of all keys (NaNs last, -0.0 before +0.0); counts that
 *     do not add up and bad arguments are refused;
 *   - quantiles: numpy's index (q = 0, 1, n = 1) and cases whose numpy values were
 *     computed with numpy 2.4 (and 1.24: the same) or follow gpuprim's documented rule where
 *     numpy's arithmetic breaks (inf - inf, integers further apart than their type, a float
 *     difference that overflows);
 *   - runs: against a plain count of distinct values (sorted data, -0.0 = +0.0, NaN not
 *     counted) and of the definition (unsorted data), whole and combined from pieces.
 */
#include "cpu_twins.h"
#include "gpuprim/dist.h"
#include "gpuprim/kernels.h"
#include "test_check.h"
#include "test_rng.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const int64_t g_sizes[] = {1, 2, 3, 7, 31, 33, 127, 129, 1021, 4097, 65537};

/* Random data of type t (kind 0 random, 1 few distinct, 2 all equal) with specials. */
static void fill(gp_dtype t, void *data, int64_t n, int kind)
{
    const size_t sz = gp_dtype_size(t);
    const uint64_t one = rnd();
    for (int64_t i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *)data + (size_t)i * sz;
        uint64_t r = kind == 2 ? one : kind == 1 ? gp_mix64(rnd() % 5) : rnd();
        memcpy(e, &r, sz);
        const int sp = (int)(rnd() % 23);
        if (kind == 2) continue;
        if (t == GP_F32) {
            const float v[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1.5f, -1.5f};
            float f = (float)(rnd_unit() * 200.0 - 100.0);
            if (sp < 7) f = v[sp];
            memcpy(e, &f, 4);
        } else if (t == GP_F64) {
            const double v[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.5, -1.5};
            double f = rnd_unit() * 200.0 - 100.0;
            if (sp < 7) f = v[sp];
            memcpy(e, &f, 8);
        } else if (sp < 2) { /* the type's extremes */
            memset(e, sp ? 0xFF : 0x00, sz);
            if (t == GP_I32 || t == GP_I64) e[sz - 1] ^= 0x80;
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The select of nr ranks over data[0, n) in `pieces` pieces against the sorted keys. */
static void select_case(gp_dtype t, const unsigned char *data, int64_t n, const uint64_t *sorted,
                        const int64_t *ranks, int nr, int pieces)
{
    const size_t sz = gp_dtype_size(t);
    gp_select s;
    if (!CHECK(gp_select_init(&s, t, ranks, nr) == 0, "init refused")) return;
    int64_t *counts = xmalloc(((size_t)GP_SELECT_MAX << GP_SELECT_DIGIT) * sizeof(int64_t));
    int passes = 0;
    while (!s.done && passes < 8) {
        memset(counts, 0, gp_select_counts_len(&s) * sizeof(int64_t));
        for (int p = 0; p < pieces; p++) {
            const int64_t lo = n * p / pieces, hi = n * (p + 1) / pieces;
            CHECK(gp_cpu_radix_hist(t, data + (size_t)lo * sz, hi - lo, &s, counts) == GP_OK,
                  "radix_hist: %s", gp_backend_cpu()->last_error());
        }
        if (!CHECK(gp_select_advance(&s, counts) == 0, "advance refused at pass %d", passes)) break;
        passes++;
    }
    CHECK(s.done && passes == (sz == 4 ? 3 : 6), "%d passes, done %d", passes, s.done);
    for (int i = 0; i < nr && s.done; i++)
        CHECK(s.prefix[i] == sorted[ranks[i]], "rank %lld: key %#llx, sorted %#llx",
              (long long)ranks[i], (unsigned long long)s.prefix[i],
              (unsigned long long)sorted[ranks[i]]);
    free(counts);
}

static void test_select(void)
{
    for (int t = 0; t < GP_NDTYPES; t++)
        for (size_t k = 0; k < sizeof g_sizes / sizeof g_sizes[0]; k++)
            for (int kind = 0; kind < 3; kind++) {
                const gp_dtype dt = (gp_dtype)t;
                const int64_t n = g_sizes[k];
                const size_t sz = gp_dtype_size(dt);
                unsigned char *data = xmalloc((size_t)n * sz);
                uint64_t *keys = xmalloc((size_t)n * 8);
                fill(dt, data, n, kind);
                for (int64_t i = 0; i < n; i++) keys[i] = gp_key_of(dt, data + (size_t)i * sz);
                qsort(keys, (size_t)n, 8, cmp_u64);
                int64_t ranks[GP_SELECT_MAX];
                const int nr = kind == 0 ? GP_SELECT_MAX : 7;
                for (int i = 0; i < nr; i++) ranks[i] = (int64_t)(rnd() % (uint64_t)n);
                ranks[0] = 0;
                ranks[1] = n - 1;
                ranks[2] = n / 2;
                ranks[3] = n / 2; /* a repeat */
                CTX("select %s n=%lld kind=%d", gp_dtype_name(dt), (long long)n, kind);
                select_case(dt, data, n, keys, ranks, nr, 1 + (int)(rnd() % 4));
                free(data);
                free(keys);
            }
    CTX("%s", "");
    gp_select s;
    const int64_t r[2] = {0, 5};
    CHECK(gp_select_init(&s, GP_NDTYPES, r, 2) != 0, "a bad type accepted");
    CHECK(gp_select_init(&s, GP_F32, r, 0) != 0, "no rank accepted");
    CHECK(gp_select_init(&s, GP_F32, r, GP_SELECT_MAX + 1) != 0, "too many ranks accepted");
    int64_t *zero = xmalloc(((size_t)1 << GP_SELECT_DIGIT) * sizeof(int64_t));
    gp_select_init(&s, GP_F32, r, 2);
    CHECK(gp_select_advance(&s, zero) != 0, "counts without the ranks accepted");
    free(zero);
    const float f = 1.0f;
    int64_t c[4];
    gp_select_init(&s, GP_F64, r, 2);
    CHECK(gp_cpu_radix_hist(GP_F32, &f, 1, &s, c) == GP_EINVAL,
          "a state of another width accepted");
}

/* ---- quantiles -------------------------------------------------------------------------- */

typedef struct qcase {
    const char *name;
    gp_dtype t;
    double a, b; /* the neighbours (as doubles: exact for the cases) */
    double w;
    double want; /* numpy's value, or the documented rule's */
} qcase;

static void test_quantiles(void)
{
    int64_t k0, k1;
    double w;
    gp_quantile_index(5, 0.0, &k0, &k1, &w);
    CHECK(k0 == 0 && k1 == 1 && w == 0.0, "q = 0 of 5: %lld %lld %g", (long long)k0,
          (long long)k1, w);
    gp_quantile_index(5, 1.0, &k0, &k1, &w);
    CHECK(k0 == 4 && k1 == 4 && w == 5.0, "q = 1 of 5: %lld %lld %g (numpy's index -1)",
          (long long)k0, (long long)k1, w);
    gp_quantile_index(1, 0.7, &k0, &k1, &w);
    CHECK(k0 == 0 && k1 == 0 && w == 1.0, "q = 0.7 of 1: %lld %lld %g", (long long)k0,
          (long long)k1, w);
    gp_quantile_index(4, 0.5, &k0, &k1, &w);
    CHECK(k0 == 1 && k1 == 2 && w == 0.5, "q = 0.5 of 4: %lld %lld %g", (long long)k0,
          (long long)k1, w);
    const qcase cases[] = {
        {"f64 median of 1..4", GP_F64, 2.0, 3.0, 0.5, 2.5},
        {"f64 [-inf, 1] q=0 (numpy nan)", GP_F64, -INFINITY, 1.0, 0.0, -INFINITY},
        {"f64 [-inf, 1] q=0.5", GP_F64, -INFINITY, 1.0, 0.5, -INFINITY},
        {"f64 [-inf, 1] q=0.25 (numpy nan)", GP_F64, -INFINITY, 1.0, 0.25, -INFINITY},
        {"f64 [1, inf] q=0.75 (numpy nan)", GP_F64, 1.0, INFINITY, 0.75, INFINITY},
        {"f64 [-inf, inf] q=0.5", GP_F64, -INFINITY, INFINITY, 0.5, NAN},
        {"f64 [-inf, inf] weight 0", GP_F64, -INFINITY, INFINITY, 0.0, -INFINITY},
        {"f64 [inf, inf] last (numpy nan)", GP_F64, INFINITY, INFINITY, 2.0, INFINITY},
        {"f32 [-0, -0] q=0.5 (numpy -0)", GP_F32, -0.0, -0.0, 0.5, -0.0},
        {"f32 [-0, -0] q=0 (numpy +0)", GP_F32, -0.0, -0.0, 0.0, 0.0},
        {"i32 extremes q=0.25 (numpy wraps)", GP_I32, -2147483648.0, 2147483647.0, 0.25,
         -1073741824.25},
        {"i64 extremes q=0.5 (numpy wraps)", GP_I64, -9223372036854775808.0,
         9223372036854775807.0, 0.5, 0.0},
        {"u64 [0, max] q=0.5", GP_U64, 0.0, 18446744073709551615.0, 0.5, 9223372036854775808.0},
        {"f64 [-2^1023, 2^1023] q=0.25 (numpy inf)", GP_F64, -0x1p1023, 0x1p1023, 0.25,
         -0x1p1022},
        {"f64 [-2^1023, 2^1023] q=0 (numpy nan)", GP_F64, -0x1p1023, 0x1p1023, 0.0, -0x1p1023},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const qcase *q = &cases[c];
        unsigned char ea[8], eb[8];
        if (q->t == GP_I64) {
            const int64_t a = INT64_MIN, b = INT64_MAX;
            memcpy(ea, &a, 8);
            memcpy(eb, &b, 8);
        } else if (q->t == GP_U64) {
            const uint64_t a = 0, b = UINT64_MAX;
            memcpy(ea, &a, 8);
            memcpy(eb, &b, 8);
        } else if (q->t == GP_I32) {
            const int32_t a = INT32_MIN, b = INT32_MAX;
            memcpy(ea, &a, 4);
            memcpy(eb, &b, 4);
        } else if (q->t == GP_F32) {
            const float a = (float)q->a, b = (float)q->b;
            memcpy(ea, &a, 4);
            memcpy(eb, &b, 4);
        } else {
            memcpy(ea, &q->a, 8);
            memcpy(eb, &q->b, 8);
        }
        const double r = gp_quantile_lerp(q->t, gp_key_of(q->t, ea), gp_key_of(q->t, eb), q->w);
        const int same = (isnan(r) && isnan(q->want)) ||
                         (r == q->want && signbit(r) == signbit(q->want));
        CHECK(same, "%s: %.17g, want %.17g", q->name, r, q->want);
    }
    /* float32: the difference overflows float32, not float64 */
    const float a = -3e38f, b = 3e38f;
    const double r = gp_quantile_lerp(GP_F32, gp_key_of(GP_F32, &a), gp_key_of(GP_F32, &b), 0.25);
    CHECK(r == (double)a + ((double)b - (double)a) * 0.25, "f32 [-3e38, 3e38] q=0.25: %.17g", r);
}

/* ---- runs ------------------------------------------------------------------------------- */

/* The values of keys k (ascending keys of type t) as runs keys: -0.0 as +0.0. */
static int same_value(gp_dtype t, const unsigned char *x, const unsigned char *y)
{
    return gp_runs_key(t, x) == gp_runs_key(t, y);
}

static int is_nan_elem(gp_dtype t, const unsigned char *e)
{
    return gp_dtype_is_float(t) && isnan(gp_elem_to_double(t, e));
}

static void test_runs(void)
{
    for (int t = 0; t < GP_NDTYPES; t++)
        for (size_t k = 0; k < sizeof g_sizes / sizeof g_sizes[0]; k++)
            for (int kind = 0; kind < 3; kind++) {
                const gp_dtype dt = (gp_dtype)t;
                const int64_t n = g_sizes[k];
                const size_t sz = gp_dtype_size(dt);
                unsigned char *data = xmalloc((size_t)n * sz);
                fill(dt, data, n, kind);
                CTX("runs %s n=%lld kind=%d", gp_dtype_name(dt), (long long)n, kind);
                /* unsorted: the definition */
                int64_t want = 0;
                for (int64_t i = 0; i < n; i++) {
                    const unsigned char *e = data + (size_t)i * sz, *p = e - sz;
                    const int starts = i == 0 || is_nan_elem(dt, p) || !same_value(dt, e, p);
                    if (!is_nan_elem(dt, e) && starts) want++;
                }
                gp_runs r;
                CHECK(gp_cpu_runs(dt, data, n, &r) == GP_OK && r.runs == want && r.n == n,
                      "unsorted: %lld runs, want %lld", (long long)r.runs, (long long)want);
                /* sorted: the distinct non-NaN values, in pieces */
                gp_cpu_sort_values(dt, data, n);
                int64_t distinct = 0;
                for (int64_t i = 0; i < n; i++) {
                    const unsigned char *e = data + (size_t)i * sz;
                    if (is_nan_elem(dt, e)) continue;
                    int seen = 0;
                    for (int64_t j = i - 1; j >= 0 && !seen && n <= 1100; j--)
                        seen = !is_nan_elem(dt, data + (size_t)j * sz) &&
                               same_value(dt, e, data + (size_t)j * sz);
                    if (n > 1100) seen = i > 0 && same_value(dt, e, e - sz); /* sorted: adjacent */
                    distinct += !seen;
                }
                gp_runs all = gp_runs_empty();
                const int pieces = 1 + (int)(rnd() % 5);
                for (int p = 0; p < pieces; p++) {
                    const int64_t lo = n * p / pieces, hi = n * (p + 1) / pieces;
                    gp_runs one;
                    gp_cpu_runs(dt, data + (size_t)lo * sz, hi - lo, &one);
                    all = gp_runs_combine(&all, &one);
                }
                CHECK(all.runs == distinct && all.n == n,
                      "sorted in %d pieces: %lld, distinct %lld", pieces, (long long)all.runs,
                      (long long)distinct);
                free(data);
            }
    CTX("%s", "");
    const float z[3] = {-0.0f, 0.0f, NAN};
    gp_runs r;
    gp_cpu_runs(GP_F32, z, 3, &r);
    CHECK(r.runs == 1 && !r.first_nan && r.last_nan, "-0.0, +0.0, NaN: %lld runs",
          (long long)r.runs);
    CHECK(gp_cpu_runs(GP_F32, NULL, 2, &r) == GP_EINVAL, "NULL data accepted");
}

int main(void)
{
    g_rng = 0xC0FFEEu;
    test_select();
    test_quantiles();
    test_runs();
    return gp_check_done("test_cpu_select");
}
