/* test_gpu_pairs_sums.c — the descending-key, key + value and exact-sum entries of the CUDA backend against their CPU twins
 * (kernels/cpu_sort.c, cpu_exact_sum.c), bit for bit.
 *
 * Usage: test_gpu_pairs_sums [--quick | --tiny] [--section all|cases|merge]
 *   --quick: sizes up to 65537 only; --tiny: every code path on the least data, for the slow
 *   compute-sanitizer tools (sizes 1, 33, 1025, 4097; distributions uniform, fewunique,
 *   special; merges of at most 4097 elements); --section runs only the per-dtype cases
 *   (sorts, pairs, exact sums) or only the merge_split_pairs cases (with test_api), so
 *   that racecheck can check the two in parallel processes.
 * Environment: GPUPRIM_TEST_SEED (decimal or 0x...) seeds the data (the seed is printed).
 * Exit: 0 all passed, 1 some check failed, 77 no CUDA device visible (CTest's skip code).
 *
 * For the six dtypes, the sizes 0 1 2 7 31 32 33 1023 1024 1025 4095 4096 4097 65537 1000003
 * 2^21+1 and the distributions uniform, equal, sorted, reversed, fewunique, special (floats:
 * NaNs of several payloads and signs, +-inf, -0.0/+0.0, denormals, extremes; integers: the
 * extremes), wide (random bit patterns: every exponent):
 *   to_keys / from_keys with GP_DESCENDING: bit-exact against the twin; the 64 words past n of every
 *     device buffer (poisoned) never written;
 *   sort with values (keys = the descending keys of the data): stable = 1 with value = position
 *     and with few-unique values (below 2^32, and some of them above: the packed and the
 *     unpacked paths of 4-byte keys): keys and values bit-exact; stable = 0: keys bit-exact,
 *     the multiset of (key, value) pairs kept (both sides re-sorted by (key, value) with
 *     the twin), two GPU runs identical (deterministic); nothing written past n;
 *   exact_sum (values and squares): the normalised accumulator (68 limbs + 3 counts)
 *     bytewise equal to the twin's, starting from a nonzero accumulator, and the rounded
 *     double bitwise equal; the sum of 1-5 random GPU pieces (element-offset pointers)
 *     added in a shuffled order equals it too; plus 2^24+3 elements (f64 wide, u64, f32);
 * merge_split with values (and merge_path, the rank exchange's split, at several t) on sorted
 * pairs of unequal sizes (0 included), both halves, stable or
 * not, few-unique keys (ties across lo and hi): bit-exact, nothing past *nout written;
 * argument errors give GP_EINVAL. Nothing is timed.
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64 /* poisoned words past n */
#define POISON 0xA5
#include "test_gpu_check.h" /* G, CHECK, GPU_OK, failf, tcase */
#include "test_cuts.h" /* gp_test_random_cuts */

/* ---- random data ---------------------------------------------------------------------- */

static uint64_t g_rng;
static uint64_t rnd(void) { return gp_mix64(g_rng++); }
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

enum { D_UNIFORM, D_EQUAL, D_SORTED, D_REVERSED, D_FEWUNIQUE, D_SPECIAL, D_WIDE, D_COUNT };
static const char *const dist_names[D_COUNT] = {"uniform", "equal",   "sorted", "reversed",
                                                "fewunique", "special", "wide"};

static size_t esz(gp_dtype t) { return gp_dtype_size(t); }
static void put(gp_dtype t, void *buf, int64_t i, const void *e)
{
    memcpy((unsigned char *)buf + (size_t)i * esz(t), e, esz(t));
}

static void rnd_elem(gp_dtype t, void *e)
{
    switch (t) {
    case GP_F32: { float v = (float)(rnd_unit() * 2000.0 - 1000.0); memcpy(e, &v, 4); break; }
    case GP_F64: { double v = rnd_unit() * 2000.0 - 1000.0; memcpy(e, &v, 8); break; }
    case GP_I32: case GP_U32: { uint32_t v = (uint32_t)rnd(); memcpy(e, &v, 4); break; }
    default: { uint64_t v = rnd(); memcpy(e, &v, 8); break; }
    }
}

static const uint32_t special_f32[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FFFFFFFu, 0xFFA00005u,
    0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000000u, 0x00000001u, 0x807FFFFFu,
    0x00400000u, 0x80000001u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x00800000u, 0x3F800000u, 0xBF800000u};
static const uint64_t special_f64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0xFFFFFFFFFFFFFFFFull,
    0x7FFFFFFFFFFFFFFFull, 0xFFF4000000000123ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
    0x8000000000000000ull, 0x0000000000000000ull, 0x0000000000000001ull, 0x800FFFFFFFFFFFFFull,
    0x0008000000000000ull, 0x7E37E43C8800759Cull, 0xFE37E43C8800759Cull, 0x7FEFFFFFFFFFFFFFull,
    0xFFEFFFFFFFFFFFFFull, 0x0010000000000000ull, 0x3FF0000000000000ull, 0xBFF0000000000000ull};
static const uint32_t special_i32[] = {0x80000000u, 0x7FFFFFFFu, 0u, 0xFFFFFFFFu, 1u, 0x80000001u};
static const uint64_t special_i64[] = {0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0ull,
                                       0xFFFFFFFFFFFFFFFFull, 1ull, 0x8000000000000001ull};

static void special_elem(gp_dtype t, void *e)
{
    switch (t) {
    case GP_F32: { uint32_t v = special_f32[rnd() % (sizeof special_f32 / 4)]; memcpy(e, &v, 4); break; }
    case GP_F64: { uint64_t v = special_f64[rnd() % (sizeof special_f64 / 8)]; memcpy(e, &v, 8); break; }
    case GP_I32: case GP_U32: { uint32_t v = special_i32[rnd() % (sizeof special_i32 / 4)]; memcpy(e, &v, 4); break; }
    default: { uint64_t v = special_i64[rnd() % (sizeof special_i64 / 8)]; memcpy(e, &v, 8); break; }
    }
}

/* Fills buf[0, n) with distribution dist. Returns 0, or -1 when a CPU twin failed. */
static int gen(gp_dtype t, void *buf, int64_t n, int dist)
{
    const size_t es = esz(t);
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
    case D_WIDE:
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = rnd();
            memcpy(e, &v, 8);
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

/* ---- device helpers ------------------------------------------------------------------- */

/* Device buffer of n words of w bytes + GUARD poisoned words, uploaded from host (n words;
 * NULL: only the poison). */
static void *dev_upload(const tcase *c, const void *host, int64_t n, size_t w)
{
    const size_t bytes = (size_t)n * w + GUARD * w;
    unsigned char *tmp = (unsigned char *)xmalloc(bytes);
    memset(tmp, POISON, bytes);
    if (host && n > 0) memcpy(tmp, host, (size_t)n * w);
    void *d = G->alloc(bytes);
    if (!d) {
        failf(c, "alloc(%zu): %s", bytes, G->last_error());
        free(tmp);
        return NULL;
    }
    if (G->upload(d, tmp, bytes) != GP_OK) {
        failf(c, "upload: %s", G->last_error());
        G->free(d);
        d = NULL;
    }
    free(tmp);
    return d;
}

/* Downloads n words + the guard into host[0, n) and checks the guard; returns 0 on success. */
static int dev_download(const tcase *c, void *host, const void *dev, int64_t n, size_t w,
                        const char *what)
{
    const size_t bytes = (size_t)n * w + GUARD * w;
    unsigned char *tmp = (unsigned char *)xmalloc(bytes);
    if (G->download(tmp, dev, bytes) != GP_OK) {
        failf(c, "download: %s", G->last_error());
        free(tmp);
        return -1;
    }
    int intact = 1;
    for (size_t b = (size_t)n * w; b < bytes; b++)
        if (tmp[b] != POISON) intact = 0;
    CHECK(c, intact, "%s: written past n", what);
    if (n > 0) memcpy(host, tmp, (size_t)n * w);
    free(tmp);
    return 0;
}

static int64_t first_diff(const void *a, const void *b, int64_t n, size_t w)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp((const unsigned char *)a + (size_t)i * w, (const unsigned char *)b + (size_t)i * w, w))
            return i;
    return -1;
}
static uint64_t word(const void *buf, int64_t i, size_t w)
{
    uint64_t v = 0;
    memcpy(&v, (const unsigned char *)buf + (size_t)i * w, w); /* little endian */
    return v;
}

/* ---- one case: desc keys, sort_pairs, exact_sum ------------------------------------- */

static void case_keys_and_pairs(gp_dtype t, int64_t n, int dist, const void *y)
{
    const size_t w = esz(t);
    tcase c = {"desc_keys", t, n, dist_names[dist]};
    void *want = xmalloc((size_t)n * w), *got = xmalloc((size_t)n * w);
    uint64_t *vals = (uint64_t *)xmalloc((size_t)n * 8), *wv = (uint64_t *)xmalloc((size_t)n * 8),
             *gv = (uint64_t *)xmalloc((size_t)n * 8), *gv2 = (uint64_t *)xmalloc((size_t)n * 8);
    void *got2 = xmalloc((size_t)n * w), *keys = xmalloc((size_t)n * w);
    void *dk = NULL, *dv = NULL;

    /* to_keys_desc */
    memcpy(want, y, (size_t)n * w);
    if (gp_cpu_to_keys_desc(t, want, n) != GP_OK) { failf(&c, "twin failed"); goto done; }
    dk = dev_upload(&c, y, n, w);
    if (!dk) goto done;
    GPU_OK(&c, G->to_keys(t, GP_DESCENDING, dk, n), goto done);
    if (dev_download(&c, got, dk, n, w, "to_keys_desc")) goto done;
    int64_t i = first_diff(got, want, n, w);
    CHECK(&c, i < 0, "to_keys_desc: first difference at %lld: gpu %016" PRIx64 " twin %016" PRIx64,
          (long long)i, i < 0 ? 0 : word(got, i, w), i < 0 ? 0 : word(want, i, w));
    memcpy(keys, want, (size_t)n * w); /* descending keys: the sort_pairs input */
    /* from_keys_desc (of the keys just made) */
    if (gp_cpu_from_keys_desc(t, want, n) != GP_OK) { failf(&c, "twin failed"); goto done; }
    GPU_OK(&c, G->from_keys(t, GP_DESCENDING, dk, n), goto done);
    if (dev_download(&c, got, dk, n, w, "from_keys_desc")) goto done;
    i = first_diff(got, want, n, w);
    CHECK(&c, i < 0, "from_keys_desc: first difference at %lld", (long long)i);
    G->free(dk);
    dk = NULL;

    /* sort with values: vmode 0 positions (stable), 1 few-unique values, 2 few-unique values
     * some of them >= 2^32 (4-byte keys: the unpacked path) */
    static const char *const vnames[2][3] = {
        {"sort_pairs unstable positions", "sort_pairs unstable fewvals", "sort_pairs unstable widevals"},
        {"sort_pairs stable positions", "sort_pairs stable fewvals", "sort_pairs stable widevals"}};
    for (int vmode = 0; vmode < 3; vmode++)
        for (int stable = 1; stable >= 0; stable--) {
            c.name = vnames[stable][vmode];
            for (int64_t k = 0; k < n; k++)
                vals[k] = vmode == 0 ? (uint64_t)k
                        : vmode == 1 ? rnd() % 3
                                     : rnd() % 3 + ((rnd() & 1) << 32);
            memcpy(want, keys, (size_t)n * w);
            memcpy(wv, vals, (size_t)n * 8);
            if (gp_cpu_sort_pairs((int)w, want, wv, n, 1) != GP_OK) { failf(&c, "twin failed"); goto done; }
            for (int run = 0; run < (stable ? 1 : 2); run++) {
                dk = dev_upload(&c, keys, n, w);
                dv = dev_upload(&c, vals, n, 8);
                if (!dk || !dv) goto done;
                GPU_OK(&c, G->sort((int)w, dk, (uint64_t *)dv, n, stable), goto done);
                if (dev_download(&c, run ? got2 : got, dk, n, w, "keys")) goto done;
                if (dev_download(&c, run ? gv2 : gv, dv, n, 8, "vals")) goto done;
                G->free(dk);
                G->free(dv);
                dk = dv = NULL;
            }
            if (stable) {
                i = first_diff(got, want, n, w);
                CHECK(&c, i < 0, "keys: first difference at %lld: gpu %016" PRIx64 " twin %016" PRIx64,
                      (long long)i, i < 0 ? 0 : word(got, i, w), i < 0 ? 0 : word(want, i, w));
                i = first_diff(gv, wv, n, 8);
                CHECK(&c, i < 0, "vals: first difference at %lld: gpu %" PRIu64 " twin %" PRIu64,
                      (long long)i, i < 0 ? 0 : gv[i], i < 0 ? 0 : wv[i]);
            } else {
                CHECK(&c, memcmp(got, got2, (size_t)n * w) == 0 && memcmp(gv, gv2, (size_t)n * 8) == 0,
                      "two runs differ (not deterministic)");
                i = first_diff(got, want, n, w);
                CHECK(&c, i < 0, "keys: first difference at %lld", (long long)i);
                /* multiset: re-sort the GPU pairs by (key, value) with the twin */
                if (gp_cpu_sort_pairs((int)w, got, gv, n, 1) != GP_OK) { failf(&c, "twin failed"); goto done; }
                CHECK(&c, first_diff(got, want, n, w) < 0 && first_diff(gv, wv, n, 8) < 0,
                      "the multiset of (key, value) pairs changed");
            }
        }
done:
    if (dk) G->free(dk);
    if (dv) G->free(dv);
    free(want);
    free(got);
    free(got2);
    free(keys);
    free(vals);
    free(wv);
    free(gv);
    free(gv2);
}

static void case_exact_sum(gp_dtype t, int64_t n, int dist, const void *y)
{
    const size_t w = esz(t);
    tcase c = {"exact_sum", t, n, dist_names[dist]};
    void *dy = dev_upload(&c, y, n, w);
    if (!dy) return;
    for (unsigned what = GP_SA_VALUES; what <= GP_SA_SQUARES; what++) {
        c.name = what == GP_SA_VALUES ? "exact_sum values" : "exact_sum squares";
        gp_superacc pre, a, b;
        gp_superacc_zero(&pre);
        gp_superacc_add_double(&pre, -3.25);
        gp_superacc_add_double(&pre, 0x1p-1070);
        a = pre;
        b = pre;
        if (gp_cpu_exact_sum(t, y, n, what, &a) != GP_OK) { failf(&c, "twin failed"); break; }
        GPU_OK(&c, G->exact_sum(t, dy, n, what, &b), break);
        int k = 0;
        while (k < GP_SA_LIMBS && a.limb[k] == b.limb[k]) k++;
        CHECK(&c, k == GP_SA_LIMBS, "limb %d: gpu %" PRId64 " twin %" PRId64, k,
              k < GP_SA_LIMBS ? b.limb[k] : 0, k < GP_SA_LIMBS ? a.limb[k] : 0);
        CHECK(&c, a.nan == b.nan && a.pinf == b.pinf && a.ninf == b.ninf,
              "counts gpu %lld/%lld/%lld twin %lld/%lld/%lld", (long long)b.nan, (long long)b.pinf,
              (long long)b.ninf, (long long)a.nan, (long long)a.pinf, (long long)a.ninf);
        CHECK(&c, memcmp(&a, &b, sizeof a) == 0, "accumulators differ bytewise");
        const double ra = gp_superacc_to_double(&a), rb = gp_superacc_to_double(&b);
        CHECK(&c, memcmp(&ra, &rb, 8) == 0 || (isnan(ra) && isnan(rb)), "rounded %a vs twin %a", rb, ra);
        /* pieces on the GPU, added in a shuffled order */
        int np = 1 + (int)(rnd() % 5);
        int64_t cut[7];
        gp_test_random_cuts(cut, np, n, rnd);
        int ord[6];
        for (int p = 0; p < np; p++) ord[p] = p;
        for (int p = np - 1; p > 0; p--) {
            const int q = (int)(rnd() % (uint64_t)(p + 1)), x = ord[p];
            ord[p] = ord[q];
            ord[q] = x;
        }
        gp_superacc s = pre;
        for (int r = 0; r < np; r++) {
            const int p = ord[r];
            GPU_OK(&c, G->exact_sum(t, (const unsigned char *)dy + (size_t)cut[p] * w,
                                    cut[p + 1] - cut[p], what, &s), break);
        }
        CHECK(&c, memcmp(&s, &a, sizeof a) == 0, "%d GPU pieces in a shuffled order differ", np);
    }
    G->free(dy);
}

static void run_case(gp_dtype t, int64_t n, int dist, int pairs)
{
    tcase c = {"gen", t, n, dist_names[dist]};
    void *y = xmalloc((size_t)n * esz(t));
    if (gen(t, y, n, dist)) {
        failf(&c, "generator failed");
        free(y);
        return;
    }
    if (pairs) case_keys_and_pairs(t, n, dist, y);
    case_exact_sum(t, n, dist, y);
    free(y);
}

/* ---- merge_split_pairs ------------------------------------------------------------------ */

static void merge_case(int width, int stable, int64_t nlo, int64_t nhi, int64_t m, uint64_t spread)
{
    const size_t w = (size_t)width;
    char name[96];
    snprintf(name, sizeof name, "merge_split_pairs w=%d stable=%d nlo=%lld nhi=%lld m=%lld", width,
             stable, (long long)nlo, (long long)nhi, (long long)m);
    tcase c = {name, GP_NDTYPES, nlo + nhi, spread < 100 ? "fewunique" : "uniform"};
    void *lk = xmalloc((size_t)nlo * w), *hk = xmalloc((size_t)nhi * w);
    uint64_t *lv = (uint64_t *)xmalloc((size_t)nlo * 8), *hv = (uint64_t *)xmalloc((size_t)nhi * 8);
    void *wk = xmalloc((size_t)m * w), *gk = xmalloc((size_t)m * w);
    uint64_t *wv = (uint64_t *)xmalloc((size_t)m * 8), *gv = (uint64_t *)xmalloc((size_t)m * 8);
    void *dlk = NULL, *dhk = NULL, *dlv = NULL, *dhv = NULL, *dok = NULL, *dov = NULL;
    for (int64_t i = 0; i < nlo; i++) {
        uint64_t k = rnd() % spread;
        memcpy((unsigned char *)lk + (size_t)i * w, &k, w);
        lv[i] = rnd() % 3;
    }
    for (int64_t i = 0; i < nhi; i++) {
        uint64_t k = rnd() % spread;
        memcpy((unsigned char *)hk + (size_t)i * w, &k, w);
        hv[i] = rnd() % 3;
    }
    if (gp_cpu_sort_pairs(width, lk, lv, nlo, stable) || gp_cpu_sort_pairs(width, hk, hv, nhi, stable)) {
        failf(&c, "twin sort failed");
        goto done;
    }
    dlk = dev_upload(&c, lk, nlo, w);
    dhk = dev_upload(&c, hk, nhi, w);
    dlv = dev_upload(&c, lv, nlo, 8);
    dhv = dev_upload(&c, hv, nhi, 8);
    dok = dev_upload(&c, NULL, m, w);
    dov = dev_upload(&c, NULL, m, 8);
    if (!dlk || !dhk || !dlv || !dhv || !dok || !dov) goto done;
    for (int up = 0; up <= 1; up++) {
        int64_t nw = -1, ng = -2;
        /* fresh poison */
        G->free(dok);
        G->free(dov);
        dok = dev_upload(&c, NULL, m, w);
        dov = dev_upload(&c, NULL, m, 8);
        if (!dok || !dov) goto done;
        if (gp_cpu_merge_split_pairs(width, lk, lv, nlo, hk, hv, nhi, m, up, stable, wk, wv, &nw) != GP_OK) {
            failf(&c, "twin failed: %s", gp_cpu_last_error());
            goto done;
        }
        GPU_OK(&c, G->merge_split(width, dlk, (const uint64_t *)dlv, nlo, dhk,
                                  (const uint64_t *)dhv, nhi, m, up, stable, dok,
                                  (uint64_t *)dov, &ng),
               goto done);
        CHECK(&c, ng == nw, "keep_upper=%d nout %lld != twin %lld", up, (long long)ng, (long long)nw);
        if (ng != nw || nw < 0) continue;
        /* the guard here is everything past nout: m - nout + GUARD words */
        unsigned char *tk = (unsigned char *)xmalloc((size_t)m * w + GUARD * w);
        unsigned char *tv = (unsigned char *)xmalloc((size_t)m * 8 + GUARD * 8);
        if (G->download(tk, dok, (size_t)m * w + GUARD * w) != GP_OK ||
            G->download(tv, dov, (size_t)m * 8 + GUARD * 8) != GP_OK) {
            failf(&c, "download: %s", G->last_error());
            free(tk);
            free(tv);
            goto done;
        }
        int64_t i = first_diff(tk, wk, nw, w);
        CHECK(&c, i < 0, "keep_upper=%d keys: first difference at %lld", up, (long long)i);
        i = first_diff(tv, wv, nw, 8);
        CHECK(&c, i < 0, "keep_upper=%d vals: first difference at %lld", up, (long long)i);
        int intact = 1;
        for (size_t b = (size_t)nw * w; b < (size_t)m * w + GUARD * w; b++)
            if (tk[b] != POISON) intact = 0;
        for (size_t b = (size_t)nw * 8; b < (size_t)m * 8 + GUARD * 8; b++)
            if (tv[b] != POISON) intact = 0;
        CHECK(&c, intact, "keep_upper=%d written past nout", up);
        free(tk);
        free(tv);
    }
    /* merge_path (the exchange's split) at the ends, the middle and m: equal to the twin */
    const int64_t ts[] = {0, 1, nlo, nhi, (nlo + nhi) / 2, m, nlo + nhi - 1, nlo + nhi};
    for (size_t q = 0; q < sizeof ts / sizeof ts[0]; q++) {
        const int64_t t = ts[q];
        int64_t want = -1, got = -2;
        if (t < 0 || t > nlo + nhi) continue;
        if (gp_cpu_merge_path(width, lk, lv, nlo, hk, hv, nhi, t, stable, &want) != GP_OK) {
            failf(&c, "twin merge_path failed: %s", gp_cpu_last_error());
            break;
        }
        GPU_OK(&c, G->merge_path(width, dlk, stable ? (const uint64_t *)dlv : NULL, nlo, dhk,
                                 stable ? (const uint64_t *)dhv : NULL, nhi, t, stable, &got),
               break);
        CHECK(&c, got == want, "merge_path t=%lld: %lld, twin %lld", (long long)t, (long long)got,
              (long long)want);
    }
done:
    G->free(dlk);
    G->free(dhk);
    G->free(dlv);
    G->free(dhv);
    G->free(dok);
    G->free(dov);
    free(lk);
    free(hk);
    free(lv);
    free(hv);
    free(wk);
    free(gk);
    free(wv);
    free(gv);
}

static void test_merge(int quick, int tiny)
{
    static const int64_t fixed[][3] = {
        {0, 0, 0},       {0, 0, 5},          {0, 5, 5},           {5, 0, 5},
        {3, 5, 5},       {5, 5, 5},          {1, 1, 1},           {1000, 700, 1000},
        {2049, 2048, 3000}, {2048, 2048, 2048}, {4097, 1, 4097}, {1, 4097, 4097},
        {0, 30000, 30000}, {12345, 6789, 20000}, {100000, 99999, 100000},
        {1 << 20, (1 << 20) - 3, 1 << 20}, {(1 << 21) + 1, 1 << 20, (1 << 21) + 1}};
    for (int width = 4; width <= 8; width += 4)
        for (int stable = 0; stable <= 1; stable++)
            for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
                if ((quick && fixed[k][2] > 65537) || (tiny && fixed[k][2] > 4097)) continue;
                merge_case(width, stable, fixed[k][0], fixed[k][1], fixed[k][2], 7);
                merge_case(width, stable, fixed[k][0], fixed[k][1], fixed[k][2], 1ull << 40);
            }
    for (int r = 0; r < (tiny ? 8 : 60); r++) {
        const int64_t m = (int64_t)(rnd() % (tiny ? 2000 : 10000));
        const int64_t nlo = m ? (int64_t)(rnd() % (uint64_t)(m + 1)) : 0;
        const int64_t nhi = m ? (int64_t)(rnd() % (uint64_t)(m + 1)) : 0;
        merge_case(r & 1 ? 8 : 4, (r >> 1) & 1, nlo, nhi, m, (r >> 2) & 1 ? 5 : 1000000);
    }
}

/* ---- large exact sums -------------------------------------------------------------------- */

static void test_large_sums(void)
{
    const int64_t n = (1 << 24) + 3;
    run_case(GP_F64, n, D_WIDE, 0);
    run_case(GP_U64, n, D_UNIFORM, 0);
    run_case(GP_F32, n, D_SPECIAL, 0);
    /* adversarial: x, -x pairs over 1e-300..1e300 plus denormals, shuffled */
    tcase c = {"exact_sum cancelling", GP_F64, n, "pairs"};
    double *y = (double *)xmalloc((size_t)n * 8);
    int64_t k = 0;
    while (k + 2 <= n - 1001) {
        double x = pow(10.0, -300.0 + 600.0 * rnd_unit()) * ((rnd() & 1) ? 1 : -1);
        y[k++] = x;
        y[k++] = -x;
    }
    while (k < n) y[k++] = ldexp((double)(rnd() % 1000), -1074);
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rnd() % (uint64_t)(i + 1));
        double s = y[i];
        y[i] = y[j];
        y[j] = s;
    }
    (void)c;
    case_exact_sum(GP_F64, n, D_WIDE, y); /* reported as dist "wide" */
    free(y);
}

/* ---- argument errors --------------------------------------------------------------------- */

static void test_api(void)
{
    tcase c = {"api", GP_NDTYPES, 0, "-"};
    int64_t nout = 0;
    gp_superacc acc;
    gp_superacc_zero(&acc);
    void *d = G->alloc(4096), *e = G->alloc(4096);
    CHECK(&c, G->to_keys && G->from_keys && G->sort && G->merge_split && G->exact_sum,
          "table entries missing");
    CHECK(&c, G->to_keys((gp_dtype)GP_NDTYPES, GP_DESCENDING, d, 1) == GP_EINVAL, "to_keys desc bad dtype");
    CHECK(&c, G->from_keys(GP_F32, GP_DESCENDING, d, -1) == GP_EINVAL, "from_keys desc n < 0");
    CHECK(&c, G->to_keys(GP_F32, GP_DESCENDING, NULL, 1) == GP_EINVAL, "to_keys desc NULL");
    CHECK(&c, G->sort(5, d, (uint64_t *)e, 1, 1) == GP_EINVAL, "sort pairs width 5");
    CHECK(&c, G->sort(4, NULL, (uint64_t *)e, 2, 1) == GP_EINVAL, "sort pairs NULL keys");
    CHECK(&c, G->sort(4, d, (uint64_t *)e, -1, 0) == GP_EINVAL, "sort pairs n < 0");
    CHECK(&c, G->sort(8, d, (uint64_t *)d, 4, 0) == GP_EINVAL, "sort pairs keys == vals");
    CHECK(&c, G->sort(8, d, (uint64_t *)e, 0, 1) == GP_OK && G->sort(8, d, (uint64_t *)e, 1, 1) == GP_OK,
          "sort pairs n <= 1");
    CHECK(&c, G->merge_split(3, d, (uint64_t *)e, 1, d, (uint64_t *)e, 1, 1, 0, 1, NULL, NULL, &nout) == GP_EINVAL,
          "merge width 3");
    CHECK(&c, G->merge_split(8, d, (uint64_t *)e, 3, d, (uint64_t *)e, 1, 2, 0, 1, NULL, NULL, &nout) == GP_EINVAL,
          "merge nlo > m");
    CHECK(&c, G->merge_split(8, d, (uint64_t *)e, 1, d, (uint64_t *)e, 1, 2, 0, 1,
                             (char *)d + 4, (uint64_t *)((char *)e + 2048), &nout) == GP_EINVAL,
          "merge out_keys overlaps lo");
    CHECK(&c, G->merge_split(8, d, NULL, 1, d, (uint64_t *)e, 1, 2, 0, 1,
                             (char *)d + 2048, (uint64_t *)((char *)e + 2048), &nout) == GP_EINVAL,
          "merge with lo_vals NULL and other values");
    CHECK(&c, G->merge_split(8, d, (uint64_t *)e, 1, d, (uint64_t *)e, 1, 2, 0, 1,
                             (char *)d + 2048, NULL, &nout) == GP_EINVAL,
          "merge with values and out_vals NULL");
    CHECK(&c, G->merge_split(8, NULL, NULL, 0, NULL, NULL, 0, 0, 1, 0, NULL, NULL, &nout) == GP_OK && nout == 0,
          "merge of nothing");
    /* the rank exchange's entries */
    int64_t split = -1;
    unsigned char hb[4096], hc[4096], handle[GP_IPC_HANDLE_BYTES];
    void *mapped = NULL;
    for (int i = 0; i < 4096; i++) hb[i] = (unsigned char)(i * 7 + 1);
    CHECK(&c, (G->caps & GP_CAP_IPC) && !(G->caps & GP_CAP_HOST_MEMORY), "caps %#x", G->caps);
    CHECK(&c, G->merge_path(3, d, NULL, 1, e, NULL, 1, 1, 0, &split) == GP_EINVAL, "merge_path width 3");
    CHECK(&c, G->merge_path(4, d, NULL, 1, e, NULL, 1, 3, 0, &split) == GP_EINVAL, "merge_path t > n");
    CHECK(&c, G->merge_path(4, d, NULL, 1, e, NULL, 1, 1, 1, &split) == GP_EINVAL,
          "merge_path stable without values");
    CHECK(&c, G->merge_path(4, NULL, NULL, 0, e, NULL, 5, 3, 0, &split) == GP_OK && split == 0,
          "merge_path of an empty lo");
    CHECK(&c, G->upload(d, hb, 4096) == GP_OK && G->copy(e, d, 4096) == GP_OK &&
                  G->download_async(hc, e, 4096) == GP_OK && G->download_wait() == GP_OK &&
                  memcmp(hb, hc, 4096) == 0, "copy, download_async / download_wait");
    CHECK(&c, G->copy(e, NULL, 1) == GP_EINVAL && G->download_async(NULL, e, 1) == GP_EINVAL,
          "copy / download_async NULL");
    CHECK(&c, G->synchronize() == GP_OK, "synchronize");
    CHECK(&c, G->ipc_get(d, handle) == GP_OK, "ipc_get: %s", G->last_error());
    CHECK(&c, G->ipc_open(handle, &mapped) != GP_OK, "ipc_open of this process's own handle accepted");
    CHECK(&c, G->ipc_get(NULL, handle) == GP_EINVAL && G->ipc_close(NULL) == GP_EINVAL,
          "ipc NULL arguments");
    CHECK(&c, G->exact_sum(GP_F64, d, 1, 0, &acc) == GP_EINVAL, "exact_sum what = 0");
    CHECK(&c, G->exact_sum(GP_F64, d, 1, GP_SA_VALUES, NULL) == GP_EINVAL, "exact_sum NULL acc");
    CHECK(&c, G->exact_sum(GP_F64, NULL, 1, GP_SA_VALUES, &acc) == GP_EINVAL, "exact_sum NULL y");
    CHECK(&c, G->exact_sum(GP_F64, NULL, 0, GP_SA_SQUARES, &acc) == GP_OK && gp_superacc_sign(&acc) == 0,
          "exact_sum n = 0");
    CHECK(&c, G->last_error()[0] != '\0', "last_error empty after a failure");
    G->free(d);
    G->free(e);
}

int main(int argc, char **argv)
{
    int quick = 0, tiny = 0, cases = 1, merges = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--tiny") == 0) quick = tiny = 1;
        else if (strcmp(argv[i], "--section") == 0 && i + 1 < argc) {
            i++;
            cases = strcmp(argv[i], "all") == 0 || strcmp(argv[i], "cases") == 0;
            merges = strcmp(argv[i], "all") == 0 || strcmp(argv[i], "merge") == 0;
            if (!cases && !merges) {
                fprintf(stderr, "%s: --section: all, cases or merge, not '%s'\n", argv[0], argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: %s [--quick | --tiny] [--section all|cases|merge]\n", argv[0]);
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
    G = gp_backend_cuda(0, why, sizeof why);
    if (!G) {
        printf("FAIL case=init: gp_backend_cuda(0): %s\n0 passed, 1 failed\n", why);
        return 1;
    }
    char name[128] = "?", busid[64] = "?";
    if (gp_cuda_device_info(0, name, sizeof name, busid, sizeof busid) != 0)
        printf("note: gp_cuda_device_info failed: %s\n", G->last_error());
    uint64_t seed = 20261207u;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_gpu_pairs_sums: device 0 of %d: %s (%s); seed %" PRIu64 " (GPUPRIM_TEST_SEED)%s\n", ndev,
           name, busid, seed, tiny ? "; --tiny" : quick ? "; --quick" : "");
    fflush(stdout);

    static const int64_t sizes[] = {0,    1,    2,    7,    31,    32,      33,      1023,
                                    1024, 1025, 4095, 4096, 4097, 65537, 1000003, (1 << 21) + 1};
    static const int64_t tiny_sizes[] = {1, 33, 1025, 4097};
    const int64_t *sz = tiny ? tiny_sizes : sizes;
    const size_t nsz = tiny ? sizeof tiny_sizes / sizeof tiny_sizes[0] : sizeof sizes / sizeof sizes[0];
    if (cases) {
        for (int t = 0; t < GP_NDTYPES; t++) {
            for (size_t k = 0; k < nsz; k++) {
                if (quick && sz[k] > 65537) continue;
                for (int dist = 0; dist < D_COUNT; dist++)
                    if (!tiny || dist == D_UNIFORM || dist == D_FEWUNIQUE || dist == D_SPECIAL)
                        run_case((gp_dtype)t, sz[k], dist, 1);
            }
            printf("  %s cases done (%lld passed, %lld failed so far)\n", gp_dtype_name((gp_dtype)t),
                   g_pass, g_fail);
            fflush(stdout);
        }
    }
    if (merges) {
        test_api();
        test_merge(quick, tiny);
    }
    if (cases && !quick) test_large_sums();
    printf("%lld passed, %lld failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
