/* exact_sum.h — exact, reproducible sums: the backend table's exact_sum entry in full and
 * the host functions of its Kulisch accumulator (kernels/cpu_exact_sum.c).
 *
 * Conventions are those of kernels.h: counts in elements (int64_t), return GP_OK or a
 * GP_E* code with the backend's last_error() set, "device pointer" = memory from the same
 * backend's alloc().
 *
 * exact_sum(t, y, n, what, acc)
 *   Adds terms of y[0, n) (type t, device pointer) exactly into *acc (HOST memory, a
 *   normalised accumulator, e.g. from gp_superacc_zero; it is not reset, so shards and
 *   pieces can be added in any order and split in any way). what = GP_SA_VALUES: each
 *   element's exact value (f32 and f64 as they are, integers of every type as the exact
 *   integer, also beyond 2^53); what = GP_SA_SQUARES: each element converted to double
 *   ((double)value, rounded to nearest for 64-bit integers above 2^53), squared in double
 *   (one rounding, deterministic per element; may overflow to +inf), then added exactly.
 *   NaN elements are counted in acc->nan and ±inf terms in acc->pinf / acc->ninf instead
 *   of being added. On return *acc is normalised, so its bytes depend only on the multiset
 *   of terms added since it was zeroed: bitwise identical between the backends, for any
 *   order and any split of the input. Errors: GP_EINVAL (bad t, n < 0, NULL y with n > 0,
 *   NULL acc, `what` not exactly one of the two flags), GP_EDEVICE (acc unchanged).
 *   CPU: one pass, digits added into int64 limbs, carries propagated every 2^30 elements.
 *   CUDA: per thread a four-limb register window, flushed with 64-bit shared-memory
 *   atomicAdd into a per-block accumulator, which is carry-normalised and added with global
 *   64-bit atomicAdd; integer additions commute, so the result never depends on scheduling.
 *
 * ---- the accumulator (Kulisch's exact fixed-point accumulator) ---------------------------
 * value = sum over i of limb[i] * 2^(32 i - 1074): limb 0's unit is the smallest subnormal
 * double 2^-1074; GP_SA_LIMBS = 68 limbs reach 2^(32*68 - 1074) = 2^1102, room for 2^78
 * doubles of the largest magnitude (< 2^1024). Normalised form (what every function here
 * leaves): limb[0 .. GP_SA_LIMBS-2] in [0, 2^32), the top limb signed (negative values have
 * a negative top limb); it is unique for every value, so normalised accumulators compare
 * bytewise. The counts nan, pinf, ninf are plain int64 counters. MPI can move the struct as
 * bytes (all int64) and combine with gp_superacc_add (associative and commutative, exact).
 */
#ifndef GP_EXACT_SUM_H
#define GP_EXACT_SUM_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_SA_LIMBS 68        /* limbs of 32-bit digits (int64 storage) */
#define GP_SA_VALUES 1u       /* exact_sum: the elements' values */
#define GP_SA_SQUARES 2u      /* exact_sum: the elements' squares, each rounded in double */

/* Kulisch accumulator (see the file comment). 71 int64, no padding. */
typedef struct gp_superacc {
    int64_t limb[GP_SA_LIMBS]; /* digit i weighs 2^(32 i - 1074) */
    int64_t nan;               /* NaN terms seen */
    int64_t pinf, ninf;        /* +inf and -inf terms seen */
} gp_superacc;

/* Sets *acc to the empty sum (all zero; this is normalised). NULL: nothing. */
void gp_superacc_zero(gp_superacc *acc);

/* Propagates carries so that *acc is in the normalised form of the file comment (value and
 * counts unchanged). Accepts any limb values whose carries do not overflow int64 (every
 * |limb| < 2^62). NULL: nothing. */
void gp_superacc_normalize(gp_superacc *acc);

/* *acc += *other exactly (limbs and the three counts), then normalises *acc. Both must be
 * normalised (as every function here leaves them); acc == other is allowed (doubles).
 * Associative and commutative: combining per-rank accumulators in any order or tree gives
 * the same bytes. NULL pointers: nothing. */
void gp_superacc_add(gp_superacc *acc, const gp_superacc *other);

/* *acc += x exactly (x finite, subnormals included); a NaN increments acc->nan, +inf
 * acc->pinf, -inf acc->ninf. Leaves *acc normalised. NULL acc: nothing. */
void gp_superacc_add_double(gp_superacc *acc, double x);

/* The accumulator's value rounded once to the nearest double, ties to even (so the result
 * is the correctly rounded exact sum). nan > 0, or pinf > 0 and ninf > 0: NaN; else pinf > 0:
 * +inf; ninf > 0: -inf; else the rounded value, ±inf when it overflows (|value| >=
 * 2^1024 - 2^970), +0.0 for an exact zero. acc must be normalised; NULL gives NaN. */
double gp_superacc_to_double(const gp_superacc *acc);

/* -1, 0 or +1: the sign of the accumulator's finite part (limbs only). */
int gp_superacc_sign(const gp_superacc *acc);


/* The one-line message of the last failure of a CPU twin (gp_cpu_to_keys_desc,
 * gp_cpu_from_keys_desc, gp_cpu_sort_pairs, gp_cpu_merge_split_pairs, gp_cpu_exact_sum);
 * "" when none. */
const char *gp_cpu_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* GP_EXACT_SUM_H */
