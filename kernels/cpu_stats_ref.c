/* cpu_stats_ref.c — the CPU statistics in their frozen, plain form (HPCG's _ref style):
 * gp_cpu_stats_ref, the one-thread loops over the element types that define the record's
 * bits, and the driver every form of gp_cpu_stats runs (gp_cpu_stats_run). The AVX2 form
 * (cpu_stats_avx2.c) must give the same bits; tests/test_cpu_kernels.c compares the two.
 * Change this file only with the summation order itself.
 *
 * Summation order (gp_cpu_stats, gp_cpu_trap_x, gp_cpu_trap_fn). The terms (elements,
 * squares, trapezoids, weighted samples), in index order, are cut into chunks of
 * GP_CPU_CHUNK (4096) consecutive terms, the last chunk possibly shorter. Inside a chunk,
 * term j goes to lane j % 4 (four float64 accumulators starting at +0.0, each summed
 * left to right); the chunk sum is (lane0 + lane1) + (lane2 + lane3). The chunk sums are
 * then added pairwise like a binary counter: whenever the two most recent partial sums
 * each cover 2^k chunks they are replaced by (older + newer); at the end the remaining
 * partials (covering 2^k1 > 2^k2 > ... chunks, oldest first) are added from the newest
 * to the oldest: p1 + (p2 + (... + pr)) (psum, cpu_stats.h). The error bound is therefore
 * about (1024 + log2(chunks)) * eps * sum|term|, and the result depends only on the input.
 * Integer data (gp_cpu_stats) sum exactly instead: per chunk the 64-bit two's complement
 * images of the elements add into one word, their carries and sign extensions into a
 * second (a chunk's high word stays within +-4096), and the chunk's 128-bit total adds
 * into the record's gp_i128; `sum` is that exact sum rounded once.
 *
 * Key mapping. The loops map elements to keys with the inline maps of gpuprim/kernels.h
 * (gp_key_f32_bits, gp_key_f64_bits) and the integer flips below, the same maps as
 * gp_key_of in common.c, so that the per-element loops need no function call.
 */
#include "cpu_common.h"
#include "cpu_stats.h"
#include "cpu_twins.h"

#include <string.h>

/* ---- the plain chunk loops ------------------------------------------------------------- */

/* STATS_ELEM(L, i): folds element i into lane L of the STATS_CHUNK loop below (its locals:
 * the float64 lanes sL / qL, the integer sum ilo / ihi, hash, desc, prev, nans, kmin, kmax). */
#define STATS_ELEM(L, i, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG)                              \
    do {                                                                                     \
        UT bits_;                                                                            \
        CT val_;                                                                             \
        memcpy(&bits_, p + (size_t)(i) * sizeof(UT), sizeof(UT));                            \
        memcpy(&val_, &bits_, sizeof(UT));                                                   \
        const uint64_t k_ = (uint64_t)KEY(bits_);                                            \
        const int isnan_ = ISNAN(bits_);                                                     \
        const double d_ = isnan_ ? 0.0 : TOD(val_);                                          \
        if (INTSUM) {                                                                        \
            const uint64_t w_ = (uint64_t)val_; /* two's complement image */                 \
            ilo += w_;                                                                       \
            ihi += (int64_t)(ilo < w_) - (int64_t)NEG(val_);                                 \
        } else {                                                                             \
            s##L += d_;                                                                      \
        }                                                                                    \
        q##L += d_ * d_;                                                                     \
        if (hashing) hash += gp_mix64(k_);                                                   \
        desc += prev > k_;                                                                   \
        prev = k_;                                                                           \
        nans += isnan_;                                                                      \
        const uint64_t kn_ = isnan_ ? kmin : k_, kx_ = isnan_ ? kmax : k_;                   \
        kmin = kn_ < kmin ? kn_ : kmin;                                                      \
        kmax = kx_ > kmax ? kx_ : kmax;                                                      \
    } while (0)

/* STATS_CHUNK(NAME, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG) defines
 *   void NAME##_from(const void *y, int64_t i0, int64_t i1, int hashing, stats_acc *a,
 *                    const stats_lanes *l)
 * which folds elements [i0, i1) of y, the rest of a chunk whose first elements are in the
 * lanes *l (i0 - the chunk's start a multiple of 4, so that element i0 goes to lane 0),
 * into *a (the hash only when hashing != 0; declared in cpu_stats.h, the AVX2 loops finish
 * their chunks with it); and
 *   static void NAME(const void *y, int64_t i0, int64_t i1, int hashing, stats_acc *a)
 * which folds the whole chunk [i0, i1) (at most GP_CPU_CHUNK elements).
 * UT: the unsigned type of the element's bits and key; CT: the C type of the
 * element; KEY(bits) -> key; ISNAN(bits) -> int; TOD(value) -> double. Element i0 + j adds
 * into the float64 lanes s[j % 4] and q[j % 4], the loop taking four elements (one per lane)
 * per step, so that the lanes stay in registers. NaN elements add +0.0 to the lanes, which
 * leaves them bit-identical because a lane starting at +0.0 can never hold -0.0.
 * INTSUM = 0 (float types): the values add into the float64 lanes; INTSUM = 1 (integer
 * types): they add exactly into a->isum (the file comment), NEG(value) being 1 for a
 * negative value (0 always for unsigned types). */
#define STATS_CHUNK(NAME, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG)                             \
    GP_CPU_STATS_FROM(NAME##_from)                                                           \
    {                                                                                        \
        const unsigned char *p = (const unsigned char *)y;                                  \
        double s0 = l->s[0], s1 = l->s[1], s2 = l->s[2], s3 = l->s[3];                       \
        double q0 = l->q[0], q1 = l->q[1], q2 = l->q[2], q3 = l->q[3];                       \
        uint64_t hash = l->hash, kmin = l->kmin, kmax = l->kmax, prev = l->prev;             \
        uint64_t ilo = l->ilo;                                                               \
        int64_t ihi = l->ihi;                                                                \
        int64_t nans = l->nans, desc = l->desc;                                              \
        int64_t i = i0;                                                                      \
        for (; i + 4 <= i1; i += 4) {                                                        \
            STATS_ELEM(0, i, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);                          \
            STATS_ELEM(1, i + 1, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);                      \
            STATS_ELEM(2, i + 2, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);                      \
            STATS_ELEM(3, i + 3, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);                      \
        }                                                                                    \
        if (i < i1) STATS_ELEM(0, i, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);                  \
        if (i + 1 < i1) STATS_ELEM(1, i + 1, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);          \
        if (i + 2 < i1) STATS_ELEM(2, i + 2, UT, CT, KEY, ISNAN, TOD, INTSUM, NEG);          \
        if (INTSUM) {                                                                        \
            gp_i128 c;                                                                       \
            c.lo = ilo;                                                                      \
            c.hi = ihi;                                                                      \
            a->isum = gp_i128_add(a->isum, c);                                               \
        } else {                                                                             \
            psum_push(&a->sum, (s0 + s1) + (s2 + s3));                                       \
        }                                                                                    \
        psum_push(&a->sumsq, (q0 + q1) + (q2 + q3));                                         \
        a->hash = hash;                                                                      \
        a->min_key = kmin;                                                                   \
        a->max_key = kmax;                                                                   \
        a->prev_key = prev;                                                                  \
        a->nan_count += nans;                                                                \
        a->descents += desc;                                                                 \
    }                                                                                        \
    static void NAME(const void *y, int64_t i0, int64_t i1, int hashing, stats_acc *a)      \
    {                                                                                        \
        const stats_lanes l = lanes_start(a);                                                \
        NAME##_from(y, i0, i1, hashing, a, &l);                                              \
    }

#define KEY_ID(b) (b)
#define KEY_I32(b) ((b) ^ 0x80000000u)
#define KEY_I64(b) ((b) ^ 0x8000000000000000ull)
#define ISNAN_F32(b) (((b) & 0x7FFFFFFFu) > 0x7F800000u)
#define ISNAN_F64(b) (((b) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull)
#define NEVER_NAN(b) ((void)(b), 0)
#define TO_DOUBLE(v) ((double)(v))
#define IS_NEG(v) ((v) < 0)
#define NEVER_NEG(v) ((void)(v), 0)

STATS_CHUNK(gp_cpu_stats_f32, uint32_t, float, gp_key_f32_bits, ISNAN_F32, TO_DOUBLE, 0, NEVER_NEG)
STATS_CHUNK(gp_cpu_stats_f64, uint64_t, double, gp_key_f64_bits, ISNAN_F64, TO_DOUBLE, 0, NEVER_NEG)
STATS_CHUNK(gp_cpu_stats_i32, uint32_t, int32_t, KEY_I32, NEVER_NAN, TO_DOUBLE, 1, IS_NEG)
STATS_CHUNK(gp_cpu_stats_i64, uint64_t, int64_t, KEY_I64, NEVER_NAN, TO_DOUBLE, 1, IS_NEG)
STATS_CHUNK(gp_cpu_stats_u32, uint32_t, uint32_t, KEY_ID, NEVER_NAN, TO_DOUBLE, 1, NEVER_NEG)
STATS_CHUNK(gp_cpu_stats_u64, uint64_t, uint64_t, KEY_ID, NEVER_NAN, TO_DOUBLE, 1, NEVER_NEG)

/* ---- the driver ------------------------------------------------------------------------ */

/* The plain chunk loop of element type t; NULL for an invalid t. */
static stats_chunk_fn plain_chunk(gp_dtype t)
{
    switch (t) {
    case GP_F32: return gp_cpu_stats_f32;
    case GP_F64: return gp_cpu_stats_f64;
    case GP_I32: return gp_cpu_stats_i32;
    case GP_I64: return gp_cpu_stats_i64;
    case GP_U32: return gp_cpu_stats_u32;
    case GP_U64: return gp_cpu_stats_u64;
    default: return NULL;
    }
}

/* The record of the pass *a over y[0, n) of type t, n > 0 (gp_cpu_stats's meaning). */
static gp_stats stats_record(gp_dtype t, const void *y, int64_t n, unsigned flags,
                             const stats_acc *a)
{
    const int order = (flags & GP_STATS_ORDER) != 0;
    const size_t es = gp_dtype_size(t);
    gp_stats s;
    memset(&s, 0, sizeof s);
    s.count = n;
    s.nan_count = a->nan_count;
    s.has_isum = !gp_dtype_is_float(t);
    s.isum = a->isum;
    s.sum = s.has_isum ? gp_i128_to_double(a->isum) : psum_total(&a->sum);
    s.sumsq = psum_total(&a->sumsq);
    s.min_key = a->min_key;
    s.max_key = a->max_key;
    s.hash = a->hash;
    s.first_key = gp_key_of(t, y);
    s.last_key = gp_key_of(t, (const unsigned char *)y + (size_t)(n - 1) * es);
    s.descents = order ? a->descents : 0;
    s.yfirst = gp_elem_to_double(t, y);
    s.ylast = gp_elem_to_double(t, (const unsigned char *)y + (size_t)(n - 1) * es);
    s.trap = 0.0;
    s.xfirst = 0.0;
    s.xlast = 0.0;
    s.has_x = 0;
    s.order_valid = order;
    if (flags & GP_STATS_NOHASH) s.hash = 0;
    return s;
}

int gp_cpu_stats_run(const char *who, gp_dtype t, const void *y, int64_t n, unsigned flags,
                     gp_stats *out, stats_chunk_fn chunk)
{
    if (gp_dtype_size(t) == 0) return WHO_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return WHO_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!out) return WHO_FAIL(GP_EINVAL, "out is NULL");
    if (n > 0 && !y) return WHO_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (flags & ~(GP_STATS_ORDER | GP_STATS_NOHASH))
        return WHO_FAIL(GP_EINVAL, "unknown flags 0x%x", flags);
    if (n == 0) {
        *out = gp_stats_empty();
        out->has_x = 0;
        out->order_valid = (flags & GP_STATS_ORDER) != 0;
        out->has_isum = !gp_dtype_is_float(t);
        return GP_OK;
    }
    if (!chunk) chunk = plain_chunk(t);
    if (!chunk) return WHO_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);

    stats_acc a;
    a.nan_count = 0;
    a.descents = 0;
    a.hash = 0;
    a.min_key = UINT64_MAX;
    a.max_key = 0;
    a.prev_key = gp_key_of(t, y); /* so element 0 never counts as a descent */
    psum_init(&a.sum);
    psum_init(&a.sumsq);
    a.isum = gp_i128_from_i64(0);
    for (int64_t c = 0; c < n; c += GP_CPU_CHUNK) {
        int64_t e = (n - c > GP_CPU_CHUNK) ? c + GP_CPU_CHUNK : n;
        chunk(y, c, e, !(flags & GP_STATS_NOHASH), &a);
    }
    *out = stats_record(t, y, n, flags, &a);
    return GP_OK;
}

/* Statistics of y[0, n) — the CPU twin of gp_backend.stats, in its reference form.
 *
 * t: element type; y: n elements of type t (host memory; may be NULL only when n == 0);
 * flags: GP_STATS_ORDER, GP_STATS_NOHASH (hash = 0); out: receives the record.
 * Fills count, nan_count, sum and sumsq (of the non-NaN elements, each converted as
 * (double)value, float32 included, in the fixed order of the file comment; for integer
 * types isum = the exact sum, has_isum = 1 and sum = isum rounded once), min_key /
 * max_key (over non-NaN elements; UINT64_MAX / 0 when there is none), hash (sum mod 2^64
 * of gp_mix64(key) over all elements, NaNs included), first_key / last_key and yfirst /
 * ylast (elements 0 and n-1; NaN kept), descents (number of i with key[i] > key[i+1],
 * NaN keys included) and order_valid = 1 when flags has GP_STATS_ORDER, else descents = 0
 * and order_valid = 0. Always has_x = 0 and trap = xfirst = xlast = 0. For n == 0 the
 * record is gp_stats_empty() with has_x = 0 and order_valid and has_isum as above.
 * One pass over the data; the result is bitwise reproducible.
 * Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL y with n > 0, NULL out, unknown flags).
 * This form never uses SIMD: gp_cpu_stats (cpu_stats_avx2.c) must equal it bit for bit. */
int gp_cpu_stats_ref(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out)
{
    return gp_cpu_stats_run(__func__, t, y, n, flags, out, NULL);
}
