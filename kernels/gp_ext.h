/* gp_ext.h — descending order keys, key + value sorts and merges, and exact, reproducible
 * sums (a Kulisch accumulator). The table entries are in struct gp_backend (gp_kernels.h:
 * to_keys / from_keys with GP_DESCENDING, sort and merge_split with values, exact_sum);
 * this header documents those forms in full and declares the host functions of the
 * accumulator and of descending single keys (kernels/cpu_ext.c).
 *
 * Conventions are those of gp_kernels.h: counts in elements (int64_t), return GP_OK or a
 * GP_E* code with the backend's last_error() set, "device pointer" = memory from the same
 * backend's alloc().
 *
 * ---- the table entries -----------------------------------------------------------------
 *
 * to_keys(t, GP_DESCENDING, buf, n) / from_keys(t, GP_DESCENDING, buf, n)
 *   In-place map of n elements of type t (device pointer) to descending-order keys (uint32
 *   for 4-byte t, uint64 for 8-byte t) and back. desc key = gp_key_desc(t, gp_key_of(t, e)):
 *   every bit of the ascending key flipped, except that the NaN key of f32/f64 (all ones)
 *   stays all ones. Sorting these keys ascending (sort, with or without values) gives descending
 *   values with every NaN last (numpy's convention for both orders); among the non-NaN
 *   elements it is exactly the reverse of the ascending order, so +0.0 comes before -0.0.
 *   from_keys of GP_DESCENDING inverts it; a NaN comes back as the default quiet NaN
 *   (0x7FC00000 / 0x7FF8000000000000), as in ascending order. Errors: GP_EINVAL (bad t, n < 0, NULL buf with
 *   n > 0), GP_EDEVICE.
 *
 * sort(width, keys, vals, n, stable) with vals != NULL (vals == NULL: keys only, gp_kernels.h)
 *   keys: n unsigned keys of `width` bytes (4: uint32, 8: uint64), vals: n uint64 values,
 *   both device pointers (not overlapping). Sorts ascending in place, each value moving with
 *   its key. stable != 0: ascending (key, value) lexicographically: with value = the global
 *   input position this is a stable sort, and the result is unique. stable == 0: ascending
 *   key; the relative order of the values of equal keys is a deterministic function of the
 *   input (the same on every run), but not specified and not the same on both backends
 *   (CPU: input order; CUDA: whatever the bitonic network does). Nothing at or past n is
 *   read or written. Errors: GP_EINVAL (width not 4/8, n < 0, NULL keys with n > 0, keys
 *   overlapping vals), GP_ENOMEM, GP_EDEVICE.
 *   CPU: LSD radix sort (11-bit digits, over the value's digits first when stable, then
 *   the key's; constant digits skipped). CUDA: Batcher's bitonic network in the mirror form
 *   of the keys-only sort (tile sort in shared memory with (max key, max value) padding, one launch
 *   per global step of stride >= tile, in-tile finish), comparing (key, value) when stable.
 *
 * merge_split(width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, m, keep_upper, stable,
 *             out_keys, out_vals, nout) with values (any of the three value pointers
 *             non-NULL; all NULL: keys only, gp_kernels.h)
 *   The keys-only merge-split with a uint64 value carried by every key. Inputs are
 *   ascending by key (stable == 0) or by (key, value) (stable != 0). The merged sequence
 *   orders by key with ties lo before hi (stable == 0), or by (key, value) with exact
 *   (key, value) ties lo before hi (stable != 0). keep_upper == 0 writes merged[0, c),
 *   c = min(m, nlo + nhi), keep_upper != 0 writes merged[m, nlo + nhi), c = max(0,
 *   nlo + nhi - m), to out_keys[0, c) / out_vals[0, c) (device pointers, m entries each,
 *   not overlapping an input); *nout (host) = c; nothing past c is written. Requires
 *   0 <= nlo, nhi <= m. Errors: GP_EINVAL (width, counts, NULL pointers, overlap),
 *   GP_EDEVICE. CPU: a branch-free forward two-finger merge from the merge-path split of
 *   its first output; CUDA: merge path (Green, Odeh and Birk, "GPU Merge Path", 2012).
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
#ifndef GP_EXT_H
#define GP_EXT_H

#include "gp_kernels.h"

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

/* Descending key of the ascending key `key` of an element of type t (4-byte keys in the low
 * 32 bits, upper bits ignored; result zero-extended): ~key in the key's width, except that
 * the NaN key of GP_F32 / GP_F64 (all ones) stays. Invalid t: returns key unchanged. */
uint64_t gp_key_desc(gp_dtype t, uint64_t key);
/* Inverse of gp_key_desc on the keys that occur (it is the same map: an involution). */
uint64_t gp_key_undesc(gp_dtype t, uint64_t key);

/* The one-line message of the last failure of a CPU twin of cpu_ext.c (gp_cpu_to_keys_desc,
 * gp_cpu_from_keys_desc, gp_cpu_sort_pairs, gp_cpu_merge_split_pairs, gp_cpu_exact_sum);
 * "" when none. (The CPU table's last_error() shows cpu_backend.c's own buffer.) */
const char *gp_cpu_ext_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* GP_EXT_H */
