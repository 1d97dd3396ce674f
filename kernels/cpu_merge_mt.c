/* cpu_merge_mt.c — merges on the host's threads (cpu_merge_mt.h): a merge of two runs cut
 * over threads; on it the CPU backend's one merge-split (gp_cpu_merge_split,
 * gpuprim/kernels.h) for keys alone and for (key, value) pairs, with the keys and pairs
 * twins as wrappers; and the merge of many runs as passes of pairwise merges, the last (up
 * to 16 runs) one k-way pass (cpu_merge_k.c). The merge
 * loops are cpu_merge.c's (gp_cpu_merge_range: a branch-free merge from merge-path
 * splits); the threads are the host's pool (host.h). */
#include "cpu_common.h"
#include "cpu_merge.h"
#include "cpu_merge_k.h"
#include "cpu_merge_mt.h"
#include "cpu_sort.h"
#include "cpu_twins.h"
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

/* ---- the merge-split ----------------------------------------------------------------------- */

/* The overlap test of a merge-split: the written parts of the outputs against every input
 * and against each other. */
static int merge_overlaps(size_t w, const void *lk, const uint64_t *lv, int64_t nlo,
                          const void *hk, const uint64_t *hv, int64_t nhi, int64_t cnt,
                          const void *ok, const uint64_t *ov)
{
    const void *in[4] = {lk, hk, lv, hv};
    const size_t in_n[4] = {(size_t)nlo * w, (size_t)nhi * w, (size_t)nlo * 8, (size_t)nhi * 8};
    const size_t ck = (size_t)cnt * w, cv = (size_t)cnt * 8;
    for (int i = 0; i < 4; i++)
        if (gp_cpu_ranges_overlap(ok, ck, in[i], in_n[i]) ||
            gp_cpu_ranges_overlap(ov, cv, in[i], in_n[i]))
            return 1;
    return gp_cpu_ranges_overlap(ok, ck, ov, cv);
}

int gp_cpu_merge_split_as(const char *who, int width, const void *lo_keys,
                          const uint64_t *lo_vals, int64_t nlo, const void *hi_keys,
                          const uint64_t *hi_vals, int64_t nhi, int64_t m, int keep_upper,
                          int stable, void *out_keys, uint64_t *out_vals, int64_t *nout)
{
    const int hv = lo_vals || hi_vals || out_vals; /* keys alone when no value array is given */
    if (width != 4 && width != 8) return WHO_FAIL(GP_EINVAL, "width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || m < 0)
        return WHO_FAIL(GP_EINVAL, "negative count (nlo = %lld, nhi = %lld, m = %lld)",
                        (long long)nlo, (long long)nhi, (long long)m);
    if (nlo > m || nhi > m)
        return WHO_FAIL(GP_EINVAL, "nlo = %lld or nhi = %lld exceeds m = %lld",
                        (long long)nlo, (long long)nhi, (long long)m);
    if (!nout) return WHO_FAIL(GP_EINVAL, "nout is NULL");
    const int lo_null = nlo > 0 && (!lo_keys || (hv && !lo_vals));
    if (lo_null || (nhi > 0 && (!hi_keys || (hv && !hi_vals))))
        return WHO_FAIL(GP_EINVAL, "%s input is NULL with a nonzero count", lo_null ? "lo" : "hi");
    const int64_t total = nlo + nhi;
    const int64_t cnt = keep_upper ? (total > m ? total - m : 0) : (total < m ? total : m);
    if (cnt > 0 && (!out_keys || (hv && !out_vals))) return WHO_FAIL(GP_EINVAL, "output is NULL");
    if (merge_overlaps((size_t)width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, cnt,
                       out_keys, out_vals))
        return WHO_FAIL(GP_EINVAL, "an output overlaps an input or the other output");
    /* the merge starts at merged[r0]: the lower half at 0, the upper one at m; its output
     * cut over the host's threads (gp_cpu_merge_range_mt, above) */
    if (cnt > 0)
        gp_cpu_merge_range_mt(width, hv, hv && stable, (const unsigned char *)lo_keys, lo_vals,
                              nlo, (const unsigned char *)hi_keys, hi_vals, nhi,
                              keep_upper ? m : 0, cnt, (unsigned char *)out_keys, out_vals);
    *nout = cnt;
    return GP_OK;
}

int gp_cpu_merge_split(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                       const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t m,
                       int keep_upper, int stable, void *out_keys, uint64_t *out_vals,
                       int64_t *nout)
{
    return gp_cpu_merge_split_as(__func__, width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi,
                                 m, keep_upper, stable, out_keys, out_vals, nout);
}

/* ---- the keys and pairs twins ------------------------------------------------------------- */

/* Merge-split of two ascending key arrays — the CPU twin of gp_backend.merge_split_keys.
 *
 * width: 4 (uint32_t keys) or 8 (uint64_t); lo: nlo ascending keys (the lower rank's);
 * hi: nhi ascending keys; m: slots per rank, nlo <= m and nhi <= m; out: room for m keys,
 * must not overlap lo or hi; *nout: keys written.
 * keep_upper == 0: out[0, c) = merged[0, c) with c = min(m, nlo+nhi); keep_upper != 0:
 * out[0, c) = merged[m, nlo+nhi) with c = max(0, nlo+nhi-m). Both halves are a forward,
 * branch-free merge of four segments cut at merge-path splits (cpu_merge.h; the upper half
 * starts at the split of merged[m], its first m merged keys are never visited) that stops
 * after c keys (gp_cpu_merge_split with no values, above). O(c + log m) time;
 * out[c, m) is not written. Inputs that are not ascending give an unspecified but
 * memory-safe result. Returns GP_OK or GP_EINVAL (width not 4/8, negative count,
 * nlo > m or nhi > m, NULL pointers where keys are read or written, the written part of
 * out overlapping an input). */
int gp_cpu_merge_split_keys(int width, const void *lo, int64_t nlo, const void *hi,
                            int64_t nhi, int64_t m, int keep_upper, void *out,
                            int64_t *nout)
{
    return gp_cpu_merge_split_as(__func__, width, lo, NULL, nlo, hi, NULL, nhi, m, keep_upper,
                                 0, out, NULL, nout);
}

/* Merge-split of two ascending (key, value) arrays — the CPU twin of
 * gp_backend.merge_split_pairs (meaning: gpuprim/exact_sum.h).
 *
 * width: 4 or 8 (key bytes); lo_keys / lo_vals: nlo pairs, hi_keys / hi_vals: nhi pairs,
 * ascending by key (stable == 0) or by (key, value) (stable != 0); m: slots per rank,
 * nlo, nhi <= m; out_keys / out_vals: room for m pairs, not overlapping any input; *nout:
 * pairs written (c = min(m, nlo+nhi) for the lower half, max(0, nlo+nhi-m) for the upper
 * one). gp_cpu_merge_split (above): a branch-free forward merge of four segments cut at
 * merge-path splits (cpu_merge.h), O(c + log m) time; out past c is not written. Unsorted
 * inputs give an unspecified but memory-safe result. Returns GP_OK or GP_EINVAL (width,
 * negative counts, nlo > m or nhi > m, NULL pointers where pairs are read or written,
 * overlap). */
int gp_cpu_merge_split_pairs(int width, const void *lo_keys, const uint64_t *lo_vals,
                             int64_t nlo, const void *hi_keys, const uint64_t *hi_vals,
                             int64_t nhi, int64_t m, int keep_upper, int stable,
                             void *out_keys, uint64_t *out_vals, int64_t *nout)
{
    if (!lo_vals && !hi_vals && !out_vals && (nlo > 0 || nhi > 0))
        return CPU_FAIL(GP_EINVAL, "the value arrays are NULL with a nonzero count");
    return gp_cpu_merge_split_as(__func__, width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi,
                                 m, keep_upper, stable, out_keys, out_vals, nout);
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

/* The runs of `len` elements in n (n > 0). */
static int64_t runs_of(int64_t n, int64_t len) { return (n - 1) / len + 1; }

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
    int64_t len = run;
    /* pairwise passes while more runs are left than one pass merges, or just two (the
     * branch-free 2-way merge beats the loser tree there) */
    while (len < n && (runs_of(n, len) > GP_MERGE_K_MAX || runs_of(n, len) == 2)) {
        pass_job j = {width, hv, hv && stable, buf[cur], vb[cur], buf[cur ^ 1], vb[cur ^ 1], n,
                      len};
        const int np = parts_for(n);
        if (np == 1) pass_part(&j, 0, 1);
        else gp_host_parallel(np, pass_part, &j);
        cur ^= 1;
        len = len > n / 2 ? n : 2 * len; /* n: one run left */
    }
    if (len < n) { /* 3 to GP_MERGE_K_MAX runs: one pass */
        gp_cpu_merge_k(width, hv, stable, buf[cur], vb[cur], n, len, parts_for(n), buf[cur ^ 1],
                       vb[cur ^ 1]);
        cur ^= 1;
    }
    *in_tmp = cur;
    return GP_OK;
}
