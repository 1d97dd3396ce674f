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
#include "cpu_merge.h"
#include "gp_keys_ext.h"

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

/* Records a failure of a checked entry under the public name `who` (gp_cpu_fail). */
#define WHO_FAIL(code, ...) gp_cpu_fail((code), who, __FILE__, __LINE__, __VA_ARGS__)

/* ---- order keys ------------------------------------------------------------------------------ */

/* The float maps and the descending flip at width w (gp_kernels.h, gp_keys_ext.h). */
RS_INLINE uint64_t fkey(uint64_t u, int w)
{
    return w == 4 ? gp_key_f32_bits((uint32_t)u) : gp_key_f64_bits(u);
}
RS_INLINE uint64_t funkey(uint64_t k, int w)
{
    return w == 4 ? gp_unkey_f32_bits((uint32_t)k) : gp_unkey_f64_bits(k);
}
RS_INLINE uint64_t dkey(uint64_t k, int w, int isf)
{
    return w == 4 ? gp_desc_key32((uint32_t)k, isf) : gp_desc_key64(k, isf);
}

/* The order key of one element bit pattern u of w bytes (or with inv, the element of key
 * u): isf: a float type, sgn: a signed integer type, desc: descending keys. */
RS_INLINE uint64_t key_map(uint64_t u, int w, int isf, int sgn, int desc, int inv)
{
    const uint64_t sb = (uint64_t)1 << (8 * w - 1);
    if (!inv) {
        const uint64_t k = isf ? fkey(u, w) : sgn ? u ^ sb : u;
        return desc ? dkey(k, w, isf) : k;
    }
    const uint64_t k = desc ? dkey(u, w, isf) : u;
    return isf ? funkey(k, w) : sgn ? k ^ sb : k;
}

/* The map over n elements with the flags as constants of each instance. */
#define KEY_LOOP(buf, n, W, ISF, SGN, DESC, INV)                                             \
    do {                                                                                     \
        unsigned char *k_ = (unsigned char *)(buf);                                          \
        for (int64_t i_ = 0; i_ < (n); i_++)                                                 \
            kst(k_, W, i_, key_map(kld(k_, W, i_), W, ISF, SGN, DESC, INV));                 \
    } while (0)
#define KEY_LOOPS(buf, n, W, ISF, SGN, desc, inv)                                            \
    do {                                                                                     \
        if (!(desc) && !(inv)) KEY_LOOP(buf, n, W, ISF, SGN, 0, 0);                          \
        else if (!(desc)) KEY_LOOP(buf, n, W, ISF, SGN, 0, 1);                               \
        else if (!(inv)) KEY_LOOP(buf, n, W, ISF, SGN, 1, 0);                                \
        else KEY_LOOP(buf, n, W, ISF, SGN, 1, 1);                                            \
    } while (0)

int gp_cpu_keys_as(const char *who, gp_dtype t, int descending, int inverse, void *buf,
                   int64_t n)
{
    if (gp_dtype_size(t) == 0) return WHO_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return WHO_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !buf) return WHO_FAIL(GP_EINVAL, "buf is NULL with n = %lld", (long long)n);
    const int desc = descending != 0, inv = inverse != 0;
    switch (t) {
    case GP_F32: KEY_LOOPS(buf, n, 4, 1, 0, desc, inv); break;
    case GP_I32: KEY_LOOPS(buf, n, 4, 0, 1, desc, inv); break;
    case GP_U32: KEY_LOOPS(buf, n, 4, 0, 0, desc, inv); break;
    case GP_F64: KEY_LOOPS(buf, n, 8, 1, 0, desc, inv); break;
    case GP_I64: KEY_LOOPS(buf, n, 8, 0, 1, desc, inv); break;
    default: KEY_LOOPS(buf, n, 8, 0, 0, desc, inv); break; /* GP_U64 */
    }
    return GP_OK;
}

int gp_cpu_keys(gp_dtype t, int descending, int inverse, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, descending, inverse, buf, n);
}

/* ---- the checked entries ------------------------------------------------------------------- */

/* 1 when the byte ranges [a, a+na) and [b, b+nb) overlap (both non-empty). */
static int ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return 0;
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}


int gp_cpu_sort_as(const char *who, int width, void *keys, uint64_t *vals, int64_t n,
                   int stable)
{
    const char *what = vals ? "pairs" : "keys";
    if (width != 4 && width != 8) return WHO_FAIL(GP_EINVAL, "width = %d, not 4 or 8", width);
    if (n < 0) return WHO_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !keys) return WHO_FAIL(GP_EINVAL, "keys is NULL with n = %lld", (long long)n);
    if ((uint64_t)n > SIZE_MAX / (vals ? 16 : 8))
        return WHO_FAIL(GP_ENOMEM, "n = %lld %s do not fit in memory", (long long)n, what);
    if (ranges_overlap(keys, (size_t)n * (size_t)width, vals, (size_t)n * 8))
        return WHO_FAIL(GP_EINVAL, "keys overlap vals");
    const int rc = gp_cpu_radix_sort(width, keys, vals, n, stable != 0);
    if (rc != GP_OK)
        return WHO_FAIL(rc, "scratch buffer of %lld %s x %d%s bytes", (long long)n, what, width,
                        vals ? " + 8" : "");
    return GP_OK;
}

int gp_cpu_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    return gp_cpu_sort_as(__func__, width, keys, vals, n, stable);
}

/* ---- merge-split ------------------------------------------------------------------------------ */

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
RS_INLINE void merge_g(const unsigned char *lk, const uint64_t *lov, int64_t nlo,
                       const unsigned char *hk, const uint64_t *hiv, int64_t nhi, int64_t r0,
                       int64_t cnt, unsigned char *ok, uint64_t *ov, int W, int HV, int STABLE)
{
    int64_t I[5], J[5];
    gp_cpu_merge_cuts(W, lk, lov, nlo, hk, hiv, nhi, r0, cnt, STABLE, I, J);
    GP_MERGE_RUN4(I, J, MS_STEP, MS_TAIL);
}

/* merge_g with its constants: by key (keys alone or pairs) or by (key, value). */
static void merge_run(int w, int hv, int stable, const unsigned char *lk, const uint64_t *lov,
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
        if (ranges_overlap(ok, ck, in[i], in_n[i]) || ranges_overlap(ov, cv, in[i], in_n[i]))
            return 1;
    return ranges_overlap(ok, ck, ov, cv);
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
    /* the merge starts at merged[r0]: the lower half at 0, the upper one at m */
    if (cnt > 0)
        merge_run(width, hv, hv && stable, (const unsigned char *)lo_keys, lo_vals, nlo,
                  (const unsigned char *)hi_keys, hi_vals, nhi, keep_upper ? m : 0, cnt,
                  (unsigned char *)out_keys, out_vals);
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
