/* cuda_blockreduce.cuh — thread-, warp- and block-level building blocks of the CUDA
 * backend's reductions (namespace blk): the grid-stride pass of 16-byte loads that the
 * statistics, histogram and selection kernels read their input with, and the warp, block
 * and grid trees for any record with a reduction operator. Used by the one-launch reductions
 * (cuda_reduce.cuh: stats, the trapezoid rule) and the counting kernels (cuda_dist.cuh); a
 * scan or a histogram adds its own warp step (__shfl_up_sync) beside these. Not part of the
 * public contract.
 *
 * A reduction operator Op is a type with
 *   Op::T                     the record (trivially copyable);
 *   Op::identity()            the record that combine leaves unchanged;
 *   Op::combine(a, b)         associative, not necessarily commutative: a holds the lower
 *                             lanes or indices, and every tree below keeps that order;
 *   Op::shfl_down(v, off)     the record of lane + off (__shfl_down_sync over the full warp).
 * Every tree's shape is fixed by the launch (lanes, warps, blocks), never by timing, so a
 * float reduction gives the same bits on every run with the same grid.
 */
#ifndef GP_CUDA_BLOCKREDUCE_CUH
#define GP_CUDA_BLOCKREDUCE_CUH

#include <stdint.h>
#include <string.h>

namespace blk {

/* Every lane of the warp. */
constexpr unsigned FULL_MASK = 0xffffffffu;

/* One grid-stride pass of the calling thread over y[0, n) (every thread of a grid of
 * THREADS-thread blocks calls it; thread tid of nth takes vectors or elements tid, tid + nth,
 * ...). When y is 16-byte aligned: f.vec(v, c) for each 16-byte vector c it takes, U loads
 * issued before any is used and the rest one by one, then f.elem(y[i], i) for each element
 * i >= (n / V) * V it takes (V = 16 / sizeof(T)); else f.elem(y[i], i) for each element it
 * takes. v: the vector's elements y[c*V, c*V + V) as T[V], or with Visit::RAW its 16 bytes as
 * a uint4 that f.vec unpacks itself (the same work; the two forms are register-allocated
 * differently, and each kernel keeps the one it was tuned with). A thread's vectors and
 * elements come in increasing order, so its partial results do not depend on U. Loads go
 * through the read-only cache (__ldg). */
template <int THREADS, int U, typename T, class Visit>
__device__ __forceinline__ void grid_pass(const T *__restrict__ y, long long n, Visit &f)
{
    constexpr int V = 16 / (int)sizeof(T);
    const long long tid = (long long)blockIdx.x * THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * THREADS;
    long long scalar_from = 0;
    if ((reinterpret_cast<uintptr_t>(y) & 15u) == 0) {
        const long long nvec = n / V;
        const uint4 *yv = reinterpret_cast<const uint4 *>(y);
        long long c = tid;
        /* U vectors c, c+nth, ..., c+(U-1)nth per step: all loads issued first */
        for (; c + (U - 1) * nth < nvec; c += U * nth) {
            uint4 raw[U];
#pragma unroll
            for (int u = 0; u < U; u++) raw[u] = __ldg(yv + c + u * nth);
#pragma unroll
            for (int u = 0; u < U; u++) {
                if constexpr (Visit::RAW) {
                    f.vec(raw[u], c + u * nth);
                } else {
                    T v[V];
                    memcpy(v, &raw[u], sizeof raw[u]);
                    f.vec(v, c + u * nth);
                }
            }
        }
        for (; U > 1 && c < nvec; c += nth) {
            const uint4 raw = __ldg(yv + c);
            if constexpr (Visit::RAW) {
                f.vec(raw, c);
            } else {
                T v[V];
                memcpy(v, &raw, sizeof raw);
                f.vec(v, c);
            }
        }
        scalar_from = nvec * V;
    }
    for (long long i = scalar_from + tid; i < n; i += nth) f.elem(__ldg(y + i), i);
}

/* The float64 sum as a reduction operator. */
struct SumD {
    typedef double T;
    __device__ __forceinline__ static double identity() { return 0.0; }
    __device__ __forceinline__ static double combine(double a, double b) { return a + b; }
    __device__ __forceinline__ static double shfl_down(double v, int off)
    {
        return __shfl_down_sync(FULL_MASK, v, off);
    }
};

/* Tree reduction over the 32 lanes of the warp (all lanes must call it); lane 0 gets the
 * result. */
template <class Op> __device__ __forceinline__ typename Op::T warp_reduce(typename Op::T v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = Op::combine(v, Op::shfl_down(v, off));
    return v;
}

/* Block reduction (the chapter's Program 6.15's structure): warp trees, one result per warp
 * in shared memory indexed by warp id, warp 0 reduces those. Every thread of the block must
 * call it (blockDim.x == THREADS, a multiple of 32, at most 1024); thread 0 gets the result.
 * Two calls in one kernel must be separated by a __syncthreads() (they share warp_part). */
template <class Op, int THREADS>
__device__ __forceinline__ typename Op::T block_reduce(typename Op::T v)
{
    typedef typename Op::T P;
    constexpr int WARPS = THREADS / 32;
    __shared__ P warp_part[WARPS];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    v = warp_reduce<Op>(v);
    if (lane == 0) warp_part[wid] = v;
    __syncthreads();
    P r = Op::identity();
    if (wid == 0) {
        if (lane < WARPS) r = warp_part[lane];
        r = warp_reduce<Op>(r);
    }
    return r;
}

/* A record read from global memory around L1 (written by other blocks of the grid). */
template <class P> __device__ __forceinline__ P load_cg(const P *p)
{
    static_assert(sizeof(P) % 8 == 0, "8-byte words");
    P r;
    unsigned long long w[sizeof(P) / 8];
    const unsigned long long *s = reinterpret_cast<const unsigned long long *>(p);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(P) / 8); i++) w[i] = __ldcg(s + i);
    memcpy(&r, w, sizeof r);
    return r;
}

/* The grid's reduction in the launch itself (the pattern of the CUDA "threadFenceReduction"
 * sample). `v`: the block's record (valid in thread 0, as block_reduce leaves it). Thread 0
 * stores it to parts[blockIdx.x] and takes a ticket; the block with the last ticket reduces
 * parts[0, gridDim.x) in index order (thread j takes j, j + THREADS, ..., then the block
 * tree), and its thread 0 calls out(result), resets the ticket (0 between launches) and
 * fences so that out's writes reach mapped host memory. Every thread of every block must
 * call it. */
template <class Op, int THREADS, class Out>
__device__ __forceinline__ void grid_reduce_last(typename Op::T v, typename Op::T *parts,
                                                 unsigned *ticket, Out &&out)
{
    typedef typename Op::T P;
    __shared__ bool s_last;
    if (threadIdx.x == 0) {
        parts[blockIdx.x] = v;
        __threadfence(); /* the partial is visible before the ticket is */
        s_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    P acc = Op::identity();
    for (int i = threadIdx.x; i < (int)gridDim.x; i += THREADS)
        acc = Op::combine(acc, load_cg(parts + i));
    acc = block_reduce<Op, THREADS>(acc);
    if (threadIdx.x == 0) {
        out(acc);
        *ticket = 0u;
        __threadfence_system();
    }
}

} // namespace blk

#endif /* GP_CUDA_BLOCKREDUCE_CUH */
