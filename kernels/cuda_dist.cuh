/* cuda_dist.cuh — what the CUDA backend's histogram and selection files share (namespace
 * dst): their device scratch buffers and pinned host buffers, the launch sizing of a
 * grid-stride kernel with dynamic shared memory, the pass over the elements
 * (blk::grid_pass), a thread's runs of one counter, and the end of every counting kernel (a
 * block's shared-memory counters added into the device counts with 64-bit integer atomics:
 * the same totals whatever the order of the blocks). cuda_dist.cu defines the host
 * functions; cuda_hist.cu (hist, finite_range) and cuda_select.cu (radix_hist, runs) use
 * them. Not part of the public contract.
 */
#ifndef GP_CUDA_DIST_CUH
#define GP_CUDA_DIST_CUH

#include <stdint.h>
#include <string.h>

#include "cuda_blockreduce.cuh"
#include "cuda_internal.cuh"

namespace dst {

constexpr int THREADS = 256; /* threads per block of every kernel here */
constexpr int UNROLL = 4;    /* 16-byte loads in flight per thread */
constexpr int COPIES = 4;    /* most copies of a block's shared counters (copy_stride) */
constexpr size_t OCC_SMEM = 28 * 1024; /* shared bytes per block that still let 8 blocks of
                                          THREADS fill an SM of 228 KiB (H100 / H200) */

/* Scratch slots: each a grow-only device buffer of the current device, kept for the
 * process's life (one of a previously current device is kept, not freed). */
enum { SLOT_COUNTS = 0, SLOT_TABLE = 1, SLOT_RECORD = 2, NSLOTS = 3 };

/* A device buffer of at least `bytes` bytes in slot `slot` into *p. GP_OK or GP_EDEVICE. */
int scratch(int slot, size_t bytes, void **p);

/* The grid of `kernel` (THREADS per block, `smem` bytes of dynamic shared memory, which it
 * is allowed to use past 48 KiB) for `work` items of `per_thread` each per step: at most
 * the blocks resident on the device at once, at least 1, and at least work / 2^30 blocks so
 * that no block counts 2^32 items into a 32-bit shared counter. GP_OK or GP_EDEVICE. */
int grid_of(const void *kernel, size_t smem, long long work, int per_thread, int *blocks);

/* Pinned host slots: the edges' way in, the counts' way back. */
enum { HSLOT_COUNTS = 0, HSLOT_EDGES = 1, NHSLOTS = 2 };

/* A pinned host buffer of at least `bytes` bytes in host slot `slot` (grow-only, kept for the
 * process's life; small copies from and to it are asynchronous). GP_OK or GP_EDEVICE. */
int pinned(int slot, size_t bytes, void **p);

/* The device counts d[0, len) (uint64, the kernels' atomics) copied to the host (through the
 * pinned slot HSLOT_COUNTS, then a synchronisation of the default stream) and added into
 * counts[0, len) (the launches before it on the default stream complete first). GP_OK or
 * GP_EDEVICE. */
int add_counts(const void *d, size_t len, int64_t *counts);

/* The shared memory one block may use (the device's opt-in maximum), bytes. GP_OK or
 * GP_EDEVICE. */
int smem_max(size_t *bytes);

/* Copies of a block's shared counters: lane l counts into copy l % copies, so that lanes
 * of one warp that hit one counter (skewed data: a few bins or digits take most elements)
 * mostly hit different addresses; copy c starts at c * stride words, stride = n rounded up
 * to 32 words plus one, so that one counter's copies lie in different banks. */
__host__ __device__ __forceinline__ int copy_stride(int n) { return (n + 31) / 32 * 32 + 1; }

/* Zeroes the block's counters: copies x stride words (every thread calls it; a
 * __syncthreads() must follow). */
__device__ __forceinline__ void zero_counts(unsigned *sh, int copies, int stride)
{
    for (int i = threadIdx.x; i < copies * stride; i += blockDim.x) sh[i] = 0u;
}

/* Adds the block's counters (copies of n counters, stride words apart) into g[0, n)
 * (nonzero sums, 64-bit atomics); every thread of the block calls it after a
 * __syncthreads(). */
__device__ __forceinline__ void flush_counts(const unsigned *sh, int copies, int stride,
                                             unsigned long long *g, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        unsigned long long c = 0;
        for (int k = 0; k < copies; k++) c += sh[k * stride + i];
        if (c) atomicAdd(g + i, c);
    }
}

/* The visitor of blk::grid_pass behind for_each_elem: put(v) for each element v. */
template <typename T, class F> struct PutEach {
    static constexpr bool RAW = false;
    F &put;
    template <int V> __device__ __forceinline__ void vec(const T (&v)[V], long long)
    {
#pragma unroll
        for (int k = 0; k < V; k++) put(v[k]);
    }
    __device__ __forceinline__ void elem(T v, long long) { put(v); }
};

/* Calls put(v) for each element v of y[0, n) this thread takes in a grid-stride pass
 * (blk::grid_pass, UNROLL 16-byte loads in flight when y is 16-byte aligned); a thread's
 * elements in their order. Every thread of a grid of THREADS-thread blocks calls it. */
template <typename T, class F>
__device__ __forceinline__ void for_each_elem(const T *__restrict__ y, long long n, F &put)
{
    PutEach<T, F> f{put};
    blk::grid_pass<THREADS, UNROLL>(y, n, f);
}

/* A thread's run of equal counter indices: consecutive items of one counter cost one atomic
 * (sorted or constant data would otherwise make every lane of a warp wait on one address).
 * C: the counter's type, unsigned for a block's shared counters (Run: cuda_select.cu's
 * kernel; cuda_hist.cu merges a vector's equal bins instead, which costs less per element). */
template <typename C> struct RunOf {
    int slot; /* the counter of the run; -1: none */
    C n;      /* its items so far */
    __device__ __forceinline__ void init()
    {
        slot = -1;
        n = 0;
    }
    /* One item of counter s (s >= 0) into the run, flushing the previous run to `to`. */
    __device__ __forceinline__ void add(C *to, int s)
    {
        if (s == slot) {
            n++;
            return;
        }
        if (slot >= 0) atomicAdd(to + slot, n);
        slot = s;
        n = 1;
    }
    __device__ __forceinline__ void flush(C *to)
    {
        if (slot >= 0) atomicAdd(to + slot, n);
        slot = -1;
        n = 0;
    }
};
typedef RunOf<unsigned> Run;

} // namespace dst

#endif /* GP_CUDA_DIST_CUH */
