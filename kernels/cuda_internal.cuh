/* cuda_internal.cuh — helpers shared by the CUDA backend's translation units
 * (cuda_backend.cu, cuda_reduce.cu, cuda_sort.cu). Not part of the public contract: host
 * code sees only gp_kernels.h.
 *
 *   - the error buffer behind gp_backend.last_error() and the CUDA_CHECK / CUDA_CHECK_LAUNCH
 *     macros that fill it ("file:line: call: cudaGetErrorString") and return GP_EDEVICE;
 *   - the cached properties of the current device (used for launch sizing);
 *   - device versions of the order-key maps and of gp_mix64, identical in meaning to
 *     gp_key_of / gp_key_to_elem (common.c) and gp_mix64 (gp_kernels.h);
 *   - the extern "C" entry points of cuda_reduce.cu and cuda_sort.cu that the backend table
 *     in cuda_backend.cu points to.
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

#include "gp_kernels.h"

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
/* Same meaning as gp_key_of / gp_key_to_elem in common.c (see gp_kernels.h). Keys of
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

/* ---- entry points of cuda_reduce.cu / cuda_sort.cu (the backend table's entries) ------ */
/* Each has exactly the meaning of the gp_backend entry of the same name (gp_kernels.h);
 * pointers are device pointers of the CUDA backend; each returns after its device work has
 * finished, GP_OK or GP_EINVAL / GP_ENOMEM / GP_EDEVICE with last_error() set. */
extern "C" {
int gp_cuda_stats(gp_dtype t, const void *y, int64_t n, unsigned flags, gp_stats *out);
int gp_cuda_trap_x(gp_dtype t, const void *y, const double *x, int64_t n, gp_stats *io);
int gp_cuda_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0, int64_t i1,
                    double *wsum);
int gp_cuda_to_keys(gp_dtype t, void *buf, int64_t n);
int gp_cuda_from_keys(gp_dtype t, void *buf, int64_t n);
int gp_cuda_sort_keys(int width, void *keys, int64_t n);
int gp_cuda_sort_values(gp_dtype t, void *buf, int64_t n);
int gp_cuda_merge_split_keys(int width, const void *lo, int64_t nlo, const void *hi,
                             int64_t nhi, int64_t m, int keep_upper, void *out,
                             int64_t *nout);
}

#endif /* GP_CUDA_INTERNAL_CUH */
