/* cpu_sort.c — the CPU backend's one sort, for keys alone and for (key, value) pairs
 * (gp_cpu_sort and gp_cpu_sort_spare, gpuprim/kernels.h; the keys, pairs and element twins
 * are wrappers), and the checks behind it (cpu_sort.h). The key maps are in cpu_keys.c, the
 * merge-split in cpu_merge_mt.c. Internal to kernels/.
 *
 * The sort's order. Every sort here is stable and orders a composite key of 11-bit digits:
 * the key (3 or 6 digits), preceded in significance order by nothing else, and followed,
 * when pairs are sorted by (key, value), by the value's 6 digits. Keys alone and pairs
 * sorted by key only have one order (keys carry no payload; a stable sort keeps the input
 * order of equal keys).
 *
 * The algorithm: an LSD radix sort. One pass over the data counts every digit (and whether
 * the values already ascend: then a stable sort by key alone is the (key, value) order, and
 * the value's digits are skipped, as they are for input positions); then one stable
 * scatter per digit that varies (a digit on which all elements agree moves nothing),
 * between the caller's arrays and one scratch array of n elements, and one copy back when
 * the number of passes is odd. The scatters write whole cache lines with non-temporal
 * stores where SSE2 allows (scatter_nt_g). Below RS_SMALL elements, insertion sort.
 * Measured on the 2-core machine (2^27 float32 keys, CPU time, other jobs running): the
 * plain LSD took 2.8-3.3 s, where an MSD-first variant (8-bit passes down to 16 KiB
 * buckets, LSD inside each) took 3.8-3.9 s and an LSD with line buffers written by plain
 * stores 4.8-5.0 s: the plain LSD moves each element least often (3 passes for 32-bit
 * keys, against 4 and 3 counts for the MSD variant on uniform floats). On the same machine
 * when quiet, the line buffers written with non-temporal stores (scatter_nt_g) took the
 * sort from 4.45 s to 3.07 s: a plain store into a line not in the cache first reads it.
 *
 * The scratch comes from gp_cpu_big_alloc (advised huge pages: fewer TLB misses in the
 * scatters; on the 2-core VM their first touch cost a fraction of 4 KiB pages' under load
 * and twice it on the quiet machine, bench/RESULTS.md) and is freed before the sort returns.
 */
#include "cpu_common.h"
#include "cpu_mem.h"
#include "cpu_sort.h"
#include "cpu_twins.h"

#include <stdlib.h>
#include <string.h>

/* ---- the sort ------------------------------------------------------------------------------ */

#define RS_BITS 11 /* digit width */
#define RS_SIZE (1 << RS_BITS)
#define RS_MASK ((uint64_t)RS_SIZE - 1)
#define RS_VDIGITS 6 /* digits of a 64-bit value: 5 * 11 + 9 bits */
#define RS_SMALL 64  /* below this many elements: insertion sort */

/* One sort: the key width, the composite's value digits (RS_VDIGITS: by (key, value), else
 * 0) and key digits, whether values ride along, and the two buffers (0: the caller's arrays,
 * 1: scratch). */
typedef struct rsort {
    int w, vd, kd, hv;
    unsigned char *k[2];
    uint64_t *v[2];
} rsort;
/* RS_DISPATCH(FN, rs, ...) calls FN(rs, ..., w, hv) with w and hv as constants, so that
 * every always-inline loop below is compiled once per element kind. */
#define RS_DISPATCH(FN, rs, ...)                                                             \
    do {                                                                                     \
        if ((rs)->w == 4) {                                                                  \
            if ((rs)->hv) FN(rs, __VA_ARGS__, 4, 1);                                         \
            else FN(rs, __VA_ARGS__, 4, 0);                                                  \
        } else {                                                                             \
            if ((rs)->hv) FN(rs, __VA_ARGS__, 8, 1);                                         \
            else FN(rs, __VA_ARGS__, 8, 0);                                                  \
        }                                                                                    \
    } while (0)

/* Insertion sort of the caller's arrays by the composite (stable). */
CPU_INLINE void insertion_g(const rsort *rs, int64_t n, int w, int hv)
{
    unsigned char *k = rs->k[0];
    uint64_t *v = rs->v[0];
    const int byval = rs->vd > 0;
    for (int64_t i = 1; i < n; i++) {
        const uint64_t kk = kld(k, w, i), vv = hv ? v[i] : 0;
        int64_t j = i;
        for (; j > 0; j--) {
            const uint64_t pk = kld(k, w, j - 1);
            if (!(kk < pk || (byval && kk == pk && vv < v[j - 1]))) break;
            kst(k, w, j, pk);
            if (hv) v[j] = v[j - 1];
        }
        kst(k, w, j, kk);
        if (hv) v[j] = vv;
    }
}

/* hist[d][b] = elements whose composite digit d is b, for every digit, in one pass over the
 * caller's arrays; returns 1 when value digits are counted and the values do not descend. */
CPU_INLINE int count_g(const rsort *rs, int64_t n, size_t *hist, int w, int hv)
{
    (void)hv;
    const unsigned char *k = rs->k[0];
    const uint64_t *v = rs->v[0];
    const int vd = rs->vd, kd = rs->kd;
    int64_t desc = 0;
    for (int64_t i = 0; i < n; i++) {
        if (vd) {
            const uint64_t vv = v[i];
            for (int d = 0; d < RS_VDIGITS; d++)
                hist[(size_t)d * RS_SIZE + ((vv >> (RS_BITS * d)) & RS_MASK)]++;
            desc += i > 0 && vv < v[i - 1];
        }
        const uint64_t kk = kld(k, w, i);
        for (int d = 0; d < kd; d++)
            hist[(size_t)(vd + d) * RS_SIZE + ((kk >> (RS_BITS * d)) & RS_MASK)]++;
    }
    return vd && desc == 0;
}

/* The stable scatter of all n elements from buffer `side` to the other by composite digit d:
 * element i goes to position off[its digit]++. */
CPU_INLINE void scatter_g(const rsort *rs, int side, int64_t n, int d, size_t *off, int w, int hv)
{
    const unsigned char *sk = rs->k[side];
    unsigned char *dk = rs->k[!side];
    const uint64_t *sv = rs->v[side];
    uint64_t *dv = rs->v[!side];
    if (d < rs->vd) { /* a value digit (hv) */
        const int sh = RS_BITS * d;
        for (int64_t i = 0; i < n; i++) {
            const uint64_t vv = sv[i];
            const size_t o = off[(vv >> sh) & RS_MASK]++;
            kst(dk, w, (int64_t)o, kld(sk, w, i));
            dv[o] = vv;
        }
    } else {
        const int sh = RS_BITS * (d - rs->vd);
        for (int64_t i = 0; i < n; i++) {
            const uint64_t kk = kld(sk, w, i);
            const size_t o = off[(kk >> sh) & RS_MASK]++;
            kst(dk, w, (int64_t)o, kk);
            if (hv) dv[o] = sv[i];
        }
    }
}

/* The same scatter through a line buffer per bucket: an element goes to its bucket's buffer
 * slot, and when the slot completes an aligned 64-byte line of destination keys (and the
 * values' matching 64 or 128 bytes) the line is written with non-temporal stores, which do
 * not first read the destination line into the cache. The lines a bucket shares with its
 * neighbours (its first and last) are written with plain stores. On the 2-core VM (2^27
 * 32-bit keys) this took 17-18 ns per key for the whole sort where plain stores took 30.
 * Used with SSE2 where the destinations are aligned to their elements (streamable): the
 * lines follow the addresses, so the caller's arrays need no further alignment. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define RS_NT 1
CPU_INLINE void nt_line(void *dst, const void *src, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 16)
        _mm_stream_si128((__m128i *)((char *)dst + o),
                         _mm_load_si128((const __m128i *)((const char *)src + o)));
}

/* Plain stores of bucket b's buffered positions [j, end) (a line it shares with a
 * neighbour), slot (j + a) & M of its line buffer each. */
CPU_INLINE void line_part(unsigned char *dk, uint64_t *dv, const unsigned char *kbuf,
                         const uint64_t *vbuf, size_t b, size_t j, size_t end, size_t a, int w,
                         int hv)
{
    const size_t E = (size_t)(64 / w), M = E - 1;
    for (; j < end; j++) {
        kst(dk, w, (int64_t)j, kld(kbuf, w, (int64_t)(b * E + ((j + a) & M))));
        if (hv) dv[j] = vbuf[b * E + ((j + a) & M)];
    }
}

CPU_INLINE void scatter_nt_g(const rsort *rs, int side, int64_t n, int d, size_t *off,
                            unsigned char *kbuf, uint64_t *vbuf, int w, int hv)
{
    const unsigned char *sk = rs->k[side];
    unsigned char *dk = rs->k[!side];
    const uint64_t *sv = rs->v[side];
    uint64_t *dv = rs->v[!side];
    const size_t E = (size_t)(64 / w), M = E - 1; /* elements per line of keys */
    const size_t a = ((uintptr_t)dk & 63) / (size_t)w; /* dk's element offset in its line */
    /* the values' part of a line streams too when it starts 16-byte aligned */
    const int vnt = hv && (((uintptr_t)dv - a * 8) & 15) == 0;
    const int byval = d < rs->vd;
    const int sh = RS_BITS * (byval ? d : d - rs->vd);
    size_t first[RS_SIZE];
    memcpy(first, off, sizeof first);
    for (int64_t i = 0; i < n; i++) {
        const uint64_t kk = kld(sk, w, i), vv = hv ? sv[i] : 0;
        const size_t b = (size_t)(((byval ? vv : kk) >> sh) & RS_MASK);
        const size_t q = off[b]++, slot = (q + a) & M;
        kst(kbuf, w, (int64_t)(b * E + slot), kk);
        if (hv) vbuf[b * E + slot] = vv;
        if (slot != M) continue;
        const size_t q0 = q - M; /* the line's first position, when q >= M */
        if (q >= M && q0 >= first[b]) { /* the whole line is this bucket's */
            nt_line(dk + q0 * (size_t)w, kbuf + b * 64, 64);
            if (vnt) nt_line(dv + q0, vbuf + b * E, E * 8);
            else if (hv) memcpy(dv + q0, vbuf + b * E, E * 8);
        } else {
            line_part(dk, dv, kbuf, vbuf, b, first[b], q + 1, a, w, hv);
        }
    }
    for (size_t b = 0; b < RS_SIZE; b++) { /* the partial last lines */
        const size_t end = off[b];
        size_t j = end - ((end + a) & M); /* the first position of end's line */
        if (end < ((end + a) & M) || j < first[b]) j = first[b];
        line_part(dk, dv, kbuf, vbuf, b, j, end, a, w, hv);
    }
    _mm_sfence(); /* the streamed lines before any later read of the destination */
}
#else
#define RS_NT 0
#endif

/* Composite digit d of the first element of buffer 0. */
static size_t first_digit(const rsort *rs, int d)
{
    if (d < rs->vd) return (size_t)((rs->v[0][0] >> (RS_BITS * d)) & RS_MASK);
    return (size_t)((kld(rs->k[0], rs->w, 0) >> (RS_BITS * (d - rs->vd))) & RS_MASK);
}

/* The fewest elements for which the scatters stream (the line buffers pay). */
#define RS_NT_MIN ((int64_t)1 << 16)

/* Whether the scatter into buffer `to` may stream its lines: keys aligned to their width
 * (and values to 8 bytes). */
static int streamable(const rsort *rs, int to)
{
    return ((uintptr_t)rs->k[to] % (uintptr_t)rs->w) == 0 &&
           (!rs->hv || ((uintptr_t)rs->v[to] & 7) == 0);
}

/* The LSD passes (the file comment) between the caller's arrays and the scratch: the
 * caller's spare arrays when rs->k[1] is set (and rs->v[1] with values), else n values
 * (with hv) then n keys allocated here. With `stay` and a lent scratch the result may end
 * in it (*in_spare = 1: an odd number of passes); else it is copied back. Returns GP_OK or
 * GP_ENOMEM. */
static int lsd(rsort *rs, int64_t n, int stay, int *in_spare)
{
    const int nd = rs->vd + rs->kd;
    size_t *hist = (size_t *)calloc((size_t)nd * RS_SIZE, sizeof(size_t));
    if (!hist) return GP_ENOMEM;
    int vasc = 0;
    if (rs->w == 4) vasc = rs->hv ? count_g(rs, n, hist, 4, 1) : count_g(rs, n, hist, 4, 0);
    else vasc = rs->hv ? count_g(rs, n, hist, 8, 1) : count_g(rs, n, hist, 8, 0);
    int passes = 0;
    for (int d = 0; d < nd; d++) /* a pass per digit that varies */
        passes += !(d < rs->vd && vasc) &&
                  hist[(size_t)d * RS_SIZE + first_digit(rs, d)] != (size_t)n;
    const size_t ebytes = (size_t)rs->w + (rs->hv ? 8u : 0u);
    const int lent = rs->k[1] != NULL;
    unsigned char *scratch =
        passes && !lent ? (unsigned char *)gp_cpu_big_alloc((size_t)n * ebytes + 64) : NULL;
    if (passes && !lent && !scratch) {
        free(hist);
        return GP_ENOMEM;
    }
    if (!lent) {
        rs->v[1] = rs->hv ? (uint64_t *)scratch : NULL; /* the values first: 8-byte aligned */
        rs->k[1] = scratch + (rs->hv ? ((size_t)n * 8 + 63) / 64 * 64 : 0); /* 64-byte aligned */
    }
    /* the line buffers of scatter_nt_g: keys (64 bytes a bucket), then values (up to 128);
     * without them the scatters store plainly */
    unsigned char *lines = passes && RS_NT && n >= RS_NT_MIN
                               ? (unsigned char *)aligned_alloc(64, (size_t)RS_SIZE * 64 * 3)
                               : NULL;
    int side = 0;
    for (int d = 0; d < nd; d++) {
        size_t *h = hist + (size_t)d * RS_SIZE;
        if ((d < rs->vd && vasc) || h[first_digit(rs, d)] == (size_t)n) continue;
        size_t sum = 0;
        for (int b = 0; b < RS_SIZE; b++) {
            const size_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        if (lines && streamable(rs, !side)) {
#if RS_NT
            RS_DISPATCH(scatter_nt_g, rs, side, n, d, h, lines,
                        (uint64_t *)(lines + (size_t)RS_SIZE * 64));
#endif
        } else {
            RS_DISPATCH(scatter_g, rs, side, n, d, h);
        }
        side = !side;
    }
    *in_spare = side && lent && stay;
    if (side && !*in_spare) {
        memcpy(rs->k[0], rs->k[1], (size_t)n * (size_t)rs->w);
        if (rs->hv) memcpy(rs->v[0], rs->v[1], (size_t)n * 8);
    }
    free(lines);
    free(scratch);
    free(hist);
    return GP_OK;
}

int gp_cpu_radix_sort_spare(int width, void *keys, uint64_t *vals, void *spare_keys,
                            uint64_t *spare_vals, int64_t n, int stable, int *in_spare)
{
    rsort rs;
    int stay = 0;
    memset(&rs, 0, sizeof rs);
    rs.w = width;
    rs.hv = vals != NULL;
    rs.vd = vals && stable ? RS_VDIGITS : 0;
    rs.kd = width == 4 ? 3 : 6; /* 11 + 11 + 10 bits, or 5 * 11 + 9 */
    rs.k[0] = (unsigned char *)keys;
    rs.v[0] = vals;
    rs.k[1] = (unsigned char *)spare_keys;
    rs.v[1] = spare_keys ? spare_vals : NULL;
    if (!in_spare) in_spare = &stay;
    else stay = 1;
    *in_spare = 0;
    if (n < 2) return GP_OK;
    if (n < RS_SMALL) {
        RS_DISPATCH(insertion_g, &rs, n);
        return GP_OK;
    }
    return lsd(&rs, n, stay, in_spare);
}

int gp_cpu_radix_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    return gp_cpu_radix_sort_spare(width, keys, vals, NULL, NULL, n, stable, NULL);
}

/* ---- the checked entries ------------------------------------------------------------------- */

/* gp_backend.iota of the CPU backend (meaning: gpuprim/kernels.h): dst[i] = start + i. */
int gp_cpu_iota(uint64_t *dst, int64_t n, uint64_t start)
{
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !dst) return CPU_FAIL(GP_EINVAL, "dst is NULL with n = %lld", (long long)n);
    for (int64_t i = 0; i < n; i++) dst[i] = start + (uint64_t)i;
    return GP_OK;
}

/* The checks and the call behind gp_cpu_sort_as and gp_cpu_sort_spare_as: spare_keys NULL
 * sorts with an allocated scratch (in_spare may then be NULL), else with the spares, which
 * must not overlap the data nor each other. */
static int sort_checked(const char *who, int width, void *keys, uint64_t *vals,
                        void *spare_keys, uint64_t *spare_vals, int64_t n, int stable,
                        int *in_spare)
{
    const char *what = vals ? "pairs" : "keys";
    if (width != 4 && width != 8) return WHO_FAIL(GP_EINVAL, "width = %d, not 4 or 8", width);
    if (n < 0) return WHO_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !keys) return WHO_FAIL(GP_EINVAL, "keys is NULL with n = %lld", (long long)n);
    if ((uint64_t)n > SIZE_MAX / (vals ? 16 : 8))
        return WHO_FAIL(GP_ENOMEM, "n = %lld %s do not fit in memory", (long long)n, what);
    const size_t kb = (size_t)n * (size_t)width, vb = vals ? (size_t)n * 8 : 0;
    if (gp_cpu_ranges_overlap(keys, kb, vals, vb)) return WHO_FAIL(GP_EINVAL, "keys overlap vals");
    const void *a[4] = {keys, vals, spare_keys, spare_vals};
    const size_t len[4] = {kb, vb, kb, vb};
    for (int i = 0; i < 4 && spare_keys; i++)
        for (int k = i < 2 ? 2 : i + 1; k < 4; k++) /* the spares against all the rest */
            if (gp_cpu_ranges_overlap(a[i], len[i], a[k], len[k]))
                return WHO_FAIL(GP_EINVAL, "the keys, values and spares overlap");
    const int rc = gp_cpu_radix_sort_spare(width, keys, vals, spare_keys, spare_vals, n,
                                           stable != 0, in_spare);
    if (rc != GP_OK)
        return WHO_FAIL(rc, "scratch buffer of %lld %s x %d%s bytes", (long long)n, what, width,
                        vals ? " + 8" : "");
    return GP_OK;
}

int gp_cpu_sort_as(const char *who, int width, void *keys, uint64_t *vals, int64_t n,
                   int stable)
{
    return sort_checked(who, width, keys, vals, NULL, NULL, n, stable, NULL);
}

int gp_cpu_sort_spare_as(const char *who, int width, void *keys, uint64_t *vals,
                         void *spare_keys, uint64_t *spare_vals, int64_t n, int stable,
                         int *in_spare)
{
    if (!in_spare) return WHO_FAIL(GP_EINVAL, "in_spare is NULL");
    *in_spare = 0;
    if (n > 0 && (!spare_keys || (vals && !spare_vals)))
        return WHO_FAIL(GP_EINVAL, "%s is NULL with n = %lld",
                        !spare_keys ? "spare_keys" : "spare_vals", (long long)n);
    return sort_checked(who, width, keys, vals, spare_keys, vals ? spare_vals : NULL, n, stable,
                        in_spare);
}

int gp_cpu_sort_spare(int width, void *keys, uint64_t *vals, void *spare_keys,
                      uint64_t *spare_vals, int64_t n, int stable, int *in_spare)
{
    return gp_cpu_sort_spare_as(__func__, width, keys, vals, spare_keys, spare_vals, n, stable,
                                in_spare);
}

int gp_cpu_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    return gp_cpu_sort_as(__func__, width, keys, vals, n, stable);
}

/* ---- the twins ------------------------------------------------------------------------------ */

/* Sorts n unsigned keys ascending in place — the CPU twin of gp_backend.sort_keys.
 *
 * width: 4 (keys are uint32_t) or 8 (uint64_t); keys: n keys (host memory; may be NULL
 * only when n == 0). gp_cpu_sort with no values (above: LSD radix sort, 11-bit
 * digits, digits on which all keys agree skipped; an n-key scratch buffer).
 * The result is the unique ascending order (keys carry no payload, so stability does not
 * matter).
 * Returns GP_OK, GP_EINVAL (width not 4/8, n < 0, NULL keys with n > 0) or GP_ENOMEM. */
int gp_cpu_sort_keys(int width, void *keys, int64_t n)
{
    return gp_cpu_sort_as(__func__, width, keys, NULL, n, 0);
}

/* Sorts n elements of type t ascending in place by their keys — the CPU twin of
 * gp_backend.sort_values: gp_cpu_to_keys, gp_cpu_sort_keys (radix, above) and
 * gp_cpu_from_keys in turn. buf: n elements (host memory; NULL only when n == 0).
 * Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL buf with n > 0) or GP_ENOMEM. */
int gp_cpu_sort_values(gp_dtype t, void *buf, int64_t n)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !buf) return CPU_FAIL(GP_EINVAL, "buf is NULL with n = %lld", (long long)n);
    int rc = gp_cpu_to_keys(t, buf, n);
    if (rc == GP_OK) rc = gp_cpu_sort_keys((int)gp_dtype_size(t), buf, n);
    if (rc == GP_OK) rc = gp_cpu_from_keys(t, buf, n);
    return rc;
}

/* Sorts n (key, value) pairs ascending in place — the CPU twin of gp_backend.sort_pairs.
 *
 * width: 4 (keys are uint32_t) or 8 (uint64_t); keys: n keys, vals: n uint64_t values (host
 * memory, not overlapping; NULL only when n == 0). stable != 0: ascending (key, value),
 * the unique lexicographic order; stable == 0: ascending key, pairs of equal keys in their
 * input order (this twin's deterministic choice; the CUDA backend's differs).
 * Algorithm: gp_cpu_sort (above: LSD radix sort, 11-bit digits; digits on which all
 * pairs agree skipped, and the value's digits when the values already ascend, as input
 * positions do), an n-pair scratch buffer. Returns GP_OK, GP_EINVAL (width not 4/8,
 * n < 0, NULL pointers with n > 0, keys overlapping vals) or GP_ENOMEM. */
int gp_cpu_sort_pairs(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    if (n > 0 && !vals) return CPU_FAIL(GP_EINVAL, "vals is NULL with n = %lld", (long long)n);
    return gp_cpu_sort_as(__func__, width, keys, vals, n, stable);
}
