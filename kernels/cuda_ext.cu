/* cuda_ext.cu — the CUDA backend's issue 7 kernels: descending keys, key + value bitonic
 * sort, key + value merge-split, exact sums (gp_ext.h gives the meaning of each entry).
 *
 * Key + value sort: the engine of cuda_bitonic.cuh (the mirror-form bitonic network of
 * sort_keys) with the PairsPolicy: units of up to 8 pairs per thread in registers, padding
 * (max key, max value); a compare-exchange swaps when (key_j, val_j) < (key_i, val_i)
 * (stable) or key_j < key_i (not stable). The network is data-oblivious, so the result is a
 * deterministic function of the input, and with stable the (key, value) order is total, so
 * the result is the unique sorted sequence (bitwise equal to the CPU twin's). 4-byte keys
 * whose values are all below 2^32 (checked: one read of the values) take a faster path:
 * key << 32 | value packed in place into the value array, sorted as 8-byte keys, unpacked
 * (the (key, value) order, for stable and not stable alike; 8 bytes per element through
 * the network instead of 12).
 *
 * Merge-split of pairs: merge path (Green, Odeh and Birk, "GPU Merge Path", 2012) exactly
 * as k_merge of cuda_sort.cu, with the order "lo pair a goes before hi pair b" = key_a <=
 * key_b (not stable) or (key_a, val_a) <= (key_b, val_b) (stable): 2048 outputs per block,
 * 8 per thread, each thread's start found by a binary search on its cross diagonal, staged
 * in padded shared memory for coalesced stores of keys and values.
 *
 * Exact sums (Kulisch's exact fixed-point accumulator; gp_ext.h): every term is split into
 * three signed 32-bit digits (gp_keys_ext.h, shared with the CPU twin). Each thread keeps a
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
#include "cuda_bitonic.cuh"
#include "cuda_ext.cuh"
#include "gp_keys_ext.h"
#include "gp_merge_path.h"

#include <string.h>

namespace {

constexpr int PX_MAP_THREADS = 256;              /* threads per block of key maps */
constexpr int PM_THREADS = 256;                  /* threads per merge block */
constexpr int PM_IPT = 8;                        /* outputs per merge thread */
constexpr int PM_TILE = PM_THREADS * PM_IPT;     /* outputs per merge block */
constexpr int SA_THREADS = 256;                  /* threads per exact-sum block */
constexpr long long SA_LAUNCH_MAX = 1ll << 30;   /* elements per exact-sum launch */
constexpr int SA_WORDS = GP_SA_LIMBS + 3;        /* limbs, nan, pinf, ninf */


/* ---- the pair order (merge path) ---------------------------------------------------------- */

/* (ka, va) before (kb, vb) strictly: by key, then (STABLE) by value. */
template <typename K, bool STABLE>
__host__ __device__ __forceinline__ bool px_less(K ka, uint64_t va, K kb, uint64_t vb)
{
    return STABLE ? (ka < kb || (ka == kb && va < vb)) : (ka < kb);
}

/* ---- kernels: descending key maps ---------------------------------------------------------- */

enum DescOp { DTO_F32, DTO_F64, DFROM_F32, DFROM_F64, DXOR32, DXOR64 };

/* In-place map of n words (uint32 for the *32 ops, uint64 for the *64 ops); the XOR ops
 * flip the bits of `mask` (signed ints: all but the sign bit; unsigned: all). */
template <DescOp OP>
__global__ void __launch_bounds__(PX_MAP_THREADS) pk_descmap(void *buf, long long n,
                                                              unsigned long long mask)
{
    const long long nth = (long long)gridDim.x * PX_MAP_THREADS;
    for (long long i = (long long)blockIdx.x * PX_MAP_THREADS + threadIdx.x; i < n; i += nth) {
        if (OP == DTO_F32 || OP == DFROM_F32 || OP == DXOR32) {
            uint32_t *p = (uint32_t *)buf;
            const uint32_t u = p[i];
            p[i] = OP == DTO_F32 ? gp_desc_key_f32_bits(u)
                 : OP == DFROM_F32 ? gp_desc_unkey_f32_bits(u)
                                   : (u ^ (uint32_t)mask);
        } else {
            uint64_t *p = (uint64_t *)buf;
            const uint64_t u = p[i];
            p[i] = OP == DTO_F64 ? gp_desc_key_f64_bits(u)
                 : OP == DFROM_F64 ? gp_desc_unkey_f64_bits(u)
                                   : (u ^ (uint64_t)mask);
        }
    }
}

/* ---- kernels: pair merge path ------------------------------------------------------------ */

/* lo pair (ka, va) goes before hi pair (kb, vb) in the merge (ties: lo first). */
template <typename K, bool STABLE>
__host__ __device__ __forceinline__ bool px_lo_first(K ka, uint64_t va, K kb, uint64_t vb)
{
    return STABLE ? (ka < kb || (ka == kb && va <= vb)) : (ka <= kb);
}

/* Number of lo pairs among the first r outputs of the merge (0 <= r <= nlo + nhi): the
 * smallest a in [max(0, r-nhi), min(r, nlo)] whose lo pair does not go before hi pair
 * r-1-a (the upper end when there is none). */
template <typename K, bool STABLE>
__host__ __device__ __forceinline__ long long px_merge_path(const K *lk, const uint64_t *lv,
                                                            long long nlo, const K *hk,
                                                            const uint64_t *hv, long long nhi,
                                                            long long r)
{
    auto lo_first = [&](long long i, long long j) {
        return px_lo_first<K, STABLE>(lk[i], STABLE ? lv[i] : 0, hk[j], STABLE ? hv[j] : 0);
    };
    long long a = 0;
    GP_MERGE_PATH(a, nlo, nhi, r, lo_first);
    return a;
}

/* Merged outputs [rs, rs + cnt) (cnt <= PM_IPT, rs + cnt <= nlo + nhi) to f(q, key, val). */
#pragma nv_exec_check_disable
template <typename K, bool STABLE, class F>
__host__ __device__ __forceinline__ void px_merge_run(const K *lk, const uint64_t *lv,
                                                      long long nlo, const K *hk,
                                                      const uint64_t *hv, long long nhi,
                                                      long long rs, long long cnt, F &&f)
{
    long long a = px_merge_path<K, STABLE>(lk, lv, nlo, hk, hv, nhi, rs);
    long long b = rs - a;
    for (int q = 0; q < PM_IPT; q++) { /* constant trip count: unrolled by nvcc */
        if (q < cnt) {
            bool take_lo;
            if (a >= nlo) take_lo = false;
            else if (b >= nhi) take_lo = true;
            else take_lo = px_lo_first<K, STABLE>(lk[a], lv[a], hk[b], hv[b]);
            if (take_lo) {
                f(q, lk[a], lv[a]);
                a++;
            } else {
                f(q, hk[b], hv[b]);
                b++;
            }
        }
    }
}

/* Writes merged[r0, r1) to out_keys / out_vals [0, r1-r0) (as k_merge in cuda_sort.cu). */
template <typename K, bool STABLE>
__global__ void __launch_bounds__(PM_THREADS)
pk_merge(const K *__restrict__ lk, const uint64_t *__restrict__ lv, long long nlo,
         const K *__restrict__ hk, const uint64_t *__restrict__ hv, long long nhi, long long r0,
         long long r1, K *__restrict__ ok, uint64_t *__restrict__ ov)
{
    __shared__ K kbuf[PM_TILE + PM_TILE / 32];
    __shared__ uint64_t vbuf[PM_TILE + PM_TILE / 32];
    for (long long bs = r0 + (long long)blockIdx.x * PM_TILE; bs < r1;
         bs += (long long)gridDim.x * PM_TILE) {
        const long long rs = bs + (long long)threadIdx.x * PM_IPT;
        if (rs < r1) {
            const long long cnt = r1 - rs < PM_IPT ? r1 - rs : PM_IPT;
            px_merge_run<K, STABLE>(lk, lv, nlo, hk, hv, nhi, rs, cnt,
                                    [&](int q, K k, uint64_t v) {
                                        const int idx = (int)threadIdx.x * PM_IPT + q;
                                        kbuf[idx + (idx >> 5)] = k;
                                        vbuf[idx + (idx >> 5)] = v;
                                    });
        }
        __syncthreads();
        const long long left = r1 - bs;
        const int cntb = left < PM_TILE ? (int)left : PM_TILE;
        for (int q = threadIdx.x; q < cntb; q += PM_THREADS) {
            ok[bs - r0 + q] = kbuf[q + (q >> 5)];
            ov[bs - r0 + q] = vbuf[q + (q >> 5)];
        }
        __syncthreads();
    }
}

/* The answer of pk_merge_path (one launch at a time: one calling host thread). */
__device__ long long g_px_split;

/* gp_backend.merge_path on the device: one thread runs the merge-path search (either run
 * may be another process's memory mapped with cudaIpcOpenMemHandle). */
template <typename K, bool STABLE>
__global__ void pk_merge_path(const K *lk, const uint64_t *lv, long long nlo, const K *hk,
                              const uint64_t *hv, long long nhi, long long t)
{
    g_px_split = px_merge_path<K, STABLE>(lk, lv, nlo, hk, hv, nhi, t);
}

template <typename K, bool STABLE>
int px_run_merge_path(const void *lk, const uint64_t *lv, long long nlo, const void *hk,
                      const uint64_t *hv, long long nhi, long long t, long long *split)
{
    pk_merge_path<K, STABLE><<<1, 1>>>((const K *)lk, lv, nlo, (const K *)hk, hv, nhi, t);
    CUDA_CHECK_LAUNCH("pk_merge_path");
    CUDA_CHECK(cudaMemcpyFromSymbol(split, g_px_split, sizeof *split)); /* waits for it */
    return GP_OK;
}

/* ---- exact sums: per-thread work (host and device) --------------------------------------- */

/* The term of element v (VALUES or, with SQ, the square rounded in double): its class
 * (GP_SA_CLS_*) and, when finite, *mag, *pos, *neg (gp_keys_ext.h). Same as the CPU twin. */
__host__ __device__ __forceinline__ uint64_t px_f64_bits(double x)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
#endif
}
template <bool SQ> __host__ __device__ __forceinline__ int px_term(float v, uint64_t *mag, int *pos, int *neg)
{
    double x = (double)v;
    if (SQ) x = x * x;
    return gp_sa_term_f64(px_f64_bits(x), mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int px_term(double v, uint64_t *mag, int *pos, int *neg)
{
    double x = v;
    if (SQ) x = x * x;
    return gp_sa_term_f64(px_f64_bits(x), mag, pos, neg);
}
/* Integers: VALUES adds |v| at the unit position with v's sign; SQ squares (double)v. */
template <bool SQ, typename I>
__host__ __device__ __forceinline__ int px_int_term(I v, bool negative, uint64_t *mag, int *pos,
                                                    int *neg)
{
    if (SQ) {
        const double x = (double)v;
        return gp_sa_term_f64(px_f64_bits(x * x), mag, pos, neg);
    }
    *neg = negative ? 1 : 0;
    *mag = negative ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    *pos = GP_SA_INT_POS;
    return GP_SA_CLS_FINITE;
}
template <bool SQ> __host__ __device__ __forceinline__ int px_term(int32_t v, uint64_t *mag, int *pos, int *neg)
{
    return px_int_term<SQ>((int64_t)v, v < 0, mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int px_term(int64_t v, uint64_t *mag, int *pos, int *neg)
{
    return px_int_term<SQ>(v, v < 0, mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int px_term(uint32_t v, uint64_t *mag, int *pos, int *neg)
{
    return px_int_term<SQ>((uint64_t)v, false, mag, pos, neg);
}
template <bool SQ> __host__ __device__ __forceinline__ int px_term(uint64_t v, uint64_t *mag, int *pos, int *neg)
{
    return px_int_term<SQ>(v, false, mag, pos, neg);
}

/* One thread's register state: a window of four limbs [wq, wq + 4) (wq < 0: empty) and the
 * class counts. */
struct PxWindow {
    long long w0, w1, w2, w3;
    int wq;
    long long nan, pinf, ninf;
};

/* Elements i = i0, i0 + istride, ... < n of y into the window; flush(limb, value) receives
 * every nonzero window limb that leaves the window (and must add it to the block's
 * accumulator). The caller flushes the final window with px_window_flush. */
#pragma nv_exec_check_disable
template <class F> __host__ __device__ __forceinline__ void px_window_flush(PxWindow &w, F &&flush)
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
__host__ __device__ __forceinline__ void px_sum_thread(const T *y, long long n, long long i0,
                                                       long long istride, PxWindow &w, F &&flush)
{
    for (long long i = i0; i < n; i += istride) {
        uint64_t mag;
        int pos, neg;
        const int cls = px_term<SQ>(y[i], &mag, &pos, &neg);
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
            px_window_flush(w, flush);
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
__host__ __device__ __forceinline__ void px_normalize(unsigned long long *s)
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
pk_exact_sum(const T *__restrict__ y, long long n, unsigned long long *__restrict__ gacc)
{
    __shared__ unsigned long long s[SA_WORDS];
    for (int k = threadIdx.x; k < SA_WORDS; k += SA_THREADS) s[k] = 0ull;
    __syncthreads();
    PxWindow w;
    w.w0 = w.w1 = w.w2 = w.w3 = 0;
    w.wq = -1;
    w.nan = w.pinf = w.ninf = 0;
    auto flush = [&](int limb, long long v) { atomicAdd(&s[limb], (unsigned long long)v); };
    px_sum_thread<T, SQ>(y, n, (long long)blockIdx.x * SA_THREADS + threadIdx.x,
                         (long long)gridDim.x * SA_THREADS, w, flush);
    px_window_flush(w, flush);
    if (w.nan) atomicAdd(&s[GP_SA_LIMBS], (unsigned long long)w.nan);
    if (w.pinf) atomicAdd(&s[GP_SA_LIMBS + 1], (unsigned long long)w.pinf);
    if (w.ninf) atomicAdd(&s[GP_SA_LIMBS + 2], (unsigned long long)w.ninf);
    __syncthreads();
    if (threadIdx.x == 0) px_normalize(s);
    __syncthreads();
    for (int k = threadIdx.x; k < SA_WORDS; k += SA_THREADS) {
        const unsigned long long v = s[k];
        if (v) atomicAdd(&gacc[k], v);
    }
}

/* ---- kernels: packed (32-bit key, value < 2^32) pairs --------------------------------------- */

/* *flag |= 1 when some vals[i] >= 2^32 (grid-stride; *flag zeroed by the caller). */
__global__ void __launch_bounds__(PX_MAP_THREADS)
pk_any_wide(const uint64_t *__restrict__ vals, long long n, unsigned long long *flag)
{
    bool wide = false;
    const long long nth = (long long)gridDim.x * PX_MAP_THREADS;
    for (long long i = (long long)blockIdx.x * PX_MAP_THREADS + threadIdx.x; i < n; i += nth)
        wide |= (vals[i] >> 32) != 0;
    if (__any_sync(0xFFFFFFFFu, wide) && (threadIdx.x & 31) == 0) atomicOr(flag, 1ull);
}

/* ---- host side --------------------------------------------------------------------------- */

/* Grid-stride grid for `work` items of `threads` each: at most the resident thread count. */
int px_stride_grid(long long work, int threads, const gpc_devinfo *d)
{
    long long cap = (long long)d->sm_count * (d->max_threads_per_sm / threads);
    if (cap < 1) cap = 1;
    long long b = (work + threads - 1) / threads;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    return (int)b;
}

template <DescOp OP> int px_run_descmap(void *buf, long long n, unsigned long long mask,
                                        const gpc_devinfo *d)
{
    pk_descmap<OP><<<px_stride_grid(n, PX_MAP_THREADS, d), PX_MAP_THREADS>>>(buf, n, mask);
    CUDA_CHECK_LAUNCH("pk_descmap");
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* 1 when the byte ranges [a, a+na) and [b, b+nb) overlap (both non-empty). */
bool px_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return false;
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}

template <typename K, bool STABLE>
int px_run_merge(const void *lk, const uint64_t *lv, long long nlo, const void *hk,
                 const uint64_t *hv, long long nhi, long long r0, long long r1, void *ok,
                 uint64_t *ov, const gpc_devinfo *d)
{
    long long b = (r1 - r0 + PM_TILE - 1) / PM_TILE;
    long long cap = (long long)d->sm_count * 64;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    pk_merge<K, STABLE><<<(unsigned)b, PM_THREADS>>>((const K *)lk, lv, nlo, (const K *)hk, hv,
                                                     nhi, r0, r1, (K *)ok, ov);
    CUDA_CHECK_LAUNCH("pk_merge");
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* The exact-sum scratch: SA_WORDS words of device memory for the current device, allocated
 * on first use and kept (a buffer of a previously current device is kept, not freed). */
unsigned long long *g_sa_scratch = NULL;
int g_sa_scratch_dev = -1;

int px_sa_scratch(const gpc_devinfo *d, unsigned long long **out)
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

/* sort_pairs for 4-byte keys when every value is below 2^32: key and value packed into
 * one uint64 (key << 32 | value) in the value array by the tile sort's loads, sorted as
 * 8-byte keys by the engine, unpacked by the last pass's stores (bn::TileKeysPolicy): the
 * (key, value) order (stable or not: a valid result for both), with 8 bytes
 * per element through the network instead of 12. *packed = 0 (nothing done) when some
 * value is wide. */
int px_sort_packed(uint32_t *keys, uint64_t *vals, long long n, const gpc_devinfo *d,
                   int *packed)
{
    *packed = 0;
    unsigned long long *flag = NULL, wide = 0;
    int rc = px_sa_scratch(d, &flag);
    if (rc) return rc;
    const int grid = px_stride_grid(n, PX_MAP_THREADS, d);
    CUDA_CHECK(cudaMemset(flag, 0, sizeof wide));
    pk_any_wide<<<grid, PX_MAP_THREADS>>>(vals, n, flag);
    CUDA_CHECK_LAUNCH("pk_any_wide");
    CUDA_CHECK(cudaMemcpy(&wide, flag, sizeof wide, cudaMemcpyDeviceToHost));
    if (wide) return GP_OK;
    /* the tile sort packs as it loads, the last pass unpacks as it stores */
    const bn::TileKeysPolicy<uint64_t> tp{{vals}, keys, bn::MAP_NONE, false, false};
    rc = bn::sort(bn::KeysPolicy<uint64_t>{vals}, tp, n);
    if (rc) return rc;
    *packed = 1;
    return GP_OK;
}

template <typename T, bool SQ>
int px_run_exact_sum(const void *y, long long n, unsigned long long *g, const gpc_devinfo *d)
{
    for (long long c = 0; c < n; c += SA_LAUNCH_MAX) {
        const long long len = n - c < SA_LAUNCH_MAX ? n - c : SA_LAUNCH_MAX;
        const int blocks = px_stride_grid((len + 3) / 4, SA_THREADS, d);
        pk_exact_sum<T, SQ><<<blocks, SA_THREADS>>>((const T *)y + c, len, g);
        CUDA_CHECK_LAUNCH("pk_exact_sum");
    }
    return GP_OK;
}

template <typename T>
int px_dispatch_sum(const void *y, long long n, bool sq, unsigned long long *g,
                    const gpc_devinfo *d)
{
    return sq ? px_run_exact_sum<T, true>(y, n, g, d) : px_run_exact_sum<T, false>(y, n, g, d);
}

} // namespace

/* Maps buf[0, n) (type t, device memory) in place to descending keys — gp_backend.
 * to_keys_desc on the GPU (gp_ext.h): gp_key_desc(t, gp_key_of(t, element)) per element,
 * uint32 for 4-byte t, uint64 for 8-byte t; one grid-stride launch. Returns GP_OK, GP_EINVAL
 * (bad t, n < 0, NULL buf with n > 0) or GP_EDEVICE. */
extern "C" int gp_cuda_to_keys_desc(gp_dtype t, void *buf, int64_t n)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !buf) GPC_EINVAL("buf is NULL with n = %lld", (long long)n);
    if (n == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    switch (t) {
    case GP_F32: return px_run_descmap<DTO_F32>(buf, n, 0, d);
    case GP_F64: return px_run_descmap<DTO_F64>(buf, n, 0, d);
    case GP_I32: return px_run_descmap<DXOR32>(buf, n, 0x7FFFFFFFull, d);
    case GP_U32: return px_run_descmap<DXOR32>(buf, n, 0xFFFFFFFFull, d);
    case GP_I64: return px_run_descmap<DXOR64>(buf, n, 0x7FFFFFFFFFFFFFFFull, d);
    case GP_U64: return px_run_descmap<DXOR64>(buf, n, ~0ull, d);
    default: return GP_OK;
    }
}

/* Maps n descending keys in buf (device memory) in place back to elements of type t —
 * gp_backend.from_keys_desc on the GPU, the inverse of gp_cuda_to_keys_desc (NaN key ->
 * default quiet NaN). Returns GP_OK, GP_EINVAL or GP_EDEVICE. */
extern "C" int gp_cuda_from_keys_desc(gp_dtype t, void *buf, int64_t n)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !buf) GPC_EINVAL("buf is NULL with n = %lld", (long long)n);
    if (n == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    switch (t) {
    case GP_F32: return px_run_descmap<DFROM_F32>(buf, n, 0, d);
    case GP_F64: return px_run_descmap<DFROM_F64>(buf, n, 0, d);
    case GP_I32: return px_run_descmap<DXOR32>(buf, n, 0x7FFFFFFFull, d);
    case GP_U32: return px_run_descmap<DXOR32>(buf, n, 0xFFFFFFFFull, d);
    case GP_I64: return px_run_descmap<DXOR64>(buf, n, 0x7FFFFFFFFFFFFFFFull, d);
    case GP_U64: return px_run_descmap<DXOR64>(buf, n, ~0ull, d);
    default: return GP_OK;
    }
}

/* Sorts n (key, value) pairs ascending in place in device memory — gp_backend.sort_pairs on
 * the GPU: the mirror-form bitonic network of the file comment (Batcher), any n, nothing at
 * or past n read or written.
 * width: 4 (uint32 keys) or 8 (uint64); keys: n keys, vals: n uint64 values (device, not
 * overlapping); stable != 0: (key, value) order (unique result, equal to the CPU twin's);
 * stable == 0: key order, equal keys' values in the network's deterministic order.
 * Returns GP_OK, GP_EINVAL (width, n < 0, NULL pointers with n > 0, overlap, n beyond the
 * grid limit) or GP_EDEVICE. */
extern "C" int gp_cuda_sort_pairs(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && (!keys || !vals))
        GPC_EINVAL("%s is NULL with n = %lld", !keys ? "keys" : "vals", (long long)n);
    if (px_overlap(keys, (size_t)n * (size_t)width, vals, (size_t)n * 8))
        GPC_EINVAL("keys overlap vals");
    if (n <= 1) return GP_OK;
    if (width == 4) {
        uint32_t *k = (uint32_t *)keys;
        const gpc_devinfo *d = NULL;
        int rc = gpc_devinfo_get(&d);
        if (rc) return rc;
        int packed = 0;
        rc = px_sort_packed(k, vals, n, d, &packed);
        if (rc || packed) return rc;
        return stable ? bn::sort(bn::PairsPolicy<uint32_t, true>{k, vals}, n)
                      : bn::sort(bn::PairsPolicy<uint32_t, false>{k, vals}, n);
    }
    uint64_t *k = (uint64_t *)keys;
    return stable ? bn::sort(bn::PairsPolicy<uint64_t, true>{k, vals}, n)
                  : bn::sort(bn::PairsPolicy<uint64_t, false>{k, vals}, n);
}

/* Merge-split of two ascending (key, value) arrays — gp_backend.merge_split_pairs on the GPU
 * (merge path, file comment; meaning and arguments as gp_cpu_merge_split_pairs, with lo / hi
 * / out device pointers and nout a host pointer). Returns GP_OK, GP_EINVAL (width, negative
 * counts, nlo > m or nhi > m, NULL pointers, overlap) or GP_EDEVICE. */
extern "C" int gp_cuda_merge_split_pairs(int width, const void *lo_keys,
                                         const uint64_t *lo_vals, int64_t nlo,
                                         const void *hi_keys, const uint64_t *hi_vals,
                                         int64_t nhi, int64_t m, int keep_upper, int stable,
                                         void *out_keys, uint64_t *out_vals, int64_t *nout)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || m < 0)
        GPC_EINVAL("negative count (nlo = %lld, nhi = %lld, m = %lld)", (long long)nlo,
                   (long long)nhi, (long long)m);
    if (nlo > m || nhi > m)
        GPC_EINVAL("nlo = %lld or nhi = %lld exceeds m = %lld", (long long)nlo,
                   (long long)nhi, (long long)m);
    if (!nout) GPC_EINVAL("nout is NULL");
    if ((nlo > 0 && (!lo_keys || !lo_vals)) || (nhi > 0 && (!hi_keys || !hi_vals)))
        GPC_EINVAL("%s input is NULL with a nonzero count",
                   (nlo > 0 && (!lo_keys || !lo_vals)) ? "lo" : "hi");
    const long long total = (long long)nlo + nhi;
    const long long r0 = keep_upper ? m : 0;
    const long long r1 = keep_upper ? total : (total < m ? total : m);
    const long long cnt = r1 > r0 ? r1 - r0 : 0;
    if (cnt > 0 && (!out_keys || !out_vals)) GPC_EINVAL("output is NULL");
    const size_t w = (size_t)width, ck = (size_t)cnt * w, cv = (size_t)cnt * 8;
    if (px_overlap(out_keys, ck, lo_keys, (size_t)nlo * w) ||
        px_overlap(out_keys, ck, hi_keys, (size_t)nhi * w) ||
        px_overlap(out_keys, ck, lo_vals, (size_t)nlo * 8) ||
        px_overlap(out_keys, ck, hi_vals, (size_t)nhi * 8) ||
        px_overlap(out_vals, cv, lo_keys, (size_t)nlo * w) ||
        px_overlap(out_vals, cv, hi_keys, (size_t)nhi * w) ||
        px_overlap(out_vals, cv, lo_vals, (size_t)nlo * 8) ||
        px_overlap(out_vals, cv, hi_vals, (size_t)nhi * 8) ||
        px_overlap(out_keys, ck, out_vals, cv))
        GPC_EINVAL("an output overlaps an input or the other output");
    *nout = 0;
    if (cnt == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    if (width == 4)
        rc = stable ? px_run_merge<uint32_t, true>(lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi,
                                                   r0, r0 + cnt, out_keys, out_vals, d)
                    : px_run_merge<uint32_t, false>(lo_keys, lo_vals, nlo, hi_keys, hi_vals,
                                                    nhi, r0, r0 + cnt, out_keys, out_vals, d);
    else
        rc = stable ? px_run_merge<uint64_t, true>(lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi,
                                                   r0, r0 + cnt, out_keys, out_vals, d)
                    : px_run_merge<uint64_t, false>(lo_keys, lo_vals, nlo, hi_keys, hi_vals,
                                                    nhi, r0, r0 + cnt, out_keys, out_vals, d);
    if (rc) return rc;
    *nout = cnt;
    return GP_OK;
}

/* The merge-path split of two ascending runs — gp_backend.merge_path on the GPU (meaning:
 * gp_kernels.h): one thread of one block runs px_merge_path (GP_MERGE_PATH with the order of
 * the pair merge; stable == 0 reads no values), the answer comes back with
 * cudaMemcpyFromSymbol. A search with one candidate (an empty run, t = 0 or t = nlo + nhi)
 * is answered on the host without a launch. Returns GP_OK, GP_EINVAL (width, counts, t out of
 * range, NULL pointers) or GP_EDEVICE. */
extern "C" int gp_cuda_merge_path(int width, const void *lo_keys, const uint64_t *lo_vals,
                                  int64_t nlo, const void *hi_keys, const uint64_t *hi_vals,
                                  int64_t nhi, int64_t t, int stable, int64_t *split)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || t < 0 || t > nlo + nhi)
        GPC_EINVAL("nlo = %lld, nhi = %lld, t = %lld: need counts >= 0 and 0 <= t <= nlo + nhi",
                   (long long)nlo, (long long)nhi, (long long)t);
    if (!split) GPC_EINVAL("split is NULL");
    if ((nlo > 0 && (!lo_keys || (stable && !lo_vals))) ||
        (nhi > 0 && (!hi_keys || (stable && !hi_vals))))
        GPC_EINVAL("an input is NULL with a nonzero count");
    const long long a0 = t > nhi ? t - nhi : 0, a1 = t < nlo ? t : nlo;
    if (a0 >= a1) {
        *split = a0;
        return GP_OK;
    }
    long long v = 0;
    int rc;
    if (width == 4)
        rc = stable ? px_run_merge_path<uint32_t, true>(lo_keys, lo_vals, nlo, hi_keys, hi_vals,
                                                        nhi, t, &v)
                    : px_run_merge_path<uint32_t, false>(lo_keys, NULL, nlo, hi_keys, NULL, nhi,
                                                         t, &v);
    else
        rc = stable ? px_run_merge_path<uint64_t, true>(lo_keys, lo_vals, nlo, hi_keys, hi_vals,
                                                        nhi, t, &v)
                    : px_run_merge_path<uint64_t, false>(lo_keys, NULL, nlo, hi_keys, NULL, nhi,
                                                         t, &v);
    if (rc) return rc;
    *split = v;
    return GP_OK;
}

/* Exact sum of the values or squares of y[0, n) into *acc — gp_backend.exact_sum on the GPU
 * (file comment; meaning: gp_ext.h).
 * t: element type; y: n elements (device memory; NULL only when n == 0); what: GP_SA_VALUES
 * or GP_SA_SQUARES; acc: a normalised HOST accumulator, added to (unchanged on failure).
 * Launches: one per 2^30 elements, grid = min(resident blocks, n / 1024) blocks of 256
 * threads; one cudaMemset and one cudaMemcpy of 71 words. Returns GP_OK, GP_EINVAL (bad t,
 * n < 0, NULL y with n > 0, NULL acc, bad what) or GP_EDEVICE. */
extern "C" int gp_cuda_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what,
                                 struct gp_superacc *acc)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !y) GPC_EINVAL("y is NULL with n = %lld", (long long)n);
    if (!acc) GPC_EINVAL("acc is NULL");
    if (what != GP_SA_VALUES && what != GP_SA_SQUARES)
        GPC_EINVAL("what = 0x%x, not GP_SA_VALUES or GP_SA_SQUARES", what);
    if (n == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    unsigned long long *g = NULL;
    rc = px_sa_scratch(d, &g);
    if (rc) return rc;
    CUDA_CHECK(cudaMemset(g, 0, SA_WORDS * sizeof(unsigned long long)));
    const bool sq = what == GP_SA_SQUARES;
    switch (t) {
    case GP_F32: rc = px_dispatch_sum<float>(y, n, sq, g, d); break;
    case GP_F64: rc = px_dispatch_sum<double>(y, n, sq, g, d); break;
    case GP_I32: rc = px_dispatch_sum<int32_t>(y, n, sq, g, d); break;
    case GP_I64: rc = px_dispatch_sum<int64_t>(y, n, sq, g, d); break;
    case GP_U32: rc = px_dispatch_sum<uint32_t>(y, n, sq, g, d); break;
    default: rc = px_dispatch_sum<uint64_t>(y, n, sq, g, d); break;
    }
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
