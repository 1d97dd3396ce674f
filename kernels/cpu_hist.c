/* cpu_hist.c — the CPU twins of the histogram entries (gp_backend.hist and finite_range,
 * gpuprim/dist.h): plain one-thread loops applying numpy's rule (hist_rule.h) element by
 * element. The reference the CUDA kernels are tested against.
 */
#include "cpu_common.h"
#include "cpu_twins.h"
#include "gpuprim/dist.h"
#include "hist_rule.h"

#include <math.h>
#include <string.h>

/* The checks of a hist call (GP_OK, or the failure recorded). */
static int hist_args(const gp_hist_spec *s, const void *y, int64_t n, const int64_t *counts)
{
    if (!s) return CPU_FAIL(GP_EINVAL, "spec is NULL");
    if (gp_dtype_size(s->t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)s->t);
    if (s->nbins < 1 || s->nbins > GP_HIST_MAX_BINS)
        return CPU_FAIL(GP_EINVAL, "nbins = %lld", (long long)s->nbins);
    const int f32 = s->mode == GP_HIST_F32 || s->mode == GP_HIST_F32R;
    if (s->mode < GP_HIST_F32 || s->mode > GP_HIST_F64 || f32 != (s->t == GP_F32) ||
        s->edge_type != gp_hist_edge_type(s->t))
        return CPU_FAIL(GP_EINVAL, "mode %d / edge type %d do not fit dtype %s", (int)s->mode,
                        (int)s->edge_type, gp_dtype_name(s->t));
    if (!s->edges) return CPU_FAIL(GP_EINVAL, "edges is NULL");
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (!counts) return CPU_FAIL(GP_EINVAL, "counts is NULL");
    return GP_OK;
}

/* Float32 data: the modes GP_HIST_F32 and GP_HIST_F32R. */
static void hist_f32(const gp_hist_spec *s, const float *y, int64_t n, int64_t *counts)
{
    const int64_t nb = s->nbins;
    const float *e = (const float *)s->edges;
    const float nf = (float)nb;
    const double nd = (double)nb;
    for (int64_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, y + i, 4);
        if (isnan(x)) continue;
        if (x < s->lo_f) { counts[nb]++; continue; }
        if (x > s->hi_f) { counts[nb + 1]++; continue; }
        const double f = s->mode == GP_HIST_F32 ? (double)gp_hist_f_f32(x, s->lo_f, s->den_f, nf)
                                                : gp_hist_f_f32r(x, s->lo_f, s->den_d, nd);
        counts[gp_hist_fix_f32(x, e, gp_hist_trunc(f, nb), nb)]++;
    }
}

/* The other types: the value as float64 (GP_HIST_F64). */
#define HIST_F64_AS(CT)                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                       \
        CT v;                                                                               \
        memcpy(&v, (const unsigned char *)y + (size_t)i * sizeof(CT), sizeof(CT));          \
        const double x = (double)v;                                                         \
        if (isnan(x)) continue;                                                             \
        if (x < s->lo_d) { counts[nb]++; continue; }                                        \
        if (x > s->hi_d) { counts[nb + 1]++; continue; }                                    \
        const double f = gp_hist_f_f64(x, s->lo_d, s->den_d, nd);                           \
        counts[gp_hist_fix_f64(x, e, gp_hist_trunc(f, nb), nb)]++;                          \
    }                                                                                       \
    break;

/* Histogram with numpy's rule — the CPU twin of gp_backend.hist (its contract:
 * gpuprim/kernels.h). */
int gp_cpu_hist(const gp_hist_spec *s, const void *y, int64_t n, int64_t *counts)
{
    const int rc = hist_args(s, y, n, counts);
    if (rc) return rc;
    if (s->t == GP_F32) {
        hist_f32(s, (const float *)y, n, counts);
        return GP_OK;
    }
    const int64_t nb = s->nbins;
    const double *e = (const double *)s->edges;
    const double nd = (double)nb;
    switch (s->t) {
    case GP_F64: HIST_F64_AS(double)
    case GP_I32: HIST_F64_AS(int32_t)
    case GP_I64: HIST_F64_AS(int64_t)
    case GP_U32: HIST_F64_AS(uint32_t)
    case GP_U64: HIST_F64_AS(uint64_t)
    default: break;
    }
    return GP_OK;
}
#undef HIST_F64_AS

/* The finite range of y[0, n) added into *io — the CPU twin of gp_backend.finite_range. */
int gp_cpu_finite_range(gp_dtype t, const void *y, int64_t n, gp_frange *io)
{
    const size_t sz = gp_dtype_size(t);
    if (sz == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (!io) return CPU_FAIL(GP_EINVAL, "io is NULL");
    gp_frange r = gp_frange_empty();
    const unsigned char *p = (const unsigned char *)y;
    const int isf = gp_dtype_is_float(t);
    for (int64_t i = 0; i < n; i++) {
        const void *e = p + (size_t)i * sz;
        if (isf) {
            const double x = gp_elem_to_double(t, e);
            if (isnan(x)) continue;
            if (isinf(x)) {
                if (x < 0) r.neg_inf++;
                else r.pos_inf++;
                continue;
            }
        }
        const uint64_t k = gp_key_of(t, e);
        r.finite++;
        if (k < r.min_key) r.min_key = k;
        if (k > r.max_key) r.max_key = k;
    }
    gp_frange_add(io, &r);
    return GP_OK;
}
