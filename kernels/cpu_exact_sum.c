/* cpu_exact_sum.c — the CPU twin of the exact sums (gp_backend.exact_sum) and the host
 * functions of the Kulisch accumulator. gpuprim/exact_sum.h documents every public function;
 * like the other CPU twins the code favours plain, deterministic loops (one thread, fixed
 * order).
 *
 * Errors: the twins record a one-line message through gp_cpu_fail (cpu_common.c), so
 * gp_backend_cpu()->last_error() and gp_cpu_last_error() both return it.
 */
#include "cpu_common.h"
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"
#include "keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the Kulisch accumulator --------------------------------------------------------------- */

void gp_superacc_zero(gp_superacc *acc)
{
    if (acc) memset(acc, 0, sizeof *acc);
}

/* Carry propagation over limbs[0, GP_SA_LIMBS): digits 0 .. L-2 into [0, 2^32), the rest
 * (signed) into the top limb. |limb| < 2^62 keeps every intermediate inside int64. */
static void limbs_normalize(int64_t *limb)
{
    int64_t carry = 0;
    for (int i = 0; i < GP_SA_LIMBS - 1; i++) {
        const int64_t v = limb[i] + carry;
        const int64_t lo = (int64_t)((uint64_t)v & 0xFFFFFFFFull);
        carry = (v - lo) / 4294967296LL; /* exact: v - lo is a multiple of 2^32 */
        limb[i] = lo;
    }
    limb[GP_SA_LIMBS - 1] += carry;
}

void gp_superacc_normalize(gp_superacc *acc)
{
    if (acc) limbs_normalize(acc->limb);
}

void gp_superacc_add(gp_superacc *acc, const gp_superacc *other)
{
    if (!acc || !other) return;
    for (int i = 0; i < GP_SA_LIMBS; i++) acc->limb[i] += other->limb[i];
    acc->nan += other->nan;
    acc->pinf += other->pinf;
    acc->ninf += other->ninf;
    limbs_normalize(acc->limb);
}

/* limb += the finite term (-1)^neg * mag * 2^(pos - 1074) (0 <= pos <= 2045); no carry. */
static inline void limbs_add_term(int64_t *limb, uint64_t mag, int pos, int neg)
{
    int64_t d[3];
    const int q = pos >> 5;
    gp_sa_digits(mag, pos & 31, neg, d);
    limb[q] += d[0];
    limb[q + 1] += d[1];
    limb[q + 2] += d[2];
}

/* Adds the double with bit pattern u (class counts for NaN / inf); no carry. */
static inline void acc_add_f64_bits(gp_superacc *a, uint64_t u)
{
    uint64_t mag;
    int pos, neg;
    switch (gp_sa_term_f64(u, &mag, &pos, &neg)) {
    case GP_SA_CLS_FINITE: if (mag) limbs_add_term(a->limb, mag, pos, neg); break;
    case GP_SA_CLS_NAN: a->nan++; break;
    case GP_SA_CLS_PINF: a->pinf++; break;
    default: a->ninf++; break;
    }
}

void gp_superacc_add_double(gp_superacc *acc, double x)
{
    if (!acc) return;
    uint64_t u;
    memcpy(&u, &x, 8);
    acc_add_f64_bits(acc, u);
    limbs_normalize(acc->limb);
}

int gp_superacc_sign(const gp_superacc *acc)
{
    if (!acc) return 0;
    if (acc->limb[GP_SA_LIMBS - 1] < 0) return -1;
    for (int i = 0; i < GP_SA_LIMBS; i++)
        if (acc->limb[i]) return 1;
    return 0;
}

double gp_superacc_to_double(const gp_superacc *acc)
{
    if (!acc) return NAN;
    if (acc->nan > 0 || (acc->pinf > 0 && acc->ninf > 0)) return NAN;
    if (acc->pinf > 0) return INFINITY;
    if (acc->ninf > 0) return -INFINITY;
    int64_t d[GP_SA_LIMBS];
    memcpy(d, acc->limb, sizeof d);
    limbs_normalize(d); /* a no-op for a normalised accumulator */
    const int negative = d[GP_SA_LIMBS - 1] < 0;
    if (negative) { /* magnitude: negate every limb, renormalise (top becomes >= 0) */
        for (int i = 0; i < GP_SA_LIMBS; i++) d[i] = -d[i];
        limbs_normalize(d);
    }
    if (d[GP_SA_LIMBS - 1] >= 4294967296LL) /* |value| >= 2^(32*68 - 1074) = 2^1102 */
        return negative ? -INFINITY : INFINITY;
    int h = GP_SA_LIMBS - 1;
    while (h >= 0 && d[h] == 0) h--;
    if (h < 0) return 0.0;
    int top = 31;
    while (!((uint64_t)d[h] >> top & 1)) top--;
    const int p = 32 * h + top; /* the most significant set bit of V = value * 2^1074 */
    double r;
    if (p <= 52) { /* V < 2^53: exactly representable (subnormal or normal) */
        const uint64_t v = (uint64_t)d[0] | (h >= 1 ? (uint64_t)d[1] << 32 : 0);
        r = ldexp((double)v, -1074);
    } else {
        const int sh = p - 52; /* keep bits [sh, p]: 53 bits */
        const int q = sh >> 5, rr = sh & 31;
        const uint64_t w0 = (uint64_t)d[q] | ((q + 1 < GP_SA_LIMBS ? (uint64_t)d[q + 1] : 0) << 32);
        const uint64_t w1 = q + 2 < GP_SA_LIMBS ? (uint64_t)d[q + 2] : 0;
        uint64_t mant = rr ? (w0 >> rr) | (w1 << (64 - rr)) : w0;
        mant &= (1ull << 53) - 1; /* V >> sh < 2^53 already; the mask documents it */
        const int hb = sh - 1;    /* the first dropped bit */
        const int half = (int)(((uint64_t)d[hb >> 5] >> (hb & 31)) & 1);
        int sticky = 0;
        if ((hb & 31) && ((uint64_t)d[hb >> 5] & ((1ull << (hb & 31)) - 1))) sticky = 1;
        for (int i = 0; i < (hb >> 5) && !sticky; i++)
            if (d[i]) sticky = 1;
        if (half && (sticky || (mant & 1))) mant++; /* to nearest, ties to even */
        r = ldexp((double)mant, sh - 1074);         /* mant <= 2^53: exact; overflow -> inf */
    }
    return negative ? -r : r;
}

/* ---- exact sums ------------------------------------------------------------------------------ */

#define SA_RENORM_EVERY ((int64_t)1 << 30) /* digit additions per limb between carries */

/* Adds elements [i0, i1) of y (type t) to *a without carries (i1 - i0 <= SA_RENORM_EVERY). */
static void sa_add_range(gp_dtype t, const void *y, int64_t i0, int64_t i1, unsigned what,
                         gp_superacc *a)
{
    const int sq = (what == GP_SA_SQUARES);
/* SA_INT_LOOP(CT, NEG): elements of integer type CT; NEG(v): 1 when v < 0. */
#define SA_INT_LOOP(CT, NEG)                                                                 \
    for (int64_t i = i0; i < i1; i++) {                                                      \
        CT v;                                                                                \
        memcpy(&v, (const unsigned char *)y + (size_t)i * sizeof(CT), sizeof(CT));           \
        if (sq) {                                                                            \
            const double x = (double)v;                                                      \
            const double s = x * x;                                                          \
            uint64_t u;                                                                      \
            memcpy(&u, &s, 8);                                                               \
            acc_add_f64_bits(a, u);                                                          \
        } else if (v != 0) {                                                                 \
            const int neg = NEG(v);                                                          \
            const uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;              \
            limbs_add_term(a->limb, mag, GP_SA_INT_POS, neg);                                \
        }                                                                                    \
    }
#define SA_SIGNED_NEG(v) ((v) < 0)
#define SA_UNSIGNED_NEG(v) ((void)(v), 0)
    switch (t) {
    case GP_F32:
        for (int64_t i = i0; i < i1; i++) {
            float f;
            memcpy(&f, (const unsigned char *)y + (size_t)i * 4, 4);
            double x = (double)f;
            if (sq) x = x * x;
            uint64_t u;
            memcpy(&u, &x, 8);
            acc_add_f64_bits(a, u);
        }
        break;
    case GP_F64:
        for (int64_t i = i0; i < i1; i++) {
            double x;
            memcpy(&x, (const unsigned char *)y + (size_t)i * 8, 8);
            if (sq) x = x * x;
            uint64_t u;
            memcpy(&u, &x, 8);
            acc_add_f64_bits(a, u);
        }
        break;
    case GP_I32: SA_INT_LOOP(int32_t, SA_SIGNED_NEG) break;
    case GP_I64: SA_INT_LOOP(int64_t, SA_SIGNED_NEG) break;
    case GP_U32: SA_INT_LOOP(uint32_t, SA_UNSIGNED_NEG) break;
    case GP_U64: SA_INT_LOOP(uint64_t, SA_UNSIGNED_NEG) break;
    default: break;
    }
#undef SA_INT_LOOP
#undef SA_SIGNED_NEG
#undef SA_UNSIGNED_NEG
}

/* Exact sum of the values or squares of y[0, n) into *acc — the CPU twin of
 * gp_backend.exact_sum (meaning: gpuprim/exact_sum.h).
 *
 * t: element type; y: n elements (host memory; NULL only when n == 0); what: GP_SA_VALUES
 * or GP_SA_SQUARES; acc: a normalised accumulator, added to (not reset). Each term is split
 * into three 32-bit digits added to int64 limbs (gp_sa_digits); carries are propagated
 * every 2^30 elements and at the end, into a local accumulator that is then added to *acc
 * (so *acc is unchanged on an argument error). NaN elements count in acc->nan, infinite
 * terms (including squares that overflow) in acc->pinf / acc->ninf. O(n), no allocation.
 * Returns GP_OK or GP_EINVAL (bad t, n < 0, NULL y with n > 0, NULL acc, bad what). */
int gp_cpu_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what,
                     struct gp_superacc *acc)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (!acc) return CPU_FAIL(GP_EINVAL, "acc is NULL");
    if (what != GP_SA_VALUES && what != GP_SA_SQUARES)
        return CPU_FAIL(GP_EINVAL, "what = 0x%x, not GP_SA_VALUES or GP_SA_SQUARES", what);
    gp_superacc a;
    gp_superacc_zero(&a);
    for (int64_t c = 0; c < n; c += SA_RENORM_EVERY) {
        const int64_t e = (n - c > SA_RENORM_EVERY) ? c + SA_RENORM_EVERY : n;
        sa_add_range(t, y, c, e, what, &a);
        limbs_normalize(a.limb);
    }
    gp_superacc_add(acc, &a);
    return GP_OK;
}
