/* test_cpu_pairs_sums.c — checks the CPU twins of descending keys, the key + value sort and exact sums (kernels/cpu_sort.c, cpu_exact_sum.c): descending keys,
 * sort_pairs, merge_split_pairs, exact_sum and the gp_superacc host functions) against
 * brute-force references written independently here:
 *   - descending order: qsort with a comparator written from numpy's rule (NaN last, values
 *     descending, +0.0 before -0.0);
 *   - pairs: qsort of (key, value, input position) records; merges: stable sort of the
 *     concatenation lo ++ hi;
 *   - exact sums: a two's-complement big integer of 80 base-2^32 digits (ripple carries),
 *     fed through frexp/ldexp (not the bit decomposition of the twin); the rounding of
 *     gp_superacc_to_double is checked by exact comparison of |S - r| with |S - r'| for
 *     both neighbours r' of r (ties: r even), and overflow against 2^1024 - 2^970.
 * Prints one line per failed check, then "N passed, N failed"; exit 0 / 1. The random seed
 * is printed; GPUPRIM_TEST_SEED=<seed> reproduces a run.
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_check.h" /* CHECK, CTX, g_pass, g_fail */

#include "test_rng.h" /* g_rng, rnd, rnd_unit, now_s */
#include "test_cuts.h" /* gp_test_random_cuts */

static const gp_dtype all_types[GP_NDTYPES] = {GP_F32, GP_F64, GP_I32, GP_I64, GP_U32, GP_U64};
static size_t esz(gp_dtype t) { return (t == GP_F64 || t == GP_I64 || t == GP_U64) ? 8 : 4; }

static uint64_t get_w(size_t w, const void *buf, int64_t i)
{
    if (w == 4) {
        uint32_t u;
        memcpy(&u, (const unsigned char *)buf + (size_t)i * 4, 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, (const unsigned char *)buf + (size_t)i * 8, 8);
    return u;
}
static void put_w(size_t w, void *buf, int64_t i, uint64_t v)
{
    if (w == 4) {
        uint32_t u = (uint32_t)v;
        memcpy((unsigned char *)buf + (size_t)i * 4, &u, 4);
    } else {
        memcpy((unsigned char *)buf + (size_t)i * 8, &v, 8);
    }
}

/* ---- element generation ---------------------------------------------------------------- */

static const uint32_t sp_f32[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu,
                                  0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000000u,
                                  0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                  0x3F800000u, 0xBF800000u};
static const uint64_t sp_f64[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull,
                                  0x7FF0000000000001ull, 0xFFFFFFFFFFFFFFFFull,
                                  0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                  0x8000000000000000ull, 0x0000000000000000ull,
                                  0x0000000000000001ull, 0x800FFFFFFFFFFFFFull,
                                  0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
                                  0x3FF0000000000000ull, 0xBFF0000000000000ull};
static const uint64_t sp_int[] = {0, 1, 0x7FFFFFFFull, 0x80000000ull, 0xFFFFFFFFull,
                                  0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
                                  0xFFFFFFFFFFFFFFFFull, 0x8000000000000001ull};

/* Random bits of an element of t: floats half special values, half random; ints a mix. */
static uint64_t rnd_bits(gp_dtype t)
{
    const uint64_t r = rnd();
    switch (t) {
    case GP_F32: return (r & 1) ? sp_f32[rnd() % (sizeof sp_f32 / 4)]
                                : (uint32_t)(rnd() % 3 ? (uint32_t)rnd() : (uint32_t)(rnd() % 8));
    case GP_F64: return (r & 1) ? sp_f64[rnd() % (sizeof sp_f64 / 8)]
                                : (rnd() % 3 ? rnd() : rnd() % 8 + 0x3FF0000000000000ull);
    default: {
        uint64_t v = (r & 1) ? sp_int[rnd() % (sizeof sp_int / 8)] : rnd();
        return esz(t) == 4 ? (uint32_t)v : v;
    }
    }
}

/* ---- descending keys --------------------------------------------------------------------- */

static gp_dtype g_cmp_t;
static int isnan_bits(gp_dtype t, uint64_t b)
{
    if (t == GP_F32) return (b & 0x7FFFFFFFu) > 0x7F800000u;
    if (t == GP_F64) return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    return 0;
}
/* numpy's descending order from the values: NaN last, larger first, +0.0 before -0.0. */
static int cmp_desc_elems(const void *pa, const void *pb)
{
    const gp_dtype t = g_cmp_t;
    const uint64_t a = get_w(esz(t), pa, 0), b = get_w(esz(t), pb, 0);
    const int na = isnan_bits(t, a), nb = isnan_bits(t, b);
    if (na || nb) return na - nb;
    switch (t) {
    case GP_F32: case GP_F64: {
        double x, y;
        if (t == GP_F32) {
            float fx, fy;
            uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
            memcpy(&fx, &ua, 4);
            memcpy(&fy, &ub, 4);
            x = fx;
            y = fy;
        } else {
            memcpy(&x, &a, 8);
            memcpy(&y, &b, 8);
        }
        if (x > y) return -1;
        if (x < y) return 1;
        return (signbit(x) != 0) - (signbit(y) != 0); /* +0 first */
    }
    case GP_I32: { int32_t x = (int32_t)(uint32_t)a, y = (int32_t)(uint32_t)b; return (x < y) - (x > y); }
    case GP_I64: { int64_t x = (int64_t)a, y = (int64_t)b; return (x < y) - (x > y); }
    default: return (a < b) - (a > b);
    }
}

static void test_desc_keys(void)
{
    static const int64_t sizes[] = {0, 1, 2, 3, 17, 64, 65, 1000, 40000};
    for (int ti = 0; ti < GP_NDTYPES; ti++) {
        const gp_dtype t = all_types[ti];
        const size_t w = esz(t);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const int64_t n = sizes[si];
            CTX("desc keys %s n=%lld", gp_dtype_name(t), (long long)n);
            void *e = xmalloc((size_t)n * w), *k = xmalloc((size_t)n * w),
                 *ref = xmalloc((size_t)n * w);
            for (int64_t i = 0; i < n; i++) put_w(w, e, i, rnd_bits(t));
            memcpy(k, e, (size_t)n * w);
            CHECK(gp_cpu_to_keys_desc(t, k, n) == GP_OK, "to_keys_desc failed");
            int okmap = 1, okinv = 1;
            for (int64_t i = 0; i < n; i++) {
                uint64_t asc = gp_key_of(t, (const unsigned char *)e + (size_t)i * w);
                uint64_t dk = get_w(w, k, i);
                if (dk != gp_key_desc(t, asc)) okmap = 0;
                if (gp_key_undesc(t, dk) != asc) okinv = 0;
                /* the definition, written out */
                uint64_t all = w == 4 ? 0xFFFFFFFFull : ~0ull;
                uint64_t want = (gp_dtype_is_float(t) && asc == all) ? all : (~asc & all);
                if (dk != want) okmap = 0;
            }
            CHECK(okmap, "desc key != definition");
            CHECK(okinv, "gp_key_undesc does not invert gp_key_desc");
            /* sort and map back: must equal the reference order (NaNs canonical) */
            CHECK(gp_cpu_sort_keys((int)w, k, n) == GP_OK, "sort_keys failed");
            CHECK(gp_cpu_from_keys_desc(t, k, n) == GP_OK, "from_keys_desc failed");
            memcpy(ref, e, (size_t)n * w);
            g_cmp_t = t;
            qsort(ref, (size_t)n, w, cmp_desc_elems);
            int okord = 1;
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = get_w(w, ref, i);
                if (isnan_bits(t, r)) r = (t == GP_F32) ? 0x7FC00000ull : 0x7FF8000000000000ull;
                if (r != get_w(w, k, i)) {
                    okord = 0;
                    CHECK(0, "position %lld: got %016" PRIx64 " want %016" PRIx64, (long long)i,
                          get_w(w, k, i), r);
                    break;
                }
            }
            CHECK(okord, "descending order differs from the reference");
            free(e);
            free(k);
            free(ref);
        }
        /* explicit order facts */
        CTX("desc keys facts %s", gp_dtype_name(t));
        if (t == GP_F32 || t == GP_F64) {
            uint64_t pz = 0, nz = w == 4 ? 0x80000000ull : 0x8000000000000000ull;
            uint64_t nan = w == 4 ? 0x7FC00000ull : 0x7FF8000000000000ull;
            uint64_t ninf = w == 4 ? 0xFF800000ull : 0xFFF0000000000000ull;
            unsigned char b[8];
            put_w(w, b, 0, pz);
            uint64_t kpz = gp_key_desc(t, gp_key_of(t, b));
            put_w(w, b, 0, nz);
            uint64_t knz = gp_key_desc(t, gp_key_of(t, b));
            put_w(w, b, 0, nan);
            uint64_t knan = gp_key_desc(t, gp_key_of(t, b));
            put_w(w, b, 0, ninf);
            uint64_t kninf = gp_key_desc(t, gp_key_of(t, b));
            CHECK(kpz < knz, "+0.0 not before -0.0 in descending order");
            CHECK(kninf < knan, "-inf not before NaN in descending order");
            CHECK(knan == (w == 4 ? 0xFFFFFFFFull : ~0ull), "NaN desc key not all ones");
        } else {
            unsigned char b[8];
            put_w(w, b, 0, t == GP_I32 ? 0x7FFFFFFFull : t == GP_I64 ? 0x7FFFFFFFFFFFFFFFull : (w == 4 ? 0xFFFFFFFFull : ~0ull));
            CHECK(gp_key_desc(t, gp_key_of(t, b)) == 0, "largest value's desc key not 0");
        }
    }
    CTX("desc keys errors");
    CHECK(gp_cpu_to_keys_desc((gp_dtype)GP_NDTYPES, NULL, 0) == GP_EINVAL, "bad dtype accepted");
    CHECK(gp_cpu_from_keys_desc(GP_F32, NULL, 1) == GP_EINVAL, "NULL buf accepted");
    CHECK(gp_cpu_to_keys_desc(GP_F32, NULL, -1) == GP_EINVAL, "n < 0 accepted");
    CHECK(gp_cpu_last_error()[0] != '\0', "no error message");
}

/* ---- sort_pairs ---------------------------------------------------------------------------- */

typedef struct rec {
    uint64_t key, val;
    int64_t pos;
} rec;
static int cmp_rec_kv(const void *pa, const void *pb)
{
    const rec *a = (const rec *)pa, *b = (const rec *)pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->val != b->val) return a->val < b->val ? -1 : 1;
    return 0;
}
static int cmp_rec_kpos(const void *pa, const void *pb)
{
    const rec *a = (const rec *)pa, *b = (const rec *)pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

enum { PD_RANDOM, PD_EQUAL, PD_SORTED, PD_REVERSED, PD_FEW, PD_NDIST };
static const char *const pd_names[PD_NDIST] = {"random", "all-equal", "sorted", "reversed",
                                               "few-unique"};

static void gen_keys(int w, int dist, int64_t n, void *k)
{
    const uint64_t mask = w == 4 ? 0xFFFFFFFFull : ~0ull;
    const uint64_t c = rnd() & mask;
    uint64_t few[4] = {0, mask, rnd() & mask, rnd() & mask};
    for (int64_t i = 0; i < n; i++) {
        uint64_t v;
        switch (dist) {
        case PD_EQUAL: v = c; break;
        case PD_SORTED: v = (uint64_t)i * 3; break;
        case PD_REVERSED: v = (uint64_t)(n - i) * 5; break;
        case PD_FEW: v = few[rnd() % 4]; break;
        default: v = rnd() & mask; break;
        }
        put_w((size_t)w, k, i, v & mask);
    }
}

static void check_sort_pairs(int w, int dist, int64_t n, int vmode)
{
    CTX("sort_pairs w=%d dist=%s n=%lld vals=%s", w, pd_names[dist], (long long)n,
        vmode == 0 ? "position" : vmode == 1 ? "random" : "few");
    void *k0 = xmalloc((size_t)n * w), *k = xmalloc((size_t)n * w + 64);
    uint64_t *v0 = (uint64_t *)xmalloc((size_t)n * 8), *v = (uint64_t *)xmalloc((size_t)n * 8 + 64);
    rec *r = (rec *)xmalloc((size_t)n * sizeof(rec));
    gen_keys(w, dist, n, k0);
    for (int64_t i = 0; i < n; i++)
        v0[i] = vmode == 0 ? (uint64_t)i : vmode == 1 ? rnd() : rnd() % 3;
    for (int64_t i = 0; i < n; i++) {
        r[i].key = get_w((size_t)w, k0, i);
        r[i].val = v0[i];
        r[i].pos = i;
    }
    for (int stable = 0; stable <= 1; stable++) {
        memcpy(k, k0, (size_t)n * w);
        memcpy(v, v0, (size_t)n * 8);
        memset((unsigned char *)k + (size_t)n * w, 0xA5, 64);
        memset((unsigned char *)v + (size_t)n * 8, 0xA5, 64);
        CHECK(gp_cpu_sort_pairs(w, k, v, n, stable) == GP_OK, "sort_pairs(stable=%d): %s", stable,
              gp_cpu_last_error());
        /* stable: the (key, value) order; not stable: this twin keeps input order of equal
         * keys (also implies: keys sorted and the multiset of pairs kept) */
        qsort(r, (size_t)n, sizeof(rec), stable ? cmp_rec_kv : cmp_rec_kpos);
        int ok = 1;
        for (int64_t i = 0; i < n && ok; i++)
            if (get_w((size_t)w, k, i) != r[i].key || v[i] != r[i].val) {
                ok = 0;
                CHECK(0, "stable=%d position %lld: got (%" PRIx64 ", %" PRIu64 ") want (%" PRIx64
                         ", %" PRIu64 ")", stable, (long long)i, get_w((size_t)w, k, i), v[i],
                      r[i].key, r[i].val);
            }
        CHECK(ok, "stable=%d result differs from the reference", stable);
        int guard = 1;
        for (int b = 0; b < 64; b++)
            if (((unsigned char *)k)[(size_t)n * w + b] != 0xA5 ||
                ((unsigned char *)v)[(size_t)n * 8 + b] != 0xA5)
                guard = 0;
        CHECK(guard, "written past n");
        if (!stable) { /* keys equal sort_keys' result */
            void *kk = xmalloc((size_t)n * w);
            memcpy(kk, k0, (size_t)n * w);
            gp_cpu_sort_keys(w, kk, n);
            CHECK(memcmp(kk, k, (size_t)n * w) == 0, "keys differ from sort_keys");
            free(kk);
        }
        /* restore record order for the next qsort */
        for (int64_t i = 0; i < n; i++) {
            r[i].key = get_w((size_t)w, k0, i);
            r[i].val = v0[i];
            r[i].pos = i;
        }
    }
    free(k0);
    free(k);
    free(v0);
    free(v);
    free(r);
}

static void test_sort_pairs(void)
{
    static const int64_t sizes[] = {0, 1, 2, 5, 63, 64, 65, 1000, 4097, 100003};
    for (int w = 4; w <= 8; w += 4)
        for (int d = 0; d < PD_NDIST; d++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                for (int vm = 0; vm < 3; vm++) check_sort_pairs(w, d, sizes[s], vm);
    CTX("sort_pairs errors");
    uint64_t v[4];
    uint32_t k[4];
    CHECK(gp_cpu_sort_pairs(5, k, v, 4, 1) == GP_EINVAL, "width 5 accepted");
    CHECK(gp_cpu_sort_pairs(4, NULL, v, 4, 1) == GP_EINVAL, "NULL keys accepted");
    CHECK(gp_cpu_sort_pairs(4, k, NULL, 4, 1) == GP_EINVAL, "NULL vals accepted");
    CHECK(gp_cpu_sort_pairs(4, k, v, -1, 1) == GP_EINVAL, "n < 0 accepted");
    CHECK(gp_cpu_sort_pairs(8, v, v, 4, 1) == GP_EINVAL, "keys == vals accepted");
    CHECK(gp_cpu_sort_pairs(4, NULL, NULL, 0, 1) == GP_OK, "n = 0 with NULL rejected");
    /* large: 10^7 pairs, stable with positions */
    const int64_t n = 10000000;
    uint64_t *kk = (uint64_t *)xmalloc((size_t)n * 8), *vv = (uint64_t *)xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) {
        kk[i] = rnd() % 1000003;
        vv[i] = (uint64_t)i;
    }
    double t0 = now_s();
    CTX("sort_pairs 1e7");
    CHECK(gp_cpu_sort_pairs(8, kk, vv, n, 1) == GP_OK, "failed");
    double t1 = now_s();
    int ok = 1;
    for (int64_t i = 1; i < n; i++)
        if (kk[i - 1] > kk[i] || (kk[i - 1] == kk[i] && vv[i - 1] >= vv[i])) ok = 0;
    CHECK(ok, "10^7 pairs not in (key, position) order");
    printf("sort_pairs: 10^7 8-byte keys + positions, stable, in %.3f s\n", t1 - t0);
    free(kk);
    free(vv);
}

/* ---- merge_split_pairs ------------------------------------------------------------------------ */

typedef struct mrec {
    uint64_t key, val;
    int side; /* 0 lo, 1 hi */
    int64_t idx;
} mrec;
static int g_mstable;
static int cmp_mrec(const void *pa, const void *pb)
{
    const mrec *a = (const mrec *)pa, *b = (const mrec *)pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (g_mstable && a->val != b->val) return a->val < b->val ? -1 : 1;
    if (a->side != b->side) return a->side - b->side;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* nlo / nhi sorted pairs (by key, or (key, value) when stable) of few-unique keys/values. */
static void sorted_pairs(int w, int stable, int64_t n, int spread, void *k, uint64_t *v)
{
    for (int64_t i = 0; i < n; i++) {
        put_w((size_t)w, k, i, rnd() % (uint64_t)spread);
        v[i] = rnd() % 4;
    }
    gp_cpu_sort_pairs(w, k, v, n, stable);
}

static void check_merge(int w, int stable, int64_t nlo, int64_t nhi, int64_t m, int spread)
{
    CTX("merge_split_pairs w=%d stable=%d nlo=%lld nhi=%lld m=%lld spread=%d", w, stable,
        (long long)nlo, (long long)nhi, (long long)m, spread);
    void *lk = xmalloc((size_t)nlo * w), *hk = xmalloc((size_t)nhi * w);
    uint64_t *lv = (uint64_t *)xmalloc((size_t)nlo * 8), *hv = (uint64_t *)xmalloc((size_t)nhi * 8);
    sorted_pairs(w, stable, nlo, spread, lk, lv);
    sorted_pairs(w, stable, nhi, spread, hk, hv);
    const int64_t total = nlo + nhi;
    mrec *all = (mrec *)xmalloc((size_t)total * sizeof(mrec));
    for (int64_t i = 0; i < nlo; i++) all[i] = (mrec){get_w((size_t)w, lk, i), lv[i], 0, i};
    for (int64_t i = 0; i < nhi; i++) all[nlo + i] = (mrec){get_w((size_t)w, hk, i), hv[i], 1, i};
    g_mstable = stable;
    qsort(all, (size_t)total, sizeof(mrec), cmp_mrec);
    void *ok = xmalloc((size_t)m * w + 64);
    uint64_t *ov = (uint64_t *)xmalloc((size_t)m * 8 + 64);
    for (int up = 0; up <= 1; up++) {
        memset(ok, 0xA5, (size_t)m * w + 64);
        memset(ov, 0xA5, (size_t)m * 8 + 64);
        int64_t nout = -7;
        CHECK(gp_cpu_merge_split_pairs(w, lk, lv, nlo, hk, hv, nhi, m, up, stable, ok, ov,
                                       &nout) == GP_OK,
              "failed: %s", gp_cpu_last_error());
        const int64_t r0 = up ? m : 0, r1 = up ? total : (total < m ? total : m);
        const int64_t c = r1 > r0 ? r1 - r0 : 0;
        CHECK(nout == c, "keep_upper=%d nout %lld != %lld", up, (long long)nout, (long long)c);
        int good = 1;
        for (int64_t q = 0; q < c && good; q++)
            if (get_w((size_t)w, ok, q) != all[r0 + q].key || ov[q] != all[r0 + q].val) good = 0;
        CHECK(good, "keep_upper=%d output differs from the naive merge", up);
        int guard = 1;
        for (size_t b = (size_t)c * w; b < (size_t)m * w + 64; b++)
            if (((unsigned char *)ok)[b] != 0xA5) guard = 0;
        for (size_t b = (size_t)c * 8; b < (size_t)m * 8 + 64; b++)
            if (((unsigned char *)ov)[b] != 0xA5) guard = 0;
        CHECK(guard, "keep_upper=%d written past nout", up);
    }
    free(lk);
    free(hk);
    free(lv);
    free(hv);
    free(all);
    free(ok);
    free(ov);
}

static void test_merge_pairs(void)
{
    static const int64_t fixed[][3] = {{0, 0, 0},   {0, 0, 5},     {0, 5, 5},      {5, 0, 5},
                                       {3, 5, 5},   {5, 5, 5},     {1, 1, 1},      {1000, 700, 1000},
                                       {7, 2, 9},   {2049, 2048, 3000}, {4097, 1, 4097}};
    for (int w = 4; w <= 8; w += 4)
        for (int st = 0; st <= 1; st++)
            for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
                check_merge(w, st, fixed[k][0], fixed[k][1], fixed[k][2], 5);
                check_merge(w, st, fixed[k][0], fixed[k][1], fixed[k][2], 1 << 30);
            }
    for (int r = 0; r < 200; r++) {
        const int64_t m = (int64_t)(rnd() % 300);
        const int64_t nlo = m ? (int64_t)(rnd() % (uint64_t)(m + 1)) : 0;
        const int64_t nhi = m ? (int64_t)(rnd() % (uint64_t)(m + 1)) : 0;
        check_merge(r & 1 ? 8 : 4, (r >> 1) & 1, nlo, nhi, m, (r >> 2) & 1 ? 3 : 100000);
    }
    CTX("merge_split_pairs errors");
    uint64_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, o[8], ov[8];
    int64_t nout;
    CHECK(gp_cpu_merge_split_pairs(3, a, a, 1, b, b, 1, 1, 0, 1, o, ov, &nout) == GP_EINVAL, "width 3");
    CHECK(gp_cpu_merge_split_pairs(8, a, a, 3, b, b, 1, 2, 0, 1, o, ov, &nout) == GP_EINVAL, "nlo > m");
    CHECK(gp_cpu_merge_split_pairs(8, a, a, 1, b, b, 1, 2, 0, 1, o, ov, NULL) == GP_EINVAL, "NULL nout");
    CHECK(gp_cpu_merge_split_pairs(8, a, a, 1, b, b, 1, 2, 0, 1, a, ov, &nout) == GP_EINVAL, "out == lo");
    CHECK(gp_cpu_merge_split_pairs(8, a, a, 1, b, b, 1, 2, 0, 1, o, o, &nout) == GP_EINVAL, "out_keys == out_vals");
    CHECK(gp_cpu_merge_split_pairs(8, a, NULL, 1, b, b, 1, 2, 0, 1, o, ov, &nout) == GP_EINVAL, "NULL lo_vals");
    CHECK(gp_cpu_merge_split_pairs(8, NULL, NULL, 0, NULL, NULL, 0, 0, 1, 0, NULL, NULL, &nout) == GP_OK &&
              nout == 0, "merge of nothing");
}

/* ---- exact sums: the reference big integer ------------------------------------------------------ */

#define RD 80 /* digits of 32 bits, two's complement; unit 2^-1074 */
typedef struct big {
    uint32_t d[RD];
} big;

/* b += (neg ? -1 : 1) * M * 2^shift (shift >= 0), ripple carry / borrow to the top. */
static void big_add_shifted(big *b, uint64_t M, int shift, int neg)
{
    if (M == 0) return;
    uint32_t w[4] = {0, 0, 0, 0};
    const int q = shift / 32, r = shift % 32;
    /* w = M << r as 96 bits */
    w[0] = (uint32_t)(M << r);
    w[1] = (uint32_t)((M << r) >> 32);
    w[2] = r ? (uint32_t)(M >> (64 - r)) : 0;
    uint64_t carry = 0;
    if (!neg) {
        for (int k = q; k < RD; k++) {
            uint64_t add = (k - q < 3) ? w[k - q] : 0;
            if (k - q >= 3 && carry == 0) break;
            uint64_t s = (uint64_t)b->d[k] + add + carry;
            b->d[k] = (uint32_t)s;
            carry = s >> 32;
        }
    } else {
        uint64_t borrow = 0;
        for (int k = q; k < RD; k++) {
            uint64_t sub = (k - q < 3) ? w[k - q] : 0;
            if (k - q >= 3 && borrow == 0) break;
            uint64_t x = (uint64_t)b->d[k];
            uint64_t need = sub + borrow;
            b->d[k] = (uint32_t)(x - need);
            borrow = x < need;
        }
    }
}

/* b += x exactly for a finite x, decomposed with frexp / ldexp. */
static void big_add_double(big *b, double x)
{
    if (x == 0) return;
    int e;
    double m = frexp(fabs(x), &e); /* |x| = m 2^e, m in [0.5, 1) */
    uint64_t M = (uint64_t)ldexp(m, 53); /* exact: |x| has at most 53 significant bits */
    int shift = e - 53 + 1074;
    while (shift < 0) { /* subnormal: M has enough trailing zeros */
        M >>= 1;
        shift++;
    }
    big_add_shifted(b, M, shift, x < 0);
}

static int big_neg(const big *b) { return (b->d[RD - 1] >> 31) != 0; }
static void big_negate(big *b)
{
    uint64_t carry = 1;
    for (int k = 0; k < RD; k++) {
        uint64_t s = (uint64_t)(uint32_t)~b->d[k] + carry;
        b->d[k] = (uint32_t)s;
        carry = s >> 32;
    }
}
/* compares |a| and |b|: -1, 0, 1 */
static int big_cmp_abs(const big *a, const big *b)
{
    big x = *a, y = *b;
    if (big_neg(&x)) big_negate(&x);
    if (big_neg(&y)) big_negate(&y);
    for (int k = RD - 1; k >= 0; k--)
        if (x.d[k] != y.d[k]) return x.d[k] < y.d[k] ? -1 : 1;
    return 0;
}

/* Accumulator limbs == reference digits (both normalised forms of the same integer). */
static int acc_equals_big(const gp_superacc *a, const big *b)
{
    for (int i = 0; i < GP_SA_LIMBS - 1; i++)
        if (a->limb[i] != (int64_t)b->d[i]) return 0;
    const int64_t top = (int64_t)((uint64_t)b->d[GP_SA_LIMBS - 1] |
                                  ((uint64_t)b->d[GP_SA_LIMBS] << 32));
    const uint32_t ext = top < 0 ? 0xFFFFFFFFu : 0;
    for (int k = GP_SA_LIMBS + 1; k < RD; k++)
        if (b->d[k] != ext) return 0;
    return a->limb[GP_SA_LIMBS - 1] == top;
}

/* r is the correctly rounded (nearest, ties even) value of the exact sum S (finite S). */
static int rounding_ok(const big *S, double r, char *why, size_t wl)
{
    if (isnan(r)) {
        snprintf(why, wl, "NaN for a finite sum");
        return 0;
    }
    if (isinf(r)) { /* overflow: |S| >= 2^1024 - 2^970, sign agrees */
        big th;
        memset(&th, 0, sizeof th);
        big_add_double(&th, DBL_MAX);
        big_add_double(&th, ldexp(1.0, 970));
        if (big_cmp_abs(S, &th) < 0 || (r < 0) != big_neg(S)) {
            snprintf(why, wl, "overflowed to %g below the threshold", r);
            return 0;
        }
        return 1;
    }
    big d0 = *S;
    big_add_double(&d0, -r);
    const double nb[2] = {nextafter(r, INFINITY), nextafter(r, -INFINITY)};
    for (int s = 0; s < 2; s++) {
        if (isinf(nb[s])) {
            /* r = ±DBL_MAX: beyond it the sum would have overflowed; require |S - r| <= half ulp */
            big h;
            memset(&h, 0, sizeof h);
            big_add_double(&h, ldexp(1.0, 970));
            if (big_cmp_abs(&d0, &h) > 0) {
                snprintf(why, wl, "%a is more than half an ulp from the sum", r);
                return 0;
            }
            continue;
        }
        big d1 = *S;
        big_add_double(&d1, -nb[s]);
        const int c = big_cmp_abs(&d0, &d1);
        if (c > 0) {
            snprintf(why, wl, "%a is nearer the exact sum than %a", nb[s], r);
            return 0;
        }
        if (c == 0) {
            uint64_t u;
            memcpy(&u, &r, 8);
            if (u & 1) {
                snprintf(why, wl, "tie rounded to the odd %a", r);
                return 0;
            }
        }
    }
    return 1;
}

/* ---- exact sums: tests -------------------------------------------------------------------------- */

/* Element i of y (type t) as the term the reference adds (VALUES / SQUARES); returns 0
 * for a finite term (written to *big via add), 1 NaN, 2 +inf, 3 -inf. */
static int ref_term(gp_dtype t, const void *y, int64_t i, int sq, big *b)
{
    double x;
    const unsigned char *p = (const unsigned char *)y + (size_t)i * esz(t);
    switch (t) {
    case GP_F32: { float f; memcpy(&f, p, 4); x = f; break; }
    case GP_F64: memcpy(&x, p, 8); break;
    case GP_I32: { int32_t v; memcpy(&v, p, 4); if (!sq) { big_add_shifted(b, v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v, 1074, v < 0); return 0; } x = (double)v; break; }
    case GP_U32: { uint32_t v; memcpy(&v, p, 4); if (!sq) { big_add_shifted(b, v, 1074, 0); return 0; } x = (double)v; break; }
    case GP_I64: { int64_t v; memcpy(&v, p, 8); if (!sq) { big_add_shifted(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 1074, v < 0); return 0; } x = (double)v; break; }
    default: { uint64_t v; memcpy(&v, p, 8); if (!sq) { big_add_shifted(b, v, 1074, 0); return 0; } x = (double)v; break; }
    }
    if (isnan(x)) return 1;
    if (sq) x = x * x;
    if (isinf(x)) return x > 0 ? 2 : 3;
    big_add_double(b, x);
    return 0;
}

/* exact_sum of y against the reference: limbs, counts and the rounded value. */
static void check_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what, const char *label)
{
    CTX("exact_sum %s %s n=%lld %s", gp_dtype_name(t), what == GP_SA_SQUARES ? "squares" : "values",
        (long long)n, label);
    big S;
    memset(&S, 0, sizeof S);
    int64_t cnt[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n; i++) cnt[ref_term(t, y, i, what == GP_SA_SQUARES, &S)]++;
    gp_superacc a;
    gp_superacc_zero(&a);
    CHECK(gp_cpu_exact_sum(t, y, n, what, &a) == GP_OK, "failed: %s", gp_cpu_last_error());
    CHECK(acc_equals_big(&a, &S), "limbs differ from the reference big integer");
    CHECK(a.nan == cnt[1] && a.pinf == cnt[2] && a.ninf == cnt[3],
          "counts nan %lld pinf %lld ninf %lld, want %lld %lld %lld", (long long)a.nan,
          (long long)a.pinf, (long long)a.ninf, (long long)cnt[1], (long long)cnt[2],
          (long long)cnt[3]);
    const double r = gp_superacc_to_double(&a);
    if (cnt[1] || (cnt[2] && cnt[3])) CHECK(isnan(r), "want NaN, got %a", r);
    else if (cnt[2]) CHECK(r == INFINITY, "want +inf, got %a", r);
    else if (cnt[3]) CHECK(r == -INFINITY, "want -inf, got %a", r);
    else {
        char why[200] = "";
        CHECK(rounding_ok(&S, r, why, sizeof why), "to_double %a: %s", r, why);
    }
}

/* Splits y into random pieces, sums them in a random order (each piece into its own
 * accumulator, combined by gp_superacc_add in random pairs; and all pieces directly into one
 * accumulator in another order): every result must be bytewise equal to the whole-array one. */
static void check_splits(gp_dtype t, const void *y, int64_t n, unsigned what)
{
    CTX("exact_sum splits %s n=%lld", gp_dtype_name(t), (long long)n);
    gp_superacc whole;
    gp_superacc_zero(&whole);
    gp_cpu_exact_sum(t, y, n, what, &whole);
    const size_t w = esz(t);
    for (int rep = 0; rep < 4; rep++) {
        int np = 1 + (int)(rnd() % 40);
        int64_t *cut = (int64_t *)xmalloc((size_t)(np + 1) * 8);
        gp_test_random_cuts(cut, np, n, rnd);
        gp_superacc *parts = (gp_superacc *)xmalloc((size_t)np * sizeof(gp_superacc));
        int *ord = (int *)xmalloc((size_t)np * sizeof(int));
        for (int p = 0; p < np; p++) {
            gp_superacc_zero(&parts[p]);
            gp_cpu_exact_sum(t, (const unsigned char *)y + (size_t)cut[p] * w, cut[p + 1] - cut[p],
                             what, &parts[p]);
            ord[p] = p;
        }
        for (int p = np - 1; p > 0; p--) {
            int q = (int)(rnd() % (uint64_t)(p + 1)), s = ord[p];
            ord[p] = ord[q];
            ord[q] = s;
        }
        /* direct: pieces added into one accumulator in the shuffled order */
        gp_superacc direct;
        gp_superacc_zero(&direct);
        for (int p = 0; p < np; p++)
            gp_cpu_exact_sum(t, (const unsigned char *)y + (size_t)cut[ord[p]] * w,
                             cut[ord[p] + 1] - cut[ord[p]], what, &direct);
        CHECK(memcmp(&direct, &whole, sizeof whole) == 0, "pieces in order %d.. differ", ord[0]);
        /* tree: repeatedly combine two random accumulators */
        int live = np;
        while (live > 1) {
            int a = (int)(rnd() % (uint64_t)live), b = (int)(rnd() % (uint64_t)(live - 1));
            if (b >= a) b++;
            gp_superacc_add(&parts[a], &parts[b]);
            parts[b] = parts[live - 1];
            live--;
        }
        CHECK(memcmp(&parts[0], &whole, sizeof whole) == 0, "random combine tree differs");
        free(cut);
        free(parts);
        free(ord);
    }
}

/* a random double with an exponent anywhere in [-1074, 1023] */
static double rnd_wide(void)
{
    double m = 1.0 + rnd_unit();
    int e = (int)(rnd() % 2090) - 1070;
    double x = ldexp(m, e);
    return (rnd() & 1) ? -x : x;
}

static void shuffle_bytes(void *buf, int64_t n, size_t w)
{
    unsigned char tmp[8];
    unsigned char *p = (unsigned char *)buf;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rnd() % (uint64_t)(i + 1));
        memcpy(tmp, p + i * w, w);
        memcpy(p + i * w, p + j * w, w);
        memcpy(p + j * w, tmp, w);
    }
}

static void test_exact_sum(void)
{
    /* 1. adversarial doubles: 1e-300..1e300, x and -x pairs, plus tiny ones and denormals */
    {
        const int64_t n = 200000;
        double *y = (double *)xmalloc((size_t)n * 8);
        int64_t k = 0;
        while (k + 2 <= n - 1000) {
            double x = pow(10.0, -300.0 + 600.0 * rnd_unit()) * ((rnd() & 1) ? 1 : -1);
            y[k++] = x;
            y[k++] = -x;
        }
        while (k < n) y[k++] = (rnd() & 1) ? ldexp((double)(rnd() % 1000), -1074) : rnd_wide() * 1e-200;
        shuffle_bytes(y, n, 8);
        check_exact_sum(GP_F64, y, n, GP_SA_VALUES, "cancelling pairs");
        check_exact_sum(GP_F64, y, n, GP_SA_SQUARES, "cancelling pairs");
        check_splits(GP_F64, y, n, GP_SA_VALUES);
        check_splits(GP_F64, y, n, GP_SA_SQUARES);
        /* any permutation gives the same bytes */
        gp_superacc a, b;
        gp_superacc_zero(&a);
        gp_superacc_zero(&b);
        gp_cpu_exact_sum(GP_F64, y, n, GP_SA_VALUES, &a);
        shuffle_bytes(y, n, 8);
        gp_cpu_exact_sum(GP_F64, y, n, GP_SA_VALUES, &b);
        CTX("exact_sum permutation");
        CHECK(memcmp(&a, &b, sizeof a) == 0, "a permutation changed the accumulator");
        /* add_double agrees with exact_sum */
        gp_superacc c;
        gp_superacc_zero(&c);
        for (int64_t i = 0; i < n; i++) gp_superacc_add_double(&c, y[i]);
        CHECK(memcmp(&a, &c, sizeof a) == 0, "gp_superacc_add_double differs from exact_sum");
        free(y);
    }
    /* 2. wide random doubles (all exponents) and f32 bit patterns incl. specials */
    {
        const int64_t n = 100003;
        double *y = (double *)xmalloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++) y[i] = rnd_wide();
        check_exact_sum(GP_F64, y, n, GP_SA_VALUES, "wide");
        check_exact_sum(GP_F64, y, n, GP_SA_SQUARES, "wide");
        check_splits(GP_F64, y, n, GP_SA_SQUARES);
        for (int64_t i = 0; i < n; i++) {
            uint64_t b = rnd_bits(GP_F64);
            memcpy(&y[i], &b, 8);
        }
        check_exact_sum(GP_F64, y, n, GP_SA_VALUES, "special bits");
        check_exact_sum(GP_F64, y, n, GP_SA_SQUARES, "special bits");
        /* the same without NaN / inf so that the rounding check runs */
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(y[i])) y[i] = ldexp(1.0, -1074) * (double)(i % 5);
        check_exact_sum(GP_F64, y, n, GP_SA_VALUES, "special bits, finite");
        check_splits(GP_F64, y, n, GP_SA_VALUES);
        uint32_t *f = (uint32_t *)xmalloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) f[i] = (uint32_t)rnd_bits(GP_F32);
        check_exact_sum(GP_F32, f, n, GP_SA_VALUES, "special bits");
        check_exact_sum(GP_F32, f, n, GP_SA_SQUARES, "special bits");
        for (int64_t i = 0; i < n; i++)
            if ((f[i] & 0x7F800000u) == 0x7F800000u) f[i] = (uint32_t)i & 0x807FFFFFu;
        check_exact_sum(GP_F32, f, n, GP_SA_VALUES, "finite bits");
        check_exact_sum(GP_F32, f, n, GP_SA_SQUARES, "finite bits");
        check_splits(GP_F32, f, n, GP_SA_VALUES);
        free(y);
        free(f);
    }
    /* 3. integers of every type at the extremes, many times */
    for (int ti = 2; ti < GP_NDTYPES; ti++) {
        const gp_dtype t = all_types[ti];
        const size_t w = esz(t);
        const int64_t n = 300001;
        void *y = xmalloc((size_t)n * w);
        const uint64_t ext[3] = {t == GP_I32 ? 0x80000000ull : t == GP_I64 ? 0x8000000000000000ull : (w == 4 ? 0xFFFFFFFFull : ~0ull),
                                 t == GP_I32 ? 0x7FFFFFFFull : t == GP_I64 ? 0x7FFFFFFFFFFFFFFFull : 0,
                                 w == 4 ? 0xFFFFFFFFull : ~0ull};
        for (int mode = 0; mode < 3; mode++) {
            for (int64_t i = 0; i < n; i++)
                put_w(w, y, i, mode == 0 ? ext[0] : mode == 1 ? ext[rnd() % 3] : rnd_bits(t));
            check_exact_sum(t, y, n, GP_SA_VALUES, mode == 0 ? "extreme" : mode == 1 ? "extremes" : "mixed");
            check_exact_sum(t, y, n, GP_SA_SQUARES, mode == 0 ? "extreme" : mode == 1 ? "extremes" : "mixed");
            check_splits(t, y, n, GP_SA_VALUES);
        }
        /* the exact integer, beyond double precision: n * UINT64_MAX or n * INT64_MIN */
        CTX("exact_sum integer exactness %s", gp_dtype_name(t));
        for (int64_t i = 0; i < n; i++) put_w(w, y, i, ext[0]);
        gp_superacc a;
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(t, y, n, GP_SA_VALUES, &a);
        big S;
        memset(&S, 0, sizeof S);
        for (int64_t i = 0; i < n; i++) ref_term(t, y, i, 0, &S);
        CHECK(acc_equals_big(&a, &S), "n x extreme not exact");
        free(y);
    }
    /* 4. NaN / inf counting and the result's class */
    {
        CTX("exact_sum classes");
        double y[6] = {1.0, NAN, INFINITY, -INFINITY, INFINITY, 2.0};
        gp_superacc a;
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_F64, y, 6, GP_SA_VALUES, &a);
        CHECK(a.nan == 1 && a.pinf == 2 && a.ninf == 1, "counts %lld %lld %lld", (long long)a.nan,
              (long long)a.pinf, (long long)a.ninf);
        CHECK(isnan(gp_superacc_to_double(&a)), "NaN expected");
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_F64, y + 2, 1, GP_SA_VALUES, &a);
        gp_cpu_exact_sum(GP_F64, y + 5, 1, GP_SA_VALUES, &a);
        CHECK(gp_superacc_to_double(&a) == INFINITY, "+inf expected");
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_F64, y + 2, 2, GP_SA_VALUES, &a);
        CHECK(isnan(gp_superacc_to_double(&a)), "inf - inf must be NaN");
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_F64, y + 3, 1, GP_SA_SQUARES, &a);
        CHECK(a.pinf == 1 && gp_superacc_to_double(&a) == INFINITY, "(-inf)^2 must be +inf");
        double big1 = 1e200;
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_F64, &big1, 1, GP_SA_SQUARES, &a);
        CHECK(a.pinf == 1, "1e200^2 overflows to +inf in double");
        gp_superacc_zero(&a);
        CHECK(gp_superacc_to_double(&a) == 0.0 && !signbit(gp_superacc_to_double(&a)), "empty sum +0.0");
        double z[2] = {-0.0, -0.0};
        gp_cpu_exact_sum(GP_F64, z, 2, GP_SA_VALUES, &a);
        CHECK(gp_superacc_sign(&a) == 0 && gp_superacc_to_double(&a) == 0.0, "-0 + -0 = 0");
    }
    /* 5. correct rounding of the final conversion */
    {
        struct { double parts[4]; int np; double want; const char *what; } rc[] = {
            {{0x1p53, 1.0}, 2, 0x1p53, "2^53 + 1 -> tie to even 2^53"},
            {{0x1p53, 3.0}, 2, 0x1p53 + 4, "2^53 + 3 -> tie to even 2^53 + 4"},
            {{0x1p53, 1.0, 0x1p-1000}, 3, 0x1p53 + 2, "2^53 + 1 + tiny -> up"},
            {{0x1p53, 1.0, -0x1p-1000}, 3, 0x1p53, "2^53 + 1 - tiny -> down"},
            {{1.0, 0x1p-53}, 2, 1.0, "1 + 2^-53 -> 1"},
            {{1.0, 0x1p-53, 0x1p-1074}, 3, 0x1.0000000000001p0, "1 + 2^-53 + 2^-1074 -> up"},
            {{0x1p-1074, 0x1p-1074, 0x1p-1074}, 3, 0x3p-1074, "3 denormal units"},
            {{DBL_MAX, DBL_MAX}, 2, INFINITY, "overflow"},
            {{DBL_MAX, 0x1p970}, 2, INFINITY, "DBL_MAX + half ulp ties to inf"},
            {{DBL_MAX, 0x1p970, -0x1p-1074}, 3, DBL_MAX, "just below the overflow tie"},
            {{-DBL_MAX, -0x1p970}, 2, -INFINITY, "negative overflow tie"},
            {{1e300, -1e300, 0x1p-1074}, 3, 0x1p-1074, "cancellation leaves a denormal"},
            {{-0x1p53, -1.0}, 2, -0x1p53, "negative tie to even"},
            {{0x1p-1022, -0x1p-1074}, 2, 0x0.fffffffffffffp-1022, "normal min - unit -> denormal"},
        };
        for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++) {
            CTX("rounding: %s", rc[k].what);
            gp_superacc a;
            gp_superacc_zero(&a);
            for (int p = 0; p < rc[k].np; p++) {
                gp_superacc b;
                gp_superacc_zero(&b);
                gp_cpu_exact_sum(GP_F64, &rc[k].parts[p], 1, GP_SA_VALUES, &b);
                gp_superacc_add(&a, &b);
            }
            const double r = gp_superacc_to_double(&a);
            CHECK(r == rc[k].want, "got %a want %a", r, rc[k].want);
        }
        /* integer sums near 2^64 and 2^53 */
        CTX("rounding: integers");
        uint64_t u[3] = {(1ull << 53) + 1, (1ull << 53) + 1, 0};
        gp_superacc a;
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_U64, u, 3, GP_SA_VALUES, &a);
        CHECK(gp_superacc_to_double(&a) == 0x1p54 + 2, "(2^53+1)*2 = 2^54 + 2 exactly");
        uint64_t v[1] = {(1ull << 54) + 2 + 1}; /* 2^54 + 3: a tie between +2 and +4 -> +4 */
        gp_superacc_zero(&a);
        gp_cpu_exact_sum(GP_U64, v, 1, GP_SA_VALUES, &a);
        CHECK(gp_superacc_to_double(&a) == 0x1p54 + 4, "2^54 + 3 -> 2^54 + 4");
        /* random rounding stress: few terms with mixed exponents, checked exactly */
        for (int r = 0; r < 3000; r++) {
            double y[6];
            int n = 1 + (int)(rnd() % 6);
            for (int i = 0; i < n; i++) {
                y[i] = rnd_wide();
                if (i && rnd() % 2) y[i] = ldexp(y[0], -(int)(rnd() % 70)) * ((rnd() & 1) ? 1 : -1);
                if (i && rnd() % 5 == 0) y[i] = -y[i - 1];
            }
            check_exact_sum(GP_F64, y, n, GP_SA_VALUES, "random few terms");
        }
    }
    /* 6. gp_superacc_add stress: doubling an accumulator 2100 times (exact 2^k scaling) */
    {
        CTX("superacc_add doubling");
        gp_superacc a;
        gp_superacc_zero(&a);
        gp_superacc_add_double(&a, -0x1p-1074);
        gp_superacc_add_double(&a, 0x1.fffffffffffffp-1000);
        big S;
        memset(&S, 0, sizeof S);
        big_add_double(&S, -0x1p-1074);
        big_add_double(&S, 0x1.fffffffffffffp-1000);
        for (int k = 0; k < 2100; k++) { /* 2^-999 * 2^2100 = 2^1101 */
            gp_superacc_add(&a, &a);
            const big T = S; /* S += S */
            uint64_t carry = 0;
            for (int j = 0; j < RD; j++) {
                uint64_t s = (uint64_t)S.d[j] + T.d[j] + carry;
                S.d[j] = (uint32_t)s;
                carry = s >> 32;
            }
        }
        CHECK(acc_equals_big(&a, &S), "2^2100 scaling not exact");
        char why[200] = "";
        CHECK(rounding_ok(&S, gp_superacc_to_double(&a), why, sizeof why), "%s", why);
        CHECK(gp_superacc_to_double(&a) == INFINITY, "2^-999 * 2^2100 overflows");
    }
    /* 7. errors */
    CTX("exact_sum errors");
    gp_superacc a;
    gp_superacc_zero(&a);
    double one = 1.0;
    CHECK(gp_cpu_exact_sum(GP_F64, &one, 1, 0, &a) == GP_EINVAL, "what = 0 accepted");
    CHECK(gp_cpu_exact_sum(GP_F64, &one, 1, 3, &a) == GP_EINVAL, "what = 3 accepted");
    CHECK(gp_cpu_exact_sum(GP_F64, &one, 1, GP_SA_VALUES, NULL) == GP_EINVAL, "NULL acc accepted");
    CHECK(gp_cpu_exact_sum(GP_F64, NULL, 1, GP_SA_VALUES, &a) == GP_EINVAL, "NULL y accepted");
    CHECK(gp_cpu_exact_sum((gp_dtype)9, &one, 1, GP_SA_VALUES, &a) == GP_EINVAL, "bad dtype");
    CHECK(gp_cpu_exact_sum(GP_F64, NULL, 0, GP_SA_VALUES, &a) == GP_OK && gp_superacc_sign(&a) == 0,
          "n = 0");
    /* a big run for timing */
    const int64_t n = 10000000;
    double *y = (double *)xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) y[i] = rnd_wide();
    double t0 = now_s();
    gp_cpu_exact_sum(GP_F64, y, n, GP_SA_VALUES, &a);
    printf("exact_sum: 10^7 wide doubles in %.3f s\n", now_s() - t0);
    free(y);
}

/* Random keys of `width` bytes with many ties (k_bits low bits only), values random. */
static void fill_pairs(int width, void *keys, uint64_t *vals, int64_t n, int k_bits)
{
    const uint64_t mask = k_bits >= 64 ? ~0ull : ((1ull << k_bits) - 1);
    for (int64_t i = 0; i < n; i++) {
        const uint64_t k = rnd() & mask;
        if (width == 4) ((uint32_t *)keys)[i] = (uint32_t)k;
        else ((uint64_t *)keys)[i] = k;
        vals[i] = rnd() >> (i & 1 ? 0 : 40);
    }
}

/* The table's sort and merge_split (one entry, the values optional) give the twins'
 * results: keys only = the keys-only twin, with values = the pairs twin. */
static void test_table_sort_merge(const gp_backend *b, int width, int64_t n, int stable)
{
    CTX("cpu table sort/merge_split width %d n %lld stable %d", width, (long long)n, stable);
    const size_t w = (size_t)width, nb = (size_t)(n ? n : 1);
    unsigned char *k0 = xmalloc(nb * w), *k1 = xmalloc(nb * w), *k2 = xmalloc(nb * w);
    uint64_t *v0 = xmalloc(nb * 8), *v1 = xmalloc(nb * 8);
    fill_pairs(width, k0, v0, n, n > 50 ? 6 : 64);
    memcpy(k1, k0, (size_t)n * w);
    memcpy(k2, k0, (size_t)n * w);
    memcpy(v1, v0, (size_t)n * 8);
    CHECK(b->sort(width, k1, NULL, n, stable) == GP_OK && gp_cpu_sort_keys(width, k2, n) == GP_OK &&
              memcmp(k1, k2, (size_t)n * w) == 0,
          "sort without values differs from gp_cpu_sort_keys");
    memcpy(k1, k0, (size_t)n * w);
    memcpy(k2, k0, (size_t)n * w);
    CHECK(b->sort(width, k1, v1, n, stable) == GP_OK &&
              gp_cpu_sort_pairs(width, k2, v0, n, stable) == GP_OK &&
              memcmp(k1, k2, (size_t)n * w) == 0 && memcmp(v1, v0, (size_t)n * 8) == 0,
          "sort with values differs from gp_cpu_sort_pairs");
    /* both halves of a merge-split of the sorted run with itself (lo = hi = k1 / v1) */
    const int64_t m = n;
    unsigned char *o1 = xmalloc(nb * w), *o2 = xmalloc(nb * w);
    uint64_t *ov1 = xmalloc(nb * 8), *ov2 = xmalloc(nb * 8);
    for (int up = 0; up <= 1; up++) {
        int64_t c1 = -1, c2 = -2;
        memset(o1, 0xA5, nb * w);
        memset(o2, 0x5A, nb * w);
        CHECK(b->merge_split(width, k1, NULL, n, k1, NULL, n, m, up, stable, o1, NULL, &c1) == GP_OK &&
                  gp_cpu_merge_split_keys(width, k1, n, k1, n, m, up, o2, &c2) == GP_OK &&
                  c1 == c2 && memcmp(o1, o2, (size_t)c1 * w) == 0,
              "merge_split without values differs from the keys twin (upper %d)", up);
        memset(ov1, 0xA5, nb * 8);
        memset(ov2, 0x5A, nb * 8);
        CHECK(b->merge_split(width, k1, v1, n, k1, v1, n, m, up, stable, o1, ov1, &c1) == GP_OK &&
                  gp_cpu_merge_split_pairs(width, k1, v1, n, k1, v1, n, m, up, stable, o2, ov2,
                                           &c2) == GP_OK &&
                  c1 == c2 && memcmp(o1, o2, (size_t)c1 * w) == 0 &&
                  memcmp(ov1, ov2, (size_t)c1 * 8) == 0,
              "merge_split with values differs from the pairs twin (upper %d)", up);
    }
    free(k0), free(k1), free(k2), free(v0), free(v1), free(o1), free(o2), free(ov1), free(ov2);
}

/* The table's to_keys / from_keys of either order give the ascending / descending twins. */
static void test_table_keys(const gp_backend *b, gp_dtype t, gp_order order, int64_t n)
{
    CTX("cpu table keys %s order %d n %lld", gp_dtype_name(t), (int)order, (long long)n);
    const size_t bytes = (size_t)n * gp_dtype_size(t) + 8;
    unsigned char *a = xmalloc(bytes), *c = xmalloc(bytes);
    for (size_t i = 0; i < bytes; i++) a[i] = (unsigned char)rnd();
    memcpy(c, a, bytes);
    int (*to)(gp_dtype, void *, int64_t) = order ? gp_cpu_to_keys_desc : gp_cpu_to_keys;
    int (*from)(gp_dtype, void *, int64_t) = order ? gp_cpu_from_keys_desc : gp_cpu_from_keys;
    CHECK(b->to_keys(t, order, a, n) == GP_OK && to(t, c, n) == GP_OK && memcmp(a, c, bytes) == 0,
          "to_keys differs from its twin");
    CHECK(b->from_keys(t, order, a, n) == GP_OK && from(t, c, n) == GP_OK &&
              memcmp(a, c, bytes) == 0,
          "from_keys differs from its twin");
    free(a), free(c);
}

static void test_table(void)
{
    CTX("cpu table");
    const gp_backend *b = gp_backend_cpu();
    CHECK(b->exact_sum == gp_cpu_exact_sum && b->to_keys && b->from_keys && b->sort &&
              b->merge_split,
          "table entries missing or exact_sum not the twin");
    const int64_t ns[] = {0, 1, 2, 17, 1000, 4099};
    for (int width = 4; width <= 8; width += 4)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (int stable = 0; stable <= 1; stable++) test_table_sort_merge(b, width, ns[i], stable);
    for (int t = 0; t < GP_NDTYPES; t++)
        for (int order = GP_ASCENDING; order <= GP_DESCENDING; order++)
            for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
                test_table_keys(b, (gp_dtype)t, (gp_order)order, ns[i]);
    CTX("cpu table errors");
    uint32_t k[2] = {2, 1};
    CHECK(b->to_keys(GP_U32, (gp_order)2, k, 2) == GP_EINVAL &&
              b->from_keys(GP_U32, (gp_order)-1, k, 2) == GP_EINVAL && k[0] == 2 && k[1] == 1,
          "an order other than GP_ASCENDING / GP_DESCENDING accepted");
    uint64_t v[2] = {0, 1}, ov[2];
    uint32_t ok[2];
    int64_t nout = -1;
    CHECK(b->merge_split(4, k, NULL, 1, k + 1, v, 1, 1, 0, 1, ok, ov, &nout) == GP_EINVAL,
          "merge_split with some values NULL accepted");
    CHECK(b->sort(4, k, (uint64_t *)(void *)k, 2, 1) == GP_EINVAL, "sort keys == vals accepted");
}

int main(void)
{
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_cpu_pairs_sums: seed %" PRIu64 " (GPUPRIM_TEST_SEED)\n", seed);
    const double t0 = now_s();
    test_table();
    test_desc_keys();
    test_sort_pairs();
    test_merge_pairs();
    test_exact_sum();
    printf("%ld passed, %ld failed (%.2f s, seed %" PRIu64 ")\n", g_pass, g_fail, now_s() - t0, seed);
    return g_fail ? 1 : 0;
}
