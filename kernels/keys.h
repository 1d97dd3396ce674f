/* keys.h — host/device inline helpers of the order keys and exact sums (one copy for every
 * backend, like the key maps in gpuprim/kernels.h): descending order keys and the split of one
 * term of an exact sum into the digits of the Kulisch accumulator (gpuprim/exact_sum.h).
 *
 * Compiled for host and device when read by nvcc (GP_HD); plain C11 otherwise. Not part of
 * the public contract (gpuprim/exact_sum.h is), but safe to include anywhere gpuprim/kernels.h is.
 */
#ifndef GP_KEYS_EXT_H
#define GP_KEYS_EXT_H

#include "gpuprim/kernels.h"

/* ---- descending order keys ------------------------------------------------------------
 * desc(k) = k when the type is a float type and k is the NaN key (all ones), else ~k.
 * For a float type the key 0 never occurs (a positive element's key has the top bit set,
 * a negative one's is ~bits, 0 only for the all-ones pattern, which is a NaN), so desc
 * is an involution on the keys that occur: undesc = desc. For integer types ~k is a
 * bijection. Ascending order of desc keys = descending value order, NaNs last, and among
 * non-NaN floats the exact reverse of the ascending order (+0.0 before -0.0). */

/* Descending key of a 4-byte ascending key k; is_float: 1 for GP_F32, else 0. */
static inline GP_HD uint32_t gp_desc_key32(uint32_t k, int is_float)
{
    return (is_float && k == 0xFFFFFFFFu) ? k : ~k;
}
/* Descending key of an 8-byte ascending key k; is_float: 1 for GP_F64, else 0. */
static inline GP_HD uint64_t gp_desc_key64(uint64_t k, int is_float)
{
    return (is_float && k == ~0ull) ? k : ~k;
}
/* Float bit patterns <-> descending keys (gp_key_f32_bits / gp_unkey_f32_bits composed with
 * desc; the NaN key comes back as the default quiet NaN). */
static inline GP_HD uint32_t gp_desc_key_f32_bits(uint32_t u) { return gp_desc_key32(gp_key_f32_bits(u), 1); }
static inline GP_HD uint64_t gp_desc_key_f64_bits(uint64_t u) { return gp_desc_key64(gp_key_f64_bits(u), 1); }
static inline GP_HD uint32_t gp_desc_unkey_f32_bits(uint32_t k) { return gp_unkey_f32_bits(gp_desc_key32(k, 1)); }
static inline GP_HD uint64_t gp_desc_unkey_f64_bits(uint64_t k) { return gp_unkey_f64_bits(gp_desc_key64(k, 1)); }

/* ---- terms of the exact sum -------------------------------------------------------------
 * The accumulator (gpuprim/exact_sum.h) holds V * 2^-1074 with V an integer in base 2^32 digits:
 * digit (limb) i weighs 2^(32 i - 1074). A finite term is (-1)^neg * mag * 2^(pos - 1074)
 * with mag < 2^64 and 0 <= pos <= 2045:
 *   double with biased exponent E in 1..2046: mag = 2^52 | fraction, pos = E - 1;
 *   double with E = 0 (zero, subnormal):       mag = fraction,        pos = 0;
 *   64-bit integer v:                          mag = |v|,             pos = 1074.
 * mag << (pos % 32) spans at most 64 + 31 = 95 bits, so a term touches the three limbs
 * pos/32, pos/32 + 1, pos/32 + 2 (highest 63 + 2 = 65 < GP_SA_LIMBS), each with a digit
 * below 2^32. */

#define GP_SA_CLS_FINITE 0 /* a number (possibly zero) */
#define GP_SA_CLS_NAN 1
#define GP_SA_CLS_PINF 2
#define GP_SA_CLS_NINF 3
#define GP_SA_INT_POS 1074 /* pos of the integer unit 2^0 */

/* Classifies the double with bit pattern u; for a finite one sets *mag, *pos, *neg. */
static inline GP_HD int gp_sa_term_f64(uint64_t u, uint64_t *mag, int *pos, int *neg)
{
    const int e = (int)((u >> 52) & 0x7FF);
    const uint64_t f = u & 0x000FFFFFFFFFFFFFull;
    *neg = (int)(u >> 63);
    if (e == 0x7FF) {
        *mag = 0;
        *pos = 0;
        if (f) return GP_SA_CLS_NAN;
        return (u >> 63) ? GP_SA_CLS_NINF : GP_SA_CLS_PINF;
    }
    if (e == 0) {
        *mag = f;
        *pos = 0;
    } else {
        *mag = f | 0x0010000000000000ull;
        *pos = e - 1;
    }
    return GP_SA_CLS_FINITE;
}

/* The three limb digits of mag << r (0 <= r < 32): d[0] + d[1] 2^32 + d[2] 2^64, each
 * digit < 2^32, negated when neg (so each |d[k]| < 2^32). */
static inline GP_HD void gp_sa_digits(uint64_t mag, int r, int neg, int64_t d[3])
{
    const uint64_t lo = mag << r;
    const uint64_t hi = r ? (mag >> (64 - r)) : 0; /* < 2^31 */
    const int64_t d0 = (int64_t)(lo & 0xFFFFFFFFull);
    const int64_t d1 = (int64_t)(lo >> 32);
    const int64_t d2 = (int64_t)hi;
    d[0] = neg ? -d0 : d0;
    d[1] = neg ? -d1 : d1;
    d[2] = neg ? -d2 : d2;
}

#endif /* GP_KEYS_EXT_H */
