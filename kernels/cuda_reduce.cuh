/* cuda_reduce.cuh — what the CUDA backend's one-launch reductions share (namespace red):
 * the statistics (cuda_stats.cu: stats) and the trapezoid rule (cuda_trap.cu: trap_x,
 * trap_fn). The partial records, the result block in mapped host memory, the last block's
 * end of every reduction kernel, and the host side that cuda_reduce.cu defines: scratch,
 * grid size, wait. Not part of the public contract.
 *
 * Algorithm (Harris, "Optimizing Parallel Reduction in CUDA"; the chapter's Program 6.15),
 * in ONE launch per call:
 *   - a grid of B blocks of 256 threads strides over the input (thread coarsening); each
 *     thread keeps U 16-byte vector loads in flight (U x 16 bytes per thread per step, the
 *     loads issued before any of them is used) when the data pointer is 16-byte aligned,
 *     and accumulates its own partial record in registers (float32 data in float64;
 *     integer data exactly: 32-bit types in a 64-bit integer, 64-bit types in a 128-bit
 *     one; min/max of 4-byte types on 32-bit keys; vectors without NaN take a branch-free
 *     path);
 *   - a warp reduction with __shfl_down_sync (full mask: all 32 lanes of every warp take
 *     part, lanes without data hold the identity), per-warp results in shared memory
 *     indexed by warp id, warp 0 reduces those, thread 0 writes the block's partial
 *     (blk::block_reduce, cuda_blockreduce.cuh);
 *   - the block that finishes last (a ticket counter taken after a __threadfence, the
 *     pattern of the CUDA "threadFenceReduction" sample: blk::grid_reduce_last) reduces the
 *     B partials in index order with the same warp/block tree and writes the result straight
 *     into pinned, mapped host memory; the host waits with one cudaStreamSynchronize (no
 *     second launch, no cudaMemcpy).
 * No floating-point atomics: for a given device and input the grid, the assignment of
 * elements to threads and every reduction tree are fixed (the partials are combined in
 * block order, whichever block arrives last), so results are bitwise reproducible from run
 * to run. B = min(RED_MAX_BLOCKS, SMs x resident blocks per SM, ceil(n / elements per thread
 * step)) — so the result may differ in the last bits between GPU models with different SM
 * counts (never between runs on the same model). The CPU twin sums in another (also fixed)
 * order, so CPU and GPU float sums agree to rounding, not bitwise; integer sums are exact
 * (two's complement 128-bit partials combined with carries), the same bits on both.
 *
 * Scratch, allocated on the first call for the current device and kept for the process's
 * life (a new one if the current device changes): a device buffer of RED_MAX_BLOCKS
 * partial records plus the ticket counter (zero between calls: the last block resets it),
 * and a pinned host result block mapped into the device's address space.
 */
#ifndef GP_CUDA_REDUCE_CUH
#define GP_CUDA_REDUCE_CUH

#include <stdint.h>

#include "cuda_blockreduce.cuh"
#include "cuda_internal.cuh"

namespace red {

constexpr int RED_THREADS = 256;     /* threads per block */
constexpr int RED_MAX_BLOCKS = 2048; /* most blocks (= partials) per launch */

/* ---- partial records ------------------------------------------------------------------ */

/* Partial statistics of a set of elements (fields typed for __shfl_down_sync). */
struct StatPart {
    long long nan;            /* NaN elements */
    double sum;               /* sum of non-NaN elements as double */
    double sumsq;             /* sum of their squares */
    unsigned long long mn;    /* smallest non-NaN key (identity ~0) */
    unsigned long long mx;    /* largest non-NaN key (identity 0) */
    unsigned long long hash;  /* sum of gp_mix64(key) mod 2^64 over all elements */
    long long desc;           /* descents counted so far */
};

/* Partial statistics of integer data: the StatPart fields (its sum unused, 0) and the exact
 * sum as a two's complement 128-bit integer ilo + 2^64 * ihi. */
struct StatPartI {
    StatPart s;
    unsigned long long ilo;
    long long ihi;
};

/* ---- the result block (pinned host memory, mapped) ------------------------------------ */

struct ResultBlock {
    StatPart stats;               /* result of stats (float types) */
    double dsum;                  /* result of trap_x / trap_fn */
    unsigned long long ends[2];   /* bits of the first and last elements (y or x),
                                     zero-extended */
    StatPartI istats;             /* result of stats (integer types) */
};

/* Where one launch puts its partials and its result. */
struct Sink {
    void *parts;           /* device: RED_MAX_BLOCKS partial records (StatPart, StatPartI or
                              double) */
    unsigned *ticket;      /* device: blocks finished so far (0 between launches) */
    ResultBlock *result;   /* device view of the mapped host result block */
};

/* The end of every reduction kernel, for records of the reduction operator Op
 * (cuda_blockreduce.cuh). `v`: the block's partial (valid in thread 0). The last block to
 * finish (blk::grid_reduce_last) writes the reduction of parts[0, gridDim.x) to *dst and,
 * when `ends_src` is not NULL, the bits of elements 0 and n-1 (es = 4 or 8 bytes each) to
 * ends[0..1]. Every thread of every block must call it. */
template <class Op>
__device__ __forceinline__ void finish_last_block(typename Op::T v, typename Op::T *parts,
                                                  unsigned *ticket, typename Op::T *dst,
                                                  const void *ends_src, long long n, int es,
                                                  unsigned long long *ends)
{
    blk::grid_reduce_last<Op, RED_THREADS>(v, parts, ticket, [&](const typename Op::T &acc) {
        *dst = acc;
        if (ends_src && n > 0) {
            if (es == 4) {
                const uint32_t *s = (const uint32_t *)ends_src;
                ends[0] = s[0];
                ends[1] = s[n - 1];
            } else {
                const unsigned long long *s = (const unsigned long long *)ends_src;
                ends[0] = s[0];
                ends[1] = s[n - 1];
            }
        }
    });
}

/* ---- host side (cuda_reduce.cu) ------------------------------------------------------- */

/* A device's reduction scratch (file comment). */
struct Scratch {
    int device;            /* CUDA ordinal, -1 before the first call */
    void *dev;             /* the partials (cuda_reduce.cu: PARTS_BYTES), then the ticket */
    ResultBlock *host;     /* pinned, mapped result block */
    ResultBlock *host_dev; /* its device address */
};

/* The current device's properties and scratch (the start of every reduction entry; the
 * scratch is allocated on first use, and one of a previously current device is kept, not
 * freed). GP_OK or GP_EDEVICE. */
int device_scratch(const gpc_devinfo **d, Scratch **s);

/* The sink of one launch on scratch s (the result block cleared first). */
Sink sink_of(Scratch *s);

/* Grid size for `work` items at `per_thread` items per thread and step: min(RED_MAX_BLOCKS,
 * SMs x resident blocks per SM of `kernel`, ceil(work / (RED_THREADS * per_thread))), at
 * least 1. GP_OK or GP_EDEVICE. */
int grid_for(const void *kernel, long long work, int per_thread, const gpc_devinfo *d,
             int *blocks);

/* Waits for the launch just made and checks it (`what` names the kernel). */
int wait_result(const char *what);

} // namespace red

#endif /* GP_CUDA_REDUCE_CUH */
