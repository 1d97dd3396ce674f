/* cpu_sort.c — the CPU backend's radix sort of keys and of (key, value) pairs, and its large
 * allocations (cpu_sort.h). Internal to kernels/.
 *
 * The order. Every sort here is stable and orders a composite key of 8-bit digits: the key
 * (4 or 8 digits), followed, when pairs are sorted by (key, value), by the value's 8
 * digits. Keys alone and pairs sorted by key only have one order (keys carry no payload;
 * a stable sort keeps the input order of equal keys), so the result does not depend on
 * how the digits are visited: it is that of the LSD radix sorts this replaced.
 *
 * The algorithm: MSD on the large scale, LSD in the cache.
 *   1. One pass ORs and ANDs all keys: digits above the highest bit in which two keys differ
 *      are the same in every key and are never visited (all keys equal: nothing to do
 *      unless pairs are ordered by value too).
 *   2. A region larger than RS_LEAF_BYTES per buffer (the whole array at first) is counted
 *      on its most significant digit not yet fixed and scattered, stably, into 256 buckets
 *      of the other buffer (the caller's array and one scratch array of the same size
 *      alternate); each bucket is then a region of its own, one digit further down. A digit
 *      on which the whole region agrees moves nothing (the next digit is counted instead).
 *      A scatter to 256 places keeps 256 write streams, few enough for the TLB, where an
 *      LSD pass over the whole array with 11-bit digits kept 2048 (each store a TLB miss on
 *      a large array).
 *   3. A region that fits (a leaf) is finished by an LSD radix sort of its remaining
 *      digits, counted in one pass, ping-ponging between its parts of the two buffers:
 *      digits constant in the leaf are skipped, as are the value's digits when the values
 *      already ascend in the leaf (they do for input positions, which a stable scatter
 *      keeps in order), and the leaf ends up in the caller's array (one copy when an odd
 *      number of passes left it in the scratch). Leaves under RS_SMALL elements are
 *      insertion-sorted.
 * Skewed data only change the shape of the recursion: a bucket holding everything is
 * counted again one digit down without moving, two large buckets recurse separately, and
 * a large region of equal keys is done as soon as its digits run out (or its values
 * ascend). Every element moves once per MSD level and once per leaf pass.
 *
 * The scratch buffer (n keys, and n values with pairs) is kept from call to call and grown
 * when a larger sort comes (gp_cpu_big_alloc: huge pages, whose first touch costs a
 * fraction of that of small pages), and freed at exit.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "cpu_sort.h"
#include "gp_kernels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- large allocations ------------------------------------------------------------------ */

#define HUGE_ALIGN ((size_t)2 << 20)

void *gp_cpu_big_alloc(size_t bytes)
{
    if (bytes < GP_CPU_HUGE_MIN) return malloc(bytes ? bytes : 1);
    if (bytes > SIZE_MAX - HUGE_ALIGN) {
        errno = ENOMEM;
        return NULL;
    }
    const size_t len = (bytes + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
    void *p = NULL;
    const int rc = posix_memalign(&p, HUGE_ALIGN, len);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE); /* advice only: ordinary pages where refused */
#endif
    return p;
}

/* ---- the scratch buffer ------------------------------------------------------------------ */

static void *rs_scratch;
static size_t rs_scratch_bytes;

static void rs_scratch_release(void)
{
    free(rs_scratch);
    rs_scratch = NULL;
    rs_scratch_bytes = 0;
}

/* The scratch buffer with room for `bytes` bytes (grown, contents not kept); NULL when it
 * cannot be allocated (the old one is released then). */
static void *rs_scratch_get(size_t bytes)
{
    static int registered;
    if (bytes <= rs_scratch_bytes) return rs_scratch;
    rs_scratch_release();
    if (!registered) registered = atexit(rs_scratch_release) == 0;
    rs_scratch = gp_cpu_big_alloc(bytes);
    if (rs_scratch) rs_scratch_bytes = bytes;
    return rs_scratch;
}

/* ---- the sort ------------------------------------------------------------------------------ */

#if defined(__GNUC__)
#define RS_INLINE static inline __attribute__((always_inline))
#else
#define RS_INLINE static inline
#endif

#define RS_SMALL 32                          /* leaves below this: insertion sort */
#ifndef RS_LEAF_BYTES
#define RS_LEAF_BYTES ((size_t)16 << 10)     /* a leaf's elements per buffer, at most */
#endif
#ifndef RS_WC_MIN
#define RS_WC_MIN ((int64_t)1 << 16)          /* regions scattered through line buffers */
#endif

/* One sort: the key width, the composite's value digits (8: by (key, value), else 0),
 * whether values ride along, and the two buffers (0: the caller's arrays, 1: scratch). */
typedef struct rsort {
    int w, vd, hv;
    int64_t leaf; /* largest leaf, in elements */
    unsigned char *k[2];
    uint64_t *v[2];
} rsort;

RS_INLINE uint64_t kld(const unsigned char *k, int w, int64_t i)
{
    if (w == 4) {
        uint32_t x;
        memcpy(&x, k + (size_t)i * 4, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, k + (size_t)i * 8, 8);
    return x;
}

RS_INLINE void kst(unsigned char *k, int w, int64_t i, uint64_t x)
{
    if (w == 4) {
        const uint32_t y = (uint32_t)x;
        memcpy(k + (size_t)i * 4, &y, 4);
    } else {
        memcpy(k + (size_t)i * 8, &x, 8);
    }
}

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

/* Digit d (0 = least significant) of the composite of element i in buffer `side`. */
RS_INLINE unsigned digit_of(const rsort *rs, int side, int64_t i, int d, int w)
{
    if (d < rs->vd) return (unsigned)(rs->v[side][i] >> (8 * d)) & 255u;
    return (unsigned)(kld(rs->k[side], w, i) >> (8 * (d - rs->vd))) & 255u;
}

/* cnt[b] = elements of [lo, lo + n) in buffer `side` whose digit d is b (four interleaved
 * tables, so that runs of one digit do not wait on one counter). */
RS_INLINE void count_g(const rsort *rs, int side, int64_t lo, int64_t n, int d, int64_t *cnt,
                       int w, int hv)
{
    (void)hv;
    int64_t c4[4][256];
    memset(c4, 0, sizeof c4);
    const int64_t e = lo + n, e4 = lo + (n & ~(int64_t)3);
    if (d < rs->vd) {
        const uint64_t *v = rs->v[side];
        const int sh = 8 * d;
        int64_t i = lo;
        for (; i < e4; i += 4) {
            c4[0][(v[i] >> sh) & 255]++;
            c4[1][(v[i + 1] >> sh) & 255]++;
            c4[2][(v[i + 2] >> sh) & 255]++;
            c4[3][(v[i + 3] >> sh) & 255]++;
        }
        for (; i < e; i++) c4[0][(v[i] >> sh) & 255]++;
    } else {
        const unsigned char *k = rs->k[side];
        const int sh = 8 * (d - rs->vd);
        int64_t i = lo;
        for (; i < e4; i += 4) {
            c4[0][(kld(k, w, i) >> sh) & 255]++;
            c4[1][(kld(k, w, i + 1) >> sh) & 255]++;
            c4[2][(kld(k, w, i + 2) >> sh) & 255]++;
            c4[3][(kld(k, w, i + 3) >> sh) & 255]++;
        }
        for (; i < e; i++) c4[0][(kld(k, w, i) >> sh) & 255]++;
    }
    for (int b = 0; b < 256; b++) cnt[b] = c4[0][b] + c4[1][b] + c4[2][b] + c4[3][b];
}

static void count_digit(const rsort *rs, int side, int64_t lo, int64_t n, int d, int64_t *cnt)
{
    RS_DISPATCH(count_g, rs, side, lo, n, d, cnt);
}

/* The stable scatter of [lo, lo + n) from buffer `side` to the other by digit d: element i
 * goes to position off[its digit]++ (absolute positions). */
RS_INLINE void scatter_g(const rsort *rs, int side, int64_t lo, int64_t n, int d, int64_t *off,
                         int w, int hv)
{
    const unsigned char *sk = rs->k[side];
    unsigned char *dk = rs->k[!side];
    const uint64_t *sv = rs->v[side];
    uint64_t *dv = rs->v[!side];
    const int64_t e = lo + n;
    if (d < rs->vd) { /* a value digit (hv) */
        const int sh = 8 * d;
        for (int64_t i = lo; i < e; i++) {
            const uint64_t vv = sv[i];
            const int64_t o = off[(vv >> sh) & 255]++;
            kst(dk, w, o, kld(sk, w, i));
            dv[o] = vv;
        }
    } else {
        const int sh = 8 * (d - rs->vd);
        for (int64_t i = lo; i < e; i++) {
            const uint64_t kk = kld(sk, w, i);
            const int64_t o = off[(kk >> sh) & 255]++;
            kst(dk, w, o, kk);
            if (hv) dv[o] = sv[i];
        }
    }
}

/* scatter_g through write-combining buffers: every bucket collects the elements of one
 * 64-byte line of keys (16 or 8) in a small buffer that stays in L1, and the line is
 * copied out whole when its last slot fills (the first and last line of a bucket in part),
 * so a large region's scatter touches each destination line and page once per line, not
 * once per element. Same result as scatter_g. */
RS_INLINE void scatter_wc_g(const rsort *rs, int side, int64_t lo, int64_t n, int d,
                            int64_t *off, int w, int hv)
{
    const int B = 64 / w; /* elements per line of keys */
    _Alignas(64) unsigned char bk[256 * 64];
    _Alignas(64) uint64_t bv[256 * 16];
    int64_t start[256];
    memcpy(start, off, sizeof start);
    const unsigned char *sk = rs->k[side];
    unsigned char *dk = rs->k[!side];
    const uint64_t *sv = rs->v[side];
    uint64_t *dv = rs->v[!side];
    const int vdig = d < rs->vd;
    const int sh = vdig ? 8 * d : 8 * (d - rs->vd);
    for (int64_t i = lo; i < lo + n; i++) {
        const uint64_t kk = kld(sk, w, i), vv = hv ? sv[i] : 0;
        const unsigned b = (unsigned)((vdig ? vv : kk) >> sh) & 255u;
        const int64_t o = off[b]++;
        const int slot = (int)(o & (B - 1));
        kst(bk + (size_t)b * 64, w, slot, kk);
        if (hv) bv[b * 16 + slot] = vv;
        if (slot == B - 1) {
            const int64_t from = o - (B - 1);
            if (from >= start[b]) {
                memcpy(dk + (size_t)from * (size_t)w, bk + (size_t)b * 64, 64);
                if (hv) memcpy(dv + from, bv + b * 16, (size_t)B * 8);
            } else {
                const int f = (int)(start[b] & (B - 1));
                memcpy(dk + (size_t)start[b] * (size_t)w, bk + (size_t)b * 64 + (size_t)f * (size_t)w,
                       (size_t)(B - f) * (size_t)w);
                if (hv) memcpy(dv + start[b], bv + b * 16 + f, (size_t)(B - f) * 8);
            }
        }
    }
    for (int b = 0; b < 256; b++) { /* the lines still in the buffers */
        const int64_t e = off[b], line = e & ~(int64_t)(B - 1);
        const int64_t from = line > start[b] ? line : start[b];
        if (from >= e) continue;
        const int f = (int)(from & (B - 1));
        memcpy(dk + (size_t)from * (size_t)w, bk + (size_t)b * 64 + (size_t)f * (size_t)w,
               (size_t)(e - from) * (size_t)w);
        if (hv) memcpy(dv + from, bv + b * 16 + f, (size_t)(e - from) * 8);
    }
}

static void scatter(const rsort *rs, int side, int64_t lo, int64_t n, int d, int64_t *off)
{
    if (n >= RS_WC_MIN) RS_DISPATCH(scatter_wc_g, rs, side, lo, n, d, off);
    else RS_DISPATCH(scatter_g, rs, side, lo, n, d, off);
}

/* Copies [lo, lo + n) from the scratch to the caller's arrays. */
static void to_caller(const rsort *rs, int64_t lo, int64_t n)
{
    memcpy(rs->k[0] + (size_t)lo * (size_t)rs->w, rs->k[1] + (size_t)lo * (size_t)rs->w,
           (size_t)n * (size_t)rs->w);
    if (rs->hv) memcpy(rs->v[0] + lo, rs->v[1] + lo, (size_t)n * 8);
}

/* 1 when the values of [lo, lo + n) in buffer `side` do not descend. */
static int values_ascend(const rsort *rs, int side, int64_t lo, int64_t n)
{
    const uint64_t *v = rs->v[side];
    int64_t bad = 0;
    for (int64_t i = lo + 1; i < lo + n; i++) bad += v[i] < v[i - 1];
    return bad == 0;
}

/* Insertion sort of [lo, lo + n) of the caller's arrays by the composite (stable). */
RS_INLINE void insertion_g(const rsort *rs, int64_t lo, int64_t n, int w, int hv)
{
    unsigned char *k = rs->k[0];
    uint64_t *v = rs->v[0];
    const int byval = rs->vd > 0;
    for (int64_t i = lo + 1; i < lo + n; i++) {
        const uint64_t kk = kld(k, w, i), vv = hv ? v[i] : 0;
        int64_t j = i;
        for (; j > lo; j--) {
            const uint64_t pk = kld(k, w, j - 1);
            if (!(kk < pk || (byval && kk == pk && vv < v[j - 1]))) break;
            kst(k, w, j, pk);
            if (hv) v[j] = v[j - 1];
        }
        kst(k, w, j, kk);
        if (hv) v[j] = vv;
    }
}

static void insertion(const rsort *rs, int64_t lo, int64_t n)
{
    RS_DISPATCH(insertion_g, rs, lo, n);
}

/* cnt[d][b] for the digits d in [0, top] of the leaf [lo, lo + n) in buffer `side`
 * (n < 2^32); returns 1 when its values do not descend (always 0 without value digits). */
RS_INLINE int leaf_count_g(const rsort *rs, int side, int64_t lo, int64_t n, int top,
                           uint32_t (*cnt)[256], int w, int hv)
{
    (void)hv;
    const int vd = rs->vd, vtop = top < vd ? top : vd - 1, ktop = top - vd;
    const unsigned char *k = rs->k[side];
    const uint64_t *v = rs->v[side];
    memset(cnt, 0, (size_t)(top + 1) * sizeof cnt[0]);
    int64_t desc = 0;
    for (int64_t i = lo; i < lo + n; i++) {
        if (vd) {
            const uint64_t vv = v[i];
            for (int d = 0; d <= vtop; d++) cnt[d][(vv >> (8 * d)) & 255]++;
            desc += i > lo && vv < v[i - 1];
        }
        const uint64_t kk = kld(k, w, i);
        for (int d = 0; d <= ktop; d++) cnt[vd + d][(kk >> (8 * d)) & 255]++;
    }
    return vd && desc == 0;
}

/* The leaf [lo, lo + n) in buffer `side`, ordered on its digits [0, top] already: LSD
 * passes over the digits that vary (and over the value's only when the values do not
 * already ascend), ending in the caller's arrays. */
static void leaf_sort(const rsort *rs, int side, int64_t lo, int64_t n, int top)
{
    if (top >= 0 && n >= RS_SMALL) {
        uint32_t cnt[16][256];
        int vasc = 0;
        if (rs->w == 4) {
            if (rs->hv) vasc = leaf_count_g(rs, side, lo, n, top, cnt, 4, 1);
            else vasc = leaf_count_g(rs, side, lo, n, top, cnt, 4, 0);
        } else {
            if (rs->hv) vasc = leaf_count_g(rs, side, lo, n, top, cnt, 8, 1);
            else vasc = leaf_count_g(rs, side, lo, n, top, cnt, 8, 0);
        }
        for (int d = 0; d <= top; d++) {
            if ((d < rs->vd && vasc) || cnt[d][digit_of(rs, side, lo, d, rs->w)] == (uint32_t)n)
                continue;
            int64_t off[256], s = lo;
            for (int b = 0; b < 256; b++) {
                off[b] = s;
                s += cnt[d][b];
            }
            scatter(rs, side, lo, n, d, off);
            side = !side;
        }
    }
    if (side) to_caller(rs, lo, n);
    if (top >= 0 && n < RS_SMALL && n > 1) insertion(rs, lo, n);
}

/* Sorts the region [lo, lo + n) in buffer `side`, ordered on its digits above d already,
 * into the caller's arrays (the file comment, step 2). */
static void msd(const rsort *rs, int side, int64_t lo, int64_t n, int d)
{
    int64_t cnt[256];
    for (;;) {
        if (n <= rs->leaf || d < 0) {
            leaf_sort(rs, side, lo, n, d);
            return;
        }
        if (d < rs->vd && values_ascend(rs, side, lo, n)) { /* equal keys, values in order */
            if (side) to_caller(rs, lo, n);
            return;
        }
        count_digit(rs, side, lo, n, d, cnt);
        if (cnt[digit_of(rs, side, lo, d, rs->w)] != n) break;
        d--; /* the whole region agrees on digit d */
    }
    int64_t off[256], s = lo;
    for (int b = 0; b < 256; b++) {
        off[b] = s;
        s += cnt[b];
    }
    scatter(rs, side, lo, n, d, off);
    for (int b = 0; b < 256; b++) /* off[b] is now the end of bucket b */
        if (cnt[b] > 0) msd(rs, !side, off[b] - cnt[b], cnt[b], d - 1);
}

/* The index of the highest key digit in which two of the n keys differ; -1 when all agree. */
RS_INLINE int top_digit_g(const unsigned char *k, int64_t n, int w)
{
    uint64_t a = ~0ull, o = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t x = kld(k, w, i);
        a &= x;
        o |= x;
    }
    const uint64_t diff = a ^ o;
    int d = -1;
    for (int b = 0; b < w; b++)
        if ((diff >> (8 * b)) & 255) d = b;
    return d;
}

int gp_cpu_radix_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    rsort rs;
    memset(&rs, 0, sizeof rs);
    rs.w = width;
    rs.hv = vals != NULL;
    rs.vd = vals && stable ? 8 : 0;
    rs.k[0] = (unsigned char *)keys;
    rs.v[0] = vals;
    const size_t ebytes = (size_t)width + (rs.hv ? 8u : 0u);
    rs.leaf = (int64_t)(RS_LEAF_BYTES / ebytes);
    if (n < 2) return GP_OK;
    if (n < RS_SMALL) {
        insertion(&rs, 0, n);
        return GP_OK;
    }
    const int kd = width == 4 ? top_digit_g(rs.k[0], n, 4) : top_digit_g(rs.k[0], n, 8);
    const int d = kd >= 0 ? rs.vd + kd : rs.vd - 1;
    if (d < 0) return GP_OK; /* equal keys and nothing else to order by */
    unsigned char *scratch = (unsigned char *)rs_scratch_get((size_t)n * ebytes);
    if (!scratch) return GP_ENOMEM;
    /* the values first: 8-byte aligned whatever n is */
    rs.v[1] = rs.hv ? (uint64_t *)scratch : NULL;
    rs.k[1] = scratch + (rs.hv ? (size_t)n * 8 : 0);
    msd(&rs, 0, 0, n, d);
    return GP_OK;
}
