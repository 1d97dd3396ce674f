/* cpu_scan.c — the CPU twins of the prefix scans (gp_backend.cumsum and cumint): one thread,
 * blocks of GP_SCAN_BLOCK elements, each a plain float64 prefix sum (at most 63 additions deep,
 * so within 63 u of its exact value) plus the running total of the blocks before it, carried
 * as a double-double (scan_dd.h), so that the error bound of gpuprim/kernels.h holds for any
 * length. Integers are exact: 64-bit running sums where no prefix can leave the output type
 * (4-byte types, short pieces), 128-bit ones checked element by element elsewhere. The
 * reference of the CUDA backend's scans (tests/test_gpu_scan.c) and of the job's.
 */
#include "cpu_common.h"
#include "cpu_twins.h"
#include "scan_dd.h"

#define GP_SCAN_BLOCK 64

/* ---- float sums --------------------------------------------------------------------------- */

/* One block of the float cumsum: v[0, m) (NaN adds nothing), the outputs (out may be NULL)
 * and the carry (hi, lo) advanced by the block's float64 total. */
CPU_INLINE void sum_block(const double *v, int m, double *hi, double *lo, double *out)
{
    double p[GP_SCAN_BLOCK];
    double run = -0.0; /* IEEE's identity: a block of -0.0 totals -0.0 */
    for (int j = 0; j < m; j++) {
        const double x = v[j];
        run += (x == x) ? x : 0.0;
        p[j] = run;
    }
    if (out) {
        const double h = *hi, l = *lo;
        for (int j = 0; j < m; j++) out[j] = gp_dd_round(h, l, p[j]);
    }
    gp_dd_add(hi, lo, run);
}

/* gp_cpu_cumsum of float data (and of integer data's float64 cast, which no entry uses). */
static void cumsum_float(gp_dtype t, const void *y, int64_t n, gp_scan_carry *c, double *out)
{
    double vb[GP_SCAN_BLOCK];
    double hi = c->hi, lo = c->lo;
    for (int64_t b = 0; b < n; b += GP_SCAN_BLOCK) {
        const int m = n - b < GP_SCAN_BLOCK ? (int)(n - b) : GP_SCAN_BLOCK;
        const double *v = vb;
        if (t == GP_F64) v = (const double *)y + b; /* float64 is read in place */
        else gp_cpu_load_doubles(t, y, b, m, vb);
        sum_block(v, m, &hi, &lo, out ? out + b : NULL);
    }
    c->hi = hi;
    c->lo = lo;
}

/* ---- integer sums ------------------------------------------------------------------------- */

/* The element i of integer data of type t as a 128-bit value (hi: its sign extension). */
CPU_INLINE void int_elem(gp_dtype t, const void *y, int64_t i, uint64_t *lo, int64_t *hi)
{
    const unsigned char *p = (const unsigned char *)y;
    int64_t s;
    switch (t) {
    case GP_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); s = v; break; }
    case GP_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); s = v; break; }
    case GP_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); *lo = v; *hi = 0; return; }
    default: { uint64_t v; memcpy(&v, p + 8 * i, 8); *lo = v; *hi = 0; return; }
    }
    *lo = (uint64_t)s;
    *hi = s < 0 ? -1 : 0;
}

/* gp_cpu_cumsum of integer data: exact; the first prefix that leaves the output type (int64
 * for signed t, uint64 for unsigned t) sets c->overflow (if not set). */
static void cumsum_int(gp_dtype t, const void *y, int64_t n, gp_scan_carry *c, void *out)
{
    const int sign = t == GP_I32 || t == GP_I64;
    uint64_t *o = (uint64_t *)out;
    if (gp_scan_int_fast(t, c->isum, n)) {
        uint64_t s = c->isum.lo; /* two's complement: one loop for int64 and uint64 */
        if (t == GP_I32) {
            const int32_t *v = (const int32_t *)y;
            for (int64_t i = 0; i < n; i++) {
                s += (uint64_t)(int64_t)v[i];
                if (o) o[i] = s;
            }
        } else {
            const uint32_t *v = (const uint32_t *)y;
            for (int64_t i = 0; i < n; i++) {
                s += v[i];
                if (o) o[i] = s;
            }
        }
        c->isum.lo = s;
        c->isum.hi = sign && (int64_t)s < 0 ? -1 : 0;
        return;
    }
    uint64_t lo = c->isum.lo;
    int64_t hi = c->isum.hi;
    int64_t bad = c->overflow >= 0 || !o ? 0 : -1; /* -1: still looking */
    for (int64_t i = 0; i < n; i++) {
        uint64_t vl;
        int64_t vh;
        int_elem(t, y, i, &vl, &vh);
        const uint64_t l2 = lo + vl;
        hi = (int64_t)((uint64_t)hi + (uint64_t)vh + (l2 < lo ? 1u : 0u));
        lo = l2;
        if (!o) continue;
        o[i] = lo;
        const int fits = sign ? hi == ((int64_t)lo < 0 ? -1 : 0) : hi == 0;
        if (!fits && bad < 0) {
            bad = 0;
            c->overflow = c->index + i;
        }
    }
    c->isum.lo = lo;
    c->isum.hi = hi;
}

/* ---- the entries -------------------------------------------------------------------------- */

/* The inclusive prefix sum — the CPU twin of gp_backend.cumsum (its contract: kernels.h).
 * Float data: blocks of GP_SCAN_BLOCK elements (float64 prefix inside, double-double carry
 * between); integer data: exact. out == NULL advances the carry alone, by the same bits.
 * Returns GP_OK or GP_EINVAL. */
int gp_cpu_cumsum(gp_dtype t, const void *y, int64_t n, gp_scan_carry *carry, void *out)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!carry) return CPU_FAIL(GP_EINVAL, "carry is NULL");
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (n > 0 && out && gp_cpu_ranges_overlap(y, (size_t)n * gp_dtype_size(t), out, (size_t)n * 8))
        return CPU_FAIL(GP_EINVAL, "out overlaps y");
    if (gp_dtype_is_float(t)) cumsum_float(t, y, n, carry, (double *)out);
    else cumsum_int(t, y, n, carry, out);
    carry->index += n;
    return GP_OK;
}

/* The cumulative trapezoid rule — the CPU twin of gp_backend.cumint (its contract:
 * kernels.h): the terms (scan_dd.h's gp_trap_term) summed as cumsum sums float data. */
int gp_cpu_cumint(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                  gp_scan_carry *carry, double *out)
{
    if (gp_dtype_size(t) == 0) return CPU_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return CPU_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (!carry) return CPU_FAIL(GP_EINVAL, "carry is NULL");
    if (n > 0 && !y) return CPU_FAIL(GP_EINVAL, "y is NULL with n = %lld", (long long)n);
    if (!x && !(fabs(dx) <= DBL_MAX)) return CPU_FAIL(GP_EINVAL, "dx = %g is not finite", dx);
    if (n > 0 && out &&
        (gp_cpu_ranges_overlap(y, (size_t)n * gp_dtype_size(t), out, (size_t)n * 8) ||
         gp_cpu_ranges_overlap(x, x ? (size_t)n * 8 : 0, out, (size_t)n * 8)))
        return CPU_FAIL(GP_EINVAL, "out overlaps y or x");
    double yb[GP_SCAN_BLOCK], tb[GP_SCAN_BLOCK];
    double hi = carry->hi, lo = carry->lo, yp = carry->yprev, xp = carry->xprev;
    for (int64_t b = 0; b < n; b += GP_SCAN_BLOCK) {
        const int m = n - b < GP_SCAN_BLOCK ? (int)(n - b) : GP_SCAN_BLOCK;
        gp_cpu_load_doubles(t, y, b, m, yb);
        for (int j = 0; j < m; j++) {
            const double xj = x ? x[b + j] : 0.0;
            tb[j] = gp_trap_term(yb[j], yp, xj, xp, dx, x != NULL);
            yp = yb[j];
            xp = xj;
        }
        if (b == 0 && !carry->has_prev) tb[0] = -0.0; /* the first sample: no term */
        double p[GP_SCAN_BLOCK];
        double run = -0.0;
        for (int j = 0; j < m; j++) p[j] = run += tb[j]; /* NaN terms stay: scipy's rule */
        if (out) {
            for (int j = 0; j < m; j++) out[b + j] = gp_dd_round(hi, lo, p[j]);
            if (b == 0 && !carry->has_prev) out[0] = 0.0; /* initial=0: +0.0 */
        }
        gp_dd_add(&hi, &lo, run);
    }
    carry->hi = hi;
    carry->lo = lo;
    if (n > 0) {
        carry->yprev = yp;
        carry->xprev = x ? xp : 0.0;
        carry->has_prev = 1;
    }
    carry->index += n;
    return GP_OK;
}
