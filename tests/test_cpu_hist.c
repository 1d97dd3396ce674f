/* test_cpu_hist.c — numpy's histogram rule on the CPU (gpuprim/dist.h; kernels/dist.c,
 * cpu_hist.c): gp_hist_plan, gp_hist_bin, the CPU twins gp_cpu_hist and gp_cpu_finite_range.
 *
 *   - plans: the edges of cases computed by numpy 2.4 (hard-coded bits: float32 data with
 *     the range from the data, where numpy 1.x differs, a float32 range, float64 data, the
 *     int64 and uint64 extremes, an integer value widened to [v - 0.5, v + 0.5]) bit for bit,
 *     and numpy's counts of those data;
 *   - refusals where numpy refuses or breaks: too many bins for the range (float32 data of
 *     one value 1e8, uint64 data of one value 2^60, float32 [1, 1 + 2^-20] in 1000 bins),
 *     0 bins, 2^24 + 1 bins, a reversed or infinite range, a float32 range outside float32,
 *     a float64 width that overflows;
 *   - counts against a brute force (numpy's steps restated with volatile temporaries, one
 *     element at a time) on every type, sizes 0, 1, 2, 2^k +- 1 and primes, random data with
 *     NaN, +-inf, -0.0, values on the edges, the integer extremes, with and without a
 *     range; the bins of well-conditioned data lie between their edges; the counts of a
 *     split into pieces add up to the whole; gp_hist_bin is the twin's bin;
 *   - finite_range against a plain loop.
 */
#include "cpu_twins.h"
#include "gpuprim/dist.h"
#include "gpuprim/kernels.h"
#include "test_check.h"
#include "test_rng.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- plans numpy 2.4 computed ------------------------------------------------------------ */

typedef struct plan_case {
    const char *name;
    gp_dtype t;
    double vals[4];     /* the data (as doubles, exact for the types used) */
    int nvals;
    int64_t bins;
    int have_range;
    double a, b;
    uint64_t edges[12]; /* numpy's edges' bits (float32 in the low 32 bits) */
    int64_t counts[11];
} plan_case;

static const plan_case g_plans[] = {
    {"f32 data 7", GP_F32, {-1.5, 2.25, 0.3, 0.7}, 4, 7, 0, 0, 0,
     {0xbfc00000u, 0xbf76db6eu, 0xbedb6db8u, 0x3ddb6db0u, 0x3f249248u, 0x3f96db6cu,
      0x3fdb6db6u, 0x40100000u}, {1, 0, 0, 1, 1, 0, 1}},
    {"f32 data 10", GP_F32, {0.1, 0.7, 0.4}, 3, 10, 0, 0, 0,
     {0x3dcccccdu, 0x3e23d70au, 0x3e6147aeu, 0x3e8f5c28u, 0x3eae147au, 0x3eccccccu,
      0x3eeb851du, 0x3f051eb8u, 0x3f147ae1u, 0x3f23d70au, 0x3f333333u},
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"f32 range", GP_F32, {0.1, 0.2}, 2, 5, 1, 0.1, 0.3,
     {0x3dcccccdu, 0x3e0f5c29u, 0x3e3851ecu, 0x3e6147aeu, 0x3e851eb8u, 0x3e99999au},
     {1, 0, 1, 0, 0}},
    {"f64 data", GP_F64, {1e-3, 7.77}, 2, 9, 0, 0, 0,
     {0x3f50624dd2f1a9fcull, 0x3feba7b55c9d77ebull, 0x3ffba39cc928bb80ull,
      0x4004b9af72015d85ull, 0x400ba1907f6e5d4bull, 0x401144b8c66dae89ull,
      0x4014b8a94d242e6bull, 0x40182c99d3daae4eull, 0x401ba08a5a912e31ull,
      0x401f147ae147ae14ull}, {1, 0, 0, 0, 0, 0, 0, 0, 1}},
    {"i32 widened", GP_I32, {5, 5}, 2, 4, 0, 0, 0,
     {0x4012000000000000ull, 0x4013000000000000ull, 0x4014000000000000ull,
      0x4015000000000000ull, 0x4016000000000000ull}, {0, 0, 2, 0}},
};

/* The element of type t with value v into e. */
static void set_elem(gp_dtype t, double v, void *e)
{
    switch (t) {
    case GP_F32: { float f = (float)v; memcpy(e, &f, 4); break; }
    case GP_F64: memcpy(e, &v, 8); break;
    case GP_I32: { int32_t i = (int32_t)v; memcpy(e, &i, 4); break; }
    case GP_I64: { int64_t i = (int64_t)v; memcpy(e, &i, 8); break; }
    case GP_U32: { uint32_t i = (uint32_t)v; memcpy(e, &i, 4); break; }
    default: { uint64_t i = (uint64_t)v; memcpy(e, &i, 8); break; }
    }
}

/* The plan of data[0, n) of type t (its finite range from the keys), or -1 with why. */
static int plan_of(gp_dtype t, const void *data, int64_t n, int64_t bins, int have_range,
                   double a, double b, gp_hist_spec *s, void *edges, char *why)
{
    gp_frange fr = gp_frange_empty();
    gp_cpu_finite_range(t, data, n, &fr);
    return gp_hist_plan(t, bins, have_range, a, b, fr.finite, fr.min_key, fr.max_key, s, edges,
                        why, 300);
}

static void test_numpy_plans(void)
{
    for (size_t c = 0; c < sizeof g_plans / sizeof g_plans[0]; c++) {
        const plan_case *p = &g_plans[c];
        CTX("plan %s", p->name);
        unsigned char data[4 * 8];
        const size_t sz = gp_dtype_size(p->t);
        for (int i = 0; i < p->nvals; i++) set_elem(p->t, p->vals[i], data + (size_t)i * sz);
        double edges[16];
        gp_hist_spec s;
        char why[300] = "";
        const int rc = plan_of(p->t, data, p->nvals, p->bins, p->have_range, p->a, p->b, &s,
                               edges, why);
        if (!CHECK(rc == 0, "refused: %s", why)) continue;
        for (int64_t i = 0; i <= p->bins; i++) {
            uint64_t bits = 0;
            if (s.edge_type == GP_F32) {
                uint32_t u;
                memcpy(&u, (const float *)edges + i, 4);
                bits = u;
            } else {
                memcpy(&bits, (const double *)edges + i, 8);
            }
            CHECK(bits == p->edges[i], "edge %lld: %#llx, numpy %#llx", (long long)i,
                  (unsigned long long)bits, (unsigned long long)p->edges[i]);
        }
        int64_t counts[16] = {0};
        CHECK(gp_cpu_hist(&s, data, p->nvals, counts) == GP_OK, "gp_cpu_hist failed");
        for (int64_t i = 0; i < p->bins; i++)
            CHECK(counts[i] == p->counts[i], "bin %lld: %lld, numpy %lld", (long long)i,
                  (long long)counts[i], (long long)p->counts[i]);
    }
    /* the int64 / uint64 extremes: numpy's float64 edges */
    const int64_t i64[2] = {INT64_MIN, INT64_MAX};
    const uint64_t i64e[4] = {0xc3e0000000000000ull, 0xc3c5555555555556ull,
                              0x43c5555555555554ull, 0x43e0000000000000ull};
    const uint64_t u64[2] = {3, UINT64_MAX};
    const uint64_t u64e[7] = {0x4008000000000000ull, 0x43c5555555555555ull,
                              0x43d5555555555555ull, 0x43e0000000000000ull,
                              0x43e5555555555555ull, 0x43eaaaaaaaaaaaaaull,
                              0x43f0000000000000ull};
    double e[8];
    gp_hist_spec s;
    char why[300];
    CTX("plan integer extremes");
    if (CHECK(plan_of(GP_I64, i64, 2, 3, 0, 0, 0, &s, e, why) == 0, "i64: %s", why))
        CHECK(memcmp(e, i64e, sizeof i64e) == 0, "i64 [INT64_MIN, INT64_MAX] edges");
    int64_t c3[5] = {0};
    gp_cpu_hist(&s, i64, 2, c3);
    CHECK(c3[0] == 1 && c3[1] == 0 && c3[2] == 1, "i64 extremes counts %lld %lld %lld",
          (long long)c3[0], (long long)c3[1], (long long)c3[2]);
    if (CHECK(plan_of(GP_U64, u64, 2, 6, 0, 0, 0, &s, e, why) == 0, "u64: %s", why))
        CHECK(memcmp(e, u64e, sizeof u64e) == 0, "u64 [3, UINT64_MAX] edges");
    CTX("%s", "");
}

static void test_refusals(void)
{
    double e[1100];
    gp_hist_spec s;
    char why[300];
    const float f1e8[2] = {1e8f, 1e8f};
    const uint64_t u60[2] = {1ull << 60, 1ull << 60};
    const float tiny[2] = {1.0f, 1.0f + 0x1p-20f};
    const double d[2] = {0.0, 1.0};
    CHECK(plan_of(GP_F32, f1e8, 2, 4, 0, 0, 0, &s, e, why) != 0, "f32 1e8 widened: accepted");
    CHECK(strstr(why, "too many bins") != NULL, "the reason names numpy's: %s", why);
    CHECK(plan_of(GP_U64, u60, 2, 4, 0, 0, 0, &s, e, why) != 0, "u64 2^60 widened: accepted");
    CHECK(plan_of(GP_F32, tiny, 2, 1000, 0, 0, 0, &s, e, why) != 0, "f32 [1, 1+2^-20]: accepted");
    CHECK(plan_of(GP_F64, d, 2, 0, 0, 0, 0, &s, e, why) != 0, "0 bins accepted");
    CHECK(gp_hist_plan(GP_F64, GP_HIST_MAX_BINS + 1, 0, 0, 0, 0, 0, 0, &s, e, why, sizeof why) != 0,
          "2^24 + 1 bins accepted");
    CHECK(plan_of(GP_F64, d, 2, 4, 1, 2.0, 1.0, &s, e, why) != 0, "range [2, 1] accepted");
    CHECK(plan_of(GP_F64, d, 2, 4, 1, 0.0, INFINITY, &s, e, why) != 0, "range [0, inf] accepted");
    CHECK(plan_of(GP_F32, tiny, 2, 4, 1, 0.0, 1e39, &s, e, why) != 0, "f32 range to 1e39 accepted");
    CHECK(plan_of(GP_F64, d, 2, 4, 1, -1e308, 1e308, &s, e, why) != 0, "width overflow accepted");
    CHECK(plan_of(GP_F64, d, 2, 4, 1, 3.0, 3.0, &s, e, why) == 0 && s.lo_d == 2.5 && s.hi_d == 3.5,
          "range [3, 3] widens to [2.5, 3.5]");
    CHECK(plan_of(GP_F64, d, 0, 4, 0, 0, 0, &s, e, why) == 0 && s.lo_d == 0.0 && s.hi_d == 1.0,
          "no data: [0, 1]");
}

/* ---- brute force ---------------------------------------------------------------------- */

/* numpy's bin of element elem under s, restated with volatile temporaries (no fused
 * operation, every step rounded as numpy rounds it): 0..N-1, N below, N+1 above, -1 NaN. */
static int64_t brute_bin(const gp_hist_spec *s, const void *elem)
{
    const int64_t n = s->nbins;
    int64_t i;
    if (s->t == GP_F32) {
        float x;
        memcpy(&x, elem, 4);
        if (x != x) return -1;
        if (x < s->lo_f) return n;
        if (x > s->hi_f) return n + 1;
        volatile float num = x - s->lo_f;
        double f;
        if (s->mode == GP_HIST_F32) {
            volatile float q = num / s->den_f;
            volatile float ff = q * (float)n;
            f = ff;
        } else {
            volatile double q = (double)num / s->den_d;
            volatile double ff = q * (double)n;
            f = ff;
        }
        i = f >= (double)n ? n - 1 : (int64_t)f;
        const float *e = (const float *)s->edges;
        if (x < e[i]) i--;
        if (x >= e[i + 1] && i != n - 1) i++;
        return i;
    }
    const double x = gp_elem_to_double(s->t, elem);
    if (x != x) return -1;
    if (x < s->lo_d) return n;
    if (x > s->hi_d) return n + 1;
    volatile double num = x - s->lo_d;
    volatile double q = num / s->den_d;
    volatile double f = q * (double)n;
    i = f >= (double)n ? n - 1 : (int64_t)f;
    const double *e = (const double *)s->edges;
    if (x < e[i]) i--;
    if (x >= e[i + 1] && i != n - 1) i++;
    return i;
}

/* Random data of type t: mostly uniform over [lo, hi] stretched by 20 % both ways (so some
 * fall outside a range), with specials: NaN, +-inf, -0.0, the edges' own values and the
 * integer extremes. */
static void fill(gp_dtype t, void *data, int64_t n, double lo, double hi, const double *edges,
                 int64_t nedges)
{
    const size_t sz = gp_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *)data + (size_t)i * sz;
        const uint64_t r = rnd();
        const int kind = (int)(r % 16);
        double v = lo + (hi - lo) * (rnd_unit() * 1.4 - 0.2);
        if (kind == 0 && nedges > 0) v = edges[rnd() % (uint64_t)nedges];
        if (gp_dtype_is_float(t) && kind == 1)
            v = (r >> 8) % 3 == 0 ? NAN : (r >> 8) % 3 == 1 ? INFINITY : -INFINITY;
        if (gp_dtype_is_float(t) && kind == 2) v = -0.0;
        if (!gp_dtype_is_float(t)) {
            if (kind == 3) { /* an extreme of the type */
                memset(e, (r >> 8) & 1 ? 0xFF : 0x00, sz);
                if (t == GP_I32 || t == GP_I64) e[sz - 1] ^= 0x80;
                continue;
            }
            const double tmin = t == GP_I32   ? -2147483648.0
                              : t == GP_I64 ? -9223372036854775808.0
                                            : 0.0;
            const double tmax = t == GP_I32 ? 2147483647.0 : t == GP_U32 ? 4294967295.0
                              : t == GP_I64 ? 9223372036854774784.0 : 18446744073709549568.0;
            v = v < tmin ? tmin : v > tmax ? tmax : floor(v);
        }
        set_elem(t, v, e);
    }
}

static const int64_t g_sizes[] = {0, 1, 2, 3, 7, 31, 33, 127, 129, 1021, 1024, 4099, 65537};

/* One case: plan, twin against brute force (whole and in pieces), the edge property. */
static void hist_case(gp_dtype t, int64_t n, int64_t bins, int have_range, double a, double b,
                      int conditioned)
{
    const size_t sz = gp_dtype_size(t);
    unsigned char *data = xmalloc((size_t)n * sz);
    double *edges = xmalloc((size_t)(bins + 1) * sizeof(double));
    double ed[64];
    const int64_t ned = bins + 1 < 64 ? bins + 1 : 64;
    for (int64_t i = 0; i < ned; i++)
        ed[i] = have_range ? a + (b - a) * (double)i / (double)(ned - 1) : 0.0;
    fill(t, data, n, have_range ? a : -50.0, have_range ? b : 1000.0, ed, have_range ? ned : 0);
    gp_hist_spec s;
    char why[300];
    if (plan_of(t, data, n, bins, have_range, a, b, &s, edges, why) != 0) {
        CHECK(!conditioned, "refused: %s", why);
        free(data);
        free(edges);
        return;
    }
    int64_t *c = xmalloc((size_t)(bins + 2) * 8), *w = xmalloc((size_t)(bins + 2) * 8),
            *p = xmalloc((size_t)(bins + 2) * 8);
    int64_t nan = 0, bad_edge = 0, bad_bin = 0;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *e = data + (size_t)i * sz;
        const int64_t k = brute_bin(&s, e);
        if (k < 0) { nan++; continue; }
        w[k]++;
        if (gp_hist_bin(&s, e) != k) bad_bin++;
        if (k < bins && conditioned) {
            const double x = gp_elem_to_double(t, e);
            const float *ef = (const float *)edges;
            const double *ed64 = (const double *)edges;
            const double lo = s.edge_type == GP_F32 ? ef[k] : ed64[k];
            const double hi = s.edge_type == GP_F32 ? ef[k + 1] : ed64[k + 1];
            if (!(x >= lo && (x < hi || (k == bins - 1 && x <= hi)))) bad_edge++;
        }
    }
    CHECK(gp_cpu_hist(&s, data, n, c) == GP_OK, "gp_cpu_hist: %s", gp_backend_cpu()->last_error());
    const int64_t cut = n / 3;
    gp_cpu_hist(&s, data, cut, p);
    gp_cpu_hist(&s, data + (size_t)cut * sz, n - cut, p);
    int64_t diff = 0, pdiff = 0, total = 0;
    for (int64_t k = 0; k < bins + 2; k++) {
        diff += c[k] != w[k];
        pdiff += c[k] != p[k];
        total += c[k];
    }
    CHECK(diff == 0, "%lld of %lld counts differ from the brute force", (long long)diff,
          (long long)bins + 2);
    CHECK(pdiff == 0, "pieces: %lld counts differ", (long long)pdiff);
    CHECK(total + nan == n, "counted %lld + %lld NaN of %lld", (long long)total, (long long)nan,
          (long long)n);
    CHECK(bad_bin == 0, "gp_hist_bin differs for %lld elements", (long long)bad_bin);
    CHECK(bad_edge == 0, "%lld elements outside their bin's edges", (long long)bad_edge);
    free(c);
    free(w);
    free(p);
    free(data);
    free(edges);
}

static void test_counts(void)
{
    const int64_t bins[] = {1, 2, 7, 10, 1000, 1024};
    for (int t = 0; t < GP_NDTYPES; t++)
        for (size_t k = 0; k < sizeof g_sizes / sizeof g_sizes[0]; k++)
            for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
                const int64_t n = g_sizes[k];
                CTX("%s n=%lld bins=%lld data range", gp_dtype_name((gp_dtype)t), (long long)n,
                    (long long)bins[b]);
                hist_case((gp_dtype)t, n, bins[b], 0, 0, 0, 0);
                CTX("%s n=%lld bins=%lld range [-3.7, 812.25]", gp_dtype_name((gp_dtype)t),
                    (long long)n, (long long)bins[b]);
                hist_case((gp_dtype)t, n, bins[b], 1, -3.7, 812.25, 1);
                CTX("%s n=%lld bins=%lld range [0.1, 0.3]", gp_dtype_name((gp_dtype)t),
                    (long long)n, (long long)bins[b]);
                if (gp_dtype_is_float((gp_dtype)t))
                    hist_case((gp_dtype)t, n, bins[b], 1, 0.1, 0.3, 0);
            }
    CTX("%s", "");
}

/* ---- finite range ---------------------------------------------------------------------- */

static void test_finite_range(void)
{
    for (int t = 0; t < GP_NDTYPES; t++)
        for (size_t k = 0; k < sizeof g_sizes / sizeof g_sizes[0]; k++) {
            const gp_dtype dt = (gp_dtype)t;
            const int64_t n = g_sizes[k];
            const size_t sz = gp_dtype_size(dt);
            unsigned char *data = xmalloc((size_t)n * sz);
            fill(dt, data, n, -1e6, 1e6, NULL, 0);
            gp_frange want = gp_frange_empty(), got = gp_frange_empty();
            for (int64_t i = 0; i < n; i++) {
                const unsigned char *e = data + (size_t)i * sz;
                const double x = gp_elem_to_double(dt, e);
                if (isnan(x)) continue;
                if (gp_dtype_is_float(dt) && isinf(x)) {
                    if (x < 0) want.neg_inf++;
                    else want.pos_inf++;
                    continue;
                }
                const uint64_t key = gp_key_of(dt, e);
                want.finite++;
                if (key < want.min_key) want.min_key = key;
                if (key > want.max_key) want.max_key = key;
            }
            CTX("finite_range %s n=%lld", gp_dtype_name(dt), (long long)n);
            CHECK(gp_cpu_finite_range(dt, data, n, &got) == GP_OK, "failed");
            CHECK(memcmp(&got, &want, sizeof got) == 0, "finite %lld/%lld -inf %lld/%lld +inf "
                  "%lld/%lld min %#llx/%#llx max %#llx/%#llx", (long long)got.finite,
                  (long long)want.finite, (long long)got.neg_inf, (long long)want.neg_inf,
                  (long long)got.pos_inf, (long long)want.pos_inf,
                  (unsigned long long)got.min_key, (unsigned long long)want.min_key,
                  (unsigned long long)got.max_key, (unsigned long long)want.max_key);
            free(data);
        }
    CTX("%s", "");
    gp_frange r = gp_frange_empty();
    CHECK(gp_cpu_finite_range(GP_NDTYPES, NULL, 0, &r) == GP_EINVAL, "a bad type accepted");
    CHECK(gp_cpu_finite_range(GP_F32, NULL, 3, &r) == GP_EINVAL, "NULL data accepted");
    int64_t c[4];
    CHECK(gp_cpu_hist(NULL, NULL, 0, c) == GP_EINVAL, "NULL spec accepted");
}

int main(void)
{
    g_rng = 0x1234567u;
    test_numpy_plans();
    test_refusals();
    test_counts();
    test_finite_range();
    return gp_check_done("test_cpu_hist");
}
