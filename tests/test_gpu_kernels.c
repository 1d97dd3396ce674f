/* test_gpu_kernels.c — the CUDA backend against the CPU twins (gp_cpu_*).
 *
 * Usage: test_gpu_kernels [--probe] [--quick]
 *   --probe  print one line; exit 0 when a CUDA device is visible, else 77.
 *   --quick  sizes up to 65537 only (no 1e6 / 2^21 / 2^24 cases).
 * Environment: GPUPRIM_TEST_SEED (decimal or 0x...) seeds the data (the seed is printed).
 * Exit: 0 all passed, 1 some check failed, 77 no CUDA device visible (CTest's skip code).
 *
 * For each of the six dtypes, the sizes below and the distributions uniform, equal,
 * sorted, reversed, fewunique and special (floats: NaNs of several payloads and signs,
 * +-inf, -0.0/+0.0, denormals, huge values; integers: the extremes):
 *   stats (with and without GP_STATS_ORDER, also from an element-offset pointer): every
 *     integer field exact; float sum/sumsq within TOL_SUM * sum|x| (resp. sum x^2): the twin
 *     and the GPU sum in different (each fixed) orders; the exact sum of integer data (isum,
 *     and sum = isum rounded) bitwise the twin's; two GPU calls bitwise identical;
 *   trap_x: within TOL_TRAPX * sum|term|, xfirst/xlast exact, other fields kept;
 *   to_keys, sort_keys, from_keys: bit-exact against the twin after each step; sort_values
 *   (the three in one call) bit-exact against them; and the 64
 *     elements past n of the device buffer (poisoned with 0xA5) never written;
 * integer data at the extremes whose sums pass 64 bits (up to 2^22 + 5 elements) against
 * the twin and an exact sum of 32-bit halves;
 * repeated sorts of one array (graph replay) and sorts of an array 1 element and 16 bytes
 * into its allocation (the tile kernels' scalar and vector paths; nothing around it
 * written), against the twin;
 * trap_fn for each integrand over a few [a, b], n and index sub-ranges (TOL_TRAPFN * sum
 * |w f|), merge_split_keys on sorted pairs of unequal sizes (0 included) for both halves,
 * bit-exact, nothing written past *nout; argument errors give GP_EINVAL. Nothing is timed.
 */
#include "gpuprim/kernels.h"
#include "cpu_twins.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL_SUM 1e-10    /* stats sum / sumsq, relative to sum|x| / sum x^2 */
#define TOL_TRAPX 1e-10  /* trap_x, relative to sum |term| */
#define TOL_TRAPFN 1e-12 /* trap_fn, relative to sum |w_i f(x_i)| */
#define GUARD 64         /* poisoned elements past n */
#define POISON 0xA5
#include "test_gpu_check.h" /* G, CHECK, GPU_OK, failf, tcase */
static double g_maxrel_sum, g_maxrel_sumsq, g_maxrel_trapx, g_maxrel_trapfn;

/* ---- random data ---------------------------------------------------------------------- */

static uint64_t g_rng;
static uint64_t rnd(void) { return gp_mix64(g_rng++); }
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; } /* [0, 1) */

enum { D_UNIFORM, D_EQUAL, D_SORTED, D_REVERSED, D_FEWUNIQUE, D_SPECIAL, D_COUNT };
static const char *const dist_names[D_COUNT] = {"uniform",   "equal",     "sorted",
                                                "reversed",  "fewunique", "special"};

static void put(gp_dtype t, void *buf, int64_t i, const void *elem)
{
    size_t es = gp_dtype_size(t);
    memcpy((unsigned char *)buf + (size_t)i * es, elem, es);
}

/* One uniformly random element of t into *elem: floats in [-1000, 1000), ints all bits. */
static void rnd_elem(gp_dtype t, void *elem)
{
    switch (t) {
    case GP_F32: { float v = (float)(rnd_unit() * 2000.0 - 1000.0); memcpy(elem, &v, 4); break; }
    case GP_F64: { double v = rnd_unit() * 2000.0 - 1000.0; memcpy(elem, &v, 8); break; }
    case GP_I32: case GP_U32: { uint32_t v = (uint32_t)rnd(); memcpy(elem, &v, 4); break; }
    default: { uint64_t v = rnd(); memcpy(elem, &v, 8); break; }
    }
}

static const uint32_t special_f32[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FFFFFFFu, 0xFFA00005u, /* NaNs */
    0x7F800000u, 0xFF800000u,                                                  /* +-inf */
    0x80000000u, 0x00000000u,                                                  /* -0, +0 */
    0x00000001u, 0x807FFFFFu, 0x00400000u, 0x80000001u,                        /* denormals */
    0x7F7FFFFFu, 0xFF7FFFFFu, 0x00800000u, 0x3F800000u, 0xBF800000u};
static const uint64_t special_f64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
    0xFFFFFFFFFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull, 0xFFF4000000000123ull,     /* NaNs */
    0x7FF0000000000000ull, 0xFFF0000000000000ull,                            /* +-inf */
    0x8000000000000000ull, 0x0000000000000000ull,                            /* -0, +0 */
    0x0000000000000001ull, 0x800FFFFFFFFFFFFFull, 0x0008000000000000ull,     /* denormals */
    0x7E37E43C8800759Cull, 0xFE37E43C8800759Cull,                            /* +-1e300 */
    0x0010000000000000ull, 0x3FF0000000000000ull, 0xBFF0000000000000ull};
static const uint32_t special_i32[] = {0x80000000u, 0x7FFFFFFFu, 0u, 0xFFFFFFFFu, 1u, 0x80000001u};
static const uint64_t special_i64[] = {0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0ull,
                                       0xFFFFFFFFFFFFFFFFull, 1ull, 0x8000000000000001ull};

static void special_elem(gp_dtype t, void *elem)
{
    switch (t) {
    case GP_F32: { uint32_t v = special_f32[rnd() % (sizeof special_f32 / 4)]; memcpy(elem, &v, 4); break; }
    case GP_F64: { uint64_t v = special_f64[rnd() % (sizeof special_f64 / 8)]; memcpy(elem, &v, 8); break; }
    case GP_I32: case GP_U32: { uint32_t v = special_i32[rnd() % (sizeof special_i32 / 4)]; memcpy(elem, &v, 4); break; }
    default: { uint64_t v = special_i64[rnd() % (sizeof special_i64 / 8)]; memcpy(elem, &v, 8); break; }
    }
}

/* Fills buf[0, n) with distribution `dist`. Returns 0, or -1 when the CPU twin failed. */
static int gen(gp_dtype t, void *buf, int64_t n, int dist)
{
    const size_t es = gp_dtype_size(t);
    unsigned char e[8], few[5][8];
    switch (dist) {
    case D_EQUAL:
        rnd_elem(t, e);
        for (int64_t i = 0; i < n; i++) put(t, buf, i, e);
        return 0;
    case D_FEWUNIQUE:
        for (int k = 0; k < 5; k++) rnd_elem(t, few[k]);
        for (int64_t i = 0; i < n; i++) put(t, buf, i, few[rnd() % 5]);
        return 0;
    case D_SPECIAL:
        for (int64_t i = 0; i < n; i++) {
            if (rnd() % 8 == 0) special_elem(t, e);
            else rnd_elem(t, e);
            put(t, buf, i, e);
        }
        return 0;
    default: break;
    }
    for (int64_t i = 0; i < n; i++) {
        rnd_elem(t, e);
        put(t, buf, i, e);
    }
    if (dist == D_SORTED || dist == D_REVERSED) {
        /* through keys (no NaN in uniform data, so from_keys restores every element) */
        if (gp_cpu_to_keys(t, buf, n) || gp_cpu_sort_keys((int)es, buf, n) ||
            gp_cpu_from_keys(t, buf, n))
            return -1;
        if (dist == D_REVERSED) {
            unsigned char *p = (unsigned char *)buf;
            for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
                memcpy(e, p + (size_t)i * es, es);
                memcpy(p + (size_t)i * es, p + (size_t)j * es, es);
                memcpy(p + (size_t)j * es, e, es);
            }
        }
    }
    return 0;
}

/* ---- helpers -------------------------------------------------------------------------- */

static double elem_double(gp_dtype t, const void *buf, int64_t i)
{
    const unsigned char *p = (const unsigned char *)buf + (size_t)i * gp_dtype_size(t);
    switch (t) {
    case GP_F32: { float v; memcpy(&v, p, 4); return (double)v; }
    case GP_F64: { double v; memcpy(&v, p, 8); return v; }
    case GP_I32: { int32_t v; memcpy(&v, p, 4); return (double)v; }
    case GP_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case GP_U32: { uint32_t v; memcpy(&v, p, 4); return (double)v; }
    default: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    }
}

/* |got - want| <= tol * scale, NaN-aware: non-finite values must match (NaN with NaN, inf
 * with the same inf). *rel gets |got - want| / scale when that is finite. */
static int close_enough(double got, double want, double scale, double tol, double *rel)
{
    if (!isfinite(got) || !isfinite(want)) {
        if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
        return got == want;
    }
    double d = fabs(got - want);
    if (scale > 0 && isfinite(scale)) {
        double r = d / scale;
        if (rel && r > *rel) *rel = r;
    }
    if (!isfinite(scale)) return 1; /* scale overflowed: only the classes can be compared */
    return d <= tol * scale;
}

/* Same double bits, or both NaN. */
static int same_double(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Downloads `bytes` + GUARD elements of es bytes from dev into host (pre-poisoned). */
static int download_guarded(const tcase *c, void *host, const void *dev, size_t bytes, size_t es)
{
    memset(host, POISON, bytes + GUARD * es);
    int rc = G->download(host, dev, bytes + GUARD * es);
    if (rc != GP_OK) failf(c, "download: %s", G->last_error());
    return rc;
}

/* 1 when the GUARD * es bytes at p are all POISON. */
static int guard_intact(const void *p, size_t es)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < GUARD * es; i++)
        if (b[i] != POISON) return 0;
    return 1;
}

/* Index of the first differing element of two arrays of n elements of es bytes, or -1. */
static int64_t first_diff(const void *a, const void *b, int64_t n, size_t es)
{
    if (n <= 0 || memcmp(a, b, (size_t)n * es) == 0) return -1;
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    for (int64_t i = 0; i < n; i++)
        if (memcmp(pa + (size_t)i * es, pb + (size_t)i * es, es) != 0) return i;
    return -1;
}

static uint64_t elem_bits(const void *buf, int64_t i, size_t es)
{
    uint64_t v = 0;
    if (es == 4) { uint32_t u; memcpy(&u, (const unsigned char *)buf + (size_t)i * 4, 4); v = u; }
    else memcpy(&v, (const unsigned char *)buf + (size_t)i * 8, 8);
    return v;
}

/* ---- stats ---------------------------------------------------------------------------- */

/* Compares a GPU record with the twin's; sabs = sum |x|, ssq = sum x^2 over non-NaN x. */
static void compare_stats(const tcase *c, const gp_stats *g, const gp_stats *w, double sabs,
                          double ssq)
{
    CHECK(c, g->count == w->count, "count %lld != %lld", (long long)g->count, (long long)w->count);
    CHECK(c, g->nan_count == w->nan_count, "nan_count %lld != %lld", (long long)g->nan_count,
          (long long)w->nan_count);
    CHECK(c, g->min_key == w->min_key, "min_key %016" PRIx64 " != %016" PRIx64, g->min_key, w->min_key);
    CHECK(c, g->max_key == w->max_key, "max_key %016" PRIx64 " != %016" PRIx64, g->max_key, w->max_key);
    CHECK(c, g->hash == w->hash, "hash %016" PRIx64 " != %016" PRIx64, g->hash, w->hash);
    CHECK(c, g->order_valid == w->order_valid, "order_valid %d != %d", g->order_valid, w->order_valid);
    CHECK(c, g->descents == w->descents, "descents %lld != %lld", (long long)g->descents,
          (long long)w->descents);
    CHECK(c, g->has_x == w->has_x, "has_x %d != %d", g->has_x, w->has_x);
    CHECK(c, g->trap == 0.0 && g->xfirst == 0.0 && g->xlast == 0.0,
          "trap/xfirst/xlast not 0 (%g %g %g)", g->trap, g->xfirst, g->xlast);
    if (w->count > 0) {
        CHECK(c, g->first_key == w->first_key, "first_key %016" PRIx64 " != %016" PRIx64,
              g->first_key, w->first_key);
        CHECK(c, g->last_key == w->last_key, "last_key %016" PRIx64 " != %016" PRIx64,
              g->last_key, w->last_key);
        CHECK(c, same_double(g->yfirst, w->yfirst), "yfirst %.17g != %.17g", g->yfirst, w->yfirst);
        CHECK(c, same_double(g->ylast, w->ylast), "ylast %.17g != %.17g", g->ylast, w->ylast);
    } else {
        CHECK(c, g->min_key == UINT64_MAX && g->max_key == 0 && g->hash == 0,
              "empty record min/max/hash wrong");
    }
    CHECK(c, g->has_isum == w->has_isum, "has_isum %d != %d", g->has_isum, w->has_isum);
    if (w->has_isum) { /* integer data: the exact sum, the same bits on both backends */
        CHECK(c, g->isum.hi == w->isum.hi && g->isum.lo == w->isum.lo,
              "isum %016" PRIx64 ":%016" PRIx64 " != twin %016" PRIx64 ":%016" PRIx64,
              (uint64_t)g->isum.hi, g->isum.lo, (uint64_t)w->isum.hi, w->isum.lo);
        CHECK(c, same_double(g->sum, w->sum), "sum %.17g != twin %.17g", g->sum, w->sum);
    }
    CHECK(c, close_enough(g->sum, w->sum, sabs, TOL_SUM, &g_maxrel_sum),
          "sum %.17g vs twin %.17g (sum|x| %.6g, tol %g)", g->sum, w->sum, sabs, TOL_SUM);
    CHECK(c, close_enough(g->sumsq, w->sumsq, ssq, TOL_SUM, &g_maxrel_sumsq),
          "sumsq %.17g vs twin %.17g (sum x^2 %.6g, tol %g)", g->sumsq, w->sumsq, ssq, TOL_SUM);
}

/* sum |x| and sum x^2 over the non-NaN elements of y[0, n). */
static void abs_sums(gp_dtype t, const void *y, int64_t n, double *sabs, double *ssq)
{
    double a = 0.0, q = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double v = elem_double(t, y, i);
        if (isnan(v)) continue;
        a += fabs(v);
        q += v * v;
    }
    *sabs = a;
    *ssq = q;
}

/* stats of dy[off, n) against the twin on y[off, n), with and without ORDER; determinism. */
static void test_stats(tcase c, const void *y, const void *dy, int64_t off)
{
    const size_t es = gp_dtype_size(c.t);
    const unsigned char *yh = (const unsigned char *)y + (size_t)off * es;
    const unsigned char *yd = (const unsigned char *)dy + (size_t)off * es;
    const int64_t n = c.n - off;
    double sabs, ssq;
    abs_sums(c.t, yh, n, &sabs, &ssq);
    for (int pass = 0; pass < 3; pass++) {
        const unsigned flags = pass == 0 ? GP_STATS_ORDER : pass == 1 ? 0u : GP_STATS_NOHASH;
        gp_stats w, g1, g2;
        memset(&w, 0, sizeof w);
        memset(&g1, 0x5A, sizeof g1);
        memset(&g2, 0x3C, sizeof g2);
        static const char *const names[2][3] = {{"stats", "stats-noorder", "stats-nohash"},
                                                {"stats-offset", "stats-offset-noorder",
                                                 "stats-offset-nohash"}};
        c.name = names[off ? 1 : 0][pass];
        if (gp_cpu_stats(c.t, yh, n, flags, &w) != GP_OK) {
            failf(&c, "twin gp_cpu_stats failed");
            return;
        }
        GPU_OK(&c, G->stats(c.t, yd, n, flags, &g1), return);
        GPU_OK(&c, G->stats(c.t, yd, n, flags, &g2), return);
        compare_stats(&c, &g1, &w, sabs, ssq);
        CHECK(&c, memcmp(&g1, &g2, sizeof g1) == 0, "two GPU calls differ (not deterministic)");
        if (flags & GP_STATS_NOHASH) CHECK(&c, g1.hash == 0, "hash computed despite GP_STATS_NOHASH");
    }
}

/* ---- trap_x --------------------------------------------------------------------------- */

static void test_trap_x(tcase c, const void *y, const void *dy, const double *x,
                        const double *dx)
{
    c.name = "trap_x";
    const int64_t n = c.n;
    double sabs = 0.0;
    for (int64_t i = 0; i + 1 < n; i++) {
        double term = (x[i + 1] - x[i]) * (elem_double(c.t, y, i) + elem_double(c.t, y, i + 1)) * 0.5;
        if (!isnan(term)) sabs += fabs(term);
    }
    gp_stats w, g1, g2;
    memset(&w, 0, sizeof w);
    w.count = 12345; /* fields trap_x must keep */
    w.hash = 0xDEADBEEFull;
    w.sum = 3.25;
    g1 = w;
    if (gp_cpu_trap_x(c.t, y, x, n, &w) != GP_OK) {
        failf(&c, "twin gp_cpu_trap_x failed");
        return;
    }
    g2 = g1;
    GPU_OK(&c, G->trap_x(c.t, dy, dx, n, &g1), return);
    GPU_OK(&c, G->trap_x(c.t, dy, dx, n, &g2), return);
    CHECK(&c, memcmp(&g1, &g2, sizeof g1) == 0, "two GPU calls differ (not deterministic)");
    CHECK(&c, g1.has_x == 1, "has_x = %d", g1.has_x);
    CHECK(&c, same_double(g1.xfirst, w.xfirst) && same_double(g1.xlast, w.xlast),
          "xfirst/xlast %.17g %.17g != %.17g %.17g", g1.xfirst, g1.xlast, w.xfirst, w.xlast);
    CHECK(&c, g1.count == 12345 && g1.hash == 0xDEADBEEFull && g1.sum == 3.25,
          "fields other than trap/xfirst/xlast/has_x changed");
    CHECK(&c, close_enough(g1.trap, w.trap, sabs, TOL_TRAPX, &g_maxrel_trapx),
          "trap %.17g vs twin %.17g (sum|term| %.6g, tol %g)", g1.trap, w.trap, sabs, TOL_TRAPX);
}

/* ---- keys and sort -------------------------------------------------------------------- */

/* dbuf holds y[0, n) and GUARD poisoned elements. to_keys, sort_keys, from_keys on the GPU
 * and on a host copy with the twins, bit-exact after each step. */
static void test_sort(tcase c, const void *y, void *dbuf, void *want, void *got)
{
    const size_t es = gp_dtype_size(c.t);
    const int64_t n = c.n;
    const size_t bytes = (size_t)n * es;
    memcpy(want, y, bytes);
    for (int step = 0; step < 3; step++) {
        int rc;
        if (step == 0) {
            c.name = "to_keys";
            GPU_OK(&c, G->to_keys(c.t, GP_ASCENDING, dbuf, n), return);
            rc = gp_cpu_to_keys(c.t, want, n);
        } else if (step == 1) {
            c.name = "sort_keys";
            GPU_OK(&c, G->sort((int)es, dbuf, NULL, n, 0), return);
            rc = gp_cpu_sort_keys((int)es, want, n);
        } else {
            c.name = "from_keys";
            GPU_OK(&c, G->from_keys(c.t, GP_ASCENDING, dbuf, n), return);
            rc = gp_cpu_from_keys(c.t, want, n);
        }
        if (rc != GP_OK) {
            failf(&c, "twin failed (%d)", rc);
            return;
        }
        if (download_guarded(&c, got, dbuf, bytes, es) != GP_OK) return;
        int64_t i = first_diff(got, want, n, es);
        CHECK(&c, i < 0, "first difference at %lld: gpu %016" PRIx64 " twin %016" PRIx64,
              (long long)i, i < 0 ? 0 : elem_bits(got, i, es), i < 0 ? 0 : elem_bits(want, i, es));
        CHECK(&c, guard_intact((unsigned char *)got + bytes, es),
              "device buffer written past n");
    }
    /* sort_values (the maps fused into the sort's first and last pass) on a fresh copy of
     * y and its poisoned guard: the bits of the three steps above, and of its CPU twin */
    c.name = "sort_values";
    GPU_OK(&c, G->upload(dbuf, y, bytes + GUARD * es), return);
    GPU_OK(&c, G->sort_values(c.t, dbuf, n), return);
    if (download_guarded(&c, got, dbuf, bytes, es) != GP_OK) return;
    int64_t i = first_diff(got, want, n, es);
    CHECK(&c, i < 0, "first difference at %lld: gpu %016" PRIx64 " three steps %016" PRIx64,
          (long long)i, i < 0 ? 0 : elem_bits(got, i, es), i < 0 ? 0 : elem_bits(want, i, es));
    CHECK(&c, guard_intact((unsigned char *)got + bytes, es), "device buffer written past n");
    memcpy(got, y, bytes);
    CHECK(&c, gp_cpu_sort_values(c.t, got, n) == GP_OK, "CPU twin failed");
    i = first_diff(got, want, n, es);
    CHECK(&c, i < 0, "CPU twin: first difference at %lld", (long long)i);
}

/* ---- one (dtype, n, dist) case -------------------------------------------------------- */

static void run_case(gp_dtype t, int64_t n, int dist)
{
    const size_t es = gp_dtype_size(t);
    const size_t bytes = (size_t)n * es;
    tcase c = {"setup", t, n, dist_names[dist]};
    void *y = malloc(bytes + GUARD * es);
    void *want = malloc(bytes + GUARD * es);
    void *got = malloc(bytes + GUARD * es);
    double *x = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    void *dbuf = G->alloc(bytes + GUARD * es);
    double *dx = (double *)G->alloc((size_t)n * sizeof(double));
    if (!y || !want || !got || !x || !dbuf || !dx) {
        failf(&c, "allocation failed (%s)", G->last_error());
        goto done;
    }
    if (gen(t, y, n, dist) != 0) {
        failf(&c, "data generator: twin failed");
        goto done;
    }
    memset((unsigned char *)y + bytes, POISON, GUARD * es);
    {
        double xv = rnd_unit() * 100.0 - 50.0;
        for (int64_t i = 0; i < n; i++) {
            x[i] = xv;
            xv += rnd_unit() + 1e-3;
        }
    }
    GPU_OK(&c, G->upload(dbuf, y, bytes + GUARD * es), goto done);
    GPU_OK(&c, G->upload(dx, x, (size_t)n * sizeof(double)), goto done);

    test_stats(c, y, dbuf, 0);
    if (n >= 2) test_stats(c, y, dbuf, 1); /* unaligned for the vector path */
    if (dist == D_SORTED || dist == D_EQUAL) {
        gp_stats w;
        c.name = "generator";
        CHECK(&c, gp_cpu_stats(t, y, n, GP_STATS_ORDER, &w) == GP_OK && w.descents == 0,
              "sorted data has descents");
    }
    test_trap_x(c, y, dbuf, x, dx);
    test_sort(c, y, dbuf, want, got);
done:
    G->free(dbuf);
    G->free(dx);
    free(y);
    free(want);
    free(got);
    free(x);
}

/* One value sort of n elements of dt, on the host (want, by the CPU twin; its return in
 * *twin_rc) and on the device (d): sort_keys for GP_U32 (the keys path), sort_values for
 * the others. 0, or -1 after a failed GPU call (reported in c). */
static int sort_on_both(tcase *c, gp_dtype dt, void *want, void *d, int64_t n, int *twin_rc)
{
    if (dt == GP_U32) {
        *twin_rc = gp_cpu_sort_keys(4, want, n);
        GPU_OK(c, G->sort(4, d, NULL, n, 0), return -1);
    } else {
        *twin_rc = gp_cpu_sort_values(dt, want, n);
        GPU_OK(c, G->sort_values(dt, d, n), return -1);
    }
    return 0;
}

/* One device array sorted again and again with new data (sort_values of f32 and u64,
 * sort_keys of u32 keys; n above and below one tile): from the second sort of an array on,
 * the CUDA backend captures the sort's launches as a graph and replays it. Every result
 * against the CPU twin. */
static void test_repeat_sort(void)
{
    static const int64_t ns[] = {5000, 100003, (1 << 21) + 1};
    static const gp_dtype ts[] = {GP_F32, GP_U64, GP_U32};
    for (size_t a = 0; a < sizeof ts / sizeof ts[0]; a++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            const gp_dtype dt = ts[a];
            const int64_t n = ns[k];
            const size_t es = gp_dtype_size(dt), bytes = (size_t)n * es;
            tcase c = {"repeat sort", dt, n, "uniform/special"};
            void *y = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
            void *d = G->alloc(bytes);
            if (!y || !want || !got || !d) {
                failf(&c, "allocation failed (%s)", G->last_error());
            } else {
                for (int rep = 0; rep < 4; rep++) {
                    if (gen(dt, y, n, rep & 1 ? D_SPECIAL : D_UNIFORM) != 0) {
                        failf(&c, "data generator: twin failed");
                        goto stop;
                    }
                    memcpy(want, y, bytes);
                    int rc;
                    GPU_OK(&c, G->upload(d, y, bytes), goto stop);
                    if (sort_on_both(&c, dt, want, d, n, &rc) != 0) goto stop;
                    GPU_OK(&c, G->download(got, d, bytes), goto stop);
                    CHECK(&c, rc == GP_OK, "CPU twin failed");
                    const int64_t i = first_diff(got, want, n, es);
                    CHECK(&c, i < 0, "sort %d of the same array: first difference at %lld", rep,
                          (long long)i);
                }
            }
        stop:
            G->free(d);
            free(y);
            free(want);
            free(got);
        }
}

/* Sorts of an array that starts inside an allocation: 1 element in (not 16-byte aligned:
 * the tile kernels' scalar loads and stores) and 16 bytes in (aligned: their vector path
 * for the full tiles, the scalar one for the partial last tile), n = 3 * 2^14 + 5 (full
 * tiles and a partial one at every tile size the sort uses here: with the default budget
 * it sorts half tiles, then the top tile level, then finishes); sort_values of f32 and u64,
 * sort_keys of u32 keys. The result against the CPU twin; the elements before and after
 * the array are unchanged. */
static void test_offset_sort(void)
{
    static const gp_dtype ts[] = {GP_F32, GP_U64, GP_U32};
    const int64_t n = 3 * 16384 + 5, guard = 16;
    for (size_t a = 0; a < sizeof ts / sizeof ts[0]; a++)
        for (int aligned = 0; aligned < 2; aligned++) {
            const gp_dtype dt = ts[a];
            const size_t es = gp_dtype_size(dt);
            const int64_t off = aligned ? (int64_t)(16 / es) : 1, total = off + n + guard;
            const size_t bytes = (size_t)total * es;
            tcase c = {aligned ? "offset sort (16 bytes in)" : "offset sort (1 element in)",
                       dt, n, "uniform"};
            unsigned char *y = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
            unsigned char *d = G->alloc(bytes);
            if (!y || !want || !got || !d) {
                failf(&c, "allocation failed (%s)", G->last_error());
                goto stop;
            }
            if (gen(dt, y, total, D_UNIFORM) != 0) {
                failf(&c, "data generator: twin failed");
                goto stop;
            }
            memcpy(want, y, bytes);
            int rc;
            GPU_OK(&c, G->upload(d, y, bytes), goto stop);
            if (sort_on_both(&c, dt, want + off * es, d + off * es, n, &rc) != 0) goto stop;
            GPU_OK(&c, G->download(got, d, bytes), goto stop);
            CHECK(&c, rc == GP_OK, "CPU twin failed");
            const int64_t i = first_diff(got, want, total, es);
            CHECK(&c, i < 0, "offset %lld: first difference at element %lld of the allocation",
                  (long long)off, (long long)i);
        stop:
            G->free(d);
            free(y);
            free(want);
            free(got);
        }
}

/* Every element with the largest key of its type (UINT32_MAX, INT32_MAX, +inf, UINT64_MAX,
 * INT64_MAX) or every element a NaN, and those with one smaller element last: the 32-bit
 * min/max accumulators of the 4-byte types use the all-ones key as their identity, so these
 * are the inputs where a wrong identity would show. */
static void test_top_keys(void)
{
    static const int64_t ns[] = {1, 2, 33, 4097, 65537};
    for (int t = 0; t < GP_NDTYPES; t++)
        for (int kind = 0; kind < 4; kind++) {
            const gp_dtype dt = (gp_dtype)t;
            const int isf = dt == GP_F32 || dt == GP_F64;
            if (kind >= 2 && !isf) continue;
            unsigned char top[8], low[8];
            uint64_t tb, lb = 5; /* low: a small positive integer / denormal bit pattern */
            switch (dt) {
            case GP_F32: tb = kind >= 2 ? 0x7FFFFFFFu : 0x7F800000u; break;  /* NaN / +inf */
            case GP_F64: tb = kind >= 2 ? 0x7FFFFFFFFFFFFFFFull : 0x7FF0000000000000ull; break;
            case GP_I32: tb = 0x7FFFFFFFu; break;
            case GP_U32: tb = 0xFFFFFFFFu; break;
            case GP_I64: tb = 0x7FFFFFFFFFFFFFFFull; break;
            default: tb = 0xFFFFFFFFFFFFFFFFull; break;
            }
            const size_t es = gp_dtype_size(dt);
            if (es == 4) {
                uint32_t a = (uint32_t)tb, b = (uint32_t)lb;
                memcpy(top, &a, 4);
                memcpy(low, &b, 4);
            } else {
                memcpy(top, &tb, 8);
                memcpy(low, &lb, 8);
            }
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                const int64_t n = ns[k];
                tcase c = {"setup", dt, n, (kind & 1) ? "top+one-low" : kind >= 2 ? "all-nan" : "all-top"};
                unsigned char *y = (unsigned char *)malloc((size_t)n * es);
                void *dy = G->alloc((size_t)n * es);
                if (!y || !dy) {
                    failf(&c, "allocation failed (%s)", G->last_error());
                } else {
                    for (int64_t i = 0; i < n; i++) memcpy(y + (size_t)i * es, top, es);
                    if (kind & 1) memcpy(y + (size_t)(n - 1) * es, low, es);
                    GPU_OK(&c, G->upload(dy, y, (size_t)n * es), goto next);
                    test_stats(c, y, dy, 0);
                }
            next:
                G->free(dy);
                free(y);
            }
        }
}

/* Integer data whose sums pass 64 bits, on the GPU against the twin (test_stats: isum and
 * sum bitwise, every flag, an unaligned start) and against an exact sum computed here in
 * 32-bit halves: every element at the minimum, maximum and minimum alternating, the maximum
 * with small values, at sizes around the vector and block boundaries and one of 2^22 + 5. */
static void test_int_sums(int quick)
{
    static const gp_dtype ints[] = {GP_I32, GP_I64, GP_U32, GP_U64};
    static const int64_t ns[] = {1, 3, 255, 256, 257, 4097, 65537, 1000003, (1 << 22) + 5};
    static const char *const pats[] = {"all-min", "max/min", "max+small", "all-max"};
    for (size_t ti = 0; ti < sizeof ints / sizeof ints[0]; ti++)
        for (int pat = 0; pat < 4; pat++)
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                const gp_dtype dt = ints[ti];
                const int64_t n = ns[k];
                if (quick && n > 65537) continue;
                const size_t es = gp_dtype_size(dt);
                const int sgn = dt == GP_I32 || dt == GP_I64;
                const uint64_t mx = sgn ? (es == 4 ? 0x7FFFFFFFull : 0x7FFFFFFFFFFFFFFFull)
                                        : (es == 4 ? 0xFFFFFFFFull : ~0ull);
                const uint64_t mn = sgn ? (es == 4 ? 0x80000000ull : 0x8000000000000000ull) : 0;
                tcase c = {"int-sums", dt, n, pats[pat]};
                unsigned char *y = (unsigned char *)malloc((size_t)n * es);
                void *dy = G->alloc((size_t)n * es);
                /* the exact sum: the low and high 32-bit halves summed apart (hi signed) */
                uint64_t lo_sum = 0;
                int64_t hi_sum = 0;
                if (!y || !dy) {
                    failf(&c, "allocation failed (%s)", G->last_error());
                    goto next;
                }
                for (int64_t i = 0; i < n; i++) {
                    uint64_t b = pat == 0 || (pat == 1 && (i & 1)) ? mn : mx;
                    if (pat == 2 && rnd() % 3 == 0) b = rnd() % 7;
                    if (es == 4) {
                        const uint32_t v = (uint32_t)b;
                        memcpy(y + (size_t)i * 4, &v, 4);
                        lo_sum += v;
                        if (sgn && (v >> 31)) hi_sum -= 1; /* i32: -2^32 + v */
                    } else {
                        memcpy(y + (size_t)i * 8, &b, 8);
                        lo_sum += b & 0xFFFFFFFFu;
                        hi_sum += sgn ? (int64_t)(int32_t)(uint32_t)(b >> 32) : (int64_t)(b >> 32);
                    }
                }
                GPU_OK(&c, G->upload(dy, y, (size_t)n * es), goto next);
                test_stats(c, y, dy, 0);
                if (n >= 2) test_stats(c, y, dy, 1);
                {
                    gp_stats g;
                    GPU_OK(&c, G->stats(dt, dy, n, GP_STATS_NOHASH, &g), goto next);
                    /* value = hi_sum * 2^32 + lo_sum (4-byte: hi_sum counts the 2^32 borrows) */
                    gp_i128 want = gp_i128_from_u64(lo_sum), h;
                    h.lo = (uint64_t)hi_sum << 32;
                    h.hi = hi_sum >> 32; /* arithmetic shift of a negative: -1 (gcc, clang) */
                    want = gp_i128_add(want, h);
                    CHECK(&c, g.has_isum == 1 && g.isum.hi == want.hi && g.isum.lo == want.lo,
                          "isum %016" PRIx64 ":%016" PRIx64 ", want %016" PRIx64 ":%016" PRIx64,
                          (uint64_t)g.isum.hi, g.isum.lo, (uint64_t)want.hi, want.lo);
                }
            next:
                G->free(dy);
                free(y);
            }
}

/* ---- trap_fn -------------------------------------------------------------------------- */

static void test_trap_fn(void)
{
    static const double ab[][2] = {{0.0, 1.0}, {-2.0, 3.0}, {-10.0, 10.0}, {0.0, 3.141592653589793}};
    static const int64_t ns[] = {0, 1, 2, 7, 1000, 1000003};
    for (int f = 0; f < GP_NFUNCS; f++)
        for (size_t k = 0; k < sizeof ab / sizeof ab[0]; k++)
            for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
                const int64_t n = ns[q];
                const double a = ab[k][0], h = (ab[k][1] - a) / (double)(n > 0 ? n : 1);
                const int64_t ranges[][2] = {{0, n + 1}, {0, n / 3}, {n / 3, 2 * n / 3},
                                             {2 * n / 3, n + 1}, {n, n + 1}, {0, 1},
                                             {0, 0}, {n + 1, n + 1}};
                for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
                    const int64_t i0 = ranges[r][0], i1 = ranges[r][1];
                    char dist[96];
                    snprintf(dist, sizeof dist, "%s[%g,%g] i=[%lld,%lld)", gp_func_name((gp_func)f),
                             a, ab[k][1], (long long)i0, (long long)i1);
                    tcase c = {"trap_fn", GP_NDTYPES, n, dist};
                    double w = 0.0, g1 = -1.0, g2 = -2.0, sabs = 0.0;
                    for (int64_t i = i0; i < i1; i++) {
                        const double wi = (i == 0 || i == n) ? 0.5 : 1.0;
                        sabs += fabs(wi * gp_func_eval((gp_func)f, a + (double)i * h));
                    }
                    if (gp_cpu_trap_fn((gp_func)f, a, h, n, i0, i1, &w) != GP_OK) {
                        failf(&c, "twin failed");
                        continue;
                    }
                    GPU_OK(&c, G->trap_fn((gp_func)f, a, h, n, i0, i1, &g1), continue);
                    GPU_OK(&c, G->trap_fn((gp_func)f, a, h, n, i0, i1, &g2), continue);
                    CHECK(&c, memcmp(&g1, &g2, sizeof g1) == 0, "two GPU calls differ");
                    CHECK(&c, close_enough(g1, w, sabs, TOL_TRAPFN, &g_maxrel_trapfn),
                          "wsum %.17g vs twin %.17g (sum|wf| %.6g, tol %g)", g1, w, sabs,
                          TOL_TRAPFN);
                }
            }
    /* argument errors */
    tcase c = {"trap_fn-args", GP_NDTYPES, 10, "-"};
    double w;
    CHECK(&c, G->trap_fn(GP_FN_X2, 0, 1, 10, -1, 5, &w) == GP_EINVAL, "i0 < 0 accepted");
    CHECK(&c, G->trap_fn(GP_FN_X2, 0, 1, 10, 0, 12, &w) == GP_EINVAL, "i1 > n+1 accepted");
    CHECK(&c, G->trap_fn(GP_FN_X2, 0, 1, 10, 6, 5, &w) == GP_EINVAL, "i0 > i1 accepted");
    CHECK(&c, G->trap_fn((gp_func)GP_NFUNCS, 0, 1, 10, 0, 5, &w) == GP_EINVAL, "bad f accepted");
    CHECK(&c, G->trap_fn(GP_FN_X2, 0, 1, -1, 0, 0, &w) == GP_EINVAL, "n < 0 accepted");
    CHECK(&c, G->trap_fn(GP_FN_X2, 0, 1, 10, 0, 11, &w) == GP_OK, "i1 == n+1 rejected");
    CHECK(&c, G->last_error()[0] != '\0', "last_error empty after a failure");
}

/* ---- merge_split_keys ----------------------------------------------------------------- */

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

static void sorted_keys(void *buf, int64_t n, int width, int fewunique)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = fewunique ? rnd() % 7 : rnd();
        if (width == 4) ((uint32_t *)buf)[i] = (uint32_t)(fewunique ? v : v >> 32);
        else ((uint64_t *)buf)[i] = v;
    }
    qsort(buf, (size_t)n, (size_t)width, width == 4 ? cmp_u32 : cmp_u64);
}

static void merge_case(int width, int64_t nlo, int64_t nhi, int64_t m, int fewunique)
{
    const size_t w = (size_t)width;
    char dist[96];
    snprintf(dist, sizeof dist, "nlo=%lld nhi=%lld m=%lld %s", (long long)nlo, (long long)nhi,
             (long long)m, fewunique ? "fewunique" : "uniform");
    tcase c = {"merge", width == 4 ? GP_U32 : GP_U64, nlo + nhi, dist};
    void *lo = malloc((size_t)nlo * w + w), *hi = malloc((size_t)nhi * w + w);
    void *want = malloc((size_t)m * w + GUARD * w), *got = malloc((size_t)m * w + GUARD * w);
    void *dlo = G->alloc((size_t)nlo * w), *dhi = G->alloc((size_t)nhi * w);
    void *dout = G->alloc((size_t)m * w + GUARD * w);
    if (!lo || !hi || !want || !got || !dlo || !dhi || !dout) {
        failf(&c, "allocation failed (%s)", G->last_error());
        goto done;
    }
    sorted_keys(lo, nlo, width, fewunique);
    sorted_keys(hi, nhi, width, fewunique);
    GPU_OK(&c, G->upload(dlo, lo, (size_t)nlo * w), goto done);
    GPU_OK(&c, G->upload(dhi, hi, (size_t)nhi * w), goto done);
    for (int up = 0; up < 2; up++) {
        c.name = up ? "merge-upper" : "merge-lower";
        int64_t nw = -1, ng = -2;
        memset(got, POISON, (size_t)m * w + GUARD * w);
        GPU_OK(&c, G->upload(dout, got, (size_t)m * w + GUARD * w), goto done);
        if (gp_cpu_merge_split_keys(width, lo, nlo, hi, nhi, m, up, want, &nw) != GP_OK) {
            failf(&c, "twin failed");
            goto done;
        }
        GPU_OK(&c, G->merge_split(width, dlo, NULL, nlo, dhi, NULL, nhi, m, up, 0, dout, NULL, &ng), goto done);
        CHECK(&c, ng == nw, "nout %lld != twin %lld", (long long)ng, (long long)nw);
        if (ng != nw || nw < 0) continue;
        if (download_guarded(&c, got, dout, (size_t)m * w, w) != GP_OK) goto done;
        int64_t i = first_diff(got, want, nw, w);
        CHECK(&c, i < 0, "first difference at %lld: gpu %016" PRIx64 " twin %016" PRIx64,
              (long long)i, i < 0 ? 0 : elem_bits(got, i, w), i < 0 ? 0 : elem_bits(want, i, w));
        int intact = 1;
        for (size_t b = (size_t)nw * w; b < (size_t)m * w + GUARD * w; b++)
            if (((unsigned char *)got)[b] != POISON) intact = 0;
        CHECK(&c, intact, "out written past nout");
    }
done:
    G->free(dlo);
    G->free(dhi);
    G->free(dout);
    free(lo);
    free(hi);
    free(want);
    free(got);
}

static void test_merge(int quick)
{
    static const int64_t fixed[][3] = {
        {0, 0, 0},       {0, 0, 5},          {0, 5, 5},           {5, 0, 5},
        {3, 5, 5},       {5, 5, 5},          {1, 1, 1},           {1000, 700, 1000},
        {2049, 2048, 3000}, {2048, 2048, 2048}, {4097, 1, 4097}, {1, 4097, 4097},
        {0, 30000, 30000}, {12345, 6789, 20000}, {100000, 99999, 100000},
        {1 << 20, (1 << 20) - 3, 1 << 20}, {(1 << 21) + 1, 1 << 20, (1 << 21) + 1}};
    for (int width = 4; width <= 8; width += 4)
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
            if (quick && fixed[k][2] > 65537) continue;
            merge_case(width, fixed[k][0], fixed[k][1], fixed[k][2], 0);
            merge_case(width, fixed[k][0], fixed[k][1], fixed[k][2], 1);
        }
    for (int r = 0; r < 60; r++) {
        const int64_t m = (int64_t)(rnd() % 10000);
        const int64_t nlo = m ? (int64_t)(rnd() % (uint64_t)(m + 1)) : 0;
        const int64_t nhi = m ? (int64_t)(rnd() % (uint64_t)(m + 1)) : 0;
        merge_case(r & 1 ? 8 : 4, nlo, nhi, m, (r >> 1) & 1);
    }
}

/* ---- argument errors and the table ---------------------------------------------------- */

static void test_api(void)
{
    tcase c = {"api", GP_NDTYPES, 0, "-"};
    int64_t nout = 0;
    gp_stats s;
    CHECK(&c, strcmp(G->name, "cuda") == 0, "name is \"%s\"", G->name);
    void *p0 = G->alloc(0), *p1 = G->alloc(0);
    CHECK(&c, p0 && p1 && p0 != p1, "alloc(0) not valid and unique");
    void *h = G->host_alloc(4096);
    CHECK(&c, h != NULL, "host_alloc failed: %s", G->last_error());
    void *d = G->alloc(4096);
    if (h && d) {
        memset(h, 7, 4096);
        CHECK(&c, G->upload(d, h, 4096) == GP_OK, "upload: %s", G->last_error());
        memset(h, 0, 4096);
        CHECK(&c, G->download(h, d, 4096) == GP_OK, "download: %s", G->last_error());
        CHECK(&c, ((unsigned char *)h)[4095] == 7, "upload/download round trip");
        CHECK(&c, G->upload(d, h, 0) == GP_OK && G->download(h, d, 0) == GP_OK, "0-byte copies");
        /* upload_async in three uneven pieces, then upload_wait: every byte arrives */
        unsigned char *hb = (unsigned char *)h;
        for (int i = 0; i < 4096; i++) hb[i] = (unsigned char)(i * 37 + 11);
        CHECK(&c, G->upload_async(d, hb, 1000) == GP_OK &&
                      G->upload_async((char *)d + 1000, hb + 1000, 3001) == GP_OK &&
                      G->upload_async((char *)d + 4001, hb + 4001, 95) == GP_OK &&
                      G->upload_async(d, hb, 0) == GP_OK,
              "upload_async: %s", G->last_error());
        CHECK(&c, G->upload_wait() == GP_OK, "upload_wait: %s", G->last_error());
        unsigned char *back = (unsigned char *)malloc(4096);
        if (back) {
            memset(back, 0, 4096);
            CHECK(&c, G->download(back, d, 4096) == GP_OK && memcmp(back, hb, 4096) == 0,
                  "upload_async pieces differ after upload_wait");
            free(back);
        }
        CHECK(&c, G->upload_async(NULL, hb, 8) == GP_EINVAL, "upload_async(NULL dev) accepted");
        /* download_async in uneven pieces into pinned memory, then download_wait */
        unsigned char *hd = (unsigned char *)G->host_alloc(4096);
        CHECK(&c, hd != NULL, "host_alloc: %s", G->last_error());
        if (hd) {
            memset(hd, 0, 4096);
            CHECK(&c, G->download_async(hd, d, 1) == GP_OK &&
                          G->download_async(hd + 1, (char *)d + 1, 2999) == GP_OK &&
                          G->download_async(hd + 3000, (char *)d + 3000, 1096) == GP_OK &&
                          G->download_async(hd, d, 0) == GP_OK,
                  "download_async: %s", G->last_error());
            CHECK(&c, G->download_wait() == GP_OK, "download_wait: %s", G->last_error());
            CHECK(&c, memcmp(hd, hb, 4096) == 0, "download_async pieces differ after download_wait");
            /* after a kernel, fenced by synchronize (download_async does not order itself
             * after the kernels: the caller does, as the job's write does): the copy sees the
             * kernel's result (to_keys of float32 flips the sign bit of positive values) */
            float fv[1024];
            uint32_t want[1024];
            for (int i = 0; i < 1024; i++) fv[i] = (float)i + 0.5f;
            for (int i = 0; i < 1024; i++) want[i] = (uint32_t)gp_key_of(GP_F32, &fv[i]);
            CHECK(&c, G->upload(d, fv, sizeof fv) == GP_OK && G->to_keys(GP_F32, GP_ASCENDING, d, 1024) == GP_OK &&
                          G->synchronize() == GP_OK &&
                          G->download_async(hd, d, sizeof fv) == GP_OK && G->download_wait() == GP_OK,
                  "to_keys + download_async: %s", G->last_error());
            CHECK(&c, memcmp(hd, want, sizeof want) == 0, "download_async did not see the kernel's keys");
            CHECK(&c, G->download_async(NULL, d, 8) == GP_EINVAL, "download_async(NULL host) accepted");
            G->host_free(hd);
        }
    }
    CHECK(&c, G->stats((gp_dtype)GP_NDTYPES, d, 1, 0, &s) == GP_EINVAL, "bad dtype accepted");
    CHECK(&c, G->stats(GP_F32, d, -1, 0, &s) == GP_EINVAL, "n < 0 accepted");
    CHECK(&c, G->stats(GP_F32, d, 1, 4u, &s) == GP_EINVAL, "unknown flags accepted");
    CHECK(&c, G->stats(GP_F32, NULL, 1, 0, &s) == GP_EINVAL, "NULL y accepted");
    CHECK(&c, G->trap_x(GP_F32, d, NULL, 1, &s) == GP_EINVAL, "NULL x accepted");
    CHECK(&c, G->to_keys((gp_dtype)GP_NDTYPES, GP_ASCENDING, d, 1) == GP_EINVAL, "to_keys bad dtype accepted");
    CHECK(&c, G->from_keys(GP_F32, GP_ASCENDING, d, -1) == GP_EINVAL, "from_keys n < 0 accepted");
    CHECK(&c, G->to_keys(GP_F32, (gp_order)2, d, 1) == GP_EINVAL, "to_keys order 2 accepted");
    CHECK(&c, G->from_keys(GP_U64, (gp_order)-1, d, 1) == GP_EINVAL, "from_keys order -1 accepted");
    CHECK(&c, G->sort(5, d, NULL, 1, 0) == GP_EINVAL, "sort width 5 accepted");
    CHECK(&c, G->sort(4, d, NULL, -1, 0) == GP_EINVAL, "sort n < 0 accepted");
    CHECK(&c, G->sort(4, NULL, NULL, 2, 0) == GP_EINVAL, "sort NULL keys accepted");
    CHECK(&c, G->merge_split(3, d, NULL, 1, d, NULL, 1, 1, 0, 0, p0, NULL, &nout) == GP_EINVAL, "merge width 3 accepted");
    CHECK(&c, G->merge_split(4, d, NULL, 3, p1, NULL, 1, 2, 0, 0, p0, NULL, &nout) == GP_EINVAL, "merge nlo > m accepted");
    CHECK(&c, G->merge_split(4, d, NULL, 1, p1, NULL, 1, 2, 0, 0, p0, NULL, NULL) == GP_EINVAL, "merge NULL nout accepted");
    CHECK(&c, G->merge_split(4, d, NULL, 1, p1, NULL, 1, 2, 0, 0, d, NULL, &nout) == GP_EINVAL, "merge out == lo accepted");
    CHECK(&c, G->last_error()[0] != '\0', "last_error empty after a failure");
    /* empty inputs */
    CHECK(&c, G->stats(GP_F64, d, 0, GP_STATS_ORDER, &s) == GP_OK && s.count == 0 &&
              s.min_key == UINT64_MAX && s.has_x == 0 && s.order_valid == 1 && s.has_isum == 0,
          "stats of n = 0 not the empty record");
    CHECK(&c, G->stats(GP_I64, d, 0, 0, &s) == GP_OK && s.count == 0 && s.has_isum == 1 &&
              s.isum.lo == 0 && s.isum.hi == 0 && s.sum == 0.0,
          "integer stats of n = 0 not the empty record with has_isum");
    CHECK(&c, G->sort(8, d, NULL, 0, 0) == GP_OK && G->sort(8, d, NULL, 1, 1) == GP_OK, "sort n <= 1");
    CHECK(&c, G->sort_values((gp_dtype)99, d, 2) == GP_EINVAL, "sort_values bad dtype accepted");
    CHECK(&c, G->sort_values(GP_F32, d, -1) == GP_EINVAL, "sort_values n < 0 accepted");
    CHECK(&c, G->sort_values(GP_F32, NULL, 2) == GP_EINVAL, "sort_values NULL buf accepted");
    CHECK(&c, G->sort_values(GP_F64, d, 0) == GP_OK, "sort_values n = 0");
    CHECK(&c, G->merge_split(8, NULL, NULL, 0, NULL, NULL, 0, 0, 1, 0, NULL, NULL, &nout) == GP_OK && nout == 0,
          "merge of nothing");
    char why[256];
    CHECK(&c, gp_backend_cuda(gp_cuda_device_count(), why, sizeof why) == NULL && why[0] != '\0',
          "out-of-range device accepted");
    CHECK(&c, gp_backend_cuda(-1, why, sizeof why) == NULL, "device -1 accepted");
    /* gp_backend_cuda above failed before touching the current device: G still works */
    G->free(p0);
    G->free(p1);
    G->free(d);
    G->host_free(h);
}

/* ---- main ----------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int probe = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--probe") == 0) probe = 1;
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else {
            fprintf(stderr, "usage: %s [--probe] [--quick]\n", argv[0]);
            return 2;
        }
    }
    char why[256] = "";
    const int ndev = gp_cuda_device_count();
    if (ndev == 0) {
        if (gp_backend_cuda(0, why, sizeof why) == NULL && why[0] != '\0')
            printf("SKIP: %s\n", why);
        else
            printf("SKIP: no CUDA device visible (gp_cuda_device_count() == 0)\n");
        return 77;
    }
    if (probe) {
        printf("probe: %d CUDA device(s) visible\n", ndev);
        return 0;
    }
    G = gp_backend_cuda(0, why, sizeof why);
    if (!G) {
        printf("FAIL case=init: gp_backend_cuda(0): %s\n0 passed, 1 failed\n", why);
        return 1;
    }
    char name[128] = "?", busid[64] = "?";
    if (gp_cuda_device_info(0, name, sizeof name, busid, sizeof busid) != 0)
        printf("note: gp_cuda_device_info failed: %s\n", G->last_error());

    uint64_t seed = 20261130u;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_gpu_kernels: device 0 of %d: %s (%s); seed %" PRIu64 " (GPUPRIM_TEST_SEED)%s\n",
           ndev, name, busid, seed, quick ? "; --quick" : "");
    fflush(stdout);

    test_api();

    static const int64_t sizes[] = {0,     1,     2,     7,     31,      32,      33,
                                    1023,  1024,  1025,  4095,  4096,    4097,    8191,
                                    65535, 65537, 1000003, 1 << 21, (1 << 21) + 1};
    for (int t = 0; t < GP_NDTYPES; t++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            if (quick && sizes[k] > 65537) continue;
            for (int dist = 0; dist < D_COUNT; dist++) run_case((gp_dtype)t, sizes[k], dist);
        }
    if (!quick) {
        run_case(GP_F32, (1 << 24) + 3, D_SPECIAL);
        run_case(GP_U64, (1 << 24) + 3, D_UNIFORM);
    }
    test_top_keys();
    test_int_sums(quick);
    test_repeat_sort();
    test_offset_sort();
    test_trap_fn();
    test_merge(quick);

    printf("max relative differences GPU vs twin: stats.sum %.3g, stats.sumsq %.3g, trap_x %.3g, "
           "trap_fn %.3g\n",
           g_maxrel_sum, g_maxrel_sumsq, g_maxrel_trapx, g_maxrel_trapfn);
    printf("%lld passed, %lld failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
