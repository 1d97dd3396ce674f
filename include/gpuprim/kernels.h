/* kernels.h — element types, order keys, the statistics record and the backend table.
 *
 * This header is shared by the host C11 code (src/, io/, tests/) and the CUDA C kernels
 * (the kernels/ .cu files, compiled as CUDA C++ with extern "C" linkage for the entry points).
 * kernels/ knows one device (or the CPU) and nothing of MPI or HDF5.
 *
 * Conventions used by every function declared here:
 *   - element counts are int64_t (elements, never bytes, unless the name says bytes);
 *   - return 0 on success, a GP_E* code (> 0) on failure; the backend's last_error() then
 *     holds a one-line message with the failing call and file:line;
 *   - "device pointer" means memory from the same backend's alloc(): GPU global memory for
 *     the CUDA backend, ordinary host memory for the CPU backend.
 */
#ifndef GP_KERNELS_H
#define GP_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------------- */

/* The version this library was built from, read from git at build time (not configure
 * time; src/version.c, cmake/gp_version.cmake): "0.1.0+<git describe --always --dirty
 * --tags>", e.g. "0.1.0+f985394-dirty"; "0.1.0" outside a git checkout; "unknown" when
 * src/version.c is compiled outside CMake (the fuzz targets). Static; never NULL. */
const char *gp_version(void);

/* The full hash of the commit this library was built from, with "-dirty" when tracked files
 * differed from it; "unknown" outside a git checkout. Static; never NULL. */
const char *gp_git_commit(void);

/* ---- element types ------------------------------------------------------------------- */

/* The six element types every layer understands. io/ converts any HDF5 integer or float
 * class into one of these (narrower integers widen, float16 -> f32, long double -> f64). */
typedef enum gp_dtype {
    GP_F32 = 0,
    GP_F64 = 1,
    GP_I32 = 2,
    GP_I64 = 3,
    GP_U32 = 4,
    GP_U64 = 5,
    GP_NDTYPES = 6
} gp_dtype;

/* Bytes per element of t (4 or 8); 0 for an invalid t. */
size_t gp_dtype_size(gp_dtype t);
/* "f32", "f64", "i32", "i64", "u32", "u64"; "?" for an invalid t. */
const char *gp_dtype_name(gp_dtype t);
/* Parses the names above (and the aliases float32, float64, int32, int64, uint32, uint64).
 * Returns 0 and sets *t, or -1 for an unknown name. */
int gp_dtype_parse(const char *s, gp_dtype *t);
/* 1 for GP_F32/GP_F64, else 0. */
int gp_dtype_is_float(gp_dtype t);

/* ---- order keys ---------------------------------------------------------------------- */
/* Every element maps to an unsigned integer of the same width (u32 for 4-byte types, u64
 * for 8-byte types) whose unsigned order is the sort order:
 *   floats: negative -> all bits flipped; positive (sign clear) -> sign bit set; every NaN
 *           -> all ones (one value above +inf, so NaNs sort last); -0.0 sorts before +0.0.
 *   signed ints: sign bit flipped.   unsigned ints: identity.
 * gp_key_to_elem inverts it; a NaN comes back as the default quiet NaN, the one numpy's
 * np.nan has (0x7FC00000 / 0x7FF8000000000000). Keys of 4-byte types are zero-extended to
 * 64 bits where a uint64_t is used (min_key, max_key, first_key, last_key below). */
uint64_t gp_key_of(gp_dtype t, const void *elem);
/* Writes the element whose key is `key` to *elem (gp_dtype_size(t) bytes). */
void gp_key_to_elem(gp_dtype t, uint64_t key, void *elem);
/* The element at elem (gp_dtype_size(t) bytes, any alignment) converted to double as
 * (double)value: exact for f32/f64/i32/u32, NaN kept; NaN for an invalid t. */
double gp_elem_to_double(gp_dtype t, const void *elem);
/* Descending key of the ascending key `key` of an element of type t (4-byte keys in the low
 * 32 bits, upper bits ignored; result zero-extended): ~key in the key's width, except that
 * the NaN key of GP_F32 / GP_F64 (all ones) stays. Invalid t: returns key unchanged. */
uint64_t gp_key_desc(gp_dtype t, uint64_t key);
/* Inverse of gp_key_desc on the keys that occur (it is the same map: an involution). */
uint64_t gp_key_undesc(gp_dtype t, uint64_t key);
/* The element whose key is `key`, converted to double (gp_elem_to_double of it). */
double gp_key_to_double(gp_dtype t, uint64_t key);
/* Host and device inline helpers (compiled for both when the header is read by nvcc). */
#ifdef __CUDACC__
#define GP_HD __host__ __device__
#else
#define GP_HD
#endif

/* Keys of float bit patterns and back (the definitions above; one copy for every backend). */
static inline GP_HD uint32_t gp_key_f32_bits(uint32_t u)
{
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu; /* every NaN */
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
static inline GP_HD uint64_t gp_key_f64_bits(uint64_t u)
{
    if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) return ~0ull;
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
static inline GP_HD uint32_t gp_unkey_f32_bits(uint32_t k)
{
    if (k == 0xFFFFFFFFu) return 0x7FC00000u; /* the default quiet NaN (numpy's np.nan) */
    return (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
}
static inline GP_HD uint64_t gp_unkey_f64_bits(uint64_t k)
{
    if (k == ~0ull) return 0x7FF8000000000000ull;
    return (k & 0x8000000000000000ull) ? (k & 0x7FFFFFFFFFFFFFFFull) : ~k;
}

/* 64-bit finaliser (splitmix64's) used for the order-independent multiset hash. */
static inline GP_HD uint64_t gp_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- exact 128-bit integers (kernels/common.c) ---------------------------------------- */
/* A signed 128-bit integer in two's complement, value = hi * 2^64 + lo: plain data of two
 * 64-bit words (no compiler extension), so that records holding one move between ranks as
 * bytes. The exact integer sums of the statistics record use it: n elements of at most 64
 * bits sum to less than n * 2^64 in magnitude, which fits for any n below 2^63. */
typedef struct gp_i128 {
    uint64_t lo; /* bits 0..63 */
    int64_t  hi; /* bits 64..127 (the sign is bit 63 of hi) */
} gp_i128;

/* Characters gp_i128_to_dec needs at most: a sign, 39 digits and the terminating NUL. */
#define GP_I128_DEC_LEN 41

/* v as a gp_i128 (sign-extended / zero-extended). */
gp_i128 gp_i128_from_i64(int64_t v);
gp_i128 gp_i128_from_u64(uint64_t v);
/* a + b modulo 2^128 (exact whenever the true sum is in [-2^127, 2^127)). */
gp_i128 gp_i128_add(gp_i128 a, gp_i128 b);
/* -1, 0 or +1 as a < b, a == b, a > b. */
int gp_i128_cmp(gp_i128 a, gp_i128 b);
/* a rounded once to the nearest double, ties to even (exact up to 2^53 in magnitude). */
double gp_i128_to_double(gp_i128 a);
/* a / d rounded once to the nearest double, ties to even (not (double)a / d, which rounds
 * twice); d must be > 0 (NaN otherwise). The result is never zero unless a is. */
double gp_i128_div(gp_i128 a, int64_t d);
/* Writes a in full decimal ("-170141183460469231731687303715884105728" at the most: up to
 * GP_I128_DEC_LEN characters with the NUL) into buf. Returns the length written (without
 * the NUL), or 0 with buf = "" (when len > 0) if len is too small. */
size_t gp_i128_to_dec(gp_i128 a, char *buf, size_t len);

/* ---- the statistics record ----------------------------------------------------------- */
/* One record describes one contiguous piece (a shard, or several adjacent shards after
 * gp_stats_combine). It is plain data: MPI moves it as bytes and combines it with
 * gp_stats_combine (non-commutative: `lo` is the piece that comes first in index order).
 * Derived values, as gpuprim_mpi reports them: mean = gp_stats_mean, L2 norm =
 * sqrt(sumsq), min / max = gp_key_to_double(dtype, min_key / max_key) (none when
 * count == nan_count).
 * Sums by element type: float32 / float64 data accumulate `sum` in float64 (isum = 0,
 * has_isum = 0); integer data (i32, i64, u32, u64) accumulate the exact integer `isum`
 * (has_isum = 1), and `sum` is isum rounded once to double — the same bits on every
 * backend and for any split into pieces. */
typedef struct gp_stats {
    int64_t  count;      /* elements in the piece, NaNs included */
    int64_t  nan_count;  /* NaN elements (always 0 for integer types) */
    double   sum;        /* sum of the non-NaN elements: float types accumulated in float64;
                            integer types gp_i128_to_double(isum) */
    double   sumsq;      /* sum of squares of the non-NaN elements, float64 */
    gp_i128  isum;       /* integer types: the exact sum of the elements; 0 for floats */
    uint64_t min_key;    /* key of the smallest non-NaN element; UINT64_MAX when none */
    uint64_t max_key;    /* key of the largest non-NaN element; 0 when none */
    uint64_t hash;       /* sum mod 2^64 of gp_mix64(key) over all elements: a fingerprint
                            of the multiset that does not depend on order */
    uint64_t first_key;  /* key of element 0 (undefined when count == 0) */
    uint64_t last_key;   /* key of element count-1 (undefined when count == 0) */
    int64_t  descents;   /* number of i with key[i] > key[i+1] (only with GP_STATS_ORDER) */
    double   yfirst;     /* element 0 as double (NaN kept) */
    double   ylast;      /* element count-1 as double */
    double   trap;       /* with a coordinate array x: sum over adjacent pairs inside the
                            piece of (x[i+1]-x[i])*(y[i]+y[i+1])/2; else 0 */
    double   xfirst;     /* x[0] (only when has_x) */
    double   xlast;      /* x[count-1] (only when has_x) */
    int32_t  has_x;      /* 1 when trap/xfirst/xlast were filled by a trap_x call */
    int32_t  order_valid;/* 1 when descents was computed (GP_STATS_ORDER) */
    int32_t  has_isum;   /* 1 when isum is the exact sum (integer types), else 0 */
    int32_t  reserved;   /* 0 (keeps the record free of padding bytes) */
} gp_stats;

/* flags for backend->stats */
#define GP_STATS_ORDER 1u   /* also count descents (key[i] > key[i+1]) */
#define GP_STATS_NOHASH 2u  /* skip the multiset hash (hash = 0): the 64-bit mix per element
                               is most of the kernel's instructions; for statistics only */

/* The record of an empty piece (count 0, min_key UINT64_MAX, everything else 0; has_x and
 * order_valid are 1 so that an empty piece never clears them in a combine; has_isum is 0,
 * and a piece of count 0 never decides has_isum in a combine either). */
gp_stats gp_stats_empty(void);
/* Combines two adjacent pieces, lo before hi: counts and sums add, min/max/hash combine,
 * descents add plus one if lo's last key > hi's first key, first comes from lo (unless
 * empty) and last from hi, and with has_x the pair term across the boundary,
 * (hi.xfirst - lo.xlast)*(lo.ylast + hi.yfirst)/2, is added to trap. When one piece has
 * count 0 the result is the other piece (has_x and order_valid ANDed). Otherwise, when both
 * have has_isum, isum adds exactly and sum = gp_i128_to_double(isum); else sum is
 * lo.sum + hi.sum (float64) and has_isum = 0. */
gp_stats gp_stats_combine(const gp_stats *lo, const gp_stats *hi);

/* The mean of the non-NaN elements: with has_isum, isum / count rounded once
 * (gp_i128_div); else sum / (count - nan_count) in float64. NaN when there is none. */
double gp_stats_mean(const gp_stats *s);

/* The bracket of the uniform trapezoid rule of integer samples (t an integer type, s with
 * has_isum and count >= 2): isum - (y_0 + y_{count-1}) / 2 with y_0 and y_{count-1} the
 * exact elements of first_key / last_key, computed exactly (it may need 129 bits) and
 * rounded once to double. The integral with spacing h is h times it. 0 when count < 2;
 * NaN for a float t or without has_isum. */
double gp_stats_int_trap_bracket(gp_dtype t, const gp_stats *s);

/* ---- prefix scans ---------------------------------------------------------------------- */
/* The state a prefix scan carries from one piece of a sequence to the next (chunks of a
 * shard, shards of ranks), so that a sequence scanned piece by piece, each piece's call
 * starting from the carry the previous call left, is the scan of the whole sequence
 * (gp_backend.cumsum and cumint say what each field means for each). Plain data: MPI moves
 * it as bytes. Start one with gp_scan_carry_start. */
typedef struct gp_scan_carry {
    double hi, lo;       /* float sums: the running total as the unevaluated sum hi + lo (a
                            double-double: |lo| <= ulp(hi) / 2); a non-finite hi (+inf, -inf,
                            NaN as 0x7FF8000000000000) is the total itself, as a sequential
                            float64 sum would have it, and lo is then 0. Starts as
                            -0.0 + -0.0: the identity of IEEE addition, so a sum of -0.0
                            values stays -0.0 */
    gp_i128 isum;        /* integer cumsum: the exact running total */
    double yprev, xprev; /* cumint: the last sample scanned (as double) and its coordinate */
    int64_t index;       /* the global index of the next element (each call adds its n): the
                            index an integer overflow is reported at */
    int64_t overflow;    /* integer cumsum: the first global index whose prefix sum does not
                            fit the output type; -1 while none has */
    int32_t has_prev;    /* cumint: 1 when yprev / xprev hold the sample before the next */
    int32_t reserved;    /* 0 (keeps the record free of padding bytes) */
} gp_scan_carry;

/* A carry at the start of a sequence whose next element has global index `index`: totals
 * -0.0 and 0, no previous sample, no overflow (-1). */
gp_scan_carry gp_scan_carry_start(int64_t index);

/* ---- built-in integrands (the chapter's Dev_trap) ------------------------------------- */
typedef enum gp_func {
    GP_FN_X2 = 0,    /* x*x            */
    GP_FN_SIN = 1,   /* sin(x)         */
    GP_FN_EXP = 2,   /* exp(x)         */
    GP_FN_GAUSS = 3, /* exp(-x*x)      */
    GP_NFUNCS = 4
} gp_func;
/* "x2", "sin", "exp", "gauss". */
const char *gp_func_name(gp_func f);
/* Returns 0 and sets *f, or -1 for an unknown name. */
int gp_func_parse(const char *s, gp_func *f);
/* The exact integral of f over [a, b] in long double arithmetic (for reports and tests).
 * Either order: for b < a it is -gp_func_exact(f, b, a) (bitwise), and +0.0 when a == b. */
double gp_func_exact(gp_func f, double a, double b);

/* The order of a sort: the key maps (to_keys / from_keys) take it, the sorts themselves
 * are always ascending in the keys (CUB's pattern: descending is a map of the keys). */
typedef enum gp_order {
    GP_ASCENDING = 0,  /* smallest first, NaNs last, -0.0 before +0.0 */
    GP_DESCENDING = 1  /* largest first, NaNs last, +0.0 before -0.0 */
} gp_order;

/* The exact (Kulisch) accumulator of exact_sum below; defined in exact_sum.h (exact sums). */
struct gp_superacc;
/* The records of the histograms and the selection below (dist.h, the distribution). */
struct gp_hist_spec; struct gp_frange; struct gp_select; struct gp_runs;

/* ---- descending order and values in the sort and the merge-split, in full -------------
 *
 * to_keys(t, GP_DESCENDING, buf, n) / from_keys(t, GP_DESCENDING, buf, n)
 *   In-place map of n elements of type t (device pointer) to descending-order keys (uint32
 *   for 4-byte t, uint64 for 8-byte t) and back. desc key = gp_key_desc(t, gp_key_of(t, e)):
 *   every bit of the ascending key flipped, except that the NaN key of f32/f64 (all ones)
 *   stays all ones. Sorting these keys ascending (sort, with or without values) gives
 *   descending values with every NaN last (numpy's convention for both orders); among the
 *   non-NaN elements it is exactly the reverse of the ascending order, so +0.0 comes before
 *   -0.0. from_keys of GP_DESCENDING inverts it; a NaN comes back as the default quiet NaN
 *   (0x7FC00000 / 0x7FF8000000000000), as in ascending order. Errors: GP_EINVAL (bad t,
 *   n < 0, NULL buf with n > 0), GP_EDEVICE.
 *
 * sort(width, keys, vals, n, stable) with vals != NULL (vals == NULL: keys only, kernels.h)
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
 *   of the keys-only sort (tile sort in shared memory with (max key, max value) padding, one
 *   launch per global step of stride >= tile, in-tile finish), comparing (key, value) when
 *   stable.
 *
 * merge_split(width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, m, keep_upper, stable,
 *             out_keys, out_vals, nout) with values (any of the three value pointers
 *             non-NULL; all NULL: keys only, kernels.h)
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
 */

/* ---- the backend table --------------------------------------------------------------- */
/* One table of function pointers is all the host code sees. The CPU backend (the CPU
 * twins in kernels/cpu_*.c, its table in kernels/cpu_backend.c) and the CUDA backend (the
 * kernels/ .cu files, its table in kernels/cuda_backend.cu) give every entry the same
 * meaning; the CPU one is also the tests' oracle for the CUDA one. Every entry that
 * returns results to the host has finished its device work when it returns.
 * The entries are grouped by lifecycle, as a job uses them: identity and capabilities,
 * device memory, transfers, statistics and integrals, prefix scans, sort and keys, the merge
 * of the rank exchange's data plane, inter-process mapping, histograms and selection, errors.
 * Both tables fill them by name.
 * Every entry is mandatory (never NULL) except those marked "Optional" (sort_spare);
 * tests/test_backend_table.c checks both tables. */
typedef struct gp_backend {
    /* ---- identity and capabilities ------------------------------------------------------- */
    const char *name;                 /* "cpu" or "cuda" */

    /* What the backend's memory allows, GP_CAP_* bits (below): GP_CAP_HOST_MEMORY, its
     * device memory is host memory (the CPU backend: host code, MPI and MPI shared-memory
     * windows can use a pointer from alloc() directly); GP_CAP_IPC, memory from alloc()
     * can be mapped by another process of the node (ipc_get / ipc_open / ipc_close work;
     * the CUDA backend). Host code asks these bits, never the backend's name. */
    unsigned caps;

    /* ---- device memory ------------------------------------------------------------------- */

    /* device memory of `bytes` bytes (bytes may be 0: returns a valid unique pointer);
     * NULL on failure */
    void *(*alloc)(size_t bytes);
    void (*free)(void *p);
    /* host memory suitable for fast transfers (pinned for CUDA); NULL on failure */
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *p);

    /* Memory of the device in bytes: *free_bytes = what alloc() can still hand out now (an
     * estimate: other processes may take some), *total_bytes = the device's size.
     * CUDA: cudaMemGetInfo on the current device. CPU (its "device" memory is host
     * memory): MemAvailable of /proc/meminfo, lowered to the room left under a cgroup
     * memory limit (v2 memory.max - memory.current, v1 limit_in_bytes - usage_in_bytes);
     * total = physical memory (sysconf), or the cgroup limit when smaller; SIZE_MAX for
     * both ("unlimited") where none of these can be read. Test knob, both backends:
     * GPUPRIM_DEVICE_MEM_LIMIT=<bytes> (a decimal integer) caps *free_bytes at that value
     * (see gp_mem_limit_env), so the out-of-memory paths of the host code can run in CI on
     * any machine. Ranks that share a device each see the whole free amount: dividing it
     * is the caller's business. Errors: GP_EINVAL (NULL pointer, a malformed
     * GPUPRIM_DEVICE_MEM_LIMIT), GP_EDEVICE (CUDA); the outputs are then unchanged. */
    int (*mem_info)(size_t *free_bytes, size_t *total_bytes);

    /* ---- transfers ----------------------------------------------------------------------- */

    /* Copies of `bytes` bytes host -> device and device -> host, complete on return (also
     * for other streams and for processes that map the memory; CUDA: cudaMemcpy, then the
     * device is synchronised). */
    int (*upload)(void *dev, const void *host, size_t bytes);
    int (*download)(void *host, const void *dev, size_t bytes);

    /* Overlapped transfers: the pipeline reads the next piece of the file while the
     * previous one travels to the device, and writes a piece while the next one travels
     * back. */
    /* Starts a host -> device copy of `bytes` bytes and returns; the copy is complete only
     * after the next upload_wait(), and `host` must stay unchanged until then. Copies
     * issued one after another complete in order. With host memory from host_alloc
     * (pinned on CUDA) the copy runs while the caller goes on. CUDA: cudaMemcpyAsync on a
     * non-blocking stream of the backend's own (created on first use); CPU: memcpy, done on
     * return. Errors: GP_EINVAL (NULL pointer with bytes > 0), GP_EDEVICE. */
    int (*upload_async)(void *dev, const void *host, size_t bytes);

    /* Waits until every upload_async issued so far has completed. GP_OK, or GP_EDEVICE when
     * one of those copies failed. */
    int (*upload_wait)(void);

    /* The mirror of upload_async: starts a device -> host copy of `bytes` bytes and
     * returns; complete only after the next download_wait(); copies complete in order.
     * CUDA: cudaMemcpyAsync on a non-blocking stream of its own (not the upload stream,
     * so a download and an upload run at the same time), host memory from host_alloc;
     * CPU: memcpy, done on return. Errors: GP_EINVAL (NULL pointer with bytes > 0),
     * GP_EDEVICE. */
    int (*download_async)(void *host, const void *dev, size_t bytes);
    /* Waits until every download_async issued so far has completed (GP_OK, GP_EDEVICE). */
    int (*download_wait)(void);

    /* Copies `bytes` bytes from device memory to device memory (ranges that do not
     * overlap; either may lie in a mapping from ipc_open). Complete on return (CUDA:
     * cudaMemcpy, then the device is synchronised, so every stream and every process
     * that maps the memory sees it). Errors: GP_EINVAL (NULL pointer with bytes > 0),
     * GP_EDEVICE. */
    int (*copy)(void *dst, const void *src, size_t bytes);

    /* Waits until all device work of this process has finished (CUDA:
     * cudaDeviceSynchronize; CPU: nothing). GP_OK or GP_EDEVICE. */
    int (*synchronize)(void);

    /* ---- statistics and integrals -------------------------------------------------------- */

    /* Statistics of y[0..n) (element type t, device pointer) into *out (all fields but the
     * x ones; has_x = 0). flags: GP_STATS_ORDER. Float data accumulate in float64; integer
     * data accumulate the exact isum (has_isum = 1; sum = isum rounded once, so sum and
     * isum are the same bits on both backends). The result is bitwise the same on every
     * run for the same input and backend. */
    int (*stats)(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out);

    /* Trapezoid rule over non-uniform samples: sets io->trap = sum over i in [0, n-1) of
     * (x[i+1]-x[i])*(y[i]+y[i+1])/2, io->xfirst = x[0], io->xlast = x[n-1], io->has_x = 1
     * (y: n elements of type t; x: n float64; both device pointers). Other fields kept. */
    int (*trap_x)(gp_dtype t, const void *y, const double *x, int64_t n, gp_stats *io);

    /* Trapezoid rule of a built-in f over [a, a + n*h] with n trapezoids: the weighted sum
     * of the points i in [i0, i1) (0 <= i0 <= i1 <= n+1) of w_i * f(a + i*h), where
     * w_0 = w_n = 1/2 and w_i = 1 otherwise, x in float64. The integral is h times the
     * sum over all ranks' ranges. Result in *wsum. */
    int (*trap_fn)(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                   double *wsum);

    /* Exact sums: exact_sum.h documents them in full; include exact_sum.h for gp_superacc
     * and the GP_SA_* flags. */
    /* Adds the terms selected by `what` (GP_SA_VALUES or GP_SA_SQUARES) of y[0, n) (type
     * t, device pointer) exactly into the host accumulator *acc (not reset first). The
     * accumulator's normalised contents are bitwise the same on every backend, for any
     * order or split of the input. */
    int (*exact_sum)(gp_dtype t, const void *y, int64_t n, unsigned what,
                     struct gp_superacc *acc);

    /* ---- prefix scans -------------------------------------------------------------------- */

    /* Inclusive prefix sum of y[0, n) (type t, device pointer) continuing the sequence that
     * *carry describes (host record; gp_scan_carry_start for a fresh one), into out[0, n)
     * (device pointer, not overlapping y): out[i] = carry's total + y[0] + ... + y[i].
     *   Float t: out is float64; NaN elements add nothing (numpy.nancumsum of the float64
     *     cast); an infinity makes the rest inf, and both signs of it NaN, as in a
     *     sequential float64 sum; every NaN output and total is the default quiet NaN
     *     0x7FF8000000000000, whatever NaNs the data hold. Each out[i] is within 2^-45 *
     *     (sum over j <= i of |y_j|, all pieces so far) of the exact prefix sum for any
     *     length up to 2^40 and any split into pieces (short float64 sums inside blocks,
     *     the totals between blocks and pieces carried as double-doubles); the sign of a
     *     zero is IEEE's (-0.0 while every term so far is -0.0). The same input, backend
     *     and pieces give the same bits.
     *   Integer t: out is int64 (signed t) or uint64 (unsigned t), every value exact. The
     *     first element whose prefix does not fit sets carry->overflow to its global index
     *     (carry->index + i) unless it is set already; the values from it on are then
     *     unspecified (never a silent wrap: the caller checks carry->overflow). The exact
     *     total goes on in carry->isum.
     * On return the carry describes the sequence up to y[n-1] (its total, index += n) and
     * out holds every output (CUDA: the call ends by synchronising its stream), so that a
     * download_async of out needs no fence before it (cumint alike).
     * out == NULL: nothing is written and only the totals and index are advanced (float
     * t: the same bits as a scan on the CPU backend, deterministic and within the bound on
     * CUDA; integer t: isum exact, overflow not looked for): a rank's total before its scan.
     * Errors: GP_EINVAL (bad t, n < 0, NULL y with n > 0, NULL carry, y and out
     * overlapping), GP_EDEVICE. CPU: blocks of 64 elements, each a naive float64 prefix plus
     * the double-double carry. CUDA: per thread a sequential scan of its items, per warp
     * __shfl_up_sync steps, per block the warp totals scanned in shared memory, across
     * blocks reduce-then-scan (or a single pass with decoupled look-back,
     * GPUPRIM_SCAN_ALGO); the carry between blocks is a fixed double-double formula of the
     * blocks' float64 totals, so its bits do not depend on timing. */
    int (*cumsum)(gp_dtype t, const void *y, int64_t n, gp_scan_carry *carry, void *out);

    /* Cumulative trapezoid rule (scipy.integrate.cumulative_trapezoid with initial=0, y
     * cast to float64) of y[0, n) (type t, device pointer) with coordinates x[0, n)
     * (float64, device pointer) or, with x == NULL, the uniform spacing dx, continuing
     * *carry, into out[0, n) (float64, device pointer): out[i] = carry's total + sum over
     * k <= i of term_k, term_k = (h_k * (y_{k-1} + y_k)) / 2 with h_k = x_k - x_{k-1} (or
     * dx) and y_{-1}, x_{-1} the carry's previous sample (yprev, xprev); the very first
     * sample of a sequence (has_prev == 0) has no term and out = +0.0. A NaN sample makes
     * every later value NaN, infinities as in a sequential sum; the bound and determinism
     * of cumsum, relative to the sum of |term_k|. On return yprev / xprev = y[n-1] /
     * x[n-1], has_prev = 1 (when n > 0), index += n. out == NULL: only the carry is
     * advanced, as for cumsum. Errors: GP_EINVAL (bad t, n < 0, NULL y with n > 0, NULL
     * carry, dx not finite without x, out overlapping y or x), GP_EDEVICE. */
    int (*cumint)(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                  gp_scan_carry *carry, double *out);

    /* ---- sort and keys ------------------------------------------------------------------- */

    /* In-place map of n elements of type t to their order keys and back (see above), in
     * the order `order`: GP_ASCENDING, the keys of gp_key_of; GP_DESCENDING, those keys
     * with every bit flipped except the NaN key of a float type (all ones), which stays, so
     * that ascending order of the keys is descending value order with NaNs last (numpy's
     * convention) and +0.0 before -0.0 (the block above the table). Keys are u32 for 4-byte
     * t, u64 for 8-byte t; from_keys inverts to_keys of the same order (NaN keys come back
     * as the default quiet NaN). Errors: GP_EINVAL (bad t, order not GP_ASCENDING /
     * GP_DESCENDING, n < 0, NULL buf with n > 0), GP_EDEVICE. CUDA: one grid-stride
     * launch (none for ascending unsigned types, whose keys are the elements). */
    int (*to_keys)(gp_dtype t, gp_order order, void *buf, int64_t n);
    int (*from_keys)(gp_dtype t, gp_order order, void *buf, int64_t n);

    /* Sorts n unsigned keys of `width` bytes (4 or 8) ascending, in place; with vals !=
     * NULL it moves the uint64 vals[i] with each key (CUB's pattern: one sort, the values
     * optional).
     *   vals == NULL (keys only): stable is ignored (equal keys cannot be told apart).
     *   vals != NULL: stable != 0 orders by (key, value) lexicographically (with value =
     *     input position this is a stable sort, and the result is the unique sorted
     *     sequence, the same bits on both backends); stable == 0 orders by key only, the
     *     order of equal keys' values being a deterministic function of the input
     *     (backend-specific). keys and vals must not overlap.
     * Multi-block bitonic sort (the chapter's Programs 6.17-6.19) on the GPU, any n (the
     * block above the table describes the pairs paths); radix sort on the CPU. n <= 1:
     * nothing.
     * Errors: GP_EINVAL (width not 4/8, n < 0, NULL keys with n > 0, keys overlapping
     * vals; CUDA: n needing more sort tiles than the grid's x limit), GP_ENOMEM (CPU
     * scratch), GP_EDEVICE. */
    int (*sort)(int width, void *keys, uint64_t *vals, int64_t n, int stable);

    /* Writes dst[i] = start + i for i in [0, n) (n uint64, device memory): the input
     * positions that ride with the keys of a sort with values (--stable, --argsort,
     * --payload), made where the sort runs instead of uploaded. Complete on return.
     * Errors: GP_EINVAL (n < 0, NULL dst with n > 0), GP_EDEVICE. CUDA: one grid-stride
     * launch; CPU: a loop. */
    int (*iota)(uint64_t *dst, int64_t n, uint64_t start);

    /* Sorts n elements of type t ascending in place in the order of their keys (gp_key_of:
     * NaN last, -0.0 before +0.0; NaNs come back as the default quiet NaN): the same bits
     * as to_keys + sort (keys only) + from_keys in ascending order, in one call. buf: n
     * elements in memory from this backend's alloc (host memory on the CPU backend). n = 0
     * and n = 1: nothing to order (n = 1 still maps a NaN to the default quiet NaN);
     * returns GP_OK. CUDA: the element ->
     * key map runs in the loads of the bitonic sort's first pass and the inverse in the
     * stores of its last (no pass of their own, one device synchronisation), and the
     * second sort of the same array replays its launches as a CUDA graph; CPU: the three
     * twins in turn. Errors: GP_EINVAL (bad t, n < 0, NULL buf with n > 0; CUDA: n needing
     * more sort tiles than the grid's x limit), GP_ENOMEM (CPU scratch), GP_EDEVICE. */
    int (*sort_values)(gp_dtype t, void *buf, int64_t n);

    /* Optional: NULL where sort needs no scratch (CUDA: the bitonic network sorts in
     * place). sort's meaning, with the caller's spare buffers as the sort's scratch
     * (spare_keys: room for n keys; spare_vals: for n values when vals is given; neither
     * overlapping keys, vals or each other), so that nothing of the data's size is
     * allocated. On return *in_spare says where the sorted data are: 0 in (keys, vals), 1
     * in (spare_keys, spare_vals), keys and vals then holding scratch (CPU: after an odd
     * number of radix passes, whose copy back this saves). Errors: sort's, and GP_EINVAL
     * for a NULL in_spare, a NULL spare with n > 0, or overlapping buffers. */
    int (*sort_spare)(int width, void *keys, uint64_t *vals, void *spare_keys,
                      uint64_t *spare_vals, int64_t n, int stable, int *in_spare);

    /* ---- merge: the rank exchange's data plane (ranks/network.c, transport_shared.c) ----- */

    /* Merge-split of two ascending runs from two ranks: lo (nlo keys, from the lower rank)
     * and hi (nhi keys), each key optionally carrying a uint64 value. Both ranks call it
     * with the same lo/hi. With m slots per rank, the merged sequence's slots [0, m) belong
     * to the lower rank and [m, 2m) to the higher one (slots past nlo+nhi are empty).
     * keep_upper = 0 writes merged[0, min(m, nlo+nhi)) to out, keep_upper = 1 writes
     * merged[m, nlo+nhi) (possibly nothing); *nout (host) gets the count written. Requires
     * nlo <= m, nhi <= m; out_keys (and out_vals) hold m entries and must not alias any
     * input (nor each other).
     *   Keys only: lo_vals, hi_vals and out_vals all NULL. The merge orders by key, ties lo
     *     first; stable is ignored.
     *   With values: any of the three non-NULL; then every one of them with entries to
     *     read or write must be non-NULL. stable != 0: the inputs are ascending in (key,
     *     value) and the merge orders by (key, value) (exact ties lo first); stable == 0:
     *     by key, ties lo first.
     * Merge path (merge_path.h) on both backends. Errors: GP_EINVAL (width, negative
     * counts, nlo > m or nhi > m, NULL pointers, overlap), GP_EDEVICE. */
    int (*merge_split)(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                       const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t m,
                       int keep_upper, int stable, void *out_keys, uint64_t *out_vals,
                       int64_t *nout);

    /* The merge-path split (merge_path.h) of two ascending runs: *split (host) = the
     * number of lo's elements among the first t outputs of their merge, 0 <= t <= nlo +
     * nhi, with the order and tie rule of merge_split (stable == 0: by key, ties lo
     * first; lo_vals / hi_vals are not read and may be NULL) or of merge_split with values
     * and stable != 0 (by (key, value), exact ties lo first). Inputs are device pointers;
     * one may be a mapping of another process's memory from ipc_open (CPU: a pointer into an
     * MPI shared-memory window). Reads O(log(nlo + nhi)) elements. CUDA: one thread of one
     * block, then a copy of the answer. Errors: GP_EINVAL (width not 4/8, counts negative
     * or t out of range, NULL pointers with elements to read), GP_EDEVICE. */
    int (*merge_path)(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                      const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t t,
                      int stable, int64_t *split);

    /* ---- inter-process mapping ----------------------------------------------------------- */

    /* Inter-process mapping of device memory (GP_CAP_IPC; the CPU backend returns
     * GP_EINVAL, "not supported"). ipc_get writes into handle[0, GP_IPC_HANDLE_BYTES) the
     * handle of the allocation that starts at dev (a pointer alloc() returned: CUDA
     * cudaIpcGetMemHandle of the driver block that holds it, and dev's offset in that
     * block, since cudaMalloc may sub-allocate). ipc_open maps, in this process, the
     * allocation of another process that a handle names and sets *dev to its start
     * (cudaIpcOpenMemHandle, plus the offset; with
     * cudaIpcMemLazyEnablePeerAccess: a peer mapping over NVLink / PCIe when the other
     * process owns another GPU, the same device's memory when it shares this one); a
     * process cannot open its own handle. ipc_close unmaps what ipc_open mapped
     * (cudaIpcCloseMemHandle); every mapping must be closed before the owner frees the
     * memory. Errors: GP_EINVAL, GP_EDEVICE (last_error() names the call). */
    int (*ipc_get)(void *dev, void *handle);
    int (*ipc_open)(const void *handle, void **dev);
    int (*ipc_close)(void *dev);

    /* ---- histograms and selection ------------------------------------------------------- */
    /* The distribution, piece by piece (dist.h has the records and the rules in full). Each
     * adds what it finds in y[0, n) (device pointer, type t or spec->t) into host counts or
     * a host record: integers, the same for any split into pieces and on both backends.
     * Errors: GP_EINVAL (bad type, n < 0, NULL pointers, a spec or select state that does
     * not fit the type), GP_ENOMEM, GP_EDEVICE. */

    /* numpy's histogram rule of spec (its host edges read by the entry): counts[bin] += 1
     * for bins 0 .. nbins - 1, counts[nbins] below the range (-inf too), counts[nbins + 1]
     * above it (+inf too), NaN not counted; counts: nbins + 2 int64. */
    int (*hist)(const struct gp_hist_spec *spec, const void *y, int64_t n, int64_t *counts);
    /* The finite range into *io: finite elements, the keys of the least and greatest, the
     * -inf and +inf counts. */
    int (*finite_range)(gp_dtype t, const void *y, int64_t n, struct gp_frange *io);
    /* One pass of a radix select: counts[(p << sel->bits) + digit] += 1 for each element whose
     * order key has sel->prefixes[p] above the pass's digit; counts: gp_select_counts_len
     * int64. */
    int (*radix_hist)(gp_dtype t, const void *y, int64_t n, const struct gp_select *sel,
                      int64_t *counts);
    /* The runs of equal non-NaN values into *out (in sorted data, the distinct count). */
    int (*runs)(gp_dtype t, const void *y, int64_t n, struct gp_runs *out);

    /* ---- errors -------------------------------------------------------------------------- */

    /* One-line description of the last failure ("" when none). */
    const char *(*last_error)(void);
} gp_backend;

/* gp_backend.caps bits */
#define GP_CAP_HOST_MEMORY 1u /* device memory is host memory */
#define GP_CAP_IPC 2u         /* ipc_get / ipc_open / ipc_close map memory between processes */

/* Bytes of a handle of ipc_get / ipc_open (a cudaIpcMemHandle_t and a 64-bit offset). */
#define GP_IPC_HANDLE_BYTES 72

/* The CPU backend (always available). */
const gp_backend *gp_backend_cpu(void);

/* The CUDA backend bound to visible device `device` (0-based, among the devices this
 * process sees). Returns NULL and writes a one-line reason into why[0..whylen) when this
 * build has no CUDA, no device is visible, or the device cannot be initialised. */
const gp_backend *gp_backend_cuda(int device, char *why, size_t whylen);

/* For a program's main, before MPI_Init and any CUDA call: asks the CUDA driver to load
 * every kernel when it starts (CUDA_MODULE_LOADING=EAGER) unless the environment already
 * says how. With CUDA's default lazy loading each kernel loads at its first launch, in the
 * middle of the job, where it adds to the first statistics and the first sort more than
 * eager loading adds to the start-up (bench/RESULTS.md, "eager kernel loading"). Changes
 * only this process's environment. */
void gp_cuda_load_eagerly(void);

/* Number of CUDA devices visible to this process (0 without CUDA or without a driver). */
int gp_cuda_device_count(void);

/* Name and PCI bus id ("0000:3b:00.0") of visible device `device`; returns 0 on success. */
int gp_cuda_device_info(int device, char *name, size_t namelen, char *busid, size_t buslen);

/* f(x) for the built-in integrands, in double. */
double gp_func_eval(gp_func f, double x);


/* error codes */
#define GP_OK 0
#define GP_EINVAL 1   /* bad argument */
#define GP_ENOMEM 2   /* allocation failed */
#define GP_EDEVICE 3  /* CUDA error */

#ifdef __cplusplus
}
#endif
#endif /* GP_KERNELS_H */
