/* cpu_twins.h — the CPU twins: the reference implementations behind gp_backend_cpu()
 * (kernels/cpu_*.c), with the meaning of the backend table's entries (gpuprim/kernels.h).
 * The tests use them as the oracle of the CUDA backend. Private to the library and its
 * tests: not installed.
 */
#ifndef GP_CPU_TWINS_H
#define GP_CPU_TWINS_H

#include "gpuprim/kernels.h"
#include "gpuprim/exact_sum.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CPU twins (kernels/cpu_stats_*.c, cpu_trap.c, cpu_keys.c, cpu_sort.c, cpu_merge*.c) ---
 * The reference implementations behind gp_backend_cpu(); same meaning as the table. */
int gp_cpu_stats(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out);
/* gp_cpu_stats's frozen plain form (kernels/cpu_stats_ref.c): the same record bit for bit,
 * never with SIMD (the check of gp_cpu_stats's AVX2 loops, kernels/cpu_stats_avx2.c). */
int gp_cpu_stats_ref(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out);
int gp_cpu_trap_x(gp_dtype t, const void *y, const double *x, int64_t n, gp_stats *io);
int gp_cpu_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                   double *wsum);
int gp_cpu_to_keys(gp_dtype t, void *buf, int64_t n);
int gp_cpu_from_keys(gp_dtype t, void *buf, int64_t n);
int gp_cpu_sort_keys(int width, void *keys, int64_t n);
/* gp_backend.iota: dst[i] = start + i (kernels/cpu_sort.c). */
int gp_cpu_iota(uint64_t *dst, int64_t n, uint64_t start);
int gp_cpu_sort_values(gp_dtype t, void *buf, int64_t n);
int gp_cpu_merge_split_keys(int width, const void *lo, int64_t nlo, const void *hi,
                            int64_t nhi, int64_t m, int keep_upper, void *out,
                            int64_t *nout);
int gp_cpu_merge_path(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                      const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t t,
                      int stable, int64_t *split);
/* One implementation each behind the twins above and below (kernels/cpu_keys.c, cpu_sort.c,
 * cpu_merge_mt.c):
 * gp_cpu_keys: buf[0, n) of type t in place to its order keys (inverse = 0) or back
 *   (inverse != 0), ascending keys (descending = 0: to_keys / from_keys) or descending
 *   ones (to_keys_desc / from_keys_desc);
 * gp_cpu_sort: sort_pairs(width, keys, vals, n, stable), or with vals == NULL
 *   sort_keys(width, keys, n) (stable does nothing then);
 * gp_cpu_merge_split: merge_split_pairs, or with lo_vals, hi_vals and out_vals all NULL
 *   merge_split_keys (stable does nothing then).
 * Arguments, results and errors are those of the twin each case stands for. */
int gp_cpu_keys(gp_dtype t, int descending, int inverse, void *buf, int64_t n);
int gp_cpu_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable);
/* gp_cpu_sort_spare: gp_backend.sort_spare (the same sort, the caller's spares as its
 * scratch). */
int gp_cpu_sort_spare(int width, void *keys, uint64_t *vals, void *spare_keys,
                      uint64_t *spare_vals, int64_t n, int stable, int *in_spare);
int gp_cpu_merge_split(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                       const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t m,
                       int keep_upper, int stable, void *out_keys, uint64_t *out_vals,
                       int64_t *nout);
/* Descending keys and pairs (kernels/cpu_keys.c, cpu_sort.c, cpu_merge_mt.c), exact sums
 * (kernels/cpu_exact_sum.c). */
int gp_cpu_to_keys_desc(gp_dtype t, void *buf, int64_t n);
int gp_cpu_from_keys_desc(gp_dtype t, void *buf, int64_t n);
int gp_cpu_sort_pairs(int width, void *keys, uint64_t *vals, int64_t n, int stable);
int gp_cpu_merge_split_pairs(int width, const void *lo_keys, const uint64_t *lo_vals,
                             int64_t nlo, const void *hi_keys, const uint64_t *hi_vals,
                             int64_t nhi, int64_t m, int keep_upper, int stable,
                             void *out_keys, uint64_t *out_vals, int64_t *nout);
int gp_cpu_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what,
                     struct gp_superacc *acc);
/* Prefix scans (kernels/cpu_scan.c): gp_backend.cumsum and cumint. */
int gp_cpu_cumsum(gp_dtype t, const void *y, int64_t n, gp_scan_carry *carry, void *out);
int gp_cpu_cumint(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                  gp_scan_carry *carry, double *out);
/* The histograms and the selection (kernels/cpu_hist.c, cpu_select.c; their records and
 * rules: gpuprim/dist.h). */
int gp_cpu_hist(const struct gp_hist_spec *spec, const void *y, int64_t n, int64_t *counts);
int gp_cpu_finite_range(gp_dtype t, const void *y, int64_t n, struct gp_frange *io);
int gp_cpu_radix_hist(gp_dtype t, const void *y, int64_t n, const struct gp_select *sel,
                      int64_t *counts);
int gp_cpu_runs(gp_dtype t, const void *y, int64_t n, struct gp_runs *out);

#ifdef __cplusplus
}
#endif
#endif /* GP_CPU_TWINS_H */
