/* test_mpi_pipeline.c — the distributed operations on P ranks against a serial reference.
 *
 * usage: mpirun -np P test_mpi_pipeline [--backend cpu|cuda] [--transport shared|mpi|auto]
 *        [--fault-setup R] [--big]
 * For every element type, size (0, 1, 7, 2^k +- 1, 10^6) and distribution (random,
 * duplicates, all-equal, sorted, reversed, special values), every rank builds the same
 * array from a counter-based generator, takes its shard, and:
 *   - the statistics (backend stats per shard, gp_stats_allreduce) must equal the serial
 *     CPU twin's on the whole array: counts, NaN count, min/max, hash, first/last and
 *     descents exactly, sum and sum of squares to 1e-12 of sum |x| (summation order differs);
 *     integer data: the exact 128-bit sum (isum) and sum = isum rounded, bitwise, also
 *     against an exact sum computed here in 32-bit halves;
 *   - after to_keys, sort (keys only, in the shard buffer of an exchange made with
 *     gp_exchange_create and --transport), gp_exchange_run and from_keys, rank r must hold
 *     slots [r*m, r*m + n_r) of the serially sorted array, bit for bit (gathered on rank 0);
 *   - shards of unequal sizes (everything on the low ranks) give the same result;
 *   - the exchange alone (the --transport one, the other transport, and gp_bitonic_exchange
 *     / gp_bitonic_exchange_pairs on the caller's buffers; keys, pairs unstable and
 *     stable) on raw unsigned keys of widths 4 and 8 with uint64 values (global positions,
 *     or a few values with the high bit among them), keys repeated across ranks (so the
 *     tie rule matters), shards balanced, random-unequal, all on the low or the high ranks,
 *     and random-unequal with m = ceil(N/P) + 3 slots: rank r must hold slots [r*m, ...);
 *     the gathered result must equal, bit for bit, a serial run of the network with the CPU
 *     twins' merge-splits of the whole runs (the exchange before it went through the host
 *     split), and the serial qsort of the input (by key; by (key, value) when stable, which
 *     with positions as values is the stable sort; unstable: keys, and the (key, value)
 *     multiset kept); the three runs must give the same bits;
 *   - the split search alone: gp_exchange_split (the mpi transport's probe search) between
 *     pairs of ranks and be->merge_path (the shared one's, on both runs) on adversarial
 *     runs — the split at 0, at t, inside long runs of ties, unequal and empty runs, every
 *     t of small runs — against a brute-force merge;
 *   - the bytes the exchange moves (gp_exchange_info): 0 on sorted input (balanced shards;
 *     at most 1 % with gp_shard_range's), at most 55 % of what the whole-shard exchange
 *     sent on random input, everything in the first step on reversed input.
 * Exit 0 when every check passes; 77 (skip) with --backend cuda and no visible GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "gpuprim/exchange.h"
#include "gpuprim/kernels.h"
#include "cpu_twins.h"
#include "gpuprim/h5io.h"

static int g_rank, g_size, g_fail, g_pass;
static uint64_t g_seed;

/* The transports a test run compares: TR_SHARED, TR_MPI and TR_AUTO through
 * gp_exchange_create, and TR_LEGACY, gp_bitonic_exchange(_pairs) on buffers of the test's
 * own (mpi transport). A run compares its --transport one with two others. */
enum { TR_SHARED, TR_MPI, TR_LEGACY, TR_AUTO, TR_N };
static const char *tr_names[TR_N] = {"shared", "mpi", "legacy", "auto"};
static int g_tr = TR_SHARED; /* --transport */
static int g_fault_setup = -1; /* --fault-setup R: rank R's shared setup fails (auto falls back) */
enum { TR_RUNS = 3 };

static void check(int ok, const char *what, const char *dt, int64_t n, const char *dist)
{
    if (ok) {
        g_pass++;
        return;
    }
    g_fail++;
    if (g_rank == 0 && g_fail <= 50)
        printf("FAIL P=%d %s n=%lld dist=%s: %s\n", g_size, dt, (long long)n, dist, what);
}

enum { D_RANDOM, D_DUPS, D_EQUAL, D_SORTED, D_REVERSED, D_SPECIAL, D_N };
static const char *dist_names[D_N] = {"random", "duplicates", "all-equal", "sorted", "reversed", "special"};

/* element i of the test array (same on every rank) */
static void gen(gp_dtype t, int dist, int64_t n, int64_t i, void *out)
{
    uint64_t r = gp_mix64(g_seed ^ gp_mix64((uint64_t)i * 0x100000001B3ull + (uint64_t)dist));
    double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0,1) */
    double v;
    uint64_t bits = r;
    switch (dist) {
    case D_DUPS: bits = r % 5; v = (double)(r % 5) - 2.0; break;
    case D_EQUAL: bits = 42; v = 42.5; break;
    case D_SORTED: bits = (uint64_t)i; v = (double)i - 0.5 * (double)n; break;
    case D_REVERSED: bits = (uint64_t)(n - i); v = 0.5 * (double)n - (double)i; break;
    default: v = (u - 0.5) * 1e6; break;
    }
    if (dist == D_SPECIAL) {
        static const double sp[] = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-310, -1e-310, 1.0, -1.0};
        if ((r >> 60) < 4) v = sp[(r >> 8) % 10];
        static const uint64_t spi[] = {0, 1, ~0ull, 0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull,
                                       0x80000000ull, 0x7FFFFFFFull, 0xFFFFFFFFull};
        if ((r >> 60) < 4) bits = spi[(r >> 8) % 8];
    }
    switch (t) {
    case GP_F32: { float f = (float)v; memcpy(out, &f, 4); break; }
    case GP_F64: memcpy(out, &v, 8); break;
    case GP_I32: case GP_U32: {
        uint32_t x = (uint32_t)bits;
        if (dist == D_SORTED || dist == D_REVERSED) x = (uint32_t)bits + (t == GP_I32 ? 0x80000000u - (uint32_t)n : 0);
        memcpy(out, &x, 4);
        break;
    }
    default: memcpy(out, &bits, 8); break;
    }
}

static int close_rel(double a, double b, double scale)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= 1e-12 * scale + 1e-300;
}

/* The buffers of one exchange run: an exchange (TR_SHARED, TR_MPI) or the test's own shard
 * and receive buffers (TR_LEGACY). */
typedef struct xbuf {
    const gp_backend *be;
    int tr, width, pairs;
    int64_t m;
    gp_exchange *x;
    void *k[2];
    uint64_t *v[2];
} xbuf;

/* Makes the buffers (collective); aborts the job when that fails. */
static void xbuf_open(xbuf *b, const gp_backend *be, int tr, int width, int pairs, int64_t m)
{
    memset(b, 0, sizeof *b);
    b->be = be, b->tr = tr, b->width = width, b->pairs = pairs, b->m = m;
    char msg[512] = "";
    if (tr == TR_LEGACY) {
        for (int i = 0; i < 2; i++) {
            b->k[i] = be->alloc((size_t)m * (size_t)width);
            b->v[i] = pairs ? be->alloc((size_t)m * 8) : NULL;
            if (!b->k[i] || (pairs && !b->v[i])) {
                printf("rank %d: allocation failed: %s\n", g_rank, be->last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        return;
    }
    const gp_transport want_tr = tr == TR_SHARED ? GP_TRANSPORT_SHARED
                               : tr == TR_MPI    ? GP_TRANSPORT_MPI
                                                 : GP_TRANSPORT_AUTO;
    gp_exchange_config cfg = {want_tr, width, pairs, m, tr == TR_AUTO && g_rank == g_fault_setup, 0};
    int rc = gp_exchange_create(MPI_COMM_WORLD, be, &cfg, &b->x, msg, sizeof msg);
    if (g_fault_setup >= 0 && tr == TR_AUTO && g_size > 1) {
        /* auto after a failed shared setup: mpi, and the notice names the failing rank */
        char want[64];
        snprintf(want, sizeof want, "not available (rank %d:", g_fault_setup);
        if (rc != GP_OK || !strstr(msg, want) || gp_exchange_transport(b->x) != GP_TRANSPORT_MPI) {
            if (g_rank == 0) printf("FAIL: auto with rank %d's setup failing: rc %d, transport %s, notice '%s'\n",
                                    g_fault_setup, rc, b->x ? gp_transport_name(gp_exchange_transport(b->x)) : "-", msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        return;
    }
    if (rc != GP_OK || msg[0]) {
        if (g_rank == 0) printf("FAIL: gp_exchange_create (%s): %d: %s\n", tr_names[tr], rc, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int want = tr == TR_SHARED && g_size > 1 ? GP_TRANSPORT_SHARED : GP_TRANSPORT_MPI;
    if (tr != TR_AUTO && (int)gp_exchange_transport(b->x) != want) {
        if (g_rank == 0) printf("FAIL: gp_exchange_create set up %s, not %s\n",
                                gp_transport_name(gp_exchange_transport(b->x)), tr_names[tr]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void *xbuf_keys(const xbuf *b) { return b->x ? gp_exchange_keys(b->x) : b->k[0]; }
static uint64_t *xbuf_vals(const xbuf *b) { return b->x ? gp_exchange_values(b->x) : b->v[0]; }

/* The exchange on the *nk sorted keys (and values) in the shard buffer (collective). */
static void xbuf_run(xbuf *b, int64_t *nk, int stable, gp_exchange_info *xi)
{
    if (b->x) {
        gp_exchange_run(b->x, nk, stable, xi);
    } else if (b->pairs) {
        void *k = b->k[0];
        uint64_t *v = b->v[0];
        gp_bitonic_exchange_pairs(MPI_COMM_WORLD, b->be, b->width, b->m, &k, &v, nk, b->k[1],
                                  b->v[1], NULL, NULL, NULL, NULL, stable, xi);
    } else {
        void *k = b->k[0];
        gp_bitonic_exchange(MPI_COMM_WORLD, b->be, b->width, b->m, &k, nk, b->k[1], NULL, NULL, xi);
    }
}

static void xbuf_close(xbuf *b)
{
    if (b->x) {
        if (gp_exchange_destroy(b->x) != GP_OK) printf("rank %d: gp_exchange_destroy failed\n", g_rank);
        return;
    }
    for (int i = 0; i < 2; i++) {
        b->be->free(b->k[i]);
        if (b->v[i]) b->be->free(b->v[i]);
    }
}

static void run_case(const gp_backend *be, gp_dtype t, int64_t n, int dist, int skewed)
{
    const char *dn = gp_dtype_name(t), *dsn = dist_names[dist];
    const size_t sz = gp_dtype_size(t);
    const int P = g_size, r = g_rank;
    char *full = malloc((size_t)(n ? n : 1) * sz);
    for (int64_t i = 0; i < n; i++) gen(t, dist, n, i, full + i * sz);

    int64_t m = (n + P - 1) / P, off, cnt;
    if (!skewed) {
        gp_shard_range(n, P, r, &off, &cnt);
    } else { /* the low ranks full (m each), the rest empty */
        off = (int64_t)r * m < n ? (int64_t)r * m : n;
        cnt = n - off < m ? n - off : m;
    }
    xbuf xb;
    xbuf_open(&xb, be, g_tr, (int)sz, 0, m);
    void *dev = xbuf_keys(&xb);
    be->upload(dev, full + off * sz, (size_t)cnt * sz);

    /* statistics */
    gp_stats mine, tot, ref;
    check(be->stats(t, dev, cnt, GP_STATS_ORDER, &mine) == 0, "stats call", dn, n, dsn);
    gp_stats_allreduce(MPI_COMM_WORLD, &mine, &tot);
    gp_cpu_stats(t, full, n, GP_STATS_ORDER, &ref);
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = gp_key_to_double(t, gp_key_of(t, full + i * sz));
        if (!isnan(x) && !isinf(x)) scale += fabs(x);
    }
    check(tot.count == ref.count && tot.nan_count == ref.nan_count, "count / nan count", dn, n, dsn);
    check(tot.min_key == ref.min_key && tot.max_key == ref.max_key, "min / max", dn, n, dsn);
    check(tot.hash == ref.hash, "multiset hash", dn, n, dsn);
    check(tot.descents == ref.descents, "descents", dn, n, dsn);
    check(n == 0 || (tot.first_key == ref.first_key && tot.last_key == ref.last_key), "first / last", dn, n, dsn);
    check(close_rel(tot.sum, ref.sum, scale), "sum", dn, n, dsn);
    if (!gp_dtype_is_float(t)) {
        /* the exact sum in 32-bit halves: low halves unsigned, high halves signed (i64) or
         * -1 per negative element (i32) */
        uint64_t lo = 0;
        int64_t hi = 0;
        for (int64_t i = 0; i < n; i++) {
            uint64_t b = 0;
            memcpy(&b, full + i * sz, sz);
            lo += b & 0xFFFFFFFFu;
            if (sz == 4) hi -= t == GP_I32 && (b >> 31);
            else hi += t == GP_I64 ? (int64_t)(int32_t)(uint32_t)(b >> 32) : (int64_t)(b >> 32);
        }
        gp_i128 want = gp_i128_from_u64(lo), h;
        h.lo = (uint64_t)hi << 32;
        h.hi = hi >> 32; /* arithmetic shift (gcc, clang) */
        want = gp_i128_add(want, h);
        check(tot.has_isum == 1 && tot.isum.lo == want.lo && tot.isum.hi == want.hi &&
                  ref.isum.lo == want.lo && ref.isum.hi == want.hi,
              "exact integer sum", dn, n, dsn);
        check(memcmp(&tot.sum, &ref.sum, sizeof tot.sum) == 0, "integer sum rounded once", dn, n, dsn);
    } else {
        check(tot.has_isum == 0, "has_isum of float data", dn, n, dsn);
    }

    /* sort + rank exchange */
    int width = (int)sz;
    int64_t nk = cnt;
    check(be->to_keys(t, GP_ASCENDING, dev, cnt) == 0, "to_keys", dn, n, dsn);
    check(be->sort(width, dev, NULL, cnt, 0) == 0, "sort", dn, n, dsn);
    gp_exchange_info xi;
    xbuf_run(&xb, &nk, 0, &xi);
    dev = xbuf_keys(&xb);
    check(be->from_keys(t, GP_ASCENDING, dev, nk) == 0, "from_keys", dn, n, dsn);
    int64_t expect = n - (int64_t)r * m;
    expect = expect < 0 ? 0 : (expect > m ? m : expect);
    int layout_ok = nk == expect, all_ok;
    MPI_Allreduce(&layout_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(all_ok, "result layout (rank r holds slots [r*m, r*m+n_r))", dn, n, dsn);

    /* gather to rank 0 and compare with the serial sort */
    char *mineh = malloc((size_t)(nk ? nk : 1) * sz);
    be->download(mineh, dev, (size_t)nk * sz);
    int *counts = NULL, *displs = NULL;
    char *got = NULL;
    int nbytes = (int)(nk * (int64_t)sz);
    if (r == 0) {
        counts = calloc((size_t)P, sizeof *counts);
        displs = calloc((size_t)P, sizeof *displs);
        got = malloc((size_t)(n ? n : 1) * sz);
        memset(got, 0xA5, (size_t)(n ? n : 1) * sz);
    }
    MPI_Gather(&nbytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (r == 0)
        for (int i = 0; i < P; i++) displs[i] = (int)((int64_t)i * m * (int64_t)sz);
    MPI_Gatherv(mineh, nbytes, MPI_BYTE, got, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (r == 0) {
        char *want = malloc((size_t)(n ? n : 1) * sz);
        memcpy(want, full, (size_t)n * sz);
        gp_cpu_to_keys(t, want, n);
        gp_cpu_sort_keys(width, want, n);
        gp_cpu_from_keys(t, want, n);
        check(memcmp(got, want, (size_t)n * sz) == 0, "globally sorted result", dn, n, dsn);
        free(want);
    }
    free(got);
    free(counts);
    free(displs);
    free(mineh);
    xbuf_close(&xb);
    free(full);
}

/* ---- the merge exchange alone: raw keys, pairs, unequal shards ------------------------- */

enum { XK_DUPS, XK_FEW, XK_RANDOM, XK_EQUAL, XK_N };
static const char *xk_names[XK_N] = {"dups-across-ranks", "three-keys", "random", "all-equal"};
enum { XL_BALANCED, XL_RANDOM, XL_LOW, XL_HIGH, XL_SLACK, XL_N };
static const char *xl_names[XL_N] = {"balanced", "random-unequal", "low-ranks-full",
                                     "high-ranks-full", "random-unequal-m+3"};
enum { XM_KEYS, XM_UNSTABLE, XM_STABLE, XM_N };
static const char *xm_names[XM_N] = {"keys", "pairs-unstable", "pairs-stable"};

static uint64_t xkey(int width, int kd, uint64_t i)
{
    const uint64_t r = gp_mix64(g_seed ^ gp_mix64(i * 0x9E3779B97F4A7C15ull + (uint64_t)kd + 77));
    static const uint64_t d8[] = {0, 1, 7, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, ~0ull};
    static const uint64_t d4[] = {0, 1, 7, 0x7FFFFFFFull, 0x80000000ull, 0xFFFFFFFFull};
    uint64_t k;
    switch (kd) {
    case XK_DUPS: k = width == 4 ? d4[r % 6] : d8[r % 6]; break;
    case XK_FEW: k = r % 3; break;
    case XK_EQUAL: k = 42; break;
    default: k = r; break;
    }
    return width == 4 ? (uint32_t)k : k;
}

/* value of input element i: its global position, or (vdups) one of a few values, the high
 * bit among them, so that (key, value) ties and unsigned value order both come up */
static uint64_t xval(int vdups, uint64_t i)
{
    static const uint64_t d[] = {0, 5, 0x8000000000000000ull, ~0ull};
    return vdups ? d[gp_mix64(g_seed + i * 31 + 5) % 4] : i;
}

static uint64_t ld(const void *p, int width, int64_t i)
{
    return width == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

static void st(void *p, int width, int64_t i, uint64_t x)
{
    if (width == 4) ((uint32_t *)p)[i] = (uint32_t)x;
    else ((uint64_t *)p)[i] = x;
}

/* element counts of the P shards (the same on every rank): each <= m, sum n */
static void x_counts(int layout, int64_t n, int P, int64_t m, int64_t *cnt)
{
    int64_t left = n;
    for (int q = 0; q < P; q++) {
        int64_t c;
        if (layout == XL_BALANCED) {
            int64_t off;
            gp_shard_range(n, P, q, &off, &c);
        } else if (layout == XL_LOW) {
            c = left < m ? left : m;
        } else if (layout == XL_HIGH) { /* the top ranks full, the rest empty */
            const int64_t below = (int64_t)(P - 1 - q) * m; /* room of the ranks after q */
            c = left > below ? left - below : 0;
        } else { /* random, but the ranks after q must be able to take the rest */
            const int64_t below = (int64_t)(P - 1 - q) * m;
            const int64_t lo = left > below ? left - below : 0, hi = left < m ? left : m;
            c = lo + (int64_t)(gp_mix64(g_seed ^ (uint64_t)(n * 131 + q)) % (uint64_t)(hi - lo + 1));
        }
        cnt[q] = c;
        left -= c;
    }
}

/* gathers n elements of esz bytes from every rank to rank 0, rank q's at element at[q] */
static void x_gather(const void *mine, int64_t n, size_t esz, void *out, const int64_t *at)
{
    int nb = (int)(n * (int64_t)esz), *counts = NULL, *displs = NULL;
    if (g_rank == 0) {
        counts = calloc((size_t)g_size, sizeof *counts);
        displs = calloc((size_t)g_size, sizeof *displs);
        for (int q = 0; q < g_size; q++) displs[q] = (int)(at[q] * (int64_t)esz);
    }
    MPI_Gather(&nb, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(mine, nb, MPI_BYTE, out, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
}

static int x_width; /* for the qsort comparators */
static const char *x_keys;
static const uint64_t *x_vals;
static int cmp_key(const void *a, const void *b)
{
    const uint64_t x = ld(x_keys, x_width, *(const int64_t *)a),
                   y = ld(x_keys, x_width, *(const int64_t *)b);
    return x < y ? -1 : x > y;
}
static int cmp_pair(const void *a, const void *b)
{
    const int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    const uint64_t x = ld(x_keys, x_width, i), y = ld(x_keys, x_width, j);
    if (x != y) return x < y ? -1 : 1;
    return x_vals[i] < x_vals[j] ? -1 : x_vals[i] > x_vals[j];
}

/* The old exchange, serially on rank 0 with the CPU twins: every step's merge-split of the
 * whole runs (lower half to the lower rank, upper half to the upper one). sk / sv: P
 * shards of m slots each, sorted; nk: their counts; updated in place. */
static void x_simulate(int width, int mode, int P, int64_t m, char *sk, uint64_t *sv, int64_t *nk)
{
    const size_t w = (size_t)width;
    char *ok = malloc((size_t)(m ? m : 1) * w * 2);
    uint64_t *ov = calloc((size_t)(m ? m : 1) * 2, 8);
    int P2 = 1;
    while (P2 < P) P2 <<= 1;
    for (int k = 2; k <= P2; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1)
            for (int a = 0; a < P; a++) {
                const int b = (j == (k >> 1)) ? (a ^ (k - 1)) : (a ^ j);
                if (b >= P || b < a) continue;
                int64_t n0 = 0, n1 = 0;
                char *la = sk + (size_t)a * m * w, *hb = sk + (size_t)b * m * w;
                uint64_t *lva = sv + (size_t)a * m, *hvb = sv + (size_t)b * m;
                for (int up = 0; up < 2; up++) {
                    int64_t *no = up ? &n1 : &n0;
                    int rc = mode == XM_KEYS
                        ? gp_cpu_merge_split_keys(width, la, nk[a], hb, nk[b], m, up, ok + (size_t)up * m * w, no)
                        : gp_cpu_merge_split_pairs(width, la, lva, nk[a], hb, hvb, nk[b], m, up,
                                                   mode == XM_STABLE, ok + (size_t)up * m * w,
                                                   ov + (size_t)up * m, no);
                    if (rc) printf("simulation: merge-split failed\n");
                }
                memcpy(la, ok, (size_t)n0 * w);
                memcpy(hb, ok + (size_t)m * w, (size_t)n1 * w);
                memcpy(lva, ov, (size_t)n0 * 8);
                memcpy(hvb, ov + m, (size_t)n1 * 8);
                nk[a] = n0;
                nk[b] = n1;
            }
    free(ok);
    free(ov);
}

/* One exchange of the sorted runs hk / hv (c elements on this rank, host memory) with
 * transport tr; the result goes to rank 0's got / gotv in slot layout (rank q at at[q]).
 * A result whose counts break the layout aborts the job (the gathers assume it). */
static void xcase_run(const gp_backend *be, int tr, int width, int mode, int64_t m, int64_t n,
                      const char *hk, const uint64_t *hv, int64_t c, char *got, uint64_t *gotv,
                      const int64_t *at, const char *what, const char *dsn)
{
    const int pairs = mode != XM_KEYS, r = g_rank;
    const size_t w = (size_t)width;
    xbuf xb;
    xbuf_open(&xb, be, tr, width, pairs, m);
    int ok = be->upload(xbuf_keys(&xb), hk, (size_t)c * w) == 0 &&
             (!pairs || be->upload(xbuf_vals(&xb), hv, (size_t)c * 8) == 0);
    check(ok, "upload", what, n, dsn);
    gp_exchange_info xi;
    int64_t nk = c;
    xbuf_run(&xb, &nk, mode == XM_STABLE, &xi);
    int64_t expect = n - (int64_t)r * m;
    expect = expect < 0 ? 0 : (expect > m ? m : expect);
    int layout_ok = nk == expect, all_ok;
    MPI_Allreduce(&layout_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char tag[200];
    snprintf(tag, sizeof tag, "%s: result layout (rank r holds slots [r*m, r*m+n_r)), %s", what,
             tr_names[tr]);
    check(all_ok, tag, "", n, dsn);
    if (!all_ok) MPI_Abort(MPI_COMM_WORLD, 1);
    char *rk = malloc((size_t)(nk ? nk : 1) * w);
    uint64_t *rv = malloc((size_t)(nk ? nk : 1) * 8);
    ok = be->download(rk, xbuf_keys(&xb), (size_t)nk * w) == 0 &&
         (!pairs || be->download(rv, xbuf_vals(&xb), (size_t)nk * 8) == 0);
    check(ok, "download of the result", what, n, dsn);
    x_gather(rk, nk, w, got, at);
    if (pairs) x_gather(rv, nk, 8, gotv, at);
    free(rk);
    free(rv);
    xbuf_close(&xb);
}

/* The reference checks of a gathered result (rank 0): the serial sort of the input by key
 * (by (key, value) when stable: values = positions give the stable sort; unstable pairs:
 * the keys so, and the (key, value) multiset kept). */
static void xcase_reference(int width, int mode, int kd, int vdups, int64_t n, const char *got,
                            const uint64_t *gotv, const char *what, const char *dsn)
{
    const int pairs = mode != XM_KEYS, stable = mode == XM_STABLE;
    const size_t w = (size_t)width;
    char *full = malloc((size_t)(n ? n : 1) * w);
    uint64_t *fullv = malloc((size_t)(n ? n : 1) * 8);
    int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    for (int64_t i = 0; i < n; i++) {
        st(full, width, i, xkey(width, kd, (uint64_t)i));
        fullv[i] = xval(vdups, (uint64_t)i);
        idx[i] = i;
    }
    x_width = width;
    x_keys = full;
    x_vals = fullv;
    qsort(idx, (size_t)n, sizeof *idx, pairs ? cmp_pair : cmp_key);
    int keys_ok = 1, vals_ok = 1;
    for (int64_t i = 0; i < n; i++) { /* result slot i is got[i]: the slots are contiguous */
        keys_ok &= ld(got, width, i) == ld(full, width, idx[i]);
        if (stable) vals_ok &= gotv[i] == fullv[idx[i]];
    }
    check(keys_ok, "keys equal to the serially sorted keys", what, n, dsn);
    if (stable) check(vals_ok, "values equal to the stable (key, value) sort", what, n, dsn);
    if (mode == XM_UNSTABLE) {
        int64_t *gi = malloc((size_t)(n ? n : 1) * sizeof *gi);
        for (int64_t i = 0; i < n; i++) gi[i] = i;
        x_keys = got;
        x_vals = gotv;
        qsort(gi, (size_t)n, sizeof *gi, cmp_pair);
        int multiset = 1;
        for (int64_t i = 0; i < n; i++)
            multiset &= ld(got, width, gi[i]) == ld(full, width, idx[i]) && gotv[gi[i]] == fullv[idx[i]];
        check(multiset, "(key, value) pairs kept", what, n, dsn);
        free(gi);
    }
    free(idx);
    free(full);
    free(fullv);
}

static void run_xcase(const gp_backend *be, int width, int mode, int kd, int layout, int vdups, int64_t n)
{
    const int P = g_size, r = g_rank, pairs = mode != XM_KEYS, stable = mode == XM_STABLE;
    const size_t w = (size_t)width;
    char what[160];
    snprintf(what, sizeof what, "exchange w=%d %s%s keys=%s", width, xm_names[mode],
             pairs && vdups ? " (few values)" : "", xk_names[kd]);
    const char *dsn = xl_names[layout];
    int64_t m = (n + P - 1) / P + (layout == XL_SLACK ? 3 : 0);
    int64_t *cnt = calloc((size_t)P, sizeof *cnt), *off = calloc((size_t)P, sizeof *off);
    x_counts(layout, n, P, m, cnt);
    for (int q = 1; q < P; q++) off[q] = off[q - 1] + cnt[q - 1];
    const int64_t c = cnt[r];
    char *hk = malloc((size_t)(m ? m : 1) * w);
    uint64_t *hv = malloc((size_t)(m ? m : 1) * 8);
    for (int64_t i = 0; i < c; i++) {
        st(hk, width, i, xkey(width, kd, (uint64_t)(off[r] + i)));
        hv[i] = xval(vdups, (uint64_t)(off[r] + i));
    }
    /* the local sort on the device */
    void *dev = be->alloc((size_t)m * w);
    uint64_t *dval = be->alloc((size_t)m * 8);
    if (!dev || !dval) {
        check(0, "allocation", what, n, dsn);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int ok = be->upload(dev, hk, (size_t)c * w) == 0 && (!pairs || be->upload(dval, hv, (size_t)c * 8) == 0);
    ok = ok && be->sort(width, dev, pairs ? dval : NULL, c, stable) == 0;
    ok = ok && be->download(hk, dev, (size_t)c * w) == 0 && (!pairs || be->download(hv, dval, (size_t)c * 8) == 0);
    check(ok, "upload / local sort / download", what, n, dsn);
    be->free(dev);
    be->free(dval);

    /* the locally sorted shards, for the simulation of the whole-run merge-splits */
    char *sk = NULL, *got[TR_RUNS] = {NULL, NULL, NULL};
    uint64_t *sv = NULL, *gotv[TR_RUNS] = {NULL, NULL, NULL};
    int64_t *at = calloc((size_t)P, sizeof *at), *snk = calloc((size_t)P, sizeof *snk);
    for (int q = 0; q < P; q++) at[q] = (int64_t)q * m;
    const size_t slots = (size_t)P * (size_t)(m ? m : 1);
    if (r == 0) {
        sk = calloc(slots, w);
        sv = calloc(slots, 8);
        for (int t = 0; t < TR_RUNS; t++) {
            got[t] = calloc(slots, w);
            gotv[t] = calloc(slots, 8);
        }
        memcpy(snk, cnt, (size_t)P * sizeof *snk);
    }
    x_gather(hk, c, w, sk, at);
    if (pairs) x_gather(hv, c, 8, sv, at);
    /* the --transport one first, then the other one (mpi after auto, whose partners may be on
     * other nodes) and the caller's-buffers form */
    const int order[TR_RUNS] = {g_tr, g_tr == TR_MPI ? TR_SHARED : TR_MPI, TR_LEGACY};
    for (int t = 0; t < TR_RUNS; t++)
        xcase_run(be, order[t], width, mode, m, n, hk, hv, c, got[t], gotv[t], at, what, dsn);

    if (r == 0) {
        /* 1. bit for bit the whole-run merge-splits */
        x_simulate(width, mode, P, m, sk, sv, snk);
        int same = 1;
        for (int q = 0; q < P && same; q++) {
            const int64_t e = snk[q];
            same = e == (n - (int64_t)q * m < 0 ? 0 : (n - (int64_t)q * m > m ? m : n - (int64_t)q * m)) &&
                   memcmp(got[0] + (size_t)q * m * w, sk + (size_t)q * m * w, (size_t)e * w) == 0 &&
                   (!pairs || memcmp(gotv[0] + (size_t)q * m, sv + (size_t)q * m, (size_t)e * 8) == 0);
        }
        check(same, "equal to merge-splits of whole runs, bit for bit", what, n, dsn);
        /* 2. the other transport and the caller's-buffers form: the same bits */
        for (int t = 1; t < TR_RUNS; t++) {
            char tag[240];
            snprintf(tag, sizeof tag, "%s transport gives the bits of the %s one", tr_names[order[t]],
                     tr_names[order[0]]);
            check(memcmp(got[t], got[0], (size_t)n * w) == 0 &&
                      (!pairs || memcmp(gotv[t], gotv[0], (size_t)n * 8) == 0),
                  tag, what, n, dsn);
        }
        /* 3. the serial reference */
        xcase_reference(width, mode, kd, vdups, n, got[0], gotv[0], what, dsn);
    }
    free(sk);
    free(sv);
    for (int t = 0; t < TR_RUNS; t++) {
        free(got[t]);
        free(gotv[t]);
    }
    free(at);
    free(snk);
    free(cnt);
    free(off);
    free(hk);
    free(hv);
}

/* ---- the split search alone --------------------------------------------------------- */

enum { SP_LO_BELOW, SP_LO_ABOVE, SP_TIES, SP_TIES_MIXED, SP_FEW, SP_N };
static const char *sp_names[SP_N] = {"lo below hi", "lo above hi", "all ties (largest key)",
                                     "long runs of ties", "four keys"};

static int cmp_kv(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The run of the lower (hi = 0) or the upper (hi = 1) rank of a split case: n (key, value)
 * pairs, ascending by (key, value), in kv[2 n]. */
static void sp_run(int kind, int hi, int64_t n, int width, uint64_t *kv)
{
    const uint64_t top = width == 4 ? 0xFFFFFFFFull : ~0ull;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t r = gp_mix64(g_seed ^ (uint64_t)(i * 7 + hi * 1000003 + kind * 77));
        uint64_t k;
        switch (kind) {
        case SP_LO_BELOW: k = hi ? 1000000 + (uint64_t)i : (uint64_t)i; break;
        case SP_LO_ABOVE: k = hi ? (uint64_t)i : top - (uint64_t)n + (uint64_t)i; break;
        case SP_TIES: k = top; break;
        case SP_TIES_MIXED: k = i < n / 4 ? 1 : i < 3 * n / 4 ? 5 + (uint64_t)hi : 9; break;
        default: k = r % 4; break;
        }
        kv[2 * i] = k;
        kv[2 * i + 1] = kind == SP_FEW ? r >> 62 : (uint64_t)i * 2 + (uint64_t)hi; /* value ties too */
    }
    qsort(kv, (size_t)n, 16, cmp_kv);
}

/* The split by definition: the merge run step by step (ties lo first; stable: (key, value)). */
static int64_t sp_brute(const uint64_t *lo, int64_t nl, const uint64_t *hi, int64_t nh, int64_t t, int stable)
{
    int64_t i = 0, j = 0;
    for (int64_t r = 0; r < t; r++) {
        const int take_lo = j >= nh || (i < nl && (lo[2 * i] < hi[2 * j] || (lo[2 * i] == hi[2 * j] &&
                                                   (!stable || lo[2 * i + 1] <= hi[2 * j + 1]))));
        if (take_lo) i++;
        else j++;
    }
    return i;
}

/* A run in backend memory: keys of `width` bytes and values. */
static void sp_upload(const gp_backend *be, int width, const uint64_t *kv, int64_t n, void **k, uint64_t **v)
{
    char *hk = malloc((size_t)(n ? n : 1) * 8);
    uint64_t *hv = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++) {
        st(hk, width, i, kv[2 * i]);
        hv[i] = kv[2 * i + 1];
    }
    *k = be->alloc((size_t)n * (size_t)width);
    *v = be->alloc((size_t)n * 8);
    if (!*k || !*v || be->upload(*k, hk, (size_t)n * (size_t)width) || be->upload(*v, hv, (size_t)n * 8)) {
        printf("rank %d: split test: allocation / upload failed\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(hk);
    free(hv);
}

/* gp_exchange_split (the probe search, between ranks r and r ^ 1) and be->merge_path (on
 * both runs in this rank's memory) against sp_brute, on every kind of run, both widths,
 * stable and not, sizes with empty and unequal runs; every t for small runs, else t at 0,
 * 1, the run ends, the middle and the last two. Ranks without a partner test merge_path. */
static void run_split_tests(const gp_backend *be)
{
    static const int64_t sizes[][2] = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {7, 3}, {3, 7}, {1, 64},
                                       {64, 64}, {100, 37}, {1000, 1000}, {4099, 17}};
    const int partner = g_rank ^ 1, paired = partner < g_size, lower = g_rank < partner;
    for (int kind = 0; kind < SP_N; kind++)
        for (int width = 4; width <= 8; width += 4)
            for (int stable = 0; stable < 2; stable++)
                for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                    const int64_t nl = sizes[z][0], nh = sizes[z][1];
                    uint64_t *lo = malloc((size_t)(nl + 1) * 16), *hi = malloc((size_t)(nh + 1) * 16);
                    sp_run(kind, 0, nl, width, lo);
                    sp_run(kind, 1, nh, width, hi);
                    void *lk, *hk;
                    uint64_t *lv, *hv;
                    sp_upload(be, width, lo, nl, &lk, &lv);
                    sp_upload(be, width, hi, nh, &hk, &hv);
                    char what[160];
                    snprintf(what, sizeof what, "split w=%d%s %s nlo=%lld nhi=%lld", width,
                             stable ? " stable" : "", sp_names[kind], (long long)nl, (long long)nh);
                    int ok_probe = 1, ok_path = 1, calls = 0;
                    const int64_t tot = nl + nh;
                    const int64_t few[] = {0, 1, nl, nh, tot / 2, tot - 1, tot};
                    const int64_t nt = tot <= 200 ? tot + 1 : 7;
                    for (int64_t q = 0; q < nt; q++) {
                        const int64_t t = tot <= 200 ? q : few[q];
                        if (t < 0 || t > tot) continue;
                        const int64_t want = sp_brute(lo, nl, hi, nh, t, stable);
                        int64_t got = -1;
                        be->merge_path(width, lk, lv, nl, hk, hv, nh, t, stable, &got);
                        ok_path &= got == want;
                        if (paired) {
                            got = -1;
                            gp_exchange_split(MPI_COMM_WORLD, partner, be, width, lower ? lk : hk,
                                              lower ? lv : hv, lower ? nl : nh, lower ? nh : nl, t,
                                              stable, &got);
                            ok_probe &= got == want;
                            calls++;
                        }
                    }
                    char tag[400];
                    snprintf(tag, sizeof tag, "%s: be->merge_path equals the brute-force split", what);
                    check(ok_path, tag, "", tot, "split");
                    snprintf(tag, sizeof tag, "%s: gp_exchange_split (probes, rank %d and %d) "
                             "equals the brute-force split", what, g_rank, partner);
                    if (paired) check(ok_probe && calls > 0, tag, "", tot, "split");
                    be->free(lk);
                    be->free(hk);
                    be->free(lv);
                    be->free(hv);
                    free(lo);
                    free(hi);
                }
}

/* ---- bytes moved --------------------------------------------------------------------- */

enum { BY_SORTED, BY_RANDOM, BY_REVERSED, BY_N };
static const char *by_names[BY_N] = {"sorted", "random", "reversed"};

/* The bytes the exchange moves (gp_exchange_info, summed over the ranks) with transport tr,
 * 4-byte keys, n = P 4096 (balanced) or n = P 4096 - (P - 1) (gp_shard_range's unequal
 * shards: all but rank 0 one short): sorted input moves nothing (balanced; <= 1 % unequal), random input at most 55 %
 * of what the whole-shard exchange sent, reversed input all of its shards in the first step
 * (balanced; >= 99 % unequal). */
static void run_bytes_case(const gp_backend *be, int tr, int dist, int unequal)
{
    const int P = g_size;
    const int64_t n = (int64_t)P * 4096 - (unequal ? P - 1 : 0), m = (n + P - 1) / P;
    int64_t off, cnt;
    gp_shard_range(n, P, g_rank, &off, &cnt);
    uint32_t *h = malloc((size_t)m * 4);
    for (int64_t i = 0; i < cnt; i++) {
        const int64_t g = off + i;
        h[i] = dist == BY_SORTED ? (uint32_t)g : dist == BY_REVERSED ? (uint32_t)(n - g)
                                                                     : (uint32_t)gp_mix64(g_seed + (uint64_t)g);
    }
    xbuf xb;
    xbuf_open(&xb, be, tr, 4, 0, m);
    gp_exchange_info xi;
    int64_t nk = cnt;
    if (be->upload(xbuf_keys(&xb), h, (size_t)cnt * 4) || be->sort(4, xbuf_keys(&xb), NULL, cnt, 0))
        check(0, "upload / sort", "bytes", n, by_names[dist]);
    xbuf_run(&xb, &nk, 0, &xi);
    const int64_t whole0 = xi.stages > 0 && xi.step_transport[0] ? cnt * 4 : 0;
    int64_t mine[4] = {xi.bytes_moved, xi.bytes_whole, xi.stages > 0 ? xi.step_bytes[0] : 0, whole0}, sum[4];
    MPI_Allreduce(mine, sum, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    int used = 0, all_used = 0;
    for (int s = 0; s < xi.stages && s < GP_XSTEPS_MAX; s++) used |= xi.step_transport[s];
    MPI_Allreduce(&used, &all_used, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    /* GPUPRIM_EXCHANGE_NODE_RANKS=k < P under auto: both transports, shared within the
     * "nodes" of k ranks and mpi between them; else the one asked for */
    const char *nk_env = getenv("GPUPRIM_EXCHANGE_NODE_RANKS");
    const int knob = nk_env ? atoi(nk_env) : 0;
    const int want_used = P == 1 ? 0 : tr == TR_MPI || (tr == TR_AUTO && g_fault_setup >= 0) ? GP_TRANSPORT_MPI
                        : tr == TR_SHARED ? GP_TRANSPORT_SHARED
                        : knob > 0 && knob < P ? (knob > 1 ? GP_TRANSPORT_SHARED : 0) | GP_TRANSPORT_MPI
                                               : GP_TRANSPORT_SHARED;
    char tag[160];
    snprintf(tag, sizeof tag, "steps went through transports %#x, want %#x (%s)", all_used, want_used,
             tr_names[tr]);
    check(all_used == want_used, tag, "", n, by_names[dist]);
    char what[200];
    snprintf(what, sizeof what, "bytes moved (%s, %s shards): %lld of %lld (%.1f %%), first step %lld "
             "of %lld", tr_names[tr], unequal ? "unequal" : "equal", (long long)sum[0],
             (long long)sum[1], sum[1] ? 100.0 * (double)sum[0] / (double)sum[1] : 0.0,
             (long long)sum[2], (long long)sum[3]);
    if (g_rank == 0) printf("  %s input: %s\n", by_names[dist], what);
    if (P > 1 && dist == BY_SORTED) check(unequal ? sum[0] * 100 <= sum[1] : sum[0] == 0, what, "", n, by_names[dist]);
    if (P > 1 && dist == BY_RANDOM) check(sum[0] > 0 && sum[0] * 100 <= sum[1] * 55, what, "", n, by_names[dist]);
    if (P > 1 && dist == BY_REVERSED) check(unequal ? sum[2] * 100 >= sum[3] * 99 : sum[2] == sum[3], what, "", n, by_names[dist]);
    xbuf_close(&xb);
    free(h);
}

/* --bad-m self|partner: a misuse of gp_bitonic_exchange that must abort the job with one
 * line naming the counts (CTest matches the line): "self", rank 0 holds m + 1 keys; "partner",
 * every rank holds its m keys but rank 0 passes m = 10 and the others m = 20 (rank 0 sees
 * its partner's 20 keys). Never returns: the exchange aborts (exit 7). */
static int bad_m_call(const gp_backend *be, const char *how)
{
    const int partner = strcmp(how, "partner") == 0;
    int64_t m = partner ? (g_rank == 0 ? 10 : 20) : 10;
    int64_t nk = partner ? m : (g_rank == 0 ? m + 1 : m);
    uint32_t host[32];
    for (int i = 0; i < 32; i++) host[i] = (uint32_t)(3 * i + g_rank);
    void *dev = be->alloc(sizeof host), *recv = be->alloc(sizeof host);
    if (!dev || !recv || be->upload(dev, host, sizeof host)) return 1;
    uint32_t hs[32], hr[32];
    gp_exchange_info xi;
    gp_bitonic_exchange(MPI_COMM_WORLD, be, 4, m, &dev, &nk, recv, hs, hr, &xi);
    if (g_rank == 0) printf("FAIL: gp_bitonic_exchange returned on a bad count (--bad-m %s)\n", how);
    MPI_Finalize();
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int cuda = 0, big = 0;
    const char *bad_m = NULL, *tr = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) cuda = strcmp(argv[++i], "cuda") == 0;
        else if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc) tr = argv[++i];
        else if (strcmp(argv[i], "--big") == 0) big = 1;
        else if (strcmp(argv[i], "--bad-m") == 0 && i + 1 < argc) bad_m = argv[++i];
        else if (strcmp(argv[i], "--fault-setup") == 0 && i + 1 < argc) g_fault_setup = atoi(argv[++i]);
    }
    if (bad_m) return bad_m_call(gp_backend_cpu(), bad_m);
    const char *s = getenv("GPUPRIM_TEST_SEED");
    g_seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    MPI_Bcast(&g_seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    const gp_backend *be = gp_backend_cpu();
    if (tr && strcmp(tr, "shared") && strcmp(tr, "mpi") && strcmp(tr, "auto")) {
        if (g_rank == 0) printf("usage: --transport shared|mpi|auto\n");
        MPI_Finalize();
        return 2;
    }
    g_tr = !tr ? TR_SHARED : strcmp(tr, "mpi") == 0 ? TR_MPI : strcmp(tr, "auto") == 0 ? TR_AUTO : TR_SHARED;
    if (cuda) {
        char why[256] = "";
        int ndev = gp_cuda_device_count(), ok, all;
        MPI_Comm node;
        int lr = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &lr);
        MPI_Comm_free(&node);
        be = ndev > 0 ? gp_backend_cuda(lr % ndev, why, sizeof why) : NULL;
        if (!be && ndev == 0) gp_backend_cuda(0, why, sizeof why);
        ok = be != NULL;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (g_rank == 0) printf("SKIP: no CUDA device visible (%s)\n", why);
            MPI_Finalize();
            return 77;
        }
    }
    if (g_rank == 0)
        printf("test_mpi_pipeline: P=%d backend=%s transport=%s seed=0x%llx (GPUPRIM_TEST_SEED "
               "reproduces)\n", g_size, be->name, tr_names[g_tr], (unsigned long long)g_seed);

    run_split_tests(be);
    for (int d = 0; d < BY_N; d++)
        for (int u = 0; u < 2; u++) run_bytes_case(be, g_tr, d, u);

    const int64_t sizes[] = {0, 1, 7, 15, 17, 1023, 1025, 65535, 65537};
    for (int t = 0; t < GP_NDTYPES; t++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int d = 0; d < D_N; d++) run_case(be, (gp_dtype)t, sizes[k], d, 0);
        run_case(be, (gp_dtype)t, 1000000, D_RANDOM, 0);
        run_case(be, (gp_dtype)t, 1000000, D_SPECIAL, 0);
        run_case(be, (gp_dtype)t, 1000003, D_DUPS, 1);
        run_case(be, (gp_dtype)t, 65537, D_RANDOM, 1);
        if (big) run_case(be, (gp_dtype)t, (int64_t)1 << 24, D_RANDOM, 0);
    }
    /* the exchange alone: keys and pairs of both widths, unequal shards, ties across ranks */
    const int64_t xsizes[] = {0, 1, 6, 37, 1000, 4099};
    for (int width = 4; width <= 8; width += 4)
        for (int mode = 0; mode < XM_N; mode++)
            for (int vd = 0; vd < (mode == XM_KEYS ? 1 : 2); vd++)
                for (int kd = 0; kd < XK_N; kd++)
                    for (int l = 0; l < XL_N; l++)
                        for (size_t k = 0; k < sizeof xsizes / sizeof xsizes[0]; k++)
                            run_xcase(be, width, mode, kd, l, vd, xsizes[k]);
    for (int mode = 0; mode < XM_N; mode++) /* larger: several stages of long runs */
        run_xcase(be, 8 - 4 * (mode & 1), mode, XK_DUPS, XL_RANDOM, 0, 200003);
    int fail = g_fail, pass = g_pass;
    if (g_rank == 0) printf("%d passed, %d failed\n", pass, fail);
    MPI_Finalize();
    return fail ? 1 : 0;
}
