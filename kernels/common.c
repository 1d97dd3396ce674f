/* common.c — element types, order keys, the statistics record's combine, built-in
 * integrands. Shared by both backends and by the host code. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "gpuprim/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gp_cuda_load_eagerly(void) { setenv("CUDA_MODULE_LOADING", "EAGER", 0); }

size_t gp_dtype_size(gp_dtype t)
{
    switch (t) {
    case GP_F32: case GP_I32: case GP_U32: return 4;
    case GP_F64: case GP_I64: case GP_U64: return 8;
    default: return 0;
    }
}

static const char *const dtype_names[GP_NDTYPES] = {"f32", "f64", "i32", "i64", "u32", "u64"};
static const char *const dtype_long[GP_NDTYPES] = {"float32", "float64", "int32",
                                                   "int64",   "uint32",  "uint64"};

const char *gp_dtype_name(gp_dtype t)
{
    return ((unsigned)t < GP_NDTYPES) ? dtype_names[t] : "?";
}

int gp_dtype_parse(const char *s, gp_dtype *t)
{
    for (int i = 0; i < GP_NDTYPES; i++)
        if (strcmp(s, dtype_names[i]) == 0 || strcmp(s, dtype_long[i]) == 0) {
            *t = (gp_dtype)i;
            return 0;
        }
    return -1;
}

int gp_dtype_is_float(gp_dtype t) { return t == GP_F32 || t == GP_F64; }

/* ---- keys ---------------------------------------------------------------------------- */

uint64_t gp_key_of(gp_dtype t, const void *elem)
{
    uint32_t u32;
    uint64_t u64;
    switch (t) {
    case GP_F32:
        memcpy(&u32, elem, 4);
        return gp_key_f32_bits(u32);
    case GP_F64:
        memcpy(&u64, elem, 8);
        return gp_key_f64_bits(u64);
    case GP_I32: memcpy(&u32, elem, 4); return u32 ^ 0x80000000u;
    case GP_U32: memcpy(&u32, elem, 4); return u32;
    case GP_I64: memcpy(&u64, elem, 8); return u64 ^ 0x8000000000000000ull;
    case GP_U64: memcpy(&u64, elem, 8); return u64;
    default: return 0;
    }
}

void gp_key_to_elem(gp_dtype t, uint64_t key, void *elem)
{
    uint32_t u32 = (uint32_t)key;
    uint64_t u64 = key;
    switch (t) {
    case GP_F32:
        u32 = gp_unkey_f32_bits(u32);
        memcpy(elem, &u32, 4);
        break;
    case GP_F64:
        u64 = gp_unkey_f64_bits(u64);
        memcpy(elem, &u64, 8);
        break;
    case GP_I32: u32 ^= 0x80000000u; memcpy(elem, &u32, 4); break;
    case GP_U32: memcpy(elem, &u32, 4); break;
    case GP_I64: u64 ^= 0x8000000000000000ull; memcpy(elem, &u64, 8); break;
    case GP_U64: memcpy(elem, &u64, 8); break;
    default: break;
    }
}

double gp_elem_to_double(gp_dtype t, const void *elem)
{
    union { float f; double d; int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } v;
    const size_t sz = gp_dtype_size(t);
    if (sz == 0) return NAN;
    memcpy(&v, elem, sz);
    switch (t) {
    case GP_F32: return (double)v.f;
    case GP_F64: return v.d;
    case GP_I32: return (double)v.i32;
    case GP_I64: return (double)v.i64;
    case GP_U32: return (double)v.u32;
    case GP_U64: return (double)v.u64;
    default: return NAN;
    }
}

double gp_key_to_double(gp_dtype t, uint64_t key)
{
    union { float f; double d; int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } v;
    gp_key_to_elem(t, key, &v);
    return gp_elem_to_double(t, &v);
}

/* ---- exact 128-bit integers ---------------------------------------------------------- */

gp_i128 gp_i128_from_i64(int64_t v)
{
    gp_i128 r;
    r.lo = (uint64_t)v;
    r.hi = v < 0 ? -1 : 0;
    return r;
}

gp_i128 gp_i128_from_u64(uint64_t v)
{
    gp_i128 r;
    r.lo = v;
    r.hi = 0;
    return r;
}

gp_i128 gp_i128_add(gp_i128 a, gp_i128 b)
{
    gp_i128 r;
    r.lo = a.lo + b.lo;
    r.hi = (int64_t)((uint64_t)a.hi + (uint64_t)b.hi + (r.lo < a.lo ? 1u : 0u));
    return r;
}

int gp_i128_cmp(gp_i128 a, gp_i128 b)
{
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}

/* |a| as an unsigned 128-bit magnitude (*mh:*ml; 2^127 for the most negative value);
 * returns 1 when a < 0. */
static int i128_mag(gp_i128 a, uint64_t *mh, uint64_t *ml)
{
    if (a.hi >= 0) {
        *mh = (uint64_t)a.hi;
        *ml = a.lo;
        return 0;
    }
    *ml = ~a.lo + 1u;
    *mh = ~(uint64_t)a.hi + (*ml == 0 ? 1u : 0u);
    return 1;
}

/* (mh * 2^64 + ml + f) * 2^e rounded once to the nearest double (ties to even), where f is
 * 0 when sticky == 0 and some fraction strictly inside (0, 1) otherwise. The magnitude must
 * not be zero. Normalised so that bit 127 is set, the top 64 bits with every lower bit (and
 * f) folded into bit 0 round to 53 bits exactly as the whole value would: the rounding bit
 * of those 64 is bit 10. */
static double round_mag(uint64_t mh, uint64_t ml, int e, int sticky)
{
    int s = 0;
    if (mh == 0) {
        mh = ml;
        ml = 0;
        s = 64;
    }
    while (!(mh >> 63)) {
        mh = (mh << 1) | (ml >> 63);
        ml <<= 1;
        s++;
    }
    const uint64_t m = mh | ((ml != 0 || sticky) ? 1u : 0u);
    return ldexp((double)m, e + 64 - s);
}

double gp_i128_to_double(gp_i128 a)
{
    uint64_t mh, ml;
    const int neg = i128_mag(a, &mh, &ml);
    if (mh == 0 && ml == 0) return 0.0;
    const double m = round_mag(mh, ml, 0, 0);
    return neg ? -m : m;
}

/* *mh:*ml = floor(N / d) in place and returns N mod d; d in [1, 2^63] (binary long
 * division: the remainder stays below d, so doubling it cannot overflow). */
static uint64_t udivmod128(uint64_t *mh, uint64_t *ml, uint64_t d)
{
    uint64_t r = 0, qh = 0, ql = 0;
    for (int i = 127; i >= 0; i--) {
        const uint64_t bit = i >= 64 ? (*mh >> (i - 64)) & 1u : (*ml >> i) & 1u;
        r = (r << 1) | bit;
        qh = (qh << 1) | (ql >> 63);
        ql <<= 1;
        if (r >= d) {
            r -= d;
            ql |= 1u;
        }
    }
    *mh = qh;
    *ml = ql;
    return r;
}

double gp_i128_div(gp_i128 a, int64_t d)
{
    if (d <= 0) return NAN;
    uint64_t qh, ql;
    const int neg = i128_mag(a, &qh, &ql);
    if (qh == 0 && ql == 0) return 0.0;
    const uint64_t ud = (uint64_t)d;
    uint64_t r = udivmod128(&qh, &ql, ud);
    /* a quotient below 2^63 gets more bits from the fraction r / d (value = q * 2^e), so
     * that the rounding sees 64 significant bits and the rest only as a sticky bit */
    int e = 0;
    while (qh == 0 && !(ql >> 63)) {
        r <<= 1;
        ql <<= 1;
        if (r >= ud) {
            r -= ud;
            ql |= 1u;
        }
        e--;
    }
    const double m = round_mag(qh, ql, e, r != 0);
    return neg ? -m : m;
}

size_t gp_i128_to_dec(gp_i128 a, char *buf, size_t len)
{
    char rev[GP_I128_DEC_LEN];
    size_t k = 0;
    uint64_t mh, ml;
    const int neg = i128_mag(a, &mh, &ml);
    do {
        rev[k++] = (char)('0' + udivmod128(&mh, &ml, 10));
    } while (mh != 0 || ml != 0);
    const size_t need = k + (neg ? 1u : 0u);
    if (len < need + 1) {
        if (len > 0) buf[0] = '\0';
        return 0;
    }
    size_t j = 0;
    if (neg) buf[j++] = '-';
    while (k > 0) buf[j++] = rev[--k];
    buf[j] = '\0';
    return j;
}

/* ---- statistics record --------------------------------------------------------------- */

gp_stats gp_stats_empty(void)
{
    gp_stats s;
    memset(&s, 0, sizeof s);
    s.min_key = UINT64_MAX;
    s.max_key = 0;
    s.has_x = 1;
    s.order_valid = 1;
    return s;
}

gp_stats gp_stats_combine(const gp_stats *lo, const gp_stats *hi)
{
    if (lo->count == 0) {
        gp_stats r = *hi;
        r.has_x = lo->has_x && hi->has_x;
        r.order_valid = lo->order_valid && hi->order_valid;
        return r;
    }
    if (hi->count == 0) {
        gp_stats r = *lo;
        r.has_x = lo->has_x && hi->has_x;
        r.order_valid = lo->order_valid && hi->order_valid;
        return r;
    }
    gp_stats r;
    r.count = lo->count + hi->count;
    r.nan_count = lo->nan_count + hi->nan_count;
    r.has_isum = lo->has_isum && hi->has_isum;
    r.reserved = 0;
    r.isum = gp_i128_add(lo->isum, hi->isum);
    r.sum = r.has_isum ? gp_i128_to_double(r.isum) : lo->sum + hi->sum;
    r.sumsq = lo->sumsq + hi->sumsq;
    r.min_key = lo->min_key < hi->min_key ? lo->min_key : hi->min_key;
    r.max_key = lo->max_key > hi->max_key ? lo->max_key : hi->max_key;
    r.hash = lo->hash + hi->hash;
    r.first_key = lo->first_key;
    r.last_key = hi->last_key;
    r.order_valid = lo->order_valid && hi->order_valid;
    r.descents = lo->descents + hi->descents + (lo->last_key > hi->first_key ? 1 : 0);
    r.yfirst = lo->yfirst;
    r.ylast = hi->ylast;
    r.has_x = lo->has_x && hi->has_x;
    r.xfirst = lo->xfirst;
    r.xlast = hi->xlast;
    r.trap = lo->trap + hi->trap;
    if (r.has_x)
        r.trap += (hi->xfirst - lo->xlast) * (lo->ylast + hi->yfirst) * 0.5;
    return r;
}

double gp_stats_mean(const gp_stats *s)
{
    const int64_t k = s->count - s->nan_count;
    if (k <= 0) return NAN;
    if (s->has_isum) return gp_i128_div(s->isum, k);
    return s->sum / (double)k;
}

/* The element of integer type t whose key is `key`, as a gp_i128. */
static gp_i128 int_of_key(gp_dtype t, uint64_t key)
{
    union { int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } v;
    v.u64 = 0;
    gp_key_to_elem(t, key, &v);
    switch (t) {
    case GP_I32: return gp_i128_from_i64(v.i32);
    case GP_I64: return gp_i128_from_i64(v.i64);
    case GP_U32: return gp_i128_from_u64(v.u32);
    default: return gp_i128_from_u64(v.u64);
    }
}

/* 192-bit two's complement words, least significant first: room for 2 * isum - y0 - y1. */
typedef struct i192 {
    uint64_t w[3];
} i192;

static i192 i192_of(gp_i128 a)
{
    i192 r = {{a.lo, (uint64_t)a.hi, a.hi < 0 ? UINT64_MAX : 0u}};
    return r;
}

static i192 i192_add(i192 a, i192 b)
{
    i192 r;
    unsigned carry = 0;
    for (int i = 0; i < 3; i++) {
        const uint64_t s = a.w[i] + b.w[i];
        const unsigned c1 = s < a.w[i];
        r.w[i] = s + carry;
        carry = c1 | (r.w[i] < s);
    }
    return r;
}

static i192 i192_neg(i192 a)
{
    i192 r;
    unsigned carry = 1;
    for (int i = 0; i < 3; i++) {
        r.w[i] = ~a.w[i] + carry;
        carry = carry && r.w[i] == 0;
    }
    return r;
}

double gp_stats_int_trap_bracket(gp_dtype t, const gp_stats *s)
{
    if (gp_dtype_size(t) == 0 || gp_dtype_is_float(t) || !s->has_isum) return NAN;
    if (s->count < 2) return 0.0;
    /* X = 2 isum - y0 - y_last exactly; the bracket is X / 2 */
    const i192 sum = i192_of(s->isum);
    const i192 ends = i192_add(i192_of(int_of_key(t, s->first_key)),
                               i192_of(int_of_key(t, s->last_key)));
    i192 x = i192_add(i192_add(sum, sum), i192_neg(ends));
    const int neg = (x.w[2] >> 63) != 0;
    if (neg) x = i192_neg(x);
    if (x.w[0] == 0 && x.w[1] == 0 && x.w[2] == 0) return 0.0;
    int e = -1, sticky = 0;
    if (x.w[2] != 0) { /* |X| >= 2^128 (only past any real count): drop one bit, kept sticky */
        sticky = (int)(x.w[0] & 1u);
        x.w[0] = (x.w[0] >> 1) | (x.w[1] << 63);
        x.w[1] = (x.w[1] >> 1) | (x.w[2] << 63);
        e = 0;
    }
    const double m = round_mag(x.w[1], x.w[0], e, sticky);
    return neg ? -m : m;
}

/* ---- prefix scans --------------------------------------------------------------------- */

gp_scan_carry gp_scan_carry_start(int64_t index)
{
    gp_scan_carry c;
    memset(&c, 0, sizeof c);
    c.hi = -0.0; /* the identity of IEEE addition: -0.0 + x is x, also for x = -0.0 */
    c.lo = -0.0;
    c.index = index;
    c.overflow = -1;
    return c;
}

/* ---- built-in integrands ------------------------------------------------------------- */

static const char *const func_names[GP_NFUNCS] = {"x2", "sin", "exp", "gauss"};

const char *gp_func_name(gp_func f)
{
    return ((unsigned)f < GP_NFUNCS) ? func_names[f] : "?";
}

int gp_func_parse(const char *s, gp_func *f)
{
    for (int i = 0; i < GP_NFUNCS; i++)
        if (strcmp(s, func_names[i]) == 0) {
            *f = (gp_func)i;
            return 0;
        }
    return -1;
}

double gp_func_eval(gp_func f, double x)
{
    switch (f) {
    case GP_FN_X2: return x * x;
    case GP_FN_SIN: return sin(x);
    case GP_FN_EXP: return exp(x);
    case GP_FN_GAUSS: return exp(-x * x);
    default: return NAN;
    }
}

double gp_func_exact(gp_func f, double a, double b)
{
    if ((unsigned)f >= GP_NFUNCS) return NAN;
    if (a == b) return 0.0;
    if (b < a) return -gp_func_exact(f, b, a);
    long double A = a, B = b;
    switch (f) {
    /* (b^3 - a^3) / 3 without the cancellation of two close cubes */
    case GP_FN_X2: return (double)((B - A) * (A * A + A * B + B * B) / 3.0L);
    case GP_FN_SIN: return (double)(cosl(A) - cosl(B));
    case GP_FN_EXP: return (double)(expl(B) - expl(A));
    case GP_FN_GAUSS: /* sqrt(pi)/2 * (erf(b) - erf(a)); on one side of 0 by erfc, so that
                         a tail (erf near +-1) keeps its digits */
        if (A >= 0) return (double)(0.886226925452758013649083741671L * (erfcl(A) - erfcl(B)));
        if (B <= 0) return (double)(0.886226925452758013649083741671L * (erfcl(-B) - erfcl(-A)));
        return (double)(0.886226925452758013649083741671L * (erfl(B) - erfl(A)));
    default: return NAN;
    }
}
