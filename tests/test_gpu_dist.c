/* test_gpu_dist.c — the CUDA backend's histogram and selection entries (hist, finite_range,
 * radix_hist, runs; gpuprim/dist.h) against the CPU twins, bit for bit (their results are
 * integers and keys).
 *
 * Usage: test_gpu_dist [--probe] [--quick]
 *   --probe  print one line; exit 0 when a CUDA device is visible, else 77.
 *   --quick  sizes up to 65537 only.
 * Environment: GPUPRIM_TEST_SEED (decimal or 0x...) seeds the data (the seed is printed).
 * Exit: 0 all passed, 1 some check failed, 77 no CUDA device visible.
 *
 * For each of the six types, sizes 0 .. 2^22 + 1 (odd ones, 2^k +- 1) and the data uniform,
 * special (NaN, +-inf, -0.0, the integer extremes), few distinct, all equal and sorted, from
 * an aligned pointer and from one element past it (the kernels' vector and scalar paths):
 *   hist with the range from the data and given ranges, 1, 7, 1024 and 3000 bins (shared
 *     memory) and 100003 bins (global memory): every count the twin's;
 *   hist of data on and beside the edges of six given ranges (near zero, far from zero for
 *     their width, narrow), 7, 1024 and 3000 bins: every count the twin's (the kernel's
 *     accept window must turn each such value over to numpy's full rule);
 *   finite_range: the twin's record;
 *   radix_hist: a whole select of 3 ranks and of GP_SELECT_MAX ranks (more prefixes than
 *     one launch's shared memory holds): each pass's counts the twin's, the keys the twin's;
 *   runs: the twin's record;
 * and bad arguments give GP_EINVAL. Nothing is timed.
 */
#include "cpu_twins.h"
#include "gpuprim/dist.h"
#include "gpuprim/kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_gpu_check.h" /* G, CHECK, GPU_OK, failf, tcase */

static uint64_t g_rng;
static uint64_t rnd(void) { return gp_mix64(g_rng++); }
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

enum { D_UNIFORM, D_SPECIAL, D_FEW, D_EQUAL, D_SORTED, D_COUNT };
static const char *const dist_names[D_COUNT] = {"uniform", "special", "few", "equal", "sorted"};

/* Data of type t and distribution dist into h[0, n). */
static void fill(gp_dtype t, void *h, int64_t n, int dist)
{
    const size_t sz = gp_dtype_size(t);
    const uint64_t one = rnd();
    for (int64_t i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *)h + (size_t)i * sz;
        uint64_t r = dist == D_EQUAL ? one : dist == D_FEW ? gp_mix64(rnd() % 7) : rnd();
        memcpy(e, &r, sz);
        if (t == GP_F32 && dist != D_EQUAL) {
            float f = (float)(rnd_unit() * 2000.0 - 1000.0);
            if (dist == D_FEW) f = (float)(r % 7) - 3.0f;
            if (dist == D_SPECIAL && r % 5 == 0) {
                const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
                f = sp[(r >> 8) % 5];
            }
            memcpy(e, &f, 4);
        } else if (t == GP_F64 && dist != D_EQUAL) {
            double f = rnd_unit() * 2000.0 - 1000.0;
            if (dist == D_FEW) f = (double)(r % 7) - 3.0;
            if (dist == D_SPECIAL && r % 5 == 0) {
                const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
                f = sp[(r >> 8) % 5];
            }
            memcpy(e, &f, 8);
        } else if (dist == D_SPECIAL && r % 5 == 0) {
            memset(e, (r >> 8) & 1 ? 0xFF : 0x00, sz);
            if (t == GP_I32 || t == GP_I64) e[sz - 1] ^= 0x80;
        }
    }
    if (dist == D_SORTED) gp_cpu_sort_values(t, h, n);
}

/* ---- hist and finite_range ---------------------------------------------------------------- */

static void check_hist(const tcase *c, const void *h, const void *d, int64_t n, int64_t bins,
                       int have_range, double a, double b)
{
    gp_frange fr = gp_frange_empty();
    gp_cpu_finite_range(c->t, h, n, &fr);
    void *edges = malloc((size_t)(bins + 1) * 8);
    int64_t *want = calloc((size_t)bins + 2, 8), *got = calloc((size_t)bins + 2, 8);
    gp_hist_spec s;
    char why[300];
    if (!edges || !want || !got) {
        failf(c, "out of host memory");
    } else if (gp_hist_plan(c->t, bins, have_range, a, b, fr.finite, fr.min_key, fr.max_key, &s,
                            edges, why, sizeof why) == 0) {
        gp_cpu_hist(&s, h, n, want);
        GPU_OK(c, G->hist(&s, d, n, got), goto out);
        int64_t diff = 0;
        for (int64_t k = 0; k < bins + 2; k++) diff += want[k] != got[k];
        CHECK(c, diff == 0, "hist %lld bins%s: %lld counts differ from the twin's",
              (long long)bins, have_range ? " (range)" : "", (long long)diff);
    }
out:
    free(edges);
    free(want);
    free(got);
}

/* Value v stored as type t at e (integers: rounded toward zero and clamped to the type). */
static void put_elem(gp_dtype t, void *e, double v)
{
    if (t == GP_F32) {
        const float f = (float)v;
        memcpy(e, &f, 4);
    } else if (t == GP_F64) {
        memcpy(e, &v, 8);
    } else {
        const int sgn = t == GP_I32 || t == GP_I64;
        const double lo = sgn ? (t == GP_I32 ? -0x1p31 : -0x1p63) : 0.0;
        const double hi = t == GP_I32 ? 0x1p31 - 1 : t == GP_U32 ? 0x1p32 - 1 : 0x1p63;
        v = v < lo ? lo : v > hi ? hi : v;
        const int64_t i = sgn && v < 0x1p63 ? (int64_t)v : 0;
        const uint64_t u = sgn ? (uint64_t)i : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v;
        if (gp_dtype_size(t) == 4) {
            const uint32_t w = (uint32_t)u;
            memcpy(e, &w, 4);
        } else {
            memcpy(e, &u, 8);
        }
    }
}

/* Data on and beside the edges of a given range's plan (each edge, the 3 values of the
 * type on either side of it, the midpoints), where the kernel's accept window must turn the
 * fast index away: every count the twin's, from a range near zero, one far from zero for
 * its width (coarse edges) and narrow ones. */
static void check_hist_edges(gp_dtype t)
{
    static const double ranges[][2] = {{-300.5, 700.25}, {1000.0, 1001.0}, {0.0, 1.0},
                                       {-1e-3, 2e-3},    {1e6, 1e6 + 3.0},  {-2e9, 2e9}};
    static const int64_t bins[] = {7, 1024, 3000};
    const size_t sz = gp_dtype_size(t);
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
            tcase c = {"hist_edges", t, 0, "edges"};
            const int64_t nb = bins[b], per = 16, n = (nb + 1) * per;
            double *edges = malloc((size_t)(nb + 1) * 8);
            unsigned char *h = malloc((size_t)n * sz);
            void *d = G->alloc((size_t)n * sz);
            gp_hist_spec s;
            char why[300];
            if (!edges || !h || !d) {
                failf(&c, "out of memory");
            } else if (gp_hist_plan(t, nb, 1, ranges[r][0], ranges[r][1], 0, 0, 0, &s, edges,
                                    why, sizeof why) == 0) {
                c.n = n;
                for (int64_t i = 0; i <= nb; i++) {
                    const double e = s.edge_type == GP_F32 ? (double)((float *)edges)[i]
                                                           : edges[i];
                    const double next = i < nb ? (s.edge_type == GP_F32
                                                      ? (double)((float *)edges)[i + 1]
                                                      : edges[i + 1])
                                               : e + 1.0;
                    double v[16];
                    float fu = (float)e, fd = (float)e;
                    double du = e, dd = e;
                    v[0] = e;
                    for (int k = 1; k <= 3; k++) {
                        fu = nextafterf(fu, INFINITY);
                        fd = nextafterf(fd, -INFINITY);
                        du = nextafter(du, INFINITY);
                        dd = nextafter(dd, -INFINITY);
                        v[2 * k - 1] = t == GP_F32 ? (double)fu : du;
                        v[2 * k] = t == GP_F32 ? (double)fd : dd;
                    }
                    v[7] = floor(e) - 1.0;
                    v[8] = floor(e);
                    v[9] = ceil(e);
                    v[10] = ceil(e) + 1.0;
                    v[11] = e + (next - e) * 0.5;
                    v[12] = e + (next - e) * 0.25;
                    v[13] = e + (next - e) * 0.999;
                    v[14] = e + (next - e) * 0.001;
                    v[15] = e * (1.0 + 0x1p-22);
                    for (int k = 0; k < per; k++) put_elem(t, h + (size_t)(i * per + k) * sz, v[k]);
                }
                GPU_OK(&c, G->upload(d, h, (size_t)n * sz), goto next);
                check_hist(&c, h, d, n, nb, 1, ranges[r][0], ranges[r][1]);
                check_hist(&c, h, d, n, nb, 0, 0, 0);
            }
        next:
            free(edges);
            free(h);
            if (d) G->free(d);
        }
    }
}

static void check_frange(const tcase *c, const void *h, const void *d, int64_t n)
{
    gp_frange want = gp_frange_empty(), got = gp_frange_empty();
    gp_cpu_finite_range(c->t, h, n, &want);
    GPU_OK(c, G->finite_range(c->t, d, n, &got), return);
    CHECK(c, memcmp(&want, &got, sizeof want) == 0, "finite_range: finite %" PRId64 "/%" PRId64
          " min %#" PRIx64 "/%#" PRIx64 " max %#" PRIx64 "/%#" PRIx64, got.finite, want.finite,
          got.min_key, want.min_key, got.max_key, want.max_key);
}

/* ---- radix_hist and runs ------------------------------------------------------------------ */

/* A whole select of nr ranks on both backends, pass by pass. */
static void check_select(const tcase *c, const void *h, const void *d, int64_t n, int nr)
{
    if (n == 0) return;
    int64_t ranks[GP_SELECT_MAX];
    for (int i = 0; i < nr; i++) ranks[i] = (int64_t)(rnd() % (uint64_t)n);
    ranks[0] = 0;
    ranks[nr - 1] = n - 1;
    gp_select sc, sg;
    gp_select_init(&sc, c->t, ranks, nr);
    gp_select_init(&sg, c->t, ranks, nr);
    const size_t cap = (size_t)GP_SELECT_MAX << GP_SELECT_DIGIT;
    int64_t *want = malloc(cap * 8), *got = malloc(cap * 8);
    while (want && got && !sc.done) {
        const size_t len = gp_select_counts_len(&sc);
        memset(want, 0, len * 8);
        memset(got, 0, len * 8);
        gp_cpu_radix_hist(c->t, h, n, &sc, want);
        GPU_OK(c, G->radix_hist(c->t, d, n, &sg, got), break);
        CHECK(c, memcmp(want, got, len * 8) == 0, "radix_hist (%d ranks, pass bits [%d, %d), "
              "%d prefixes): counts differ", nr, sc.shift, sc.shift + sc.bits, sc.nprefix);
        if (gp_select_advance(&sc, want) || gp_select_advance(&sg, got)) {
            failf(c, "advance refused");
            break;
        }
    }
    if (sc.done)
        CHECK(c, memcmp(sc.prefix, sg.prefix, sizeof sc.prefix) == 0, "select keys differ");
    free(want);
    free(got);
}

static void check_runs(const tcase *c, const void *h, const void *d, int64_t n)
{
    gp_runs want, got;
    gp_cpu_runs(c->t, h, n, &want);
    GPU_OK(c, G->runs(c->t, d, n, &got), return);
    CHECK(c, memcmp(&want, &got, sizeof want) == 0,
          "runs %" PRId64 " (twin %" PRId64 "), ends %d%d", got.runs, want.runs, got.first_nan,
          got.last_nan);
}

/* Every entry on one case, from an aligned device pointer (off 0) and one element past it. */
static void run_case(gp_dtype t, int64_t n, int dist, int off)
{
    const size_t sz = gp_dtype_size(t);
    tcase c = {"dist", t, n, dist_names[dist]};
    void *h = malloc((size_t)(n + 1) * sz);
    void *dev = G->alloc((size_t)(n + 1) * sz);
    if (!h || !dev) {
        failf(&c, "allocation of %lld elements failed", (long long)n);
        free(h);
        if (dev) G->free(dev);
        return;
    }
    fill(t, h, n, dist);
    void *d = (char *)dev + (size_t)off * sz;
    GPU_OK(&c, G->upload(d, h, (size_t)n * sz), goto out);
    c.name = off ? "hist+1" : "hist";
    static const int64_t bins[] = {1, 7, 1024, 3000, 100003};
    for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
        check_hist(&c, h, d, n, bins[b], 0, 0, 0);
        check_hist(&c, h, d, n, bins[b], 1, -300.5, 700.25);
    }
    c.name = off ? "finite_range+1" : "finite_range";
    check_frange(&c, h, d, n);
    c.name = off ? "radix_hist+1" : "radix_hist";
    check_select(&c, h, d, n, 3);
    if (n > 1000) check_select(&c, h, d, n, GP_SELECT_MAX);
    c.name = off ? "runs+1" : "runs";
    check_runs(&c, h, d, n);
out:
    free(h);
    G->free(dev);
}

static void check_errors(void)
{
    tcase c = {"errors", GP_F32, 0, "-"};
    gp_hist_spec s;
    memset(&s, 0, sizeof s);
    int64_t counts[8];
    gp_frange fr = gp_frange_empty();
    gp_runs r;
    gp_select sel;
    const int64_t rk[1] = {0};
    gp_select_init(&sel, GP_F64, rk, 1);
    CHECK(&c, G->hist(NULL, NULL, 0, counts) == GP_EINVAL, "hist: NULL spec accepted");
    CHECK(&c, G->hist(&s, NULL, 0, counts) == GP_EINVAL, "hist: 0 bins accepted");
    CHECK(&c, G->finite_range(GP_NDTYPES, NULL, 0, &fr) == GP_EINVAL, "finite_range: bad type");
    CHECK(&c, G->radix_hist(GP_F32, NULL, 0, &sel, counts) == GP_EINVAL,
          "radix_hist: a state of another width accepted");
    CHECK(&c, G->runs(GP_F32, NULL, 5, &r) == GP_EINVAL, "runs: NULL data accepted");
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--probe") == 0) {
            const int nd = gp_cuda_device_count();
            printf("%d CUDA device%s visible\n", nd, nd == 1 ? "" : "s");
            return nd > 0 ? 0 : 77;
        } else {
            fprintf(stderr, "usage: %s [--probe] [--quick]\n", argv[0]);
            return 2;
        }
    }
    char why[256] = "";
    if (gp_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device visible\n");
        return 77;
    }
    G = gp_backend_cuda(0, why, sizeof why);
    if (!G) {
        printf("FAIL case=init: gp_backend_cuda(0): %s\n0 passed, 1 failed\n", why);
        return 1;
    }
    uint64_t seed = 20261215u;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_gpu_dist: seed %" PRIu64 " (GPUPRIM_TEST_SEED)%s\n", seed,
           quick ? "; --quick" : "");
    static const int64_t sizes[] = {0, 1, 2, 7, 33, 1023, 1025, 4097, 65537, 1000003,
                                    (1 << 22) + 1};
    for (int t = 0; t < GP_NDTYPES; t++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            if (quick && sizes[k] > 65537) continue;
            for (int dist = 0; dist < D_COUNT; dist++)
                for (int off = 0; off < 2; off++) run_case((gp_dtype)t, sizes[k], dist, off);
        }
        printf("  %s done (%lld passed, %lld failed so far)\n", gp_dtype_name((gp_dtype)t),
               g_pass, g_fail);
        fflush(stdout);
    }
    for (int t = 0; t < GP_NDTYPES; t++) check_hist_edges((gp_dtype)t);
    check_errors();
    printf("test_gpu_dist: %lld passed, %lld failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
