/* cuda_exact_sum.cu — the CUDA backend's exact sums (gp_backend.exact_sum; gpuprim/exact_sum.h gives
 * the meaning).
 *
 * Exact sums (Kulisch's exact fixed-point accumulator; gpuprim/exact_sum.h): every term is split into
 * three signed 32-bit digits (keys.h, shared with the CPU twin). Each thread keeps a
 * window of four consecutive limbs in registers (int64); a term whose three limbs fall
 * inside the window is added there, otherwise the window is flushed into the block's
 * shared accumulator with 64-bit shared-memory atomicAdd and moved to the term. After the
 * grid-stride loop the window is flushed, thread 0 propagates the block's carries (digits
 * into [0, 2^32)), and the block's nonzero limbs and its NaN / inf counts are added to a
 * global accumulator with 64-bit global atomicAdd. All of this is integer addition, which
 * is exact, associative and commutative: the result does not depend on the scheduling.
 * Bounds: a launch covers at most 2^30 elements, so a block's shared limb stays below
 * 2^30 * 2^32 = 2^62 in magnitude, and the global limbs below blocks * launches * 2^32
 * (< 2^53 for n = 2^40). The host copies the 71 words back (one cudaMemcpy, which also
 * waits for the kernels), normalises them and adds them to the caller's accumulator.
 *
 * Every entry point validates its arguments like the CPU twin and returns after its device
 * work has finished, so asynchronous faults are reported by the call that caused them.
 * Threading: one calling host thread per process (the static scratch buffer is not locked).
 */
#include "cuda_internal.cuh"
#include "gpuprim/exact_sum.h"
#include "keys.h"

#include <string.h>

namespace {

constexpr int SA_THREADS = 256;                  /* threads per exact-sum block */
constexpr long long SA_LAUNCH_MAX = 1ll << 30;   /* elements per exact-sum launch */
constexpr int SA_WORDS = GP_SA_LIMBS + 3;        /* limbs, nan, pinf, ninf */


/* ---- exact sums: per-thread work (host and device) --------------------------------------- */

/* The term of element v (VALUES or, with SQ, the square rounded in double): its class
 * (GP_SA_CLS_*) and, when finite, *mag, *pos, *neg (keys.h). Same as the CPU twin. */
__host__ __device__ __forceinline__ uint64_t sa_f64_bits(double x)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
#endif
}
template <bool SQ> __host__ __device__ __forceinline__ int sa_term(float v, uint64_t *mag, int *pos, int *neg)
{
    double x = (double)v;
    if (SQ) x = x * x;
    return gp_sa_term_f64(sa_f64_bits(x), mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int sa_term(double v, uint64_t *mag, int *pos, int *neg)
{
    double x = v;
    if (SQ) x = x * x;
    return gp_sa_term_f64(sa_f64_bits(x), mag, pos, neg);
}
/* Integers: VALUES adds |v| at the unit position with v's sign; SQ squares (double)v. */
template <bool SQ, typename I>
__host__ __device__ __forceinline__ int sa_int_term(I v, bool negative, uint64_t *mag, int *pos,
                                                    int *neg)
{
    if (SQ) {
        const double x = (double)v;
        return gp_sa_term_f64(sa_f64_bits(x * x), mag, pos, neg);
    }
    *neg = negative ? 1 : 0;
    *mag = negative ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    *pos = GP_SA_INT_POS;
    return GP_SA_CLS_FINITE;
}
template <bool SQ> __host__ __device__ __forceinline__ int sa_term(int32_t v, uint64_t *mag, int *pos, int *neg)
{
    return sa_int_term<SQ>((int64_t)v, v < 0, mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int sa_term(int64_t v, uint64_t *mag, int *pos, int *neg)
{
    return sa_int_term<SQ>(v, v < 0, mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int sa_term(uint32_t v, uint64_t *mag, int *pos, int *neg)
{
    return sa_int_term<SQ>((uint64_t)v, false, mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int sa_term(uint64_t v, uint64_t *mag, int *pos, int *neg)
{
    return sa_int_term<SQ>(v, false, mag, pos, neg);
}

/* One thread's register state: a window of four limbs [wq, wq + 4) (wq < 0: empty) and the
 * class counts. */
struct SaWindow {
    long long w0, w1, w2, w3;
    int wq;
    long long nan, pinf, ninf;
};

/* Elements i = i0, i0 + istride, ... < n of y into the window; flush(limb, value) receives
 * every nonzero window limb that leaves the window (and must add it to the block's
 * accumulator). The caller flushes the final window with sa_window_flush. */
#pragma nv_exec_check_disable
template <class F> __host__ __device__ __forceinline__ void sa_window_flush(SaWindow &w, F &&flush)
{
    if (w.wq >= 0) {
        if (w.w0) flush(w.wq, w.w0);
        if (w.w1) flush(w.wq + 1, w.w1);
        if (w.w2) flush(w.wq + 2, w.w2);
        if (w.w3) flush(w.wq + 3, w.w3); /* wq <= 63, so wq + 3 < GP_SA_LIMBS */
    }
    w.w0 = w.w1 = w.w2 = w.w3 = 0;
}

#pragma nv_exec_check_disable
template <typename T, bool SQ, class F>
__host__ __device__ __forceinline__ void sa_sum_thread(const T *y, long long n, long long i0,
                                                       long long istride, SaWindow &w, F &&flush)
{
    for (long long i = i0; i < n; i += istride) {
        uint64_t mag;
        int pos, neg;
        const int cls = sa_term<SQ>(y[i], &mag, &pos, &neg);
        if (cls != GP_SA_CLS_FINITE) {
            w.nan += cls == GP_SA_CLS_NAN;
            w.pinf += cls == GP_SA_CLS_PINF;
            w.ninf += cls == GP_SA_CLS_NINF;
            continue;
        }
        if (mag == 0) continue;
        int64_t d[3];
        const int q = pos >> 5;
        gp_sa_digits(mag, pos & 31, neg, d);
        if (w.wq < 0 || q < w.wq || q > w.wq + 1) {
            sa_window_flush(w, flush);
            w.wq = q;
        }
        if (q == w.wq) {
            w.w0 += d[0];
            w.w1 += d[1];
            w.w2 += d[2];
        } else {
            w.w1 += d[0];
            w.w2 += d[1];
            w.w3 += d[2];
        }
    }
}

/* Carry propagation of a block accumulator (digits 0 .. L-2 into [0, 2^32), signed top). */
__host__ __device__ __forceinline__ void sa_normalize(unsigned long long *s)
{
    long long carry = 0;
    for (int i = 0; i < GP_SA_LIMBS - 1; i++) {
        const long long v = (long long)s[i] + carry;
        const long long lo = (long long)((unsigned long long)v & 0xFFFFFFFFull);
        carry = (v - lo) / 4294967296LL;
        s[i] = (unsigned long long)lo;
    }
    s[GP_SA_LIMBS - 1] = (unsigned long long)((long long)s[GP_SA_LIMBS - 1] + carry);
}

/* ---- kernel: exact sum --------------------------------------------------------------------- */

/* Adds the terms of y[0, n) (n <= SA_LAUNCH_MAX) to gacc[0, SA_WORDS) (limbs, nan, pinf,
 * ninf; two's complement in unsigned words), see the file comment. */
template <typename T, bool SQ>
__global__ void __launch_bounds__(SA_THREADS)
k_exact_sum(const T *__restrict__ y, long long n, unsigned long long *__restrict__ gacc)
{
    __shared__ unsigned long long s[SA_WORDS];
    for (int k = threadIdx.x; k < SA_WORDS; k += SA_THREADS) s[k] = 0ull;
    __syncthreads();
    SaWindow w;
    w.w0 = w.w1 = w.w2 = w.w3 = 0;
    w.wq = -1;
    w.nan = w.pinf = w.ninf = 0;
    auto flush = [&](int limb, long long v) { atomicAdd(&s[limb], (unsigned long long)v); };
    sa_sum_thread<T, SQ>(y, n, (long long)blockIdx.x * SA_THREADS + threadIdx.x,
                         (long long)gridDim.x * SA_THREADS, w, flush);
    sa_window_flush(w, flush);
    if (w.nan) atomicAdd(&s[GP_SA_LIMBS], (unsigned long long)w.nan);
    if (w.pinf) atomicAdd(&s[GP_SA_LIMBS + 1], (unsigned long long)w.pinf);
    if (w.ninf) atomicAdd(&s[GP_SA_LIMBS + 2], (unsigned long long)w.ninf);
    __syncthreads();
    if (threadIdx.x == 0) sa_normalize(s);
    __syncthreads();
    for (int k = threadIdx.x; k < SA_WORDS; k += SA_THREADS) {
        const unsigned long long v = s[k];
        if (v) atomicAdd(&gacc[k], v);
    }
}

/* ---- host side --------------------------------------------------------------------------- */

/* The exact-sum scratch: SA_WORDS words of device memory for the current device, allocated
 * on first use and kept (a buffer of a previously current device is kept, not freed). */
unsigned long long *g_sa_scratch = NULL;
int g_sa_scratch_dev = -1;

int sa_scratch(const gpc_devinfo *d, unsigned long long **out)
{
    if (g_sa_scratch == NULL || g_sa_scratch_dev != d->device) {
        void *p = NULL;
        CUDA_CHECK(cudaMalloc(&p, SA_WORDS * sizeof(unsigned long long)));
        g_sa_scratch = (unsigned long long *)p;
        g_sa_scratch_dev = d->device;
    }
    *out = g_sa_scratch;
    return GP_OK;
}

template <typename T, bool SQ>
int sa_run_exact_sum(const void *y, long long n, unsigned long long *g, const gpc_devinfo *d)
{
    for (long long c = 0; c < n; c += SA_LAUNCH_MAX) {
        const long long len = n - c < SA_LAUNCH_MAX ? n - c : SA_LAUNCH_MAX;
        const int blocks = gpc_stride_grid((len + 3) / 4, SA_THREADS, d);
        k_exact_sum<T, SQ><<<blocks, SA_THREADS>>>((const T *)y + c, len, g);
        CUDA_CHECK_LAUNCH("k_exact_sum");
    }
    return GP_OK;
}

} // namespace

/* Exact sum of the values or squares of y[0, n) into *acc — gp_backend.exact_sum on the GPU
 * (file comment; meaning: gpuprim/exact_sum.h).
 * t: element type; y: n elements (device memory; NULL only when n == 0); what: GP_SA_VALUES
 * or GP_SA_SQUARES; acc: a normalised HOST accumulator, added to (unchanged on failure).
 * Launches: one per 2^30 elements, grid = min(resident blocks, n / 1024) blocks of 256
 * threads; one cudaMemset and one cudaMemcpy of 71 words. Returns GP_OK, GP_EINVAL (bad t,
 * n < 0, NULL y with n > 0, NULL acc, bad what) or GP_EDEVICE. */
extern "C" int gp_cuda_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what,
                                 struct gp_superacc *acc)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!acc) GPC_EINVAL("acc is NULL");
    if (what != GP_SA_VALUES && what != GP_SA_SQUARES)
        GPC_EINVAL("what = 0x%x, not GP_SA_VALUES or GP_SA_SQUARES", what);
    if (n == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    unsigned long long *g = NULL;
    rc = sa_scratch(d, &g);
    if (rc) return rc;
    CUDA_CHECK(cudaMemset(g, 0, SA_WORDS * sizeof(unsigned long long)));
    const bool sq = what == GP_SA_SQUARES;
    rc = gpc_with_dtype(t, [&](auto z) {
        typedef decltype(z) T;
        return sq ? sa_run_exact_sum<T, true>(y, n, g, d) : sa_run_exact_sum<T, false>(y, n, g, d);
    });
    if (rc) return rc;
    unsigned long long h[SA_WORDS];
    CUDA_CHECK(cudaMemcpy(h, g, sizeof h, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaDeviceSynchronize());
    gp_superacc part;
    for (int k = 0; k < GP_SA_LIMBS; k++) part.limb[k] = (int64_t)h[k];
    part.nan = (int64_t)h[GP_SA_LIMBS];
    part.pinf = (int64_t)h[GP_SA_LIMBS + 1];
    part.ninf = (int64_t)h[GP_SA_LIMBS + 2];
    gp_superacc_normalize(&part);
    gp_superacc_add(acc, &part);
    return GP_OK;
}
