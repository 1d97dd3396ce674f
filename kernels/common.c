/* common.c — element types, order keys, the statistics record's combine, built-in
 * integrands. Shared by both backends and by the host code. */
#include "gp_kernels.h"

#include <math.h>
#include <string.h>

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
    r.sum = lo->sum + hi->sum;
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
