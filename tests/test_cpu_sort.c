/* test_cpu_sort.c — the CPU backend's one sort, one merge-split and one order-key map
 * (gp_cpu_sort, gp_cpu_merge_split, gp_cpu_keys; kernels/cpu_sort.c) against brute-force
 * references (qsort of tagged records, pairwise comparisons of the elements), and their
 * keys-only / pairs / ascending / descending wrappers against them.
 *
 * Sizes: 0, 1, 2^k +- 1, primes, and sizes on both sides of the sort's thresholds (insertion
 * sort below 64 elements; a huge-page scratch from 4 MiB: 2^20 keys of 4 bytes, 2^18 pairs
 * of 16), and of those of an MSD variant tried before (16 KiB buckets, 65536-element
 * scatters). Keys: random, few distinct, all equal (no pass at all), sorted, reversed, only
 * high or only low bits varying (constant digits skipped). Values: positions (value digits
 * skipped), reversed positions, random, few distinct.
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"
#include "gpuprim/kernels.h"
#include "test_check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* One element of a reference: key, value, where it came from (side 0: lo, 1: hi; index). */
typedef struct rec {
    uint64_t k, v;
    int64_t side, idx;
} rec;

static int g_byval; /* the references' order: by (key, value) when set, else by key */

/* Key, then (by value) value, then origin: the order every twin promises. */
static int rec_cmp(const void *pa, const void *pb)
{
    const rec *a = (const rec *)pa, *b = (const rec *)pb;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    if (g_byval && a->v != b->v) return a->v < b->v ? -1 : 1;
    if (a->side != b->side) return a->side < b->side ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static uint64_t get(const void *k, int w, int64_t i)
{
    return w == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}
static void put(void *k, int w, int64_t i, uint64_t x)
{
    if (w == 4) ((uint32_t *)k)[i] = (uint32_t)x;
    else ((uint64_t *)k)[i] = x;
}

static const char *kd_names[] = {"random", "few", "equal", "sorted", "reversed", "high", "low"};
static uint64_t key_of_dist(int dist, int64_t i, int64_t n, int w)
{
    const uint64_t mask = w == 4 ? 0xFFFFFFFFull : ~0ull;
    switch (dist) {
    case 0: return rnd() & mask;
    case 1: return (rnd() % 3) * (mask / 3);
    case 2: return 0x5A5A5A5A5A5A5A5Aull & mask;
    case 3: return (uint64_t)i * 7;
    case 4: return (uint64_t)(n - i) * 5;
    case 5: return (rnd() << (8 * w - 12)) & mask; /* only the top 12 bits vary */
    default: return (0xABCDull << (8 * w - 16)) | (rnd() & 0x3FF);
    }
}
static const char *vd_names[] = {"positions", "reversed", "random", "few"};
static uint64_t val_of_dist(int vd, int64_t i, int64_t n)
{
    switch (vd) {
    case 0: return (uint64_t)i;
    case 1: return (uint64_t)(n - i);
    case 2: return rnd();
    default: return rnd() % 4;
    }
}

static size_t g_kshift, g_vshift; /* bytes past a 64-byte boundary of the sorted arrays */

static int64_t g_spare_used[2]; /* sort_spare results left in place / in the spare */

/* gp_cpu_sort_spare of the case of check_sort (r: its sorted records), its spares poisoned
 * and shifted like the caller's arrays. */
static void check_sort_spare(int w, int kd, int vd, int64_t n, int stable, const rec *r,
                             const void *kin, const uint64_t *vin)
{
    const size_t span = ((size_t)(n ? n : 1) * 8 + 127) / 64 * 64;
    unsigned char *mem[4];
    for (int i = 0; i < 4; i++) {
        mem[i] = aligned_alloc(64, span);
        memset(mem[i], 0xA5, span);
    }
    void *k = mem[0] + g_kshift, *sk = mem[2] + g_kshift;
    uint64_t *v = vd >= 0 ? (uint64_t *)(mem[1] + g_vshift) : NULL;
    uint64_t *sv = vd >= 0 ? (uint64_t *)(mem[3] + g_vshift) : NULL;
    memcpy(k, kin, (size_t)n * (size_t)w);
    if (v) memcpy(v, vin, (size_t)n * 8);
    int in_spare = -1;
    const int rc = gp_cpu_sort_spare(w, n ? k : NULL, v, n ? sk : NULL, sv, n, stable, &in_spare);
    CHECK(rc == GP_OK && (in_spare == 0 || in_spare == 1),
          "sort_spare w=%d keys=%s vals=%s n=%lld: rc %d, in_spare %d", w, kd_names[kd],
          vd >= 0 ? vd_names[vd] : "none", (long long)n, rc, in_spare);
    if (rc == GP_OK && (in_spare == 0 || in_spare == 1)) {
        g_spare_used[in_spare]++;
        const void *rk = in_spare ? sk : k;
        const uint64_t *rv = in_spare ? sv : v;
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (get(rk, w, i) != r[i].k || (rv && rv[i] != r[i].v)) bad = i;
        CHECK(bad < 0, "sort_spare w=%d keys=%s vals=%s n=%lld stable=%d (result in the %s): "
                       "first difference at %lld", w, kd_names[kd], vd >= 0 ? vd_names[vd] : "none",
              (long long)n, stable, in_spare ? "spare" : "arrays", (long long)bad);
    }
    for (int i = 0; i < 4; i++) free(mem[i]);
}

/* gp_cpu_sort of one case (vd < 0: keys alone) against qsort, and the wrapper's result. */
static void check_sort(int w, int kd, int vd, int64_t n, int stable)
{
    const size_t span = ((size_t)(n ? n : 1) * 8 + 127) / 64 * 64; /* room for a shift */
    unsigned char *kmem = aligned_alloc(64, span);
    unsigned char *vmem = vd >= 0 ? aligned_alloc(64, span) : NULL;
    void *k = kmem + g_kshift, *k2 = malloc((size_t)(n ? n : 1) * 8);
    uint64_t *v = vd >= 0 ? (uint64_t *)(vmem + g_vshift) : NULL;
    uint64_t *v2 = vd >= 0 ? malloc((size_t)(n ? n : 1) * 8) : NULL;
    rec *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    for (int64_t i = 0; i < n; i++) {
        r[i].k = key_of_dist(kd, i, n, w);
        r[i].v = vd >= 0 ? val_of_dist(vd, i, n) : 0;
        r[i].side = 0;
        r[i].idx = i;
        put(k, w, i, r[i].k);
        if (v) v[i] = r[i].v;
    }
    memcpy(k2, k, (size_t)n * (size_t)w);
    if (v) memcpy(v2, v, (size_t)n * 8);
    void *k3 = malloc((size_t)(n ? n : 1) * 8);
    uint64_t *v3 = malloc((size_t)(n ? n : 1) * 8);
    memcpy(k3, k, (size_t)n * (size_t)w);
    if (v) memcpy(v3, v, (size_t)n * 8);
    g_byval = v && stable;
    qsort(r, (size_t)n, sizeof *r, rec_cmp);
    const int rc = gp_cpu_sort(w, n ? k : NULL, v, n, stable);
    CHECK(rc == GP_OK, "sort w=%d keys=%s vals=%s n=%lld stable=%d: rc %d", w, kd_names[kd],
          vd >= 0 ? vd_names[vd] : "none", (long long)n, stable, rc);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (get(k, w, i) != r[i].k || (v && v[i] != r[i].v)) bad = i;
    CHECK(bad < 0, "sort w=%d keys=%s vals=%s n=%lld stable=%d: first difference at %lld", w,
          kd_names[kd], vd >= 0 ? vd_names[vd] : "none", (long long)n, stable, (long long)bad);
    const int rc2 = v ? gp_cpu_sort_pairs(w, n ? k2 : NULL, n ? v2 : NULL, n, stable)
                      : gp_cpu_sort_keys(w, n ? k2 : NULL, n);
    CHECK(rc2 == GP_OK && memcmp(k, k2, (size_t)n * (size_t)w) == 0 &&
              (!v || memcmp(v, v2, (size_t)n * 8) == 0),
          "sort w=%d n=%lld: the wrapper differs from gp_cpu_sort", w, (long long)n);
    /* the same sort with poisoned spares as its scratch: the result where in_spare says */
    check_sort_spare(w, kd, vd, n, stable, r, k3, v3);
    free(k3);
    free(v3);
    free(kmem);
    free(k2);
    free(vmem);
    free(v2);
    free(r);
}

static void test_sort(void)
{
    const int64_t sizes[] = {0,    1,    2,    3,    31,    32,    33,    63,    64,    65,
                             97,   1023, 1024, 1025, 1365,  1366,  2047,  4095,  4096,  4097,
                             8191, 8193, 12289, 65535, 65536, 65537, 100003, (1 << 18) + 1};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    for (int w = 4; w <= 8; w += 4)
        for (int s = 0; s < ns; s++)
            for (int kd = 0; kd < 7; kd++)
                for (int vd = -1; vd < 4; vd++)
                    for (int st = 0; st < 2; st++) {
                        if (vd < 0 && st) continue;
                        if (sizes[s] > 5000 && (vd == 1 || kd == 3 || kd == 4))
                            continue; /* the larger sizes: fewer cases */
                        if (sizes[s] > 70000 && (vd == 3 || kd == 2)) continue;
                        check_sort(w, kd, vd, sizes[s], st);
                    }
    /* one large sort with many MSD levels and write-combined scatters */
    check_sort(4, 0, -1, (1 << 20) + 3, 0);
    check_sort(8, 5, 2, (1 << 20) - 1, 1);
    check_sort(4, 1, 0, (1 << 20) + 1, 1);
    /* the caller's arrays at every element offset within a cache line (the scatter streams
     * whole lines, their phase following the addresses) */
    for (int w = 4; w <= 8; w += 4)
        for (size_t ks = 0; ks < 64; ks += (size_t)w)
            for (size_t vs = 0; vs < 64; vs += 24) {
                g_kshift = ks, g_vshift = vs;
                check_sort(w, 0, -1, 70001, 0);
                check_sort(w, 0, 2, 70001 + (int64_t)ks, 1);
                check_sort(w, 5, 0, 131071, 0);
            }
    g_kshift = g_vshift = 0;
}

/* An ascending run of n records on `side` (keys from few distinct ones when dup), in the
 * order of the merge's inputs: by key, or by (key, value) when byval. */
static void make_run(rec *r, int64_t n, int side, int w, int dup, int byval)
{
    for (int64_t i = 0; i < n; i++) {
        r[i].k = dup ? rnd() % 5 : rnd() & (w == 4 ? 0xFFFFFFFFull : ~0ull);
        r[i].v = rnd() % 7;
        r[i].side = side;
        r[i].idx = i;
    }
    g_byval = byval;
    qsort(r, (size_t)n, sizeof *r, rec_cmp);
    for (int64_t i = 0; i < n; i++) r[i].idx = i; /* the run's own order */
}

/* gp_cpu_merge_split of one case (hv: with values) against the sorted concatenation, and the
 * wrapper's result; outputs poisoned past what is written. */
static void check_merge(int w, int64_t nlo, int64_t nhi, int64_t m, int up, int hv, int st,
                        int dup)
{
    const int64_t tot = nlo + nhi, cap = m + 1;
    rec *r = malloc((size_t)(tot ? tot : 1) * sizeof *r);
    make_run(r, nlo, 0, w, dup, hv && st);
    make_run(r + nlo, nhi, 1, w, dup, hv && st);
    void *lk = malloc((size_t)(nlo + 1) * 8), *hk = malloc((size_t)(nhi + 1) * 8);
    uint64_t *lv = malloc((size_t)(nlo + 1) * 8), *hvv = malloc((size_t)(nhi + 1) * 8);
    for (int64_t i = 0; i < nlo; i++) put(lk, w, i, r[i].k), lv[i] = r[i].v;
    for (int64_t i = 0; i < nhi; i++) put(hk, w, i, r[nlo + i].k), hvv[i] = r[nlo + i].v;
    g_byval = hv && st;
    qsort(r, (size_t)tot, sizeof *r, rec_cmp);
    unsigned char *ok[2];
    uint64_t *ov[2];
    int64_t nout[2] = {-1, -1};
    for (int c = 0; c < 2; c++) {
        ok[c] = malloc((size_t)cap * 8);
        ov[c] = malloc((size_t)cap * 8);
        memset(ok[c], 0xA5, (size_t)cap * 8);
        memset(ov[c], 0xA5, (size_t)cap * 8);
    }
    int rc[2];
    rc[0] = gp_cpu_merge_split(w, lk, hv ? lv : NULL, nlo, hk, hv ? hvv : NULL, nhi, m, up, st,
                               ok[0], hv ? ov[0] : NULL, &nout[0]);
    rc[1] = hv ? gp_cpu_merge_split_pairs(w, lk, lv, nlo, hk, hvv, nhi, m, up, st, ok[1], ov[1],
                                          &nout[1])
               : gp_cpu_merge_split_keys(w, lk, nlo, hk, nhi, m, up, ok[1], &nout[1]);
    const int64_t first = up ? m : 0, want = up ? (tot > m ? tot - m : 0) : (tot < m ? tot : m);
    int64_t bad = -1;
    for (int64_t i = 0; i < want && bad < 0; i++)
        if (get(ok[0], w, i) != r[first + i].k || (hv && ov[0][i] != r[first + i].v)) bad = i;
    int poisoned = 1;
    for (size_t b = (size_t)want * (size_t)w; b < (size_t)cap * 8; b++) poisoned &= ok[0][b] == 0xA5;
    CHECK(rc[0] == GP_OK && nout[0] == want && bad < 0 && poisoned,
          "merge_split w=%d nlo=%lld nhi=%lld m=%lld upper=%d vals=%d stable=%d dup=%d: rc %d, "
          "nout %lld (want %lld), first difference %lld, tail kept %d", w, (long long)nlo,
          (long long)nhi, (long long)m, up, hv, st, dup, rc[0], (long long)nout[0],
          (long long)want, (long long)bad, poisoned);
    CHECK(rc[1] == GP_OK && nout[1] == want && memcmp(ok[0], ok[1], (size_t)cap * 8) == 0 &&
              (!hv || memcmp(ov[0], ov[1], (size_t)cap * 8) == 0),
          "merge_split w=%d nlo=%lld nhi=%lld: the wrapper differs", w, (long long)nlo,
          (long long)nhi);
    for (int c = 0; c < 2; c++) free(ok[c]), free(ov[c]);
    free(lk), free(hk), free(lv), free(hvv), free(r);
}

static void test_merge(void)
{
    const int64_t ms[] = {0, 1, 2, 5, 17, 64, 257, 1000, 4099};
    for (int w = 4; w <= 8; w += 4)
        for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++) {
            const int64_t m = ms[a];
            const int64_t cnts[][2] = {{m, m}, {m / 2, m}, {m, m / 3}, {0, m}, {m, 0},
                                       {m - m / 7, m / 2 + 1 <= m ? m / 2 + 1 : m}};
            for (size_t c = 0; c < sizeof cnts / sizeof cnts[0]; c++)
                for (int up = 0; up < 2; up++)
                    for (int hv = 0; hv < 2; hv++)
                        for (int st = 0; st < 2; st++)
                            for (int dup = 0; dup < 2; dup++)
                                check_merge(w, cnts[c][0], cnts[c][1], m, up, hv, st, dup);
        }
}

/* ---- order keys ------------------------------------------------------------------------------ */

static gp_dtype g_t;    /* the type of the elements the comparators below see */
static int g_desc;      /* descending order */

static int is_nan_bits(gp_dtype t, uint64_t b)
{
    if (t == GP_F32) return (b & 0x7FFFFFFFull) > 0x7F800000ull;
    if (t == GP_F64) return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    return 0;
}

/* A float element's value from its bits (float32 widened exactly). */
static double as_double(gp_dtype t, uint64_t bits)
{
    if (t == GP_F32) {
        const uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* The order the keys promise, on element bits: NaNs last (and equal), else by value, -0.0
 * before +0.0 ascending (after it descending), descending the exact reverse. */
static int elem_cmp(uint64_t a, uint64_t b)
{
    const int na = is_nan_bits(g_t, a), nb = is_nan_bits(g_t, b);
    if (na || nb) return na - nb;
    int c;
    if (g_t == GP_F32 || g_t == GP_F64) {
        const double x = as_double(g_t, a), y = as_double(g_t, b);
        c = (x > y) - (x < y);
        if (c == 0 && x == 0.0) c = (int)(signbit(y) != 0) - (int)(signbit(x) != 0);
    } else if (g_t == GP_I32) {
        c = ((int32_t)a > (int32_t)b) - ((int32_t)a < (int32_t)b);
    } else if (g_t == GP_I64) {
        c = ((int64_t)a > (int64_t)b) - ((int64_t)a < (int64_t)b);
    } else {
        c = (a > b) - (a < b);
    }
    return g_desc ? -c : c;
}
static int elem_qcmp(const void *pa, const void *pb)
{
    return elem_cmp(*(const uint64_t *)pa, *(const uint64_t *)pb);
}

/* n elements of type t (as zero-extended bits): specials first, then random bits. */
static void make_elems(gp_dtype t, uint64_t *e, int64_t n)
{
    static const uint64_t f32[] = {0x7FC00000, 0xFFC00001, 0x7F800001, 0x80000000, 0,
                                   0x7F800000, 0xFF800000, 1, 0x80000001, 0x7F7FFFFF,
                                   0xFF7FFFFF, 0x3F800000, 0xBF800000};
    static const uint64_t f64[] = {0x7FF8000000000000ull, 0xFFF8000000000001ull,
                                   0x8000000000000000ull, 0, 0x7FF0000000000000ull,
                                   0xFFF0000000000000ull, 1, 0x8000000000000001ull,
                                   0x3FF0000000000000ull, 0xBFF0000000000000ull};
    static const uint64_t i32[] = {0x80000000, 0x7FFFFFFF, 0, 0xFFFFFFFF, 1};
    static const uint64_t i64[] = {0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0, ~0ull, 1};
    const uint64_t *sp = t == GP_F32 ? f32 : t == GP_F64 ? f64 : gp_dtype_size(t) == 4 ? i32 : i64;
    const int64_t nsp = t == GP_F32 ? 13 : t == GP_F64 ? 10 : 5;
    const uint64_t mask = gp_dtype_size(t) == 4 ? 0xFFFFFFFFull : ~0ull;
    for (int64_t i = 0; i < n; i++) e[i] = i < nsp ? sp[i] : rnd() & mask;
    for (int64_t i = nsp; i < n; i += 5) e[i] = e[rnd() % (uint64_t)i]; /* duplicates */
}

static void check_keys(gp_dtype t, int desc, int64_t n)
{
    const int w = (int)gp_dtype_size(t);
    uint64_t *e = malloc((size_t)n * 8), *srt = malloc((size_t)n * 8);
    void *k = malloc((size_t)n * 8), *k2 = malloc((size_t)n * 8);
    make_elems(t, e, n);
    for (int64_t i = 0; i < n; i++) put(k, w, i, e[i]);
    memcpy(k2, k, (size_t)n * (size_t)w);
    CHECK(gp_cpu_keys(t, desc, 0, k, n) == GP_OK, "keys t=%d desc=%d failed", (int)t, desc);
    (desc ? gp_cpu_to_keys_desc : gp_cpu_to_keys)(t, k2, n);
    CHECK(memcmp(k, k2, (size_t)n * (size_t)w) == 0, "to keys t=%d desc=%d: wrapper differs",
          (int)t, desc);
    g_t = t;
    g_desc = desc;
    int64_t bad = 0;
    for (int64_t i = 0; i < n && i < 300; i++)
        for (int64_t j = 0; j < n && j < 300; j++) {
            const uint64_t a = get(k, w, i), b = get(k, w, j);
            bad += ((a > b) - (a < b)) != elem_cmp(e[i], e[j]);
        }
    CHECK(bad == 0, "keys t=%d desc=%d: %lld pairs out of order", (int)t, desc, (long long)bad);
    /* sorted through the keys == qsort on the elements (NaNs: the default quiet NaN) */
    CHECK(gp_cpu_sort(w, k, NULL, n, 0) == GP_OK, "sort failed");
    memcpy(k2, k, (size_t)n * (size_t)w);
    CHECK(gp_cpu_keys(t, desc, 1, k, n) == GP_OK, "inverse keys failed");
    (desc ? gp_cpu_from_keys_desc : gp_cpu_from_keys)(t, k2, n);
    CHECK(memcmp(k, k2, (size_t)n * (size_t)w) == 0, "from keys t=%d desc=%d: wrapper differs",
          (int)t, desc);
    memcpy(srt, e, (size_t)n * 8);
    qsort(srt, (size_t)n, 8, elem_qcmp);
    const uint64_t qnan = t == GP_F32 ? 0x7FC00000ull : 0x7FF8000000000000ull;
    int64_t first = -1;
    for (int64_t i = 0; i < n && first < 0; i++) {
        const uint64_t want = is_nan_bits(t, srt[i]) ? qnan : srt[i];
        if (get(k, w, i) != want) first = i;
    }
    CHECK(first < 0, "keys t=%d desc=%d n=%lld: sorted elements differ at %lld", (int)t, desc,
          (long long)n, (long long)first);
    free(e), free(srt), free(k), free(k2);
}

static void test_keys(void)
{
    const gp_dtype ts[] = {GP_F32, GP_F64, GP_I32, GP_I64, GP_U32, GP_U64};
    const int64_t ns[] = {13, 257, 4099, 70001};
    for (int a = 0; a < 6; a++)
        for (int d = 0; d < 2; d++)
            for (int s = 0; s < 4; s++) check_keys(ts[a], d, ns[s]);
    uint32_t x = 1;
    CHECK(gp_cpu_keys((gp_dtype)99, 0, 0, &x, 1) == GP_EINVAL, "bad dtype accepted");
    CHECK(gp_cpu_keys(GP_U32, 1, 0, NULL, 1) == GP_EINVAL, "NULL buf accepted");
    CHECK(gp_cpu_keys(GP_U32, 1, 1, NULL, 0) == GP_OK, "n = 0 with NULL rejected");
    CHECK(gp_cpu_keys(GP_U32, 0, 0, &x, -1) == GP_EINVAL, "n < 0 accepted");
}

static void test_errors(void)
{
    uint64_t k[4] = {3, 1, 2, 0}, v[4] = {0, 1, 2, 3}, o[8], ov[8];
    int64_t nout = -5;
    CHECK(gp_cpu_sort(3, k, NULL, 4, 0) == GP_EINVAL, "width 3 accepted");
    CHECK(strstr(gp_backend_cpu()->last_error(), "gp_cpu_sort") != NULL, "error not named: %s",
          gp_backend_cpu()->last_error());
    CHECK(gp_cpu_sort(8, NULL, v, 4, 1) == GP_EINVAL, "NULL keys accepted");
    CHECK(gp_cpu_sort(8, k, k, 4, 1) == GP_EINVAL, "keys overlapping vals accepted");
    CHECK(gp_cpu_sort(8, k, v, -1, 1) == GP_EINVAL, "n < 0 accepted");
    CHECK(gp_cpu_sort(8, NULL, NULL, 0, 1) == GP_OK, "n = 0 rejected");
    CHECK(gp_cpu_merge_split(8, k, NULL, 2, k + 2, v, 2, 4, 0, 1, o, ov, &nout) == GP_EINVAL,
          "lo_vals NULL with values accepted");
    CHECK(gp_cpu_merge_split(8, k, v, 2, k + 2, v + 2, 2, 4, 0, 1, o, NULL, &nout) == GP_EINVAL,
          "out_vals NULL with values accepted");
    CHECK(gp_cpu_merge_split(8, k, NULL, 2, k + 2, NULL, 2, 4, 0, 0, k, NULL, &nout) == GP_EINVAL,
          "output overlapping an input accepted");
    CHECK(gp_cpu_merge_split(8, k, NULL, 3, k + 2, NULL, 2, 2, 0, 0, o, NULL, &nout) == GP_EINVAL,
          "nlo > m accepted");
    CHECK(nout == -5, "nout written on failure");
    CHECK(strstr(gp_backend_cpu()->last_error(), "gp_cpu_merge_split") != NULL,
          "error not named: %s", gp_backend_cpu()->last_error());
    uint64_t sk[4], sv[4];
    int in_spare = -1;
    CHECK(gp_cpu_sort_spare(8, k, v, sk, sv, 4, 1, NULL) == GP_EINVAL, "sort_spare: NULL in_spare accepted");
    CHECK(gp_cpu_sort_spare(8, k, v, NULL, sv, 4, 1, &in_spare) == GP_EINVAL, "sort_spare: NULL spare_keys accepted");
    CHECK(gp_cpu_sort_spare(8, k, v, sk, NULL, 4, 1, &in_spare) == GP_EINVAL, "sort_spare: NULL spare_vals accepted");
    CHECK(gp_cpu_sort_spare(8, k, v, k + 1, sv, 3, 1, &in_spare) == GP_EINVAL, "sort_spare: spare overlapping keys accepted");
    CHECK(gp_cpu_sort_spare(8, k, v, sk, sk, 4, 1, &in_spare) == GP_EINVAL, "sort_spare: spares overlapping accepted");
    CHECK(gp_cpu_sort_spare(8, k, NULL, sk, NULL, 4, 0, &in_spare) == GP_OK && in_spare >= 0,
          "sort_spare: keys alone without spare values refused");
    CHECK(strstr(gp_backend_cpu()->last_error(), "gp_cpu_sort_spare") != NULL, "error not named: %s",
          gp_backend_cpu()->last_error());
    CHECK(gp_backend_cpu()->sort_spare == gp_cpu_sort_spare, "the CPU backend's sort_spare");
}

int main(void)
{
    test_sort();
    test_merge();
    test_keys();
    test_errors();
    CHECK(g_spare_used[0] > 0 && g_spare_used[1] > 0,
          "sort_spare left results in place %lld times and in the spare %lld times: both expected",
          (long long)g_spare_used[0], (long long)g_spare_used[1]);
    return gp_check_done("test_cpu_sort");
}
