/* dist.c — the distribution's records and pure functions (gpuprim/dist.h): numpy's histogram
 * plan (its edges and the arithmetic of the index), the finite range, the radix select's
 * state machine, numpy's quantile interpolation with gpuprim's rule where numpy's arithmetic
 * breaks down, and the runs of equal values. No backend, no device, no MPI: the kernels and
 * the job call these.
 *
 * Every floating-point step is its own statement (no fused multiply-add: numpy rounds each
 * product and each sum).
 */
#include "gpuprim/dist.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hist_rule.h"

/* ---- histogram plan ------------------------------------------------------------------- */

gp_dtype gp_hist_edge_type(gp_dtype t) { return t == GP_F32 ? GP_F32 : GP_F64; }

/* printf into why (whylen bytes); returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int plan_fail(char *why, size_t whylen, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Edge i of numpy's linspace(lo, hi, n + 1) computed in type T (i < n): one body for
 * float32 (lin_f32) and float64 (lin_f64), each step rounded to T. i as T is numpy's arange
 * (exact in float32 up to 2^24); a step that underflows takes numpy's other path. */
#define LIN_EDGE(name, T)                                                                   \
    static T name(T lo, T hi, int64_t n, int64_t i)                                         \
    {                                                                                       \
        const T delta = hi - lo;                                                            \
        const T nt = (T)n;                                                                  \
        const T step = delta / nt;                                                          \
        T y = (T)i;                                                                         \
        if (step == (T)0) {                                                                 \
            y = y / nt;                                                                     \
            y = y * delta;                                                                  \
        } else {                                                                            \
            y = y * step;                                                                   \
        }                                                                                   \
        y = y + lo;                                                                         \
        return y;                                                                           \
    }
LIN_EDGE(lin_f32, float)
LIN_EDGE(lin_f64, double)
#undef LIN_EDGE

/* The float32 range of float32 data from the data (mode GP_HIST_F32): widened when every
 * finite value is one; edges in float32. */
static int plan_f32_data(gp_hist_spec *s, float mn, float mx, float *e, char *why,
                         size_t whylen)
{
    if (mn == mx) {
        mn = mn - 0.5f;
        mx = mx + 0.5f;
    }
    s->mode = GP_HIST_F32;
    s->lo_f = mn;
    s->hi_f = mx;
    s->den_f = mx - mn;
    if (!isfinite(s->den_f))
        return plan_fail(why, whylen, "the data's range [%.9g, %.9g] is wider than float32 "
                         "holds: no equal-width bins", (double)mn, (double)mx);
    for (int64_t i = 0; i < s->nbins; i++) e[i] = lin_f32(mn, mx, s->nbins, i);
    e[s->nbins] = mx;
    return 0;
}

/* A float64 range [lo, hi] (given, [0, 1] for no data, or float64 / integer data's own)
 * with its width den: edges in float64, stored in the bin type. */
static int plan_f64_range(gp_hist_spec *s, double lo, double hi, double den, void *edges,
                          char *why, size_t whylen)
{
    s->lo_d = lo;
    s->hi_d = hi;
    s->den_d = den;
    if (!isfinite(den))
        return plan_fail(why, whylen, "the range [%.17g, %.17g] is wider than float64 holds: "
                         "no equal-width bins", lo, hi);
    if (s->t == GP_F32) {
        s->mode = GP_HIST_F32R;
        s->lo_f = (float)lo;
        s->hi_f = (float)hi;
        const float wf = s->hi_f - s->lo_f;
        if (!isfinite(s->lo_f) || !isfinite(s->hi_f) || !isfinite(wf))
            return plan_fail(why, whylen, "the range [%.17g, %.17g] is outside float32, the "
                             "data's type", lo, hi);
        float *e = (float *)edges;
        for (int64_t i = 0; i < s->nbins; i++) e[i] = (float)lin_f64(lo, hi, s->nbins, i);
        e[s->nbins] = (float)hi;
    } else {
        s->mode = GP_HIST_F64;
        double *e = (double *)edges;
        for (int64_t i = 0; i < s->nbins; i++) e[i] = lin_f64(lo, hi, s->nbins, i);
        e[s->nbins] = hi;
    }
    return 0;
}

/* Integer data's range from the data: [min, max] with the exact width rounded once, or
 * [v - 0.5, v + 0.5] (float64) when every value is v. */
static int plan_int_data(gp_hist_spec *s, uint64_t min_key, uint64_t max_key, void *edges,
                         char *why, size_t whylen)
{
    union { int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } a, b;
    gp_key_to_elem(s->t, min_key, &a);
    gp_key_to_elem(s->t, max_key, &b);
    uint64_t ua, ub; /* the values as two's complement 64-bit words */
    switch (s->t) {
    case GP_I32: ua = (uint64_t)(int64_t)a.i32; ub = (uint64_t)(int64_t)b.i32; break;
    case GP_I64: ua = (uint64_t)a.i64; ub = (uint64_t)b.i64; break;
    case GP_U32: ua = a.u32; ub = b.u32; break;
    default: ua = a.u64; ub = b.u64; break;
    }
    const double lo = gp_key_to_double(s->t, min_key), hi = gp_key_to_double(s->t, max_key);
    if (min_key == max_key) {
        const double wl = lo - 0.5, wh = hi + 0.5;
        return plan_f64_range(s, wl, wh, wh - wl, edges, why, whylen);
    }
    return plan_f64_range(s, lo, hi, (double)(ub - ua), edges, why, whylen);
}

/* The name of the arithmetic's type of a plan, for messages. */
static const char *plan_type(const gp_hist_spec *s)
{
    return s->mode == GP_HIST_F32 ? "float32" : "float64";
}

int gp_hist_plan(gp_dtype t, int64_t nbins, int have_range, double a, double b,
                 int64_t nfinite, uint64_t min_key, uint64_t max_key, gp_hist_spec *spec,
                 void *edges, char *why, size_t whylen)
{
    memset(spec, 0, sizeof *spec);
    spec->t = t;
    spec->nbins = nbins;
    spec->edge_type = gp_hist_edge_type(t);
    spec->edges = edges;
    if (gp_dtype_size(t) == 0) return plan_fail(why, whylen, "invalid element type %d", (int)t);
    if (nbins < 1 || nbins > GP_HIST_MAX_BINS)
        return plan_fail(why, whylen, "%lld bins: need 1 to %lld", (long long)nbins,
                         (long long)GP_HIST_MAX_BINS);
    if (!edges) return plan_fail(why, whylen, "no buffer for the edges");
    int rc;
    if (have_range) {
        if (!isfinite(a) || !isfinite(b) || a > b)
            return plan_fail(why, whylen, "the range [%.17g, %.17g]: need finite A <= B", a, b);
        double lo = a, hi = b;
        if (lo == hi) {
            lo = lo - 0.5;
            hi = hi + 0.5;
        }
        rc = plan_f64_range(spec, lo, hi, hi - lo, edges, why, whylen);
    } else if (nfinite <= 0) {
        rc = plan_f64_range(spec, 0.0, 1.0, 1.0, edges, why, whylen);
    } else if (t == GP_F32) {
        const float mn = (float)gp_key_to_double(t, min_key);
        const float mx = (float)gp_key_to_double(t, max_key);
        rc = plan_f32_data(spec, mn, mx, (float *)edges, why, whylen);
    } else if (t == GP_F64) {
        double mn = gp_key_to_double(t, min_key), mx = gp_key_to_double(t, max_key);
        if (mn == mx) {
            mn = mn - 0.5;
            mx = mx + 0.5;
        }
        rc = plan_f64_range(spec, mn, mx, mx - mn, edges, why, whylen);
    } else {
        rc = plan_int_data(spec, min_key, max_key, edges, why, whylen);
    }
    if (rc) return rc;
    /* numpy 2 refuses edges that do not increase ("too many bins for data range") */
    for (int64_t i = 0; i < nbins; i++) {
        const int up = spec->edge_type == GP_F32
                           ? ((const float *)edges)[i] < ((const float *)edges)[i + 1]
                           : ((const double *)edges)[i] < ((const double *)edges)[i + 1];
        if (!up) {
            const double lo = spec->mode == GP_HIST_F32 ? spec->lo_f : spec->lo_d;
            const double hi = spec->mode == GP_HIST_F32 ? spec->hi_f : spec->hi_d;
            return plan_fail(why, whylen, "%lld bins of equal width over [%.17g, %.17g] do "
                             "not fit %s's precision (edges %lld and %lld coincide; numpy: "
                             "too many bins for data range)", (long long)nbins, lo, hi,
                             plan_type(spec), (long long)i, (long long)i + 1);
        }
    }
    return 0;
}

int64_t gp_hist_bin(const gp_hist_spec *s, const void *elem)
{
    const int64_t n = s->nbins;
    if (s->mode != GP_HIST_F64) {
        float x;
        memcpy(&x, elem, 4);
        if (isnan(x)) return -1;
        if (x < s->lo_f) return n;
        if (x > s->hi_f) return n + 1;
        const double f = s->mode == GP_HIST_F32 ? (double)gp_hist_f_f32(x, s->lo_f, s->den_f,
                                                                          (float)n)
                                                : gp_hist_f_f32r(x, s->lo_f, s->den_d,
                                                                 (double)n);
        return gp_hist_fix_f32(x, (const float *)s->edges, gp_hist_trunc(f, n), n);
    }
    const double x = gp_elem_to_double(s->t, elem);
    if (isnan(x)) return -1;
    if (x < s->lo_d) return n;
    if (x > s->hi_d) return n + 1;
    const double f = gp_hist_f_f64(x, s->lo_d, s->den_d, (double)n);
    return gp_hist_fix_f64(x, (const double *)s->edges, gp_hist_trunc(f, n), n);
}

/* ---- finite range ---------------------------------------------------------------------- */

gp_frange gp_frange_empty(void)
{
    gp_frange r = {0, 0, 0, UINT64_MAX, 0};
    return r;
}

void gp_frange_add(gp_frange *acc, const gp_frange *x)
{
    acc->finite += x->finite;
    acc->neg_inf += x->neg_inf;
    acc->pos_inf += x->pos_inf;
    if (x->min_key < acc->min_key) acc->min_key = x->min_key;
    if (x->max_key > acc->max_key) acc->max_key = x->max_key;
}

/* ---- radix select ----------------------------------------------------------------------- */

/* The index of v in the ascending a[0, n), or -1. */
static int find_sorted(const uint64_t *a, int n, uint64_t v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && a[lo] == v ? lo : -1;
}

/* The distinct prefixes of the wanted ranks, ascending, into s->prefixes. */
static void collect_prefixes(gp_select *s)
{
    s->nprefix = 0;
    for (int i = 0; i < s->n; i++) {
        /* insertion into the sorted list (at most GP_SELECT_MAX entries) */
        const uint64_t v = s->prefix[i];
        int k = s->nprefix;
        if (find_sorted(s->prefixes, s->nprefix, v) >= 0) continue;
        while (k > 0 && s->prefixes[k - 1] > v) {
            s->prefixes[k] = s->prefixes[k - 1];
            k--;
        }
        s->prefixes[k] = v;
        s->nprefix++;
    }
}

int gp_select_init(gp_select *s, gp_dtype t, const int64_t *ranks, int n)
{
    memset(s, 0, sizeof *s);
    const size_t sz = gp_dtype_size(t);
    if (sz == 0 || n < 1 || n > GP_SELECT_MAX || !ranks) return -1;
    s->width = (int)sz * 8;
    s->shift = s->width - GP_SELECT_DIGIT;
    s->bits = GP_SELECT_DIGIT;
    s->n = n;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0) return -1;
        s->rank[i] = ranks[i];
        s->prefix[i] = 0;
    }
    collect_prefixes(s);
    return 0;
}

size_t gp_select_counts_len(const gp_select *s)
{
    return (size_t)s->nprefix << s->bits;
}

int gp_select_digit(const gp_select *s, uint64_t key, int *p)
{
    const int top = s->shift + s->bits;
    const uint64_t hi = top >= 64 ? 0 : key >> top;
    const int k = s->nprefix == 1 ? (s->prefixes[0] == hi ? 0 : -1)
                                  : find_sorted(s->prefixes, s->nprefix, hi);
    if (k < 0) return -1;
    *p = k;
    return (int)((key >> s->shift) & ((1u << s->bits) - 1u));
}

int gp_select_advance(gp_select *s, const int64_t *counts)
{
    if (s->done) return -1;
    const int64_t nd = (int64_t)1 << s->bits;
    for (int i = 0; i < s->n; i++) {
        const int p = find_sorted(s->prefixes, s->nprefix, s->prefix[i]);
        if (p < 0) return -1;
        const int64_t *c = counts + ((size_t)p << s->bits);
        int64_t below = 0, d = 0;
        while (d < nd && below + c[d] <= s->rank[i]) below += c[d++];
        if (d == nd) return -1; /* the rank lies past every counted element */
        s->rank[i] -= below;
        s->prefix[i] = (s->prefix[i] << s->bits) | (uint64_t)d;
    }
    if (s->shift == 0) {
        s->done = 1;
        return 0;
    }
    const int next = s->shift > GP_SELECT_DIGIT ? s->shift - GP_SELECT_DIGIT : 0;
    s->bits = s->shift - next;
    s->shift = next;
    collect_prefixes(s);
    return 0;
}

/* ---- quantiles --------------------------------------------------------------------------- */

void gp_quantile_index(int64_t n, double q, int64_t *k0, int64_t *k1, double *t)
{
    const double last = (double)(n - 1);
    const double v = last * q;
    if (v >= last) { /* numpy's index -1 for both neighbours, and its weight v - (-1) */
        *k0 = *k1 = n - 1;
        *t = v + 1.0;
        return;
    }
    const double fl = floor(v);
    *k0 = (int64_t)fl;
    *k1 = *k0 + 1;
    *t = v - fl;
}

/* a + d * w (w < 0.5) or b - d * (1 - w): numpy's _lerp in float64 once d is known. */
static double lerp_d(double a, double b, double d, double w)
{
    if (w >= 0.5) {
        const double u = 1.0 - w;
        const double p = d * u;
        return b - p;
    }
    const double p = d * w;
    return a + p;
}

/* Where numpy's arithmetic made a NaN of infinities between a and b (neither NaN). */
static double lerp_inf_rule(double a, double b, double w)
{
    if (w == 0.0 || a == b) return a;
    if (isinf(a) && isinf(b)) return NAN;
    return isinf(a) ? a : b;
}

/* Floats: numpy's d = b - a in the data's type, with the overflow and NaN rules. */
static double lerp_float(gp_dtype t, uint64_t a_key, uint64_t b_key, double w)
{
    const double a = gp_key_to_double(t, a_key), b = gp_key_to_double(t, b_key);
    double d;
    if (t == GP_F32) {
        float af, bf;
        gp_key_to_elem(t, a_key, &af);
        gp_key_to_elem(t, b_key, &bf);
        const float df = bf - af;
        d = (double)df;
    } else {
        d = b - a;
    }
    const double r = lerp_d(a, b, d, w);
    if (isnan(r)) return lerp_inf_rule(a, b, w);
    if (isinf(d) && isfinite(a) && isfinite(b)) {
        if (t == GP_F32) return lerp_d(a, b, b - a, w); /* exact enough in float64 */
        const double h = b * 0.5 - a * 0.5;             /* float64: the halves */
        if (w >= 0.5) {
            const double u = 1.0 - w;
            const double p = h * u;
            const double p2 = p * 2.0;
            return b - p2;
        }
        const double p = h * w;
        const double p2 = p * 2.0;
        return a + p2;
    }
    return r;
}

double gp_quantile_lerp(gp_dtype t, uint64_t a_key, uint64_t b_key, double w)
{
    if (gp_dtype_is_float(t)) return lerp_float(t, a_key, b_key, w);
    union { int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } a, b;
    gp_key_to_elem(t, a_key, &a);
    gp_key_to_elem(t, b_key, &b);
    uint64_t ua, ub;
    switch (t) {
    case GP_I32: ua = (uint64_t)(int64_t)a.i32; ub = (uint64_t)(int64_t)b.i32; break;
    case GP_I64: ua = (uint64_t)a.i64; ub = (uint64_t)b.i64; break;
    case GP_U32: ua = a.u32; ub = b.u32; break;
    case GP_U64: ua = a.u64; ub = b.u64; break;
    default: return NAN;
    }
    const double d = (double)(ub - ua); /* the exact difference (b >= a), rounded once */
    return lerp_d(gp_key_to_double(t, a_key), gp_key_to_double(t, b_key), d, w);
}

/* ---- runs -------------------------------------------------------------------------------- */

gp_runs gp_runs_empty(void)
{
    gp_runs r;
    memset(&r, 0, sizeof r);
    return r;
}

gp_runs gp_runs_combine(const gp_runs *lo, const gp_runs *hi)
{
    if (lo->n == 0) return *hi;
    if (hi->n == 0) return *lo;
    gp_runs r = *lo;
    r.n = lo->n + hi->n;
    r.runs = lo->runs + hi->runs;
    if (!lo->last_nan && !hi->first_nan && lo->last_key == hi->first_key) r.runs--;
    r.last_key = hi->last_key;
    r.last_nan = hi->last_nan;
    return r;
}

uint64_t gp_runs_key(gp_dtype t, const void *elem)
{
    if (t == GP_F32) {
        uint32_t u;
        memcpy(&u, elem, 4);
        return gp_runs_key_f32_bits(u);
    }
    if (t == GP_F64) {
        uint64_t u;
        memcpy(&u, elem, 8);
        return gp_runs_key_f64_bits(u);
    }
    return gp_key_of(t, elem);
}
