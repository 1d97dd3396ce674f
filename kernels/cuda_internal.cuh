/* cuda_internal.cuh — helpers shared by the CUDA backend's translation units
 * (cuda_backend.cu, cuda_reduce.cu, cuda_stats.cu, cuda_trap.cu, cuda_sort.cu,
 * cuda_exact_sum.cu, cuda_scan.cu, cuda_hist.cu, cuda_select.cu). Not part of the public
 * contract: host code sees only gpuprim/kernels.h.
 *
 *   - the error buffer behind gp_backend.last_error() and the CUDA_CHECK / CUDA_CHECK_LAUNCH
 *     macros that fill it ("file:line: call: cudaGetErrorString") and return GP_EDEVICE;
 *   - the cached properties of the current device (used for launch sizing);
 *   - device versions of the order-key maps and of gp_mix64, identical in meaning to
 *     gp_key_of / gp_key_to_elem (common.c) and gp_mix64 (gpuprim/kernels.h);
 *   - the argument checks and launch sizing the entry points share;
 *   - the extern "C" entry points of cuda_stats.cu, cuda_trap.cu, cuda_sort.cu,
 *     cuda_exact_sum.cu, cuda_scan.cu, cuda_hist.cu and cuda_select.cu that the backend
 *     table in cuda_backend.cu points to.
 *
 * Threading: like the CPU backend, the CUDA backend assumes one calling host thread per
 * process (the static error buffer, device cache and scratch buffers are not locked).
 */
#ifndef GP_CUDA_INTERNAL_CUH
#define GP_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprim/kernels.h"

/* ---- error reporting ------------------------------------------------------------------ */

/* Formats one line (printf-style, truncated to the buffer) into the backend's error buffer,
 * the text gp_backend.last_error() returns. Defined in cuda_backend.cu. */
void gpc_set_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The backend's error buffer ("" until something fails). Defined in cuda_backend.cu. */
const char *gpc_last_error(void);

/* Evaluates a CUDA runtime call; on failure records "file:line: call: message", clears the
 * runtime's (non-sticky) last-error state so that later launch checks do not see a stale
 * error, and returns GP_EDEVICE from the enclosing function (which must return int). */
#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t gpc_e_ = (call);                                                        \
        if (gpc_e_ != cudaSuccess) {                                                        \
            gpc_set_error("%s:%d: %s: %s", __FILE__, __LINE__, #call,                       \
                          cudaGetErrorString(gpc_e_));                                      \
            (void)cudaGetLastError();                                                       \
            return GP_EDEVICE;                                                              \
        }                                                                                   \
    } while (0)

/* After a kernel launch: checks cudaGetLastError() (bad configuration, missing image, ...)
 * and reports "file:line: launch of <what>: message" as GP_EDEVICE. */
#define CUDA_CHECK_LAUNCH(what)                                                             \
    do {                                                                                    \
        cudaError_t gpc_e_ = cudaGetLastError();                                            \
        if (gpc_e_ != cudaSuccess) {                                                        \
            gpc_set_error("%s:%d: launch of %s: %s", __FILE__, __LINE__, (what),            \
                          cudaGetErrorString(gpc_e_));                                      \
            return GP_EDEVICE;                                                              \
        }                                                                                   \
    } while (0)

/* Records a GP_EINVAL failure "func: message" and returns GP_EINVAL from the enclosing
 * function. */
#define GPC_EINVAL(...)                                                                     \
    do {                                                                                    \
        char gpc_m_[200];                                                                   \
        snprintf(gpc_m_, sizeof gpc_m_, __VA_ARGS__);                                       \
        gpc_set_error("%s: %s (bad argument) at %s:%d", __func__, gpc_m_, __FILE__,         \
                      __LINE__);                                                            \
        return GP_EINVAL;                                                                   \
    } while (0)

/* ---- the current device's properties ------------------------------------------------- */

typedef struct gpc_devinfo {
    int device;                 /* CUDA ordinal these properties belong to */
    int sm_count;               /* multiprocessors */
    int max_threads_per_sm;     /* resident threads per multiprocessor */
    size_t smem_per_block;      /* shared memory per block without opt-in, bytes */
    size_t smem_per_block_optin;/* shared memory per block with opt-in, bytes */
    int max_grid_x;             /* gridDim.x limit */
} gpc_devinfo;

/* Sets *out to the cached properties of the calling thread's current device, (re)reading
 * them when the current device changed since the last call. Returns GP_OK or GP_EDEVICE.
 * Defined in cuda_backend.cu. */
int gpc_devinfo_get(const gpc_devinfo **out);

/* ---- order keys and the hash, on the device ------------------------------------------ */
/* Same meaning as gp_key_of / gp_key_to_elem in common.c (see gpuprim/kernels.h). Keys of
 * 4-byte types are returned zero-extended in a uint64_t by gpc_key_of. */

/* Element -> key (zero-extended to 64 bits for the 4-byte types). */
__device__ __forceinline__ uint64_t gpc_key_of(float v) { return gp_key_f32_bits(__float_as_uint(v)); }
__device__ __forceinline__ uint64_t gpc_key_of(double v)
{
    return gp_key_f64_bits((uint64_t)__double_as_longlong(v));
}
__device__ __forceinline__ uint64_t gpc_key_of(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
__device__ __forceinline__ uint64_t gpc_key_of(uint32_t v) { return v; }
__device__ __forceinline__ uint64_t gpc_key_of(int64_t v)
{
    return (uint64_t)v ^ 0x8000000000000000ull;
}
__device__ __forceinline__ uint64_t gpc_key_of(uint64_t v) { return v; }

/* 1 when v is a NaN (bit test: no floating-point operation, so signalling NaNs, denormals
 * and fast-math settings cannot matter); always 0 for integers. */
__device__ __forceinline__ bool gpc_is_nan(float v) { return (__float_as_uint(v) & 0x7FFFFFFFu) > 0x7F800000u; }
__device__ __forceinline__ bool gpc_is_nan(double v)
{
    return ((uint64_t)__double_as_longlong(v) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}
__device__ __forceinline__ bool gpc_is_nan(int32_t) { return false; }
__device__ __forceinline__ bool gpc_is_nan(uint32_t) { return false; }
__device__ __forceinline__ bool gpc_is_nan(int64_t) { return false; }
__device__ __forceinline__ bool gpc_is_nan(uint64_t) { return false; }

/* ---- shared argument checks and launch sizing ----------------------------------------- */

/* The checks of an entry point's element array: t a valid type, n >= 0, p non-NULL when
 * n > 0 (GPC_EINVAL otherwise, naming `name`). */
#define GPC_CHECK_ARRAY(t, n, p, name)                                                      \
    do {                                                                                    \
        if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)(t));                \
        if ((n) < 0) GPC_EINVAL("n = %lld < 0", (long long)(n));                            \
        if ((n) > 0 && !(p)) GPC_EINVAL("%s is NULL with n = %lld", name, (long long)(n));  \
    } while (0)

/* 1 when the byte ranges [a, a+na) and [b, b+nb) overlap (both non-empty). */
static inline bool gpc_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return false;
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}

/* Grid-stride grid for `work` items of `threads` each: at most the device's resident
 * thread count, at least 1 block. */
static inline int gpc_stride_grid(long long work, int threads, const gpc_devinfo *d)
{
    long long cap = (long long)d->sm_count * (d->max_threads_per_sm / threads);
    if (cap < 1) cap = 1;
    long long b = (work + threads - 1) / threads;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    return (int)b;
}

/* f(T()) with T the C type of the element type t (float, double, int32_t, int64_t,
 * uint32_t, uint64_t): one switch for every entry point that is a template over T.
 * GPC_EINVAL for an invalid t. */
template <class F> int gpc_with_dtype(gp_dtype t, F &&f)
{
    switch (t) {
    case GP_F32: return f(float());
    case GP_F64: return f(double());
    case GP_I32: return f(int32_t());
    case GP_I64: return f(int64_t());
    case GP_U32: return f(uint32_t());
    case GP_U64: return f(uint64_t());
    default: GPC_EINVAL("invalid dtype %d", (int)t);
    }
}

/* ---- entry points (the backend table's entries) -------------------------------------- */
/* Each has exactly the meaning of the gp_backend entry of the same name (gpuprim/kernels.h,
 * gpuprim/exact_sum.h, gpuprim/dist.h); pointers are device pointers of the CUDA backend
 * except the host outputs (stats' out, trap_x's io, trap_fn's wsum, merge_split's nout,
 * merge_path's split, exact_sum's acc, the scans' carry, the counts and records of hist,
 * finite_range, radix_hist and runs, and hist's spec with its edges); each returns after its
 * device work has finished, GP_OK or GP_EINVAL / GP_ENOMEM / GP_EDEVICE with last_error() set. */
struct gp_superacc;
struct gp_hist_spec;
struct gp_frange;
struct gp_select;
struct gp_runs;
extern "C" {
/* cuda_stats.cu */
int gp_cuda_stats(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out);
/* cuda_trap.cu */
int gp_cuda_trap_x(gp_dtype t, const void *y, const double *x, int64_t n, gp_stats *io);
int gp_cuda_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                    double *wsum);
/* cuda_sort.cu */
int gp_cuda_to_keys(gp_dtype t, gp_order order, void *buf, int64_t n);
int gp_cuda_from_keys(gp_dtype t, gp_order order, void *buf, int64_t n);
int gp_cuda_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable);
int gp_cuda_iota(uint64_t *dst, int64_t n, uint64_t start);
int gp_cuda_sort_values(gp_dtype t, void *buf, int64_t n);
int gp_cuda_merge_split(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                        const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t m,
                        int keep_upper, int stable, void *out_keys, uint64_t *out_vals,
                        int64_t *nout);
int gp_cuda_merge_path(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                       const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t t,
                       int stable, int64_t *split);
/* cuda_exact_sum.cu */
int gp_cuda_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what,
                      struct gp_superacc *acc);
/* cuda_scan.cu */
int gp_cuda_cumsum(gp_dtype t, const void *y, int64_t n, gp_scan_carry *carry, void *out);
int gp_cuda_cumint(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                   gp_scan_carry *carry, double *out);
/* cuda_hist.cu */
int gp_cuda_hist(const struct gp_hist_spec *spec, const void *y, int64_t n, int64_t *counts);
int gp_cuda_finite_range(gp_dtype t, const void *y, int64_t n, struct gp_frange *io);
/* cuda_select.cu */
int gp_cuda_radix_hist(gp_dtype t, const void *y, int64_t n, const struct gp_select *sel,
                       int64_t *counts);
int gp_cuda_runs(gp_dtype t, const void *y, int64_t n, struct gp_runs *out);
}

#endif /* GP_CUDA_INTERNAL_CUH */
