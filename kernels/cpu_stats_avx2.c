/* cpu_stats_avx2.c — gp_cpu_stats, the CPU statistics the backend table runs: the plain
 * chunk loops of cpu_stats_ref.c, their first elements taken eight (4-byte types) or four
 * (8-byte types) at a time in AVX2 registers where the CPU has AVX2 (asked once), the
 * reference loops elsewhere. The record is bit for bit that of gp_cpu_stats_ref
 * (tests/test_cpu_kernels.c compares them); bench/RESULTS.md has the timings.
 */
#include "cpu_common.h"
#include "cpu_stats.h"
#include "cpu_twins.h"

#include <string.h>

/* ---- the chunk loops with AVX2 ------------------------------------------------------------ */

/* The same chunks, their first elements eight (4-byte types) or four (8-byte types) at a
 * time in AVX2 registers: the four float64 lanes of the file comment are the four lanes of
 * one register (element i0 + j still adds into lane j % 4, in the same order, with a
 * separate multiply and add, as the plain loop does: no FMA), the integer types' exact sum
 * goes through int64 lanes (with their carries for 8-byte types), and the hash, the
 * descents, the NaN count and the extremes are order-free. The result is therefore bit for
 * bit that of the plain loop, which finishes the chunk's last elements; gp_cpu_stats uses
 * these where the CPU has AVX2, and tests/test_cpu_kernels.c compares them with
 * gp_cpu_stats_ref, which never does. On the 2-core test machine they took about half the
 * plain loop's time (bench/RESULTS.md). */
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

/* Hands a prefix of n 4-byte elements over to the lanes *l: its eight lanes of extremes,
 * NaN counts and descents folded, with its float64 lanes and hash (hand_over_avx2). */
AVX2_FN void fold8_avx2(stats_lanes *l, __m256d s, __m256d q, __m256i hash, int hashing,
                        int64_t n, __m256i kmin, __m256i kmax, __m256i nans, __m256i desc)
{
    uint32_t u[8], v[8], w[8], c[8];
    _mm256_storeu_si256((__m256i *)u, kmin);
    _mm256_storeu_si256((__m256i *)v, kmax);
    _mm256_storeu_si256((__m256i *)w, nans);
    _mm256_storeu_si256((__m256i *)c, desc);
    int64_t nn = 0;
    uint32_t mn = 0xFFFFFFFFu, mx = 0;
    for (int j = 0; j < 8; j++) {
        nn += w[j];
        l->desc += c[j];
        mn = u[j] < mn ? u[j] : mn;
        mx = v[j] > mx ? v[j] : mx;
    }
    hand_over_avx2(l, s, q, hash, hashing, n, nn, mn, mx);
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
            isnan = _mm256_cmpgt_epi32(_mm256_andnot_si256(sign, x),
                                       _mm256_set1_epi32(0x7F800000));
            const __m256i flip = _mm256_or_si256(_mm256_srai_epi32(x, 31), sign);
            k = _mm256_or_si256(_mm256_xor_si256(x, flip), isnan);
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
            isum = _mm256_add_epi64(isum, K == K_I32 ? _mm256_cvtepi32_epi64(xlo)
                                                     : _mm256_cvtepu32_epi64(xlo));
            isum = _mm256_add_epi64(isum, K == K_I32 ? _mm256_cvtepi32_epi64(xhi)
                                                     : _mm256_cvtepu32_epi64(xhi));
        }
        if (K == K_F32) { /* elements i..i+3, then i+4..i+7: lane by lane in index order */
            s = _mm256_add_pd(s, dlo);
            s = _mm256_add_pd(s, dhi);
        }
        q = _mm256_add_pd(q, _mm256_mul_pd(dlo, dlo));
        q = _mm256_add_pd(q, _mm256_mul_pd(dhi, dhi));
        if (hashing) {
            const __m256i klo = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(k));
            const __m256i khi = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(k, 1));
            hash = _mm256_add_epi64(hash, mix64_avx2(klo));
            hash = _mm256_add_epi64(hash, mix64_avx2(khi));
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
    fold8_avx2(l, s, q, hash, hashing, n8, kmin, kmax, nans, desc);
    uint64_t is[4];
    _mm256_storeu_si256((__m256i *)is, isum);
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
STATS_CHUNK_AVX2(gp_cpu_stats_f32, prefix4_avx2, K_F32)
STATS_CHUNK_AVX2(gp_cpu_stats_i32, prefix4_avx2, K_I32)
STATS_CHUNK_AVX2(gp_cpu_stats_u32, prefix4_avx2, K_U32)
STATS_CHUNK_AVX2(gp_cpu_stats_f64, prefix8_avx2, K_F32)
STATS_CHUNK_AVX2(gp_cpu_stats_i64, prefix8_avx2, K_I32)
STATS_CHUNK_AVX2(gp_cpu_stats_u64, prefix8_avx2, K_U32)

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

/* The AVX2 chunk loop of element type t where this CPU runs AVX2; else (and for an invalid
 * t) NULL, the plain loops. */
static stats_chunk_fn avx2_chunk(gp_dtype t)
{
#if GP_STATS_AVX2
    if (!have_avx2()) return NULL;
    switch (t) {
    case GP_F32: return gp_cpu_stats_f32_avx2;
    case GP_I32: return gp_cpu_stats_i32_avx2;
    case GP_U32: return gp_cpu_stats_u32_avx2;
    case GP_F64: return gp_cpu_stats_f64_avx2;
    case GP_I64: return gp_cpu_stats_i64_avx2;
    case GP_U64: return gp_cpu_stats_u64_avx2;
    default: return NULL;
    }
#else
    (void)t;
    return NULL;
#endif
}

/* Statistics of y[0, n) — the CPU twin of gp_backend.stats: gp_cpu_stats_ref's meaning and
 * record, bit for bit (cpu_stats_ref.c documents both), with the AVX2 chunk loops above
 * where the CPU has AVX2. Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL y with n > 0,
 * NULL out, unknown flags). */
int gp_cpu_stats(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out)
{
    return gp_cpu_stats_run(__func__, t, y, n, flags, out, avx2_chunk(t));
}
