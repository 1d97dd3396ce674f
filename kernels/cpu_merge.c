/* cpu_merge.c — the one-thread merge under the CPU backend's merge-split and merges: the
 * merge-path split (gp_cpu_merge_path, the CPU twin of gp_backend.merge_path) and the
 * branch-free merge of a range of the merged sequence from four merge-path splits
 * (gp_cpu_merge_range, cpu_merge.h). The merge's loops are in cpu_merge.h, the search in
 * merge_path.h; the merge-split itself (for keys alone and for (key, value) pairs, with
 * the keys and pairs twins), the cut of a merge over threads and the merge of many runs
 * in cpu_merge_mt.c. Internal to kernels/.
 */
#include "cpu_common.h"
#include "cpu_merge.h"
#include "cpu_twins.h"
#include "merge_path.h"

#include <string.h>

/* ---- the merge-path split ------------------------------------------------------------------ */

/* Key i of an array of unsigned keys of `width` bytes (4 or 8). */
static uint64_t key_at(const void *k, int width, int64_t i)
{
    return width == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

/* The merge-path split of two ascending runs — the CPU twin of gp_backend.merge_path
 * (gpuprim/kernels.h): *split = the number of lo's elements among the first t outputs of the
 * merge of lo (nlo keys of `width` bytes, host memory: an MPI shared-memory window does)
 * and hi (nhi), ordered by key with ties lo first, or with stable != 0 by (key, value)
 * with exact ties lo first (the values are read only then). GP_MERGE_PATH over direct
 * pointers: O(log(min(nlo, nhi))) element reads. Returns GP_OK or GP_EINVAL (width not
 * 4/8, negative counts, t outside [0, nlo + nhi], NULL split, NULL keys (or values when
 * stable) of a run with elements). */
int gp_cpu_merge_path(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                      const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t t,
                      int stable, int64_t *split)
{
    if (width != 4 && width != 8) return CPU_FAIL(GP_EINVAL, "width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || t < 0 || t > nlo + nhi)
        return CPU_FAIL(GP_EINVAL, "nlo = %lld, nhi = %lld, t = %lld: need counts >= 0 and "
                        "0 <= t <= nlo + nhi", (long long)nlo, (long long)nhi, (long long)t);
    if (!split) return CPU_FAIL(GP_EINVAL, "split is NULL");
    if ((nlo > 0 && (!lo_keys || (stable && !lo_vals))) ||
        (nhi > 0 && (!hi_keys || (stable && !hi_vals))))
        return CPU_FAIL(GP_EINVAL, "an input is NULL with a nonzero count");
    stable = stable != 0;
#define PATH_LO_FIRST(a, b)                                                                  \
    gp_lo_first(key_at(lo_keys, width, a), stable ? lo_vals[a] : 0,                          \
                key_at(hi_keys, width, b), stable ? hi_vals[b] : 0, stable)
    GP_MERGE_PATH(*split, nlo, nhi, t, PATH_LO_FIRST);
#undef PATH_LO_FIRST
    return GP_OK;
}

/* The cuts of merged[r0, r0 + cnt) of lo (nlo) and hi (nhi) into four segments of equal
 * length (the last takes the remainder): I[s] / J[s] = the elements of lo / hi among
 * merged[0, r0 + s * (cnt / 4)), s = 0..3, and I[4] / J[4] at r0 + cnt, by
 * gp_cpu_merge_path (the order of merge_split_keys, or with vals and stable != 0 that of
 * merge_split_pairs). The arguments are those of a valid merge-split. */
static void merge_cuts(int width, const void *lo, const uint64_t *lv, int64_t nlo, const void *hi,
                       const uint64_t *hv, int64_t nhi, int64_t r0, int64_t cnt, int stable,
                       int64_t I[5], int64_t J[5])
{
    for (int s = 0; s <= 4; s++) {
        const int64_t r = r0 + (s == 4 ? cnt : s * (cnt / 4));
        (void)gp_cpu_merge_path(width, lo, lv, nlo, hi, hv, nhi, r, stable, &I[s]);
        J[s] = r - I[s];
    }
}

/* ---- the merge-split ----------------------------------------------------------------------- */

/* One step and the tail of the merge (cpu_merge.h) of lo (lk, lov) and hi (hk, hiv) into
 * (ok, ov) from merged[r0]: ties take lo; by key, or with STABLE by (key, value); the values
 * move only with HV. W, HV, STABLE are constants of each merge_g instance. */
#define MS_STEP(a, b)                                                                        \
    do {                                                                                     \
        const uint64_t ka_ = kld(lk, W, a), kb_ = kld(hk, W, b);                             \
        const int64_t h_ = STABLE ? (kb_ < ka_) | ((kb_ == ka_) & (hiv[b] < lov[a]))         \
                                  : kb_ < ka_;                                               \
        kst(ok, W, (a) + (b) - r0, h_ ? kb_ : ka_);                                          \
        if (HV) ov[(a) + (b) - r0] = h_ ? hiv[b] : lov[a];                                   \
        (a) += 1 - h_;                                                                       \
        (b) += h_;                                                                           \
    } while (0)
#define MS_TAIL(a, b, ie, je)                                                                \
    do {                                                                                     \
        const int from_lo_ = (a) < (ie);                                                    \
        const size_t n_ = (size_t)(((ie) - (a)) + ((je) - (b)));                             \
        memcpy(ok + (size_t)((a) + (b) - r0) * W,                                           \
               from_lo_ ? lk + (size_t)(a) * W : hk + (size_t)(b) * W, n_ * W);             \
        if (HV) memcpy(ov + ((a) + (b) - r0), from_lo_ ? lov + (a) : hiv + (b), n_ * 8);     \
    } while (0)

/* (ok, ov)[0, cnt) = merged[r0, r0 + cnt) of lo and hi: four segments cut at merge-path
 * splits, merged together, branch-free (cpu_merge.h). */
CPU_INLINE void merge_g(const unsigned char *lk, const uint64_t *lov, int64_t nlo,
                       const unsigned char *hk, const uint64_t *hiv, int64_t nhi, int64_t r0,
                       int64_t cnt, unsigned char *ok, uint64_t *ov, int W, int HV, int STABLE)
{
    int64_t I[5], J[5];
    merge_cuts(W, lk, lov, nlo, hk, hiv, nhi, r0, cnt, STABLE, I, J);
    GP_MERGE_RUN4(I, J, MS_STEP, MS_TAIL);
}

/* merge_g with its constants: by key (keys alone or pairs) or by (key, value)
 * (gp_cpu_merge_range, cpu_merge.h). */
void gp_cpu_merge_range(int w, int hv, int stable, const unsigned char *lk, const uint64_t *lov,
                        int64_t nlo, const unsigned char *hk, const uint64_t *hiv, int64_t nhi,
                        int64_t r0, int64_t cnt, unsigned char *ok, uint64_t *ov)
{
#define MERGE_AS(W, HV, ST) merge_g(lk, lov, nlo, hk, hiv, nhi, r0, cnt, ok, ov, W, HV, ST)
    if (w == 4) {
        if (!hv) MERGE_AS(4, 0, 0);
        else if (!stable) MERGE_AS(4, 1, 0);
        else MERGE_AS(4, 1, 1);
    } else {
        if (!hv) MERGE_AS(8, 0, 0);
        else if (!stable) MERGE_AS(8, 1, 0);
        else MERGE_AS(8, 1, 1);
    }
#undef MERGE_AS
}
