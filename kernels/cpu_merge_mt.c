/* cpu_merge_mt.c — merges on the host's threads (cpu_merge_mt.h): a merge of two runs cut
 * over threads, and the merge of many runs as passes of pairwise merges. The merge loops are
 * cpu_merge.c's (gp_cpu_merge_range: a branch-free merge from merge-path splits); the threads
 * are the host's pool (host.h). */
#include "cpu_common.h"
#include "cpu_merge_mt.h"
#include "host.h"

#include <string.h>

#define PART_MIN ((int64_t)1 << 16) /* the fewest outputs a thread merges */

/* ---- one merge over threads -------------------------------------------------------------- */

typedef struct range_job {
    int w, hv, stable;
    const unsigned char *lk, *hk;
    const uint64_t *lov, *hiv;
    int64_t nlo, nhi, r0, cnt;
    unsigned char *ok;
    uint64_t *ov;
} range_job;

/* Part p of np: merged[r0 + a, r0 + b) with a, b the part's share of cnt. */
static void range_part(void *ctx, int p, int np)
{
    const range_job *j = ctx;
    const int64_t a = j->cnt / np * p + (p < j->cnt % np ? p : j->cnt % np);
    const int64_t c = j->cnt / np + (p < j->cnt % np ? 1 : 0);
    if (c > 0)
        gp_cpu_merge_range(j->w, j->hv, j->stable, j->lk, j->lov, j->nlo, j->hk, j->hiv, j->nhi,
                           j->r0 + a, c, j->ok + (size_t)a * (size_t)j->w,
                           j->hv ? j->ov + a : NULL);
}

/* The parts of a merge of cnt outputs: up to the host's threads, each at least PART_MIN. */
static int parts_for(int64_t cnt)
{
    const int64_t nt = gp_host_threads();
    const int64_t by_size = cnt / PART_MIN;
    const int64_t np = by_size < nt ? by_size : nt;
    return np < 1 ? 1 : (int)np;
}

void gp_cpu_merge_range_mt(int w, int hv, int stable, const unsigned char *lk,
                           const uint64_t *lov, int64_t nlo, const unsigned char *hk,
                           const uint64_t *hiv, int64_t nhi, int64_t r0, int64_t cnt,
                           unsigned char *ok, uint64_t *ov)
{
    const int np = parts_for(cnt);
    if (np == 1) {
        gp_cpu_merge_range(w, hv, stable, lk, lov, nlo, hk, hiv, nhi, r0, cnt, ok, ov);
        return;
    }
    range_job j = {w, hv, stable, lk, hk, lov, hiv, nlo, nhi, r0, cnt, ok, ov};
    gp_host_parallel(np, range_part, &j);
}

/* ---- the merge of many runs -------------------------------------------------------------- */

/* One pass: runs of `len` elements of src merged pairwise into dst (runs 2i and 2i+1 into
 * one of 2 len; a last run without a partner copied). */
typedef struct pass_job {
    int w, hv, stable;
    const unsigned char *sk;
    const uint64_t *sv;
    unsigned char *dk;
    uint64_t *dv;
    int64_t n, len;
} pass_job;

/* Part p of np of a pass: the outputs [lo, hi) of the pass, over every pair they touch. */
static void pass_part(void *ctx, int p, int np)
{
    const pass_job *j = ctx;
    const size_t w = (size_t)j->w;
    const int64_t lo = j->n / np * p + (p < j->n % np ? p : j->n % np);
    const int64_t hi = lo + j->n / np + (p < j->n % np ? 1 : 0);
    for (int64_t g = lo / (2 * j->len) * (2 * j->len); g < hi; g += 2 * j->len) {
        const int64_t mid = g + j->len < j->n ? g + j->len : j->n;
        const int64_t end = g + 2 * j->len < j->n ? g + 2 * j->len : j->n;
        const int64_t a = lo > g ? lo : g, b = hi < end ? hi : end; /* outputs [a, b) */
        if (b <= a) continue;
        if (mid == end) { /* no partner: a copy */
            memcpy(j->dk + (size_t)a * w, j->sk + (size_t)a * w, (size_t)(b - a) * w);
            if (j->hv) memcpy(j->dv + a, j->sv + a, (size_t)(b - a) * 8);
            continue;
        }
        gp_cpu_merge_range(j->w, j->hv, j->stable, j->sk + (size_t)g * w, j->hv ? j->sv + g : NULL,
                           mid - g, j->sk + (size_t)mid * w, j->hv ? j->sv + mid : NULL, end - mid,
                           a - g, b - a, j->dk + (size_t)a * w, j->hv ? j->dv + a : NULL);
    }
}

int gp_cpu_merge_runs(int width, void *keys, uint64_t *vals, void *tmp_keys, uint64_t *tmp_vals,
                      int64_t n, int64_t run, int stable, int *in_tmp)
{
    if (width != 4 && width != 8) return CPU_FAIL(GP_EINVAL, "width = %d, not 4 or 8", width);
    if (n < 0 || run < 1)
        return CPU_FAIL(GP_EINVAL, "n = %lld, run = %lld: need n >= 0 and run >= 1",
                        (long long)n, (long long)run);
    if (!in_tmp) return CPU_FAIL(GP_EINVAL, "in_tmp is NULL");
    const int hv = vals != NULL;
    if (hv != (tmp_vals != NULL)) return CPU_FAIL(GP_EINVAL, "values on one side only");
    if (n > 0 && (!keys || !tmp_keys)) return CPU_FAIL(GP_EINVAL, "NULL keys with n > 0");
    unsigned char *buf[2] = {(unsigned char *)keys, (unsigned char *)tmp_keys};
    uint64_t *vb[2] = {vals, tmp_vals};
    int cur = 0;
    for (int64_t len = run; len < n; len *= 2) {
        pass_job j = {width, hv, hv && stable, buf[cur], vb[cur], buf[cur ^ 1], vb[cur ^ 1], n,
                      len};
        const int np = parts_for(n);
        if (np == 1) pass_part(&j, 0, 1);
        else gp_host_parallel(np, pass_part, &j);
        cur ^= 1;
        if (len > INT64_MAX / 2) break;
    }
    *in_tmp = cur;
    return GP_OK;
}
