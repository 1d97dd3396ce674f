/* cpu_backend.c — the CPU twins of the CUDA kernels and the CPU backend table.
 *
 * Every function here has exactly the meaning documented for the matching gp_backend entry
 * in gpuprim/kernels.h. The twins are (1) the CPU backend that runs when no GPU is used and
 * (2) the oracle the tests compare the CUDA backend against, so they favour plain,
 * obviously correct, deterministic code: one thread, a fixed summation order, no
 * dependence on alignment, thread count or timing.
 *
 * Summation order (gp_cpu_stats, gp_cpu_trap_x, gp_cpu_trap_fn). The terms (elements,
 * squares, trapezoids, weighted samples), in index order, are cut into chunks of
 * GP_CPU_CHUNK (4096) consecutive terms, the last chunk possibly shorter. Inside a chunk,
 * term j goes to lane j % 4 (four float64 accumulators starting at +0.0, each summed
 * left to right); the chunk sum is (lane0 + lane1) + (lane2 + lane3). The chunk sums are
 * then added pairwise like a binary counter: whenever the two most recent partial sums
 * each cover 2^k chunks they are replaced by (older + newer); at the end the remaining
 * partials (covering 2^k1 > 2^k2 > ... chunks, oldest first) are added from the newest
 * to the oldest: p1 + (p2 + (... + pr)). The error bound is therefore about
 * (1024 + log2(chunks)) * eps * sum|term|, and the result depends only on the input.
 * Integer data (gp_cpu_stats) sum exactly instead: per chunk the 64-bit two's complement
 * images of the elements add into one word, their carries and sign extensions into a
 * second (a chunk's high word stays within +-4096), and the chunk's 128-bit total adds
 * into the record's gp_i128; `sum` is that exact sum rounded once.
 *
 * Key mapping. The element <-> key maps below (key_f32 ... ) are inlined copies of
 * gp_key_of / gp_key_to_elem in common.c, used so that the per-element loops need no
 * function call; tests/test_cpu_kernels.c checks them bit for bit against common.c.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "cpu_merge.h"
#include "cpu_sort.h"
#include "gpuprim/kernels.h"
#include "cpu_twins.h"
#include "merge_path.h"
#include "psum.h"
#include "tuning.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- error reporting ------------------------------------------------------------------ */

/* The one-line message of the last failure ("" until something fails). Not thread-safe:
 * like the rest of the backend it assumes one calling thread per process. */
static char cpu_errbuf[256];

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int gp_cpu_fail(int code, const char *func, const char *file, int line, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(cpu_errbuf, sizeof cpu_errbuf, "%s: %s (%s) at %s:%d", func, msg,
             code == GP_ENOMEM ? "out of memory" : "bad argument", file, line);
    return code;
}

/* Records the failure in cpu_errbuf and evaluates to `code`. */
#define CPU_FAIL(code, ...) gp_cpu_fail((code), __func__, __FILE__, __LINE__, __VA_ARGS__)

/* ---- deterministic pairwise combination of chunk sums: psum.h ------------------------ */

/* ---- statistics ----------------------------------------------------------------------- */

/* Running state of one gp_cpu_stats pass. */
typedef struct stats_acc {
    int64_t nan_count;
    int64_t descents;
    uint64_t hash;
    uint64_t min_key, max_key; /* over non-NaN elements */
    uint64_t prev_key;         /* key of the element before the current chunk */
    psum sum, sumsq;
    gp_i128 isum;              /* integer types: the exact sum so far */
} stats_acc;

/* The running sums of one chunk (the file comment's lanes, and the integer sum's two
 * words) and the running order, hash and extremes, which STATS_CHUNK's loop keeps in
 * registers and an AVX2 prefix (below) hands over to it. */
typedef struct stats_lanes {
    double s[4], q[4];
    uint64_t ilo;
    int64_t ihi;
    uint64_t hash, kmin, kmax, prev;
    int64_t nans, desc;
} stats_lanes;

/* The lanes at the start of a chunk, from the running record. */
static stats_lanes lanes_start(const stats_acc *a)
{
    stats_lanes l;
    memset(&l, 0, sizeof l);
    l.hash = a->hash, l.kmin = a->min_key, l.kmax = a->max_key, l.prev = a->prev_key;
    return l;
}

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
 *   static void NAME##_from(const void *y, int64_t i0, int64_t i1, int hashing,
 *                           stats_acc *a, const stats_lanes *l)
 * which folds elements [i0, i1) of y, the rest of a chunk whose first elements are in the
 * lanes *l (i0 - the chunk's start a multiple of 4, so that element i0 goes to lane 0),
 * into *a (the hash only when hashing != 0); and
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
    static void NAME##_from(const void *y, int64_t i0, int64_t i1, int hashing,             \
                            stats_acc *a, const stats_lanes *l)                              \
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

STATS_CHUNK(stats_chunk_f32, uint32_t, float, gp_key_f32_bits, ISNAN_F32, TO_DOUBLE, 0, NEVER_NEG)
STATS_CHUNK(stats_chunk_f64, uint64_t, double, gp_key_f64_bits, ISNAN_F64, TO_DOUBLE, 0, NEVER_NEG)
STATS_CHUNK(stats_chunk_i32, uint32_t, int32_t, KEY_I32, NEVER_NAN, TO_DOUBLE, 1, IS_NEG)
STATS_CHUNK(stats_chunk_i64, uint64_t, int64_t, KEY_I64, NEVER_NAN, TO_DOUBLE, 1, IS_NEG)
STATS_CHUNK(stats_chunk_u32, uint32_t, uint32_t, KEY_ID, NEVER_NAN, TO_DOUBLE, 1, NEVER_NEG)
STATS_CHUNK(stats_chunk_u64, uint64_t, uint64_t, KEY_ID, NEVER_NAN, TO_DOUBLE, 1, NEVER_NEG)

/* ---- the statistics with AVX2 ------------------------------------------------------------ */

/* The same chunks, their first elements eight (4-byte types) or four (8-byte types) at a
 * time in AVX2 registers: the four float64 lanes of the file comment are the four lanes of
 * one register (element i0 + j still adds into lane j % 4, in the same order, with a
 * separate multiply and add, as the plain loop does: no FMA), the integer types' exact sum
 * goes through int64 lanes (with their carries for 8-byte types), and the hash, the
 * descents, the NaN count and the extremes are order-free. The result is therefore bit for
 * bit that of the plain loop, which finishes the chunk's last elements; gp_cpu_stats uses
 * these where the CPU has AVX2, and tests/test_cpu_kernels.c compares them with
 * gp_cpu_stats_ref, which never does. On the 2-core machine the statistics of 2^27 float32
 * took 0.20-0.23 s here against 0.46-0.55 s in the plain loop; of 2^26 float64 0.12 s
 * against 0.20-0.24 s. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define GP_STATS_AVX2 1
#include <immintrin.h>

#define AVX2_FN static inline __attribute__((target("avx2"), always_inline))

enum { K_F32, K_I32, K_U32 };

/* The low 64 bits of a * c per 64-bit lane (AVX2 has only the 32 x 32 -> 64 multiply). */
AVX2_FN __m256i mul64_avx2(__m256i a, uint64_t c)
{
    const __m256i clo = _mm256_set1_epi64x((long long)(c & 0xFFFFFFFFu));
    const __m256i chi = _mm256_set1_epi64x((long long)(c >> 32));
    const __m256i lo = _mm256_mul_epu32(a, clo);
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(a, chi),
                                           _mm256_mul_epu32(_mm256_srli_epi64(a, 32), clo));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}

/* gp_mix64 per 64-bit lane. */
AVX2_FN __m256i mix64_avx2(__m256i z)
{
    z = _mm256_add_epi64(z, _mm256_set1_epi64x((long long)0x9E3779B97F4A7C15ull));
    z = mul64_avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), 0xBF58476D1CE4E5B9ull);
    z = mul64_avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), 0x94D049BB133111EBull);
    return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}

/* Hands a prefix of n elements over to the lanes *l: its float64 lanes s and q (l's are
 * +0.0 still), its hash lanes (when hashing), its NaN count, and its extremes mn / mx when
 * some element is not NaN (an all-NaN prefix leaves l's extremes as they are). */
AVX2_FN void hand_over_avx2(stats_lanes *l, __m256d s, __m256d q, __m256i hash, int hashing,
                            int64_t n, int64_t nans, uint64_t mn, uint64_t mx)
{
    _mm256_storeu_pd(l->s, _mm256_add_pd(_mm256_loadu_pd(l->s), s));
    _mm256_storeu_pd(l->q, _mm256_add_pd(_mm256_loadu_pd(l->q), q));
    if (nans < n) {
        l->kmin = mn < l->kmin ? mn : l->kmin;
        l->kmax = mx > l->kmax ? mx : l->kmax;
    }
    l->nans += nans;
    if (hashing) {
        uint64_t h[4];
        _mm256_storeu_si256((__m256i *)h, hash);
        l->hash += h[0] + h[1] + h[2] + h[3];
    }
}

/* Elements [i0, i) of a chunk of 4-byte elements of kind K into *l, i the last multiple of
 * 8 past i0 within i1; returns i. */
AVX2_FN int64_t prefix4_avx2(const unsigned char *p, int64_t i0, int64_t i1, int hashing,
                             stats_lanes *l, int K)
{
    const int64_t n8 = (i1 - i0) / 8 * 8;
    if (n8 == 0) return i0;
    const __m256i sign = _mm256_set1_epi32((int)0x80000000u);
    const __m256i rot = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
    __m256d s = _mm256_setzero_pd(), q = _mm256_setzero_pd();
    __m256i isum = _mm256_setzero_si256(), hash = _mm256_setzero_si256();
    __m256i nans = _mm256_setzero_si256(), desc = _mm256_setzero_si256();
    __m256i kmin = _mm256_set1_epi32(-1), kmax = _mm256_setzero_si256();
    __m256i prev = _mm256_set1_epi32((int)(uint32_t)l->prev);
    for (int64_t i = i0; i < i0 + n8; i += 8) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(p + (size_t)i * 4));
        __m256i k, isnan = _mm256_setzero_si256();
        __m256d dlo, dhi;
        if (K == K_F32) {
            isnan = _mm256_cmpgt_epi32(_mm256_andnot_si256(sign, x), _mm256_set1_epi32(0x7F800000));
            k = _mm256_or_si256(_mm256_xor_si256(x, _mm256_or_si256(_mm256_srai_epi32(x, 31), sign)),
                                isnan);
            const __m256 f = _mm256_castsi256_ps(_mm256_andnot_si256(isnan, x)); /* NaN: +0 */
            dlo = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
            dhi = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
        } else {
            k = K == K_I32 ? _mm256_xor_si256(x, sign) : x;
            /* the values exactly: i32 directly, u32 as (u - 2^31) + 2^31 */
            const __m256i v = K == K_I32 ? x : _mm256_xor_si256(x, sign);
            dlo = _mm256_cvtepi32_pd(_mm256_castsi256_si128(v));
            dhi = _mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1));
            if (K == K_U32) {
                const __m256d two31 = _mm256_set1_pd(2147483648.0);
                dlo = _mm256_add_pd(dlo, two31);
                dhi = _mm256_add_pd(dhi, two31);
            }
            const __m128i xlo = _mm256_castsi256_si128(x), xhi = _mm256_extracti128_si256(x, 1);
            isum = _mm256_add_epi64(isum, K == K_I32 ? _mm256_cvtepi32_epi64(xlo) : _mm256_cvtepu32_epi64(xlo));
            isum = _mm256_add_epi64(isum, K == K_I32 ? _mm256_cvtepi32_epi64(xhi) : _mm256_cvtepu32_epi64(xhi));
        }
        if (K == K_F32) { /* elements i..i+3, then i+4..i+7: lane by lane in index order */
            s = _mm256_add_pd(s, dlo);
            s = _mm256_add_pd(s, dhi);
        }
        q = _mm256_add_pd(q, _mm256_mul_pd(dlo, dlo));
        q = _mm256_add_pd(q, _mm256_mul_pd(dhi, dhi));
        if (hashing) {
            hash = _mm256_add_epi64(hash, mix64_avx2(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(k))));
            hash = _mm256_add_epi64(hash, mix64_avx2(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(k, 1))));
        }
        /* the key before each: the previous vector's last, then this one's first seven */
        const __m256i before = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(k, rot),
                                                  _mm256_permutevar8x32_epi32(prev, rot), 1);
        desc = _mm256_sub_epi32(desc, _mm256_cmpgt_epi32(_mm256_xor_si256(before, sign),
                                                         _mm256_xor_si256(k, sign)));
        prev = k;
        nans = _mm256_sub_epi32(nans, isnan);
        kmin = _mm256_min_epu32(kmin, k); /* a NaN's key is all ones: never below */
        kmax = _mm256_max_epu32(kmax, _mm256_andnot_si256(isnan, k));
    }
    uint32_t u[8], v[8], w[8], c[8];
    uint64_t is[4];
    _mm256_storeu_si256((__m256i *)u, kmin);
    _mm256_storeu_si256((__m256i *)v, kmax);
    _mm256_storeu_si256((__m256i *)w, nans);
    _mm256_storeu_si256((__m256i *)c, desc);
    _mm256_storeu_si256((__m256i *)is, isum);
    int64_t nn = 0;
    uint32_t mn = 0xFFFFFFFFu, mx = 0;
    for (int j = 0; j < 8; j++) {
        nn += w[j];
        l->desc += c[j];
        mn = u[j] < mn ? u[j] : mn;
        mx = v[j] > mx ? v[j] : mx;
    }
    hand_over_avx2(l, s, q, hash, hashing, n8, nn, mn, mx);
    if (K != K_F32) { /* the prefix's exact sum S (|S| < 2^44), added as one element is */
        const int64_t S = (int64_t)(is[0] + is[1] + is[2] + is[3]);
        l->ilo += (uint64_t)S;
        l->ihi += (int64_t)(l->ilo < (uint64_t)S) - (int64_t)(S < 0);
    }
    l->prev = (uint32_t)_mm256_extract_epi32(prev, 7);
    return i0 + n8;
}

/* The unsigned minimum (max = 0) or maximum (max = 1) of two vectors of 64-bit lanes. */
AVX2_FN __m256i minmax_u64_avx2(__m256i a, __m256i b, int max)
{
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    const __m256i a_gt_b = _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
    return max ? _mm256_blendv_epi8(b, a, a_gt_b) : _mm256_blendv_epi8(a, b, a_gt_b);
}

/* 4 32-bit halves (the high ones when hi, else the low ones) of 4 64-bit lanes, as float64:
 * signed (sgn) or unsigned. Exact. */
AVX2_FN __m256d half_pd_avx2(__m256i x, int hi, int sgn)
{
    const __m256i pick = hi ? _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)
                            : _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m128i h = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x, pick));
    if (sgn) return _mm256_cvtepi32_pd(h);
    return _mm256_add_pd(_mm256_cvtepi32_pd(_mm_xor_si128(h, _mm_set1_epi32((int)0x80000000u))),
                         _mm256_set1_pd(2147483648.0));
}

/* Elements [i0, i) of a chunk of 8-byte elements of kind K (K_F32 .. K_U32 standing for
 * f64, i64, u64) into *l, i the last multiple of 4 past i0 within i1; returns i. An
 * integer's float64 value is hi * 2^32 + lo from its exact halves: the product is exact
 * and the sum rounds once, as (double)value does. Its exact sum: per lane the low word,
 * its carries, and (i64) its negative elements, folded at the end. */
AVX2_FN int64_t prefix8_avx2(const unsigned char *p, int64_t i0, int64_t i1, int hashing,
                             stats_lanes *l, int K)
{
    const int64_t n4 = (i1 - i0) / 4 * 4;
    if (n4 == 0) return i0;
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    const __m256i zero = _mm256_setzero_si256();
    const __m256d two32 = _mm256_set1_pd(4294967296.0);
    __m256d s = _mm256_setzero_pd(), q = _mm256_setzero_pd();
    __m256i lo = zero, carry = zero, neg = zero, hash = zero, nans = zero, desc = zero;
    __m256i kmin = _mm256_set1_epi64x(-1), kmax = zero;
    __m256i prev = _mm256_set1_epi64x((long long)l->prev);
    for (int64_t i = i0; i < i0 + n4; i += 4) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(p + (size_t)i * 8));
        __m256i k, isnan = zero;
        __m256d d;
        if (K == K_F32) { /* f64 */
            isnan = _mm256_cmpgt_epi64(_mm256_andnot_si256(sign, x),
                                       _mm256_set1_epi64x(0x7FF0000000000000ll));
            const __m256i negx = _mm256_cmpgt_epi64(zero, x);
            k = _mm256_or_si256(_mm256_xor_si256(x, _mm256_or_si256(negx, sign)), isnan);
            d = _mm256_castsi256_pd(_mm256_andnot_si256(isnan, x)); /* NaN: +0 */
        } else {
            k = K == K_I32 ? _mm256_xor_si256(x, sign) : x;
            d = _mm256_add_pd(_mm256_mul_pd(half_pd_avx2(x, 1, K == K_I32), two32),
                              half_pd_avx2(x, 0, 0));
            lo = _mm256_add_epi64(lo, x);
            /* a carry where the new low word is below the element (unsigned) */
            carry = _mm256_sub_epi64(carry, _mm256_cmpgt_epi64(_mm256_xor_si256(x, sign),
                                                               _mm256_xor_si256(lo, sign)));
            if (K == K_I32) neg = _mm256_sub_epi64(neg, _mm256_cmpgt_epi64(zero, x));
        }
        if (K == K_F32) s = _mm256_add_pd(s, d);
        q = _mm256_add_pd(q, _mm256_mul_pd(d, d));
        if (hashing) hash = _mm256_add_epi64(hash, mix64_avx2(k));
        const __m256i before = _mm256_blend_epi32(_mm256_permute4x64_epi64(k, 0x93),
                                                  _mm256_permute4x64_epi64(prev, 0x93), 0x03);
        desc = _mm256_sub_epi64(desc, _mm256_cmpgt_epi64(_mm256_xor_si256(before, sign),
                                                         _mm256_xor_si256(k, sign)));
        prev = k;
        nans = _mm256_sub_epi64(nans, isnan);
        kmin = minmax_u64_avx2(kmin, k, 0); /* a NaN's key is all ones: never below */
        kmax = minmax_u64_avx2(kmax, _mm256_andnot_si256(isnan, k), 1);
    }
    uint64_t u[4], v[4], w[4], c[4], lw[4], cw[4], nw[4];
    _mm256_storeu_si256((__m256i *)u, kmin);
    _mm256_storeu_si256((__m256i *)v, kmax);
    _mm256_storeu_si256((__m256i *)w, nans);
    _mm256_storeu_si256((__m256i *)c, desc);
    _mm256_storeu_si256((__m256i *)lw, lo);
    _mm256_storeu_si256((__m256i *)cw, carry);
    _mm256_storeu_si256((__m256i *)nw, neg);
    int64_t nn = 0;
    uint64_t mn = UINT64_MAX, mx = 0;
    for (int j = 0; j < 4; j++) {
        nn += (int64_t)w[j];
        l->desc += (int64_t)c[j];
        mn = u[j] < mn ? u[j] : mn;
        mx = v[j] > mx ? v[j] : mx;
        if (K != K_F32) { /* lane j's exact sum: (carries - negatives) * 2^64 + low word */
            l->ilo += lw[j];
            l->ihi += (int64_t)(l->ilo < lw[j]) + (int64_t)cw[j] - (int64_t)nw[j];
        }
    }
    hand_over_avx2(l, s, q, hash, hashing, n4, nn, mn, mx);
    l->prev = (uint64_t)_mm256_extract_epi64(prev, 3);
    return i0 + n4;
}

#define STATS_CHUNK_AVX2(NAME, PREFIX, K)                                                    \
    __attribute__((target("avx2"))) static void NAME##_avx2(const void *y, int64_t i0,      \
                                                            int64_t i1, int hashing,         \
                                                            stats_acc *a)                    \
    {                                                                                        \
        stats_lanes l = lanes_start(a);                                                      \
        const int64_t i = PREFIX((const unsigned char *)y, i0, i1, hashing, &l, K);          \
        NAME##_from(y, i, i1, hashing, a, &l);                                               \
    }
STATS_CHUNK_AVX2(stats_chunk_f32, prefix4_avx2, K_F32)
STATS_CHUNK_AVX2(stats_chunk_i32, prefix4_avx2, K_I32)
STATS_CHUNK_AVX2(stats_chunk_u32, prefix4_avx2, K_U32)
STATS_CHUNK_AVX2(stats_chunk_f64, prefix8_avx2, K_F32)
STATS_CHUNK_AVX2(stats_chunk_i64, prefix8_avx2, K_I32)
STATS_CHUNK_AVX2(stats_chunk_u64, prefix8_avx2, K_U32)

/* 1 when this CPU runs AVX2 (asked once). */
static int have_avx2(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return known;
}
#else
#define GP_STATS_AVX2 0
#endif

/* Statistics of y[0, n) — the CPU twin of gp_backend.stats.
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
 * Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL y with n > 0, NULL out, unknown flags). */
/* gp_cpu_stats with the plain chunk loops (simd = 0) or, where the CPU has AVX2, the AVX2
 * ones (simd = 1): the same result bit for bit. */
static int stats_run(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out,
                     int simd)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!out) return CPU_FAIL(GP_EINVAL, "out is NULL");
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (flags & ~(GP_STATS_ORDER | GP_STATS_NOHASH))
        return CPU_FAIL(GP_EINVAL, "unknown flags 0x%x", flags);

    const int order = (flags & GP_STATS_ORDER) != 0;
    if (n == 0) {
        *out = gp_stats_empty();
        out->has_x = 0;
        out->order_valid = order;
        out->has_isum = !gp_dtype_is_float(t);
        return GP_OK;
    }

    void (*chunk)(const void *, int64_t, int64_t, int, stats_acc *) = NULL;
    switch (t) {
    case GP_F32: chunk = stats_chunk_f32; break;
    case GP_F64: chunk = stats_chunk_f64; break;
    case GP_I32: chunk = stats_chunk_i32; break;
    case GP_I64: chunk = stats_chunk_i64; break;
    case GP_U32: chunk = stats_chunk_u32; break;
    case GP_U64: chunk = stats_chunk_u64; break;
    default: return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    }
#if GP_STATS_AVX2
    if (simd && have_avx2()) {
        if (t == GP_F32) chunk = stats_chunk_f32_avx2;
        else if (t == GP_I32) chunk = stats_chunk_i32_avx2;
        else if (t == GP_U32) chunk = stats_chunk_u32_avx2;
        else if (t == GP_F64) chunk = stats_chunk_f64_avx2;
        else if (t == GP_I64) chunk = stats_chunk_i64_avx2;
        else chunk = stats_chunk_u64_avx2;
    }
#else
    (void)simd;
#endif

    const size_t es = gp_dtype_size(t);
    const uint64_t first_key = gp_key_of(t, y);
    const uint64_t last_key = gp_key_of(t, (const unsigned char *)y + (size_t)(n - 1) * es);

    stats_acc a;
    a.nan_count = 0;
    a.descents = 0;
    a.hash = 0;
    a.min_key = UINT64_MAX;
    a.max_key = 0;
    a.prev_key = first_key; /* so element 0 never counts as a descent */
    psum_init(&a.sum);
    psum_init(&a.sumsq);
    a.isum = gp_i128_from_i64(0);
    for (int64_t c = 0; c < n; c += GP_CPU_CHUNK) {
        int64_t e = (n - c > GP_CPU_CHUNK) ? c + GP_CPU_CHUNK : n;
        chunk(y, c, e, !(flags & GP_STATS_NOHASH), &a);
    }

    gp_stats s;
    memset(&s, 0, sizeof s);
    s.count = n;
    s.nan_count = a.nan_count;
    s.has_isum = !gp_dtype_is_float(t);
    s.isum = a.isum;
    s.sum = s.has_isum ? gp_i128_to_double(a.isum) : psum_total(&a.sum);
    s.sumsq = psum_total(&a.sumsq);
    s.min_key = a.min_key;
    s.max_key = a.max_key;
    s.hash = a.hash;
    s.first_key = first_key;
    s.last_key = last_key;
    s.descents = order ? a.descents : 0;
    s.yfirst = gp_elem_to_double(t, y);
    s.ylast = gp_elem_to_double(t, (const unsigned char *)y + (size_t)(n - 1) * gp_dtype_size(t));
    s.trap = 0.0;
    s.xfirst = 0.0;
    s.xlast = 0.0;
    s.has_x = 0;
    s.order_valid = order;
    if (flags & GP_STATS_NOHASH) s.hash = 0;
    *out = s;
    return GP_OK;
}

int gp_cpu_stats(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out)
{
    return stats_run(t, y, n, flags, out, 1);
}

int gp_cpu_stats_ref(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out)
{
    return stats_run(t, y, n, flags, out, 0);
}

/* ---- trapezoid rules ------------------------------------------------------------------- */

/* dst[j] = (double)y[i0 + j] for j in [0, cnt), switching on the type once. */
static void load_doubles(gp_dtype t, const void *y, int64_t i0, int64_t cnt, double *dst)
{
    const unsigned char *p = (const unsigned char *)y + (size_t)i0 * gp_dtype_size(t);
#define LOAD_AS(CT)                                                                         \
    for (int64_t j = 0; j < cnt; j++) {                                                     \
        CT v;                                                                               \
        memcpy(&v, p + (size_t)j * sizeof(CT), sizeof(CT));                                 \
        dst[j] = (double)v;                                                                 \
    }                                                                                       \
    break;
    switch (t) {
    case GP_F32: LOAD_AS(float)
    case GP_F64: LOAD_AS(double)
    case GP_I32: LOAD_AS(int32_t)
    case GP_I64: LOAD_AS(int64_t)
    case GP_U32: LOAD_AS(uint32_t)
    case GP_U64: LOAD_AS(uint64_t)
    default: break;
    }
#undef LOAD_AS
}

/* Trapezoid rule over non-uniform samples — the CPU twin of gp_backend.trap_x.
 *
 * t: type of y; y: n elements of type t; x: n float64 coordinates (host memory; either may
 * be NULL only when n == 0); io: in/out record.
 * Sets io->trap = sum over i in [0, n-1) of (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (y as
 * (double)value; terms summed in the fixed order of the file comment, term i being the
 * pair (i, i+1)), io->xfirst = x[0], io->xlast = x[n-1] and io->has_x = 1; every other
 * field of *io is left as it was. For n == 0: trap = xfirst = xlast = 0 and has_x = 1
 * (like gp_stats_empty(), so that an empty piece never clears has_x in a combine); for
 * n == 1: trap = 0, xfirst = xlast = x[0]. x need not be sorted; NaN/inf propagate.
 * Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL pointers). */
int gp_cpu_trap_x(gp_dtype t, const void *y, const double *x, int64_t n, gp_stats *io)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!io) return CPU_FAIL(GP_EINVAL, "io is NULL");
    if (n > 0 && (!y || !x))
        return CPU_FAIL(GP_EINVAL, "%s is NULL with n = %lld", !y ? "y" : "x", (long long)n);

    if (n == 0) {
        io->trap = 0.0;
        io->xfirst = 0.0;
        io->xlast = 0.0;
        io->has_x = 1;
        return GP_OK;
    }

    double yb[GP_CPU_CHUNK + 1]; /* y[c .. c+len] as double */
    psum acc;
    psum_init(&acc);
    const int64_t nterms = n - 1;
    for (int64_t c = 0; c < nterms; c += GP_CPU_CHUNK) {
        const int64_t len = (nterms - c > GP_CPU_CHUNK) ? GP_CPU_CHUNK : nterms - c;
        load_doubles(t, y, c, len + 1, yb);
        double l[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t j = 0; j < len; j++)
            l[j & 3] += (x[c + j + 1] - x[c + j]) * (yb[j] + yb[j + 1]) * 0.5;
        psum_push(&acc, (l[0] + l[1]) + (l[2] + l[3]));
    }
    io->trap = psum_total(&acc);
    io->xfirst = x[0];
    io->xlast = x[n - 1];
    io->has_x = 1;
    return GP_OK;
}

/* Weighted trapezoid sum of a built-in integrand — the CPU twin of gp_backend.trap_fn.
 *
 * f: integrand; a: left end; h: step (> 0 for an ordinary integral, any value accepted);
 * n: number of trapezoids (the points are i = 0..n, x_i = a + (double)i * h in float64);
 * [i0, i1): the points this caller owns, 0 <= i0 <= i1 <= n+1.
 * *wsum = sum over i in [i0, i1) of w_i * f(x_i) with w_i = 1/2 when i == 0 or i == n and
 * 1 otherwise (so with n == 0 the single point has weight 1/2); terms summed in the fixed
 * order of the file comment, chunks counted from i0. The integral over [a, a + n*h] is h
 * times the sum of all callers' wsum. f is evaluated with gp_func_eval (libm, double).
 * Returns GP_OK, or GP_EINVAL (unknown f, n < 0, bad range, NULL wsum). */
int gp_cpu_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                   double *wsum)
{
    if ((unsigned)f >= GP_NFUNCS) return CPU_FAIL(GP_EINVAL, "unknown integrand %d", (int)f);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!wsum) return CPU_FAIL(GP_EINVAL, "wsum is NULL");
    if (!(0 <= i0 && i0 <= i1 && i1 - 1 <= n)) /* i1 <= n+1 without overflowing n+1 */
        return CPU_FAIL(GP_EINVAL, "range [%lld, %lld) not inside [0, n+1] with n = %lld",
                        (long long)i0, (long long)i1, (long long)n);

    psum acc;
    psum_init(&acc);
    for (int64_t c = i0; c < i1; c += GP_CPU_CHUNK) {
        const int64_t e = (i1 - c > GP_CPU_CHUNK) ? c + GP_CPU_CHUNK : i1;
        double l[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t i = c; i < e; i++) {
            const double w = (i == 0 || i == n) ? 0.5 : 1.0;
            l[(i - c) & 3] += w * gp_func_eval(f, a + (double)i * h);
        }
        psum_push(&acc, (l[0] + l[1]) + (l[2] + l[3]));
    }
    *wsum = psum_total(&acc);
    return GP_OK;
}

/* ---- order keys ------------------------------------------------------------------------ */

/* Maps buf[0, n) (type t, host memory) in place to its order keys — the CPU twin of
 * gp_backend.to_keys. Afterwards buf holds n uint32_t keys for 4-byte types or n uint64_t
 * keys for 8-byte types, each equal to gp_key_of(t, &element) (see gpuprim/kernels.h: floats
 * flip to a sign-magnitude order with every NaN -> all ones, signed ints flip the sign
 * bit, unsigned ints are unchanged). Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL buf
 * with n > 0). */
int gp_cpu_to_keys(gp_dtype t, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, 0, 0, buf, n); /* gp_cpu_keys, cpu_sort.c */
}

/* Maps n keys in buf (uint32_t for 4-byte t, uint64_t for 8-byte t) in place back to
 * elements of type t — the CPU twin of gp_backend.from_keys; the inverse of
 * gp_cpu_to_keys, equal to gp_key_to_elem per element: every non-NaN element comes back
 * bit for bit, the NaN key (all ones) becomes the default quiet NaN 0x7FC00000 /
 * 0x7FF8000000000000. Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL buf with n > 0). */
int gp_cpu_from_keys(gp_dtype t, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, 0, 1, buf, n);
}

/* ---- sorting ---------------------------------------------------------------------------- */

/* Sorts n unsigned keys ascending in place — the CPU twin of gp_backend.sort_keys.
 *
 * width: 4 (keys are uint32_t) or 8 (uint64_t); keys: n keys (host memory; may be NULL
 * only when n == 0). gp_cpu_sort with no values (cpu_sort.c: LSD radix sort, 11-bit
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

/* Key i of an array of unsigned keys of `width` bytes (4 or 8). */
static uint64_t key_at(const void *k, int width, int64_t i)
{
    return width == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

/* Merge-split of two ascending key arrays — the CPU twin of gp_backend.merge_split_keys.
 *
 * width: 4 (uint32_t keys) or 8 (uint64_t); lo: nlo ascending keys (the lower rank's);
 * hi: nhi ascending keys; m: slots per rank, nlo <= m and nhi <= m; out: room for m keys,
 * must not overlap lo or hi; *nout: keys written.
 * keep_upper == 0: out[0, c) = merged[0, c) with c = min(m, nlo+nhi); keep_upper != 0:
 * out[0, c) = merged[m, nlo+nhi) with c = max(0, nlo+nhi-m). Both halves are a forward,
 * branch-free merge of four segments cut at merge-path splits (cpu_merge.h; the upper half
 * starts at the split of merged[m], its first m merged keys are never visited) that stops
 * after c keys (gp_cpu_merge_split with no values, cpu_sort.c). O(c + log m) time;
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

void gp_cpu_merge_cuts(int width, const void *lo, const uint64_t *lv, int64_t nlo,
                       const void *hi, const uint64_t *hv, int64_t nhi, int64_t r0, int64_t cnt,
                       int stable, int64_t I[5], int64_t J[5])
{
    for (int s = 0; s <= 4; s++) {
        const int64_t r = r0 + (s == 4 ? cnt : s * (cnt / 4));
        (void)gp_cpu_merge_path(width, lo, lv, nlo, hi, hv, nhi, r, stable, &I[s]);
        J[s] = r - I[s];
    }
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

/* ---- the backend table ------------------------------------------------------------------ */

/* "Device" memory of the CPU backend: gp_cpu_big_alloc (cpu_sort.h: malloc, or from 4 MiB
 * on 2 MiB-aligned memory advised for huge pages, whose first touch costs a fraction of
 * that of 4 KiB pages); 0 bytes gives a unique 1-byte block. NULL with last_error() set
 * ("malloc(N bytes): strerror") on failure. */
static void *cpu_alloc(size_t bytes)
{
    void *p = gp_cpu_big_alloc(bytes);
    if (!p) (void)CPU_FAIL(GP_ENOMEM, "malloc(%zu bytes): %s", bytes, strerror(errno));
    return p;
}
static void cpu_free(void *p) { free(p); }

/* Host<->"device" copies are plain memcpy; NULL pointers are rejected unless bytes == 0. */
static int cpu_upload(void *dev, const void *host, size_t bytes)
{
    if (bytes == 0) return GP_OK;
    if (!dev || !host) return CPU_FAIL(GP_EINVAL, "NULL pointer with %zu bytes", bytes);
    memcpy(dev, host, bytes);
    return GP_OK;
}
static int cpu_download(void *host, const void *dev, size_t bytes)
{
    if (bytes == 0) return GP_OK;
    if (!dev || !host) return CPU_FAIL(GP_EINVAL, "NULL pointer with %zu bytes", bytes);
    memcpy(host, dev, bytes);
    return GP_OK;
}

static const char *cpu_last_error(void) { return cpu_errbuf; }

/* ---- memory of the CPU backend (host memory) ------------------------------------------- */

int gp_mem_limit_env(size_t *free_bytes, char *why, size_t whylen)
{
    const gp_tuning *t = gp_tuning_get();
    if (t->mem_limit_error[0]) {
        if (why && whylen > 0) snprintf(why, whylen, "%s", t->mem_limit_error);
        return -1;
    }
    if (free_bytes && t->mem_limit_set && t->mem_limit < (uint64_t)*free_bytes)
        *free_bytes = (size_t)t->mem_limit;
    return 0;
}

/* The first number of the one-line file `path` (a cgroup control file) into *v. Returns 0,
 * or -1 when the file cannot be read or holds no number ("max": no limit). */
static int read_u64_file(const char *path, uint64_t *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned long long x = 0;
    int n = fscanf(f, "%llu", &x);
    fclose(f);
    if (n != 1) return -1;
    *v = (uint64_t)x;
    return 0;
}

/* MemAvailable of /proc/meminfo in bytes into *v. Returns 0, or -1 when it is not there. */
static int meminfo_available(uint64_t *v)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kb = 0;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            *v = kb > UINT64_MAX / 1024 ? UINT64_MAX : (uint64_t)kb * 1024;
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* gp_backend.mem_info of the CPU backend (meaning: gpuprim/kernels.h): host memory. */
static int cpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes) return CPU_FAIL(GP_EINVAL, "NULL output pointer");
    uint64_t total = UINT64_MAX, avail = UINT64_MAX, v = 0;
    const long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) total = (uint64_t)pages * (uint64_t)psz;
    if (meminfo_available(&v) == 0) {
        avail = v;
    } else {
        const long av = sysconf(_SC_AVPHYS_PAGES);
        if (av > 0 && psz > 0) avail = (uint64_t)av * (uint64_t)psz;
    }
    /* a cgroup memory limit (containers, Slurm jobs): the room left under it */
    static const char *const lims[2][2] = {
        {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
    for (int k = 0; k < 2; k++) {
        uint64_t lim = 0, used = 0;
        if (read_u64_file(lims[k][0], &lim) != 0) continue;
        if (lim >= total) break; /* no limit below the machine's memory (v1: a huge number) */
        total = lim;
        if (read_u64_file(lims[k][1], &used) != 0) used = 0;
        const uint64_t room = lim > used ? lim - used : 0;
        if (room < avail) avail = room;
        break;
    }
    if (avail > total) avail = total;
    size_t f = avail > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)avail;
    const size_t t = total > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)total;
    char why[128];
    if (gp_mem_limit_env(&f, why, sizeof why) != 0) return CPU_FAIL(GP_EINVAL, "%s", why);
    *free_bytes = f;
    *total_bytes = t;
    return GP_OK;
}

/* gp_backend.upload_wait / download_wait / synchronize of the CPU backend: its
 * upload_async and download_async (cpu_upload, cpu_download) are done on return, and it
 * has no device work in flight. */
static int cpu_done(void) { return GP_OK; }

/* gp_backend.copy of the CPU backend: memcpy ("device" memory is host memory). */
static int cpu_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return GP_OK;
    if (!dst || !src) return CPU_FAIL(GP_EINVAL, "NULL pointer with %zu bytes", bytes);
    memcpy(dst, src, bytes);
    return GP_OK;
}

/* gp_backend.ipc_get / ipc_open / ipc_close of the CPU backend: no inter-process mapping of
 * malloc memory (the rank exchange maps host memory through MPI shared-memory windows). */
static int cpu_ipc_get(void *dev, void *handle)
{
    (void)dev, (void)handle;
    return CPU_FAIL(GP_EINVAL, "inter-process mapping is not supported by the CPU backend");
}
static int cpu_ipc_open(const void *handle, void **dev)
{
    (void)handle, (void)dev;
    return CPU_FAIL(GP_EINVAL, "inter-process mapping is not supported by the CPU backend");
}
static int cpu_ipc_close(void *dev)
{
    (void)dev;
    return CPU_FAIL(GP_EINVAL, "inter-process mapping is not supported by the CPU backend");
}

/* ---- the table's sort entries over the twins (keys only or with values, either order) -- */

/* gp_backend.to_keys / from_keys: the ascending or the descending twin. */
static int cpu_to_keys(gp_dtype t, gp_order order, void *buf, int64_t n)
{
    if (order != GP_ASCENDING && order != GP_DESCENDING)
        return CPU_FAIL(GP_EINVAL, "order = %d, not GP_ASCENDING or GP_DESCENDING", (int)order);
    return order == GP_DESCENDING ? gp_cpu_to_keys_desc(t, buf, n) : gp_cpu_to_keys(t, buf, n);
}
static int cpu_from_keys(gp_dtype t, gp_order order, void *buf, int64_t n)
{
    if (order != GP_ASCENDING && order != GP_DESCENDING)
        return CPU_FAIL(GP_EINVAL, "order = %d, not GP_ASCENDING or GP_DESCENDING", (int)order);
    return order == GP_DESCENDING ? gp_cpu_from_keys_desc(t, buf, n) : gp_cpu_from_keys(t, buf, n);
}

/* gp_backend.sort: keys only when vals is NULL (stable ignored), else the pairs twin. */
static int cpu_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    return vals ? gp_cpu_sort_pairs(width, keys, vals, n, stable) : gp_cpu_sort_keys(width, keys, n);
}

/* gp_backend.merge_split: keys only when every value pointer is NULL (stable ignored), else
 * the pairs twin (which checks the value pointers). */
static int cpu_merge_split(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                           const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t m,
                           int keep_upper, int stable, void *out_keys, uint64_t *out_vals,
                           int64_t *nout)
{
    if (!lo_vals && !hi_vals && !out_vals)
        return gp_cpu_merge_split_keys(width, lo_keys, nlo, hi_keys, nhi, m, keep_upper,
                                       out_keys, nout);
    return gp_cpu_merge_split_pairs(width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, m,
                                    keep_upper, stable, out_keys, out_vals, nout);
}

static const gp_backend cpu_backend = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .host_alloc = cpu_alloc,
    .host_free = cpu_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .stats = gp_cpu_stats,
    .trap_x = gp_cpu_trap_x,
    .trap_fn = gp_cpu_trap_fn,
    .to_keys = cpu_to_keys,
    .from_keys = cpu_from_keys,
    .sort = cpu_sort,
    .merge_split = cpu_merge_split,
    .last_error = cpu_last_error,
    .exact_sum = gp_cpu_exact_sum,
    .mem_info = cpu_mem_info,
    .upload_async = cpu_upload,
    .upload_wait = cpu_done,
    .sort_values = gp_cpu_sort_values,
    .caps = GP_CAP_HOST_MEMORY,
    .copy = cpu_copy,
    .download_async = cpu_download,
    .download_wait = cpu_done,
    .merge_path = gp_cpu_merge_path,
    .ipc_get = cpu_ipc_get,
    .ipc_open = cpu_ipc_open,
    .ipc_close = cpu_ipc_close,
    .synchronize = cpu_done,
    .sort_spare = gp_cpu_sort_spare,
};

/* The CPU backend: a static table whose memory functions are malloc/free (alloc(0) and
 * host_alloc(0) return a unique 1-byte block), whose upload/download/copy are memcpy and
 * whose kernels are the gp_cpu_* twins above, whose mem_info reports host memory
 * (cpu_mem_info), whose caps say GP_CAP_HOST_MEMORY (its ipc_* entries fail, GP_EINVAL);
 * last_error() returns the message of the last failure of any of them ("" when none).
 * Never NULL. */
const gp_backend *gp_backend_cpu(void) { return &cpu_backend; }
