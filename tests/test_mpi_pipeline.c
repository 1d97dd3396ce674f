/* test_mpi_pipeline.c — the distributed operations on P ranks against a serial reference.
 *
 * usage: mpirun -np P test_mpi_pipeline [--backend cpu|cuda] [--big]
 * For every element type, size (0, 1, 7, 2^k +- 1, 10^6) and distribution (random,
 * duplicates, all-equal, sorted, reversed, special values), every rank builds the same
 * array from a counter-based generator, takes its shard, and:
 *   - the statistics (backend stats per shard, gp_stats_allreduce) must equal the serial
 *     CPU twin's on the whole array: counts, NaN count, min/max, hash, first/last and
 *     descents exactly, sum and sum of squares to 1e-12 of sum |x| (summation order differs);
 *   - after to_keys, sort_keys, gp_bitonic_exchange and from_keys, rank r must hold slots
 *     [r*m, r*m + n_r) of the serially sorted array, bit for bit (gathered on rank 0);
 *   - shards of unequal sizes (everything on the low ranks) give the same result.
 * Exit 0 when every check passes; 77 (skip) with --backend cuda and no visible GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "exchange.h"
#include "gp_kernels.h"
#include "h5io.h"

static int g_rank, g_size, g_fail, g_pass;
static uint64_t g_seed;

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
    void *dev = be->alloc((size_t)m * sz), *spare = be->alloc((size_t)m * sz);
    void *recv = be->alloc((size_t)m * sz);
    void *hs = be->host_alloc((size_t)(m ? m : 1) * sz), *hr = be->host_alloc((size_t)(m ? m : 1) * sz);
    if (!dev || !spare || !recv || !hs || !hr) {
        check(0, "allocation", dn, n, dsn);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
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

    /* sort + rank exchange */
    int width = (int)sz;
    int64_t nk = cnt;
    check(be->to_keys(t, dev, cnt) == 0, "to_keys", dn, n, dsn);
    check(be->sort_keys(width, dev, cnt) == 0, "sort_keys", dn, n, dsn);
    gp_exchange_info xi;
    if (P > 1) gp_bitonic_exchange(MPI_COMM_WORLD, be, width, m, &dev, &nk, &spare, recv, hs, hr, &xi);
    check(be->from_keys(t, dev, nk) == 0, "from_keys", dn, n, dsn);
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
    be->free(dev);
    be->free(spare);
    be->free(recv);
    be->host_free(hs);
    be->host_free(hr);
    free(full);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int cuda = 0, big = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) cuda = strcmp(argv[++i], "cuda") == 0;
        else if (strcmp(argv[i], "--big") == 0) big = 1;
    }
    const char *s = getenv("GPUPRIM_TEST_SEED");
    g_seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    MPI_Bcast(&g_seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    const gp_backend *be = gp_backend_cpu();
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
        printf("test_mpi_pipeline: P=%d backend=%s seed=0x%llx (GPUPRIM_TEST_SEED reproduces)\n",
               g_size, be->name, (unsigned long long)g_seed);

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
    int fail = g_fail, pass = g_pass;
    if (g_rank == 0) printf("%d passed, %d failed\n", pass, fail);
    MPI_Finalize();
    return fail ? 1 : 0;
}
