/* test_cpu_merge_mt.c — the host's threads and the merges on them (kernels/host.h,
 * cpu_merge_mt.h): every part of a parallel loop runs once; the parallel copy; the merge of
 * many sorted runs (keys, pairs by key, pairs by (key, value); run lengths 1 to 100000, 1 to
 * 17 runs and more, a last short run, many ties) and its one-pass merge of up to 16 runs
 * (cut into 1 to 8 parts) against a stable sort of the whole, for 1 to 8 threads;
 * the CPU merge-split cut over threads equal to one thread's. No MPI, no GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_merge_k.h"
#include "cpu_merge_mt.h"
#include "cpu_twins.h"
#include "gpuprim/kernels.h"
#include "host.h"
#include "test_check.h"
#include "test_rng.h"

/* ---- the pool ---------------------------------------------------------------------------- */

static void count_part(void *ctx, int p, int np)
{
    int *hits = ctx;
    __atomic_fetch_add(&hits[p], 1 + 1000 * (np != 37 && np != 3), __ATOMIC_RELAXED);
}

static void test_pool(void)
{
    const int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        gp_host_threads_share(threads[t]);
        CHECK(gp_host_threads() == threads[t], "threads %d -> %d", threads[t], gp_host_threads());
        for (int rep = 0; rep < 50; rep++) {
            const int np = rep % 2 ? 37 : 3;
            int hits[37] = {0};
            gp_host_parallel(np, count_part, hits);
            for (int p = 0; p < np; p++)
                CHECK(hits[p] == 1, "threads %d, %d parts: part %d ran %d times", threads[t], np,
                      p, hits[p]);
        }
        /* the copy, around its 4 MiB parts */
        const size_t sizes[] = {0, 1, 4u << 20, (4u << 20) + 1, (17u << 20) + 13};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            unsigned char *a = xmalloc(sizes[s] + 1), *b = xmalloc(sizes[s] + 1);
            for (size_t i = 0; i < sizes[s]; i++) a[i] = (unsigned char)(rnd() >> 56);
            b[sizes[s]] = 0xAB;
            gp_host_memcpy(b, a, sizes[s]);
            CHECK(memcmp(a, b, sizes[s]) == 0 && b[sizes[s]] == 0xAB,
                  "copy of %zu bytes, %d threads", sizes[s], threads[t]);
            /* the first touch: a zero at every 4 KiB page start of its range, nothing past
             * it, nothing else changed */
            gp_host_touch(b, sizes[s]);
            size_t bad = 0;
            for (size_t i = 0; i < sizes[s]; i++)
                bad += b[i] != (i % 4096 == 0 ? 0 : a[i]);
            CHECK(bad == 0 && b[sizes[s]] == 0xAB, "touch of %zu bytes, %d threads: %zu bytes "
                  "wrong", sizes[s], threads[t], bad);
            free(a);
            free(b);
        }
    }
}

/* ---- the merge of runs ------------------------------------------------------------------- */

typedef struct rec {
    uint64_t key, val;
    int64_t at; /* input position: ties in the stable order */
} rec;

static int g_by_val; /* the order of cmp_rec: by (key, value) or by key */

static int cmp_rec(const void *x, const void *y)
{
    const rec *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (g_by_val && a->val != b->val) return a->val < b->val ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

static uint64_t key_at(const void *k, int w, int64_t i)
{
    return w == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

static void key_put(void *k, int w, int64_t i, uint64_t v)
{
    if (w == 4) ((uint32_t *)k)[i] = (uint32_t)v;
    else ((uint64_t *)k)[i] = v;
}

/* n records in runs of `run` with keys below kmod (w = 4: their low 32 bits), each run
 * sorted (stably) in the merge's order (vals and stable: by (key, value)); *want: the
 * expected whole, the stable sort of them all (ties by input position, which runs in input
 * order and sorted stably keep). */
static rec *make_runs(int w, int vals, int stable, int64_t n, int64_t run, uint64_t kmod,
                      rec **want)
{
    rec *r = xmalloc((size_t)n * sizeof *r + 1);
    *want = xmalloc((size_t)n * sizeof *r + 1);
    for (int64_t i = 0; i < n; i++) {
        r[i].key = rnd() % kmod;
        if (w == 4) r[i].key &= 0xFFFFFFFFu;
        r[i].val = rnd() % (kmod + 3);
        r[i].at = i;
    }
    g_by_val = vals && stable;
    for (int64_t lo = 0; lo < n; lo += run)
        qsort(r + lo, (size_t)(n - lo < run ? n - lo : run), sizeof *r, cmp_rec);
    for (int64_t i = 0; i < n; i++) r[i].at = i; /* the runs' order is the input order now */
    memcpy(*want, r, (size_t)n * sizeof *r);
    qsort(*want, (size_t)n, sizeof **want, cmp_rec);
    return r;
}

/* The keys (and values) of r in fresh arrays k, v (v NULL without vals), and room for n of
 * each in tk, tv. */
static void load_runs(const rec *r, int w, int vals, int64_t n, void **k, uint64_t **v,
                      void **tk, uint64_t **tv)
{
    *k = xmalloc((size_t)n * 8 + 1), *tk = xmalloc((size_t)n * 8 + 1);
    *v = vals ? xmalloc((size_t)n * 8 + 1) : NULL;
    *tv = vals ? xmalloc((size_t)n * 8 + 1) : NULL;
    for (int64_t i = 0; i < n; i++) {
        key_put(*k, w, i, r[i].key);
        if (vals) (*v)[i] = r[i].val;
    }
}

/* The first position where (ok, ov) differs from want, or -1. */
static int64_t first_diff(const void *ok, const uint64_t *ov, int w, int vals, const rec *want,
                          int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (key_at(ok, w, i) != want[i].key || (vals && ov[i] != want[i].val)) return i;
    return -1;
}

/* gp_cpu_merge_runs on runs of make_runs against the stable sort, the same bits on 1 to 8
 * threads. */
static void one_merge(int w, int vals, int stable, int64_t n, int64_t run, uint64_t kmod)
{
    rec *want, *r = make_runs(w, vals, stable, n, run, kmod, &want);
    const int threads[] = {1, 2, 3, 5, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        gp_host_threads_share(threads[t]);
        void *k, *tk;
        uint64_t *v, *tv;
        load_runs(r, w, vals, n, &k, &v, &tk, &tv);
        int in_tmp = -1;
        CHECK(gp_cpu_merge_runs(w, k, v, tk, tv, n, run, stable, &in_tmp) == GP_OK,
              "merge_runs failed: %s", gp_cpu_last_error());
        const int64_t bad = first_diff(in_tmp ? tk : k, in_tmp ? tv : v, w, vals, want, n);
        CHECK(bad < 0, "w %d vals %d stable %d n %lld run %lld threads %d: first difference "
              "at %lld", w, vals, stable, (long long)n, (long long)run, threads[t], (long long)bad);
        CHECK(n > 2 * run || in_tmp == (n > run), "in_tmp %d for one or two runs", in_tmp);
        free(k), free(tk), free(v), free(tv);
    }
    free(r);
    free(want);
}

/* The one-pass merge of k runs itself (gp_cpu_merge_k), cut into 1 to 8 parts on as many
 * threads, against the stable sort: the co-ranking of every cut, ties across runs and
 * within them. */
static void one_merge_k(int w, int vals, int stable, int64_t n, int64_t run, uint64_t kmod)
{
    rec *want, *r = make_runs(w, vals, stable, n, run, kmod, &want);
    for (int np = 1; np <= 8; np++) {
        gp_host_threads_share(np);
        void *k, *tk;
        uint64_t *v, *tv;
        load_runs(r, w, vals, n, &k, &v, &tk, &tv);
        gp_cpu_merge_k(w, vals, stable, k, v, n, run, np, tk, tv);
        const int64_t bad = first_diff(tk, tv, w, vals, want, n);
        CHECK(bad < 0, "merge_k: w %d vals %d stable %d n %lld run %lld parts %d: first "
              "difference at %lld", w, vals, stable, (long long)n, (long long)run, np,
              (long long)bad);
        free(k), free(tk), free(v), free(tv);
    }
    free(r);
    free(want);
}

/* k = 1 .. 17 runs of 1, 3 and 64 elements, full or with a last run of one, keys from 3
 * values (ties everywhere), from 1000 and from 2^40, every width and order: the one-pass
 * merge alone (k <= GP_MERGE_K_MAX) and gp_cpu_merge_runs. */
static void test_merge_k(void)
{
    const int64_t runs[] = {1, 3, 64};
    const uint64_t kmods[] = {3, 1000, 1ull << 40};
    for (int k = 1; k <= GP_MERGE_K_MAX + 1; k++)
        for (size_t ri = 0; ri < 3; ri++)
            for (int shortlast = 0; shortlast < 2; shortlast++)
                for (size_t ki = 0; ki < 3; ki++)
                    for (int w = 4; w <= 8; w += 4)
                        for (int mode = 0; mode < 3; mode++) {
                            const int64_t run = runs[ri];
                            const int64_t n = k * run - (shortlast ? run - 1 : 0);
                            if (k <= GP_MERGE_K_MAX)
                                one_merge_k(w, mode > 0, mode == 2, n, run, kmods[ki]);
                            if (ri == 2 || k % 4 == 1)
                                one_merge(w, mode > 0, mode == 2, n, run, kmods[ki]);
                        }
}

static void test_merge_runs(void)
{
    const struct { int64_t n, run; uint64_t kmod; } c[] = {
        {0, 1, 10}, {1, 1, 10}, {2, 1, 10}, {5, 2, 3}, {17, 3, 4}, {1000, 7, 50},
        {4097, 4096, 1000}, {20000, 4096, 100}, {300000, 4096, 1u << 30}, {300001, 70000, 7},
        {131072, 5000, 1ull << 40}, {600000, 40001, 5}, {400000, 100000, 1ull << 33},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (int w = 4; w <= 8; w += 4)
            for (int mode = 0; mode < 3; mode++) /* keys; pairs by key; pairs by (key, value) */
                one_merge(w, mode > 0, mode == 2, c[i].n, c[i].run, c[i].kmod);
    int in_tmp = 0;
    uint32_t k[4] = {0}, t[4] = {0};
    uint64_t v[4] = {0};
    CHECK(gp_cpu_merge_runs(3, k, NULL, t, NULL, 4, 1, 0, &in_tmp) == GP_EINVAL, "width 3");
    CHECK(gp_cpu_merge_runs(4, k, NULL, t, NULL, 4, 0, 0, &in_tmp) == GP_EINVAL, "run 0");
    CHECK(gp_cpu_merge_runs(4, k, v, t, NULL, 4, 1, 0, &in_tmp) == GP_EINVAL, "values on one side");
    CHECK(gp_cpu_merge_runs(4, k, NULL, t, NULL, -1, 1, 0, &in_tmp) == GP_EINVAL, "n < 0");
}

/* ---- the merge-split over threads -------------------------------------------------------- */

static void test_merge_split_threads(void)
{
    const int64_t nlo = 400003, nhi = 399999, m = 400003;
    uint64_t *lo = xmalloc((size_t)nlo * 8), *hi = xmalloc((size_t)nhi * 8);
    uint64_t *lv = xmalloc((size_t)nlo * 8), *hv = xmalloc((size_t)nhi * 8);
    for (int64_t i = 0; i < nlo; i++) lo[i] = (uint64_t)i / 3 * 2, lv[i] = (uint64_t)i;
    for (int64_t i = 0; i < nhi; i++) hi[i] = (uint64_t)i / 2 * 3, hv[i] = (uint64_t)(nlo + i);
    for (int upper = 0; upper < 2; upper++) {
        uint64_t *ref = NULL, *refv = NULL;
        const int threads[] = {1, 3, 8};
        for (size_t t = 0; t < 3; t++) {
            gp_host_threads_share(threads[t]);
            uint64_t *o = xmalloc((size_t)m * 8), *ov = xmalloc((size_t)m * 8);
            int64_t nout = -1;
            CHECK(gp_cpu_merge_split_pairs(8, lo, lv, nlo, hi, hv, nhi, m, upper, 1, o, ov,
                                           &nout) == GP_OK, "merge_split: %s", gp_cpu_last_error());
            int sorted = 1;
            for (int64_t i = 1; i < nout; i++) sorted &= o[i - 1] <= o[i];
            CHECK(sorted && nout == (upper ? nlo + nhi - m : m), "upper %d threads %d: %lld out",
                  upper, threads[t], (long long)nout);
            if (!ref) {
                ref = o, refv = ov;
                continue;
            }
            CHECK(memcmp(ref, o, (size_t)nout * 8) == 0 && memcmp(refv, ov, (size_t)nout * 8) == 0,
                  "upper %d: %d threads differ from one", upper, threads[t]);
            free(o), free(ov);
        }
        free(ref), free(refv);
    }
    free(lo), free(hi), free(lv), free(hv);
}

int main(void)
{
    g_rng = 20261203;
    test_pool();
    test_merge_runs();
    test_merge_k();
    test_merge_split_threads();
    return gp_check_done("test_cpu_merge_mt");
}
