/* cpu_select.c — the CPU twins of the selection entries (gp_backend.radix_hist and runs,
 * gpuprim/dist.h): the digit histograms of a radix select over the order keys, and the runs
 * of equal values of sorted data (the distinct count). Plain one-thread loops; the reference
 * the CUDA kernels are tested against.
 */
#include "cpu_common.h"
#include "cpu_twins.h"
#include "gpuprim/dist.h"
#include "hist_rule.h"

#include <string.h>

/* The digit histograms of a radix select pass — the CPU twin of gp_backend.radix_hist. */
int gp_cpu_radix_hist(gp_dtype t, const void *y, int64_t n, const gp_select *sel,
                      int64_t *counts)
{
    const size_t sz = gp_dtype_size(t);
    if (sz == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (!sel || !counts) return CPU_FAIL(GP_EINVAL, "%s is NULL", !sel ? "sel" : "counts");
    if (sel->width != (int)sz * 8 || sel->done || sel->nprefix < 1 ||
        sel->nprefix > GP_SELECT_MAX || sel->bits < 1 || sel->bits > GP_SELECT_DIGIT)
        return CPU_FAIL(GP_EINVAL, "the select state does not fit dtype %s (width %d, pass "
                        "bits %d, %d prefixes, done %d)", gp_dtype_name(t), sel->width,
                        sel->bits, sel->nprefix, sel->done);
    const unsigned char *p = (const unsigned char *)y;
    for (int64_t i = 0; i < n; i++) {
        int k = 0;
        const int d = gp_select_digit(sel, gp_key_of(t, p + (size_t)i * sz), &k);
        if (d >= 0) counts[((size_t)k << sel->bits) + (size_t)d]++;
    }
    return GP_OK;
}

/* The runs key and NaN-ness of element i of y (type t). */
static uint64_t runs_key_at(gp_dtype t, const unsigned char *y, int64_t i, int *nan)
{
    const size_t sz = gp_dtype_size(t);
    const void *e = y + (size_t)i * sz;
    *nan = gp_dtype_is_float(t) && gp_key_of(t, e) == (sz == 4 ? 0xFFFFFFFFull : ~0ull);
    return gp_runs_key(t, e);
}

/* The runs of equal non-NaN values of y[0, n) — the CPU twin of gp_backend.runs. */
int gp_cpu_runs(gp_dtype t, const void *y, int64_t n, gp_runs *out)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (!out) return CPU_FAIL(GP_EINVAL, "out is NULL");
    gp_runs r = gp_runs_empty();
    const unsigned char *p = (const unsigned char *)y;
    int prev_nan = 1;
    uint64_t prev = 0;
    for (int64_t i = 0; i < n; i++) {
        int nan;
        const uint64_t k = runs_key_at(t, p, i, &nan);
        if (!nan && (prev_nan || k != prev)) r.runs++;
        if (i == 0) {
            r.first_key = k;
            r.first_nan = nan;
        }
        prev = k;
        prev_nan = nan;
    }
    r.n = n;
    if (n > 0) {
        r.last_key = prev;
        r.last_nan = prev_nan;
    }
    *out = r;
    return GP_OK;
}
