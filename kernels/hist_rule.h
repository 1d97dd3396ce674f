/* hist_rule.h — numpy's histogram index of one value and the runs key, inline for the host
 * (kernels/dist.c, cpu_hist.c, cpu_select.c) and the device (cuda_hist.cu, cuda_select.cu):
 * one copy of the rule that gpuprim/dist.h describes. Compiled for host and device when
 * read by nvcc (GP_HD); plain C11 otherwise. Private to kernels/ (the tests may include it).
 *
 * The arithmetic is written one operation per statement, so that no compiler contracts a
 * product and a sum into one fused operation (numpy rounds each step). */
#ifndef GP_HIST_RULE_H
#define GP_HIST_RULE_H

#include "gpuprim/kernels.h"

/* numpy's truncation of the float index f (>= 0 for a value in the range) to a bin of n,
 * with its clamp of n to n - 1 (and of anything larger: a float32 range given in float64
 * can make f pass n, where numpy would index past its edges). */
static inline GP_HD int64_t gp_hist_trunc(double f, int64_t n)
{
    if (!(f >= 0.0)) return 0;
    return f < (double)n ? (int64_t)f : n - 1;
}

/* numpy's two corrections of bin i of x against the float32 edges e[0, n]: one down when
 * x < e[i], then one up when x >= e[i + 1] and i is not the last (closed) bin. */
static inline GP_HD int64_t gp_hist_fix_f32(float x, const float *e, int64_t i, int64_t n)
{
    if (i > 0 && x < e[i]) i--;
    if (i < n - 1 && x >= e[i + 1]) i++;
    return i;
}

/* The same against float64 edges. */
static inline GP_HD int64_t gp_hist_fix_f64(double x, const double *e, int64_t i, int64_t n)
{
    if (i > 0 && x < e[i]) i--;
    if (i < n - 1 && x >= e[i + 1]) i++;
    return i;
}

/* numpy's float index of GP_HIST_F32: ((x - lo) / den) * n, every step in float32. */
static inline GP_HD float gp_hist_f_f32(float x, float lo, float den, float nf)
{
    float num = x - lo;
    float q = num / den;
    return q * nf;
}

/* GP_HIST_F32R: x - lo in float32, then / den and * n in float64. */
static inline GP_HD double gp_hist_f_f32r(float x, float lo, double den, double nd)
{
    float num = x - lo;
    double q = (double)num / den;
    return q * nd;
}

/* GP_HIST_F64: ((x - lo) / den) * n in float64 (x the value as float64). */
static inline GP_HD double gp_hist_f_f64(double x, double lo, double den, double nd)
{
    double num = x - lo;
    double q = num / den;
    return q * nd;
}

/* The runs key of a float bit pattern: gp_key_f32_bits with -0.0 as +0.0. */
static inline GP_HD uint32_t gp_runs_key_f32_bits(uint32_t u)
{
    return gp_key_f32_bits(u == 0x80000000u ? 0u : u);
}
static inline GP_HD uint64_t gp_runs_key_f64_bits(uint64_t u)
{
    return gp_key_f64_bits(u == 0x8000000000000000ull ? 0ull : u);
}

#endif /* GP_HIST_RULE_H */
