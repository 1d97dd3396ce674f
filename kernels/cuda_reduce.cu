/* cuda_reduce.cu — the CUDA backend's reductions: stats, trap_x and trap_fn.
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
 *     indexed by warp id, warp 0 reduces those, thread 0 writes the block's partial;
 *   - the block that finishes last (a ticket counter taken after a __threadfence, the
 *     pattern of the CUDA "threadFenceReduction" sample) reduces the B partials in index
 *     order with the same warp/block tree and writes the result straight into pinned,
 *     mapped host memory; the host waits with one cudaStreamSynchronize (no second launch,
 *     no cudaMemcpy).
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
#include "cuda_internal.cuh"
#include "tuning.h"

#include <stdlib.h>
#include <string.h>

namespace {

constexpr int RED_THREADS = 256;             /* threads per block */
constexpr int RED_WARPS = RED_THREADS / 32;  /* warps per block */
constexpr int RED_MAX_BLOCKS = 2048;         /* most blocks (= partials) per launch */
constexpr int RED_UNROLL = 4;                /* 16-byte loads in flight per thread */
constexpr unsigned FULL_MASK = 0xffffffffu;

/* ---- partial records and their combine ------------------------------------------------ */

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

template <class P> __device__ __forceinline__ P identity();
template <> __device__ __forceinline__ double identity<double>() { return 0.0; }
template <> __device__ __forceinline__ StatPart identity<StatPart>()
{
    StatPart p;
    p.nan = 0;
    p.sum = 0.0;
    p.sumsq = 0.0;
    p.mn = ~0ull;
    p.mx = 0ull;
    p.hash = 0ull;
    p.desc = 0;
    return p;
}

template <> __device__ __forceinline__ StatPartI identity<StatPartI>()
{
    StatPartI p;
    p.s = identity<StatPart>();
    p.ilo = 0ull;
    p.ihi = 0;
    return p;
}

__device__ __forceinline__ double combine(double a, double b) { return a + b; }
__device__ __forceinline__ StatPart combine(const StatPart &a, const StatPart &b)
{
    StatPart r;
    r.nan = a.nan + b.nan;
    r.sum = a.sum + b.sum;
    r.sumsq = a.sumsq + b.sumsq;
    r.mn = a.mn < b.mn ? a.mn : b.mn;
    r.mx = a.mx > b.mx ? a.mx : b.mx;
    r.hash = a.hash + b.hash;
    r.desc = a.desc + b.desc;
    return r;
}
__device__ __forceinline__ StatPartI combine(const StatPartI &a, const StatPartI &b)
{
    StatPartI r;
    r.s = combine(a.s, b.s);
    r.ilo = a.ilo + b.ilo;
    r.ihi = (long long)((unsigned long long)a.ihi + (unsigned long long)b.ihi +
                        (r.ilo < a.ilo ? 1ull : 0ull));
    return r;
}

__device__ __forceinline__ double shfl_down(double v, int off)
{
    return __shfl_down_sync(FULL_MASK, v, off);
}
__device__ __forceinline__ StatPart shfl_down(const StatPart &v, int off)
{
    StatPart r;
    r.nan = __shfl_down_sync(FULL_MASK, v.nan, off);
    r.sum = __shfl_down_sync(FULL_MASK, v.sum, off);
    r.sumsq = __shfl_down_sync(FULL_MASK, v.sumsq, off);
    r.mn = __shfl_down_sync(FULL_MASK, v.mn, off);
    r.mx = __shfl_down_sync(FULL_MASK, v.mx, off);
    r.hash = __shfl_down_sync(FULL_MASK, v.hash, off);
    r.desc = __shfl_down_sync(FULL_MASK, v.desc, off);
    return r;
}
__device__ __forceinline__ StatPartI shfl_down(const StatPartI &v, int off)
{
    StatPartI r;
    r.s = shfl_down(v.s, off);
    r.ilo = __shfl_down_sync(FULL_MASK, v.ilo, off);
    r.ihi = __shfl_down_sync(FULL_MASK, v.ihi, off);
    return r;
}

/* Tree reduction over the 32 lanes of the warp (all lanes must call it); lane 0 gets the
 * result. */
template <class P> __device__ __forceinline__ P warp_reduce(P v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = combine(v, shfl_down(v, off));
    return v;
}

/* Block reduction (Program 6.15's structure): warp trees, one result per warp in shared
 * memory indexed by warp id, warp 0 reduces those. Every thread of the block must call it
 * (blockDim.x == RED_THREADS); thread 0 gets the result. Two calls in one kernel must be
 * separated by a __syncthreads() (they share warp_part). */
template <class P> __device__ __forceinline__ P block_reduce(P v)
{
    __shared__ P warp_part[RED_WARPS];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    v = warp_reduce(v);
    if (lane == 0) warp_part[wid] = v;
    __syncthreads();
    P r = identity<P>();
    if (wid == 0) {
        if (lane < RED_WARPS) r = warp_part[lane];
        r = warp_reduce(r);
    }
    return r;
}

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

/* A partial record read from global memory around L1 (written by other blocks). */
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

/* The end of every reduction kernel. `v`: the block's partial (valid in thread 0). Thread 0
 * stores it to parts[blockIdx.x] and takes a ticket; the block with the last ticket
 * reduces parts[0, gridDim.x) in index order (thread j takes j, j+256, ... then the block
 * tree), writes the result to *dst and, when `ends_src` is not NULL, the bits of elements 0
 * and n-1 (es = 4 or 8 bytes each) to ends[0..1]; then it resets the ticket. Every thread of
 * every block must call it. */
template <class P>
__device__ __forceinline__ void finish_last_block(P v, P *parts, unsigned *ticket, P *dst,
                                                  const void *ends_src, long long n, int es,
                                                  unsigned long long *ends)
{
    __shared__ bool s_last;
    if (threadIdx.x == 0) {
        parts[blockIdx.x] = v;
        __threadfence(); /* the partial is visible before the ticket is */
        s_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    P acc = identity<P>();
    for (int i = threadIdx.x; i < (int)gridDim.x; i += RED_THREADS) acc = combine(acc, load_cg(parts + i));
    acc = block_reduce(acc);
    if (threadIdx.x == 0) {
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
        *ticket = 0u;
        __threadfence_system();
    }
}

/* ---- stats: per-thread accumulation ---------------------------------------------------- */

/* Key type of the min/max accumulators: 32 bits for 4-byte elements (zero-extended into the
 * 64-bit key of gp_key_of at the end), 64 bits otherwise. */
template <typename T> struct KeyOf { typedef unsigned long long type; };
template <> struct KeyOf<float> { typedef uint32_t type; };
template <> struct KeyOf<int32_t> { typedef uint32_t type; };
template <> struct KeyOf<uint32_t> { typedef uint32_t type; };

/* Key of an element known not to be a NaN (gp_key_of without its NaN case). */
__device__ __forceinline__ uint32_t key_nn(float v)
{
    const uint32_t u = __float_as_uint(v);
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}
__device__ __forceinline__ unsigned long long key_nn(double v)
{
    const unsigned long long u = (unsigned long long)__double_as_longlong(v);
    return u ^ ((unsigned long long)((long long)u >> 63) | 0x8000000000000000ull);
}
template <typename T> __device__ __forceinline__ typename KeyOf<T>::type key_nn(T v)
{
    return (typename KeyOf<T>::type)gpc_key_of(v);
}

/* Resident blocks per SM that k_stats of integer data asks the compiler for: with 5, ptxas
 * keeps it to 48 registers (sm_90: no spills with 2 or 4 loads in flight), so 5 blocks of
 * 256 threads fit an SM as they did when integers were summed in float64; unbounded, the
 * 128-bit partial records take it to 60 registers and 4 blocks. 0: no bound (float data). */
constexpr int RED_MIN_BLOCKS_INT = 5;

/* The per-thread sum of T and the partial record of its statistics: float types add in
 * float64 into a StatPart; integer types exactly into a StatPartI, per thread in a 64-bit
 * integer (32-bit types: fewer than 2^32 elements per thread, as the 32-bit counters below
 * assume, cannot overflow it) or a 128-bit one (64-bit types). min_blocks: the kernel's
 * launch bound. */
template <typename T> struct SumOf {
    typedef double type;
    typedef StatPart part;
    static constexpr int min_blocks = 0;
    static __device__ __forceinline__ double term(T, double d) { return d; }
};
template <> struct SumOf<int32_t> {
    typedef long long type;
    typedef StatPartI part;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ long long term(int32_t v, double) { return v; }
};
template <> struct SumOf<uint32_t> {
    typedef unsigned long long type;
    typedef StatPartI part;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ unsigned long long term(uint32_t v, double) { return v; }
};
template <> struct SumOf<int64_t> {
    typedef __int128 type;
    typedef StatPartI part;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ __int128 term(int64_t v, double) { return v; }
};
template <> struct SumOf<uint64_t> {
    typedef __int128 type;
    typedef StatPartI part;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ __int128 term(uint64_t v, double) { return (__int128)v; }
};

/* One thread's partial statistics (counts fit 32 bits: a thread sees at most n / 256
 * elements of a device-resident array). K: the key type, S: the sum's (SumOf). */
template <typename K, typename S> struct Acc {
    S sum;
    double sumsq;
    K mn, mx;
    unsigned long long hash;
    unsigned nan, desc;
};

template <typename K, typename S> __device__ __forceinline__ void acc_init(Acc<K, S> &a)
{
    a.sum = 0;
    a.sumsq = 0.0;
    a.mn = (K)~(K)0;
    a.mx = 0;
    a.hash = 0ull;
    a.nan = 0u;
    a.desc = 0u;
}

/* The thread's record as a StatPart with the given sum. A 32-bit min of all ones (the
 * identity, or a real element with key 0xFFFFFFFF) becomes ~0: the host maps ~0 back to
 * 0xFFFFFFFF when some element was not a NaN (gp_cuda_stats). */
template <typename K, typename S>
__device__ __forceinline__ StatPart base_part(const Acc<K, S> &a, double sum)
{
    StatPart p;
    p.nan = a.nan;
    p.sum = sum;
    p.sumsq = a.sumsq;
    p.mn = (a.mn == (K)~(K)0) ? ~0ull : (unsigned long long)a.mn;
    p.mx = a.mx;
    p.hash = a.hash;
    p.desc = a.desc;
    return p;
}

/* The thread's record: float types a StatPart (the float64 sum), integer types a
 * StatPartI (the exact sum in two 64-bit words). */
template <typename K> __device__ __forceinline__ StatPart acc_part(const Acc<K, double> &a)
{
    return base_part(a, a.sum);
}
template <typename K, typename S> __device__ __forceinline__ StatPartI acc_part(const Acc<K, S> &a)
{
    StatPartI p;
    p.s = base_part(a, 0.0);
    const __int128 v = (__int128)a.sum;
    p.ilo = (unsigned long long)v;
    p.ihi = (long long)(v >> 64);
    return p;
}

/* Accumulator of a thread for element type T. */
template <typename T> using AccOf = Acc<typename KeyOf<T>::type, typename SumOf<T>::type>;

/* Adds one element known not to be a NaN: sum, sum of squares, min/max key, hash. */
template <bool HASH, typename T>
__device__ __forceinline__ void acc_value(AccOf<T> &a, T v)
{
    const double d = (double)v;
    a.sum += SumOf<T>::term(v, d);
    a.sumsq += d * d;
    const typename KeyOf<T>::type k = key_nn(v);
    a.mn = min(a.mn, k);
    a.mx = max(a.mx, k);
    if (HASH) a.hash += gp_mix64((uint64_t)k);
}

/* Adds the V elements v[0, V) (in that order). Without a NaN among them: no per-element
 * test (the common case); else each NaN counts and the others add. */
template <bool HASH, typename T, int V>
__device__ __forceinline__ void acc_add(AccOf<T> &a, const T (&v)[V])
{
    bool anynan = false;
#pragma unroll
    for (int j = 0; j < V; j++) anynan |= gpc_is_nan(v[j]);
    if (!anynan) {
#pragma unroll
        for (int j = 0; j < V; j++) acc_value<HASH>(a, v[j]);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) {
            if (gpc_is_nan(v[j])) {
                a.nan += 1u;
                if (HASH) a.hash += gp_mix64(gpc_key_of(v[j]));
            } else {
                acc_value<HASH>(a, v[j]);
            }
        }
    }
}

/* One 16-byte vector (elements [c*V, c*V + V) of y[0, n)): statistics, and with ORDER the
 * descents key(y[i]) > key(y[i+1]) for i in the vector and i < n-1 (each pair counted by
 * the thread that owns y[i]). */
template <typename T, bool ORDER, bool HASH>
__device__ __forceinline__ void acc_vector(AccOf<T> &a, const uint4 &raw,
                                           const T *__restrict__ y, long long c, long long n)
{
    constexpr int V = 16 / (int)sizeof(T);
    T v[V];
    memcpy(v, &raw, sizeof raw);
    acc_add<HASH, T, V>(a, v);
    if (ORDER) {
        unsigned long long k[V];
#pragma unroll
        for (int j = 0; j < V; j++) k[j] = gpc_key_of(v[j]);
#pragma unroll
        for (int j = 0; j + 1 < V; j++) a.desc += (k[j] > k[j + 1]) ? 1u : 0u;
        const long long nx = (c + 1) * V; /* first element of the next vector */
        if (nx < n) a.desc += (k[V - 1] > gpc_key_of(__ldg(y + nx))) ? 1u : 0u;
    }
}

/* Where the last block of k_stats puts the result: the float or the integer record. */
__device__ __forceinline__ StatPart *result_slot(ResultBlock *r, StatPart *) { return &r->stats; }
__device__ __forceinline__ StatPartI *result_slot(ResultBlock *r, StatPartI *) { return &r->istats; }

/* stats of y[0, n) in one launch (file comment). With ORDER, counts descents; with HASH,
 * sums gp_mix64 of every key. U: 16-byte loads in flight per thread. */
template <typename T, bool ORDER, bool HASH, int U>
__global__ void __launch_bounds__(RED_THREADS, SumOf<T>::min_blocks)
k_stats(const T *__restrict__ y, long long n, Sink sk)
{
    typedef typename SumOf<T>::part P;
    constexpr int V = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    AccOf<T> a;
    acc_init(a);
    const long long tid = (long long)blockIdx.x * RED_THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * RED_THREADS;
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
            for (int u = 0; u < U; u++) acc_vector<T, ORDER, HASH>(a, raw[u], y, c + u * nth, n);
        }
        for (; c < nvec; c += nth) acc_vector<T, ORDER, HASH>(a, __ldg(yv + c), y, c, n);
        scalar_from = nvec * V;
    }
    for (long long i = scalar_from + tid; i < n; i += nth) {
        const T v[1] = {__ldg(y + i)};
        acc_add<HASH, T, 1>(a, v);
        if (ORDER && i + 1 < n) a.desc += (gpc_key_of(v[0]) > gpc_key_of(__ldg(y + i + 1))) ? 1u : 0u;
    }

    const P p = block_reduce(acc_part(a));
    finish_last_block(p, (P *)sk.parts, sk.ticket, result_slot(sk.result, (P *)NULL), y, n,
                      (int)sizeof(T), sk.result->ends);
}

/* ---- trapezoid kernels ---------------------------------------------------------------- */

/* trap_x: sum over i in [0, n-1) of (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (the CPU twin's
 * expression) into result->dsum; x[0] and x[n-1] into result->ends. */
template <typename T>
__global__ void __launch_bounds__(RED_THREADS)
k_trap_x(const T *__restrict__ y, const double *__restrict__ x, long long n, Sink sk)
{
    double acc = 0.0;
    const long long tid = (long long)blockIdx.x * RED_THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * RED_THREADS;
    for (long long i = tid; i < n - 1; i += nth) {
        const double x0 = __ldg(x + i), x1 = __ldg(x + i + 1);
        const double y0 = (double)__ldg(y + i), y1 = (double)__ldg(y + i + 1);
        acc += (x1 - x0) * (y0 + y1) * 0.5;
    }
    acc = block_reduce(acc);
    finish_last_block(acc, (double *)sk.parts, sk.ticket, &sk.result->dsum, x, n, 8, sk.result->ends);
}

template <int F> __device__ __forceinline__ double eval_fn(double x)
{
    if (F == GP_FN_X2) return x * x;
    if (F == GP_FN_SIN) return sin(x);
    if (F == GP_FN_EXP) return exp(x);
    return exp(-x * x); /* GP_FN_GAUSS */
}

/* trap_fn: sum over i in [i0, i1) of w_i f(a + i*h), w_i = 1/2 at i == 0 and i == n, else
 * 1; x = a + (double)i * h rounded exactly like the CPU twin (no FMA contraction). Result in
 * result->dsum. */
template <int F>
__global__ void __launch_bounds__(RED_THREADS)
k_trap_fn(double a, double h, long long n, long long i0, long long i1, Sink sk)
{
    double acc = 0.0;
    const long long tid = (long long)blockIdx.x * RED_THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * RED_THREADS;
    for (long long i = i0 + tid; i < i1; i += nth) {
        const double xi = __dadd_rn(a, __dmul_rn((double)i, h));
        const double w = (i == 0 || i == n) ? 0.5 : 1.0;
        acc += w * eval_fn<F>(xi);
    }
    acc = block_reduce(acc);
    finish_last_block(acc, (double *)sk.parts, sk.ticket, &sk.result->dsum, (const void *)NULL, 0, 8,
                      sk.result->ends);
}

/* ---- host side ------------------------------------------------------------------------ */

static_assert(sizeof(StatPartI) >= sizeof(StatPart) && sizeof(StatPart) >= sizeof(double),
              "the largest partial record sizes the scratch");
constexpr size_t PARTS_BYTES = (RED_MAX_BLOCKS * sizeof(StatPartI) + 255) / 256 * 256;

struct Scratch {
    int device;            /* CUDA ordinal, -1 before the first call */
    void *dev;             /* PARTS_BYTES of partials, then the ticket */
    ResultBlock *host;     /* pinned, mapped result block */
    ResultBlock *host_dev; /* its device address */
};
Scratch g_scratch = {-1, NULL, NULL, NULL};

/* The scratch of the current device (allocated on first use; one of a previously current
 * device is kept, not freed). */
int get_scratch(const gpc_devinfo *d, Scratch **out)
{
    if (g_scratch.device != d->device) {
        void *p = NULL, *h = NULL, *hd = NULL;
        cudaError_t e = cudaMalloc(&p, PARTS_BYTES + 256);
        const char *what = "cudaMalloc(reduction scratch)";
        if (e == cudaSuccess) {
            what = "cudaMemset(reduction scratch)";
            e = cudaMemset(p, 0, PARTS_BYTES + 256); /* the ticket starts at 0 */
        }
        if (e == cudaSuccess) {
            what = "cudaHostAlloc(mapped result block)";
            e = cudaHostAlloc(&h, sizeof(ResultBlock), cudaHostAllocMapped | cudaHostAllocPortable);
        }
        if (e == cudaSuccess) {
            what = "cudaHostGetDevicePointer(result block)";
            e = cudaHostGetDevicePointer(&hd, h, 0);
        }
        if (e != cudaSuccess) {
            gpc_set_error("%s:%d: %s: %s", __FILE__, __LINE__, what, cudaGetErrorString(e));
            (void)cudaGetLastError();
            if (p) (void)cudaFree(p);
            if (h) (void)cudaFreeHost(h);
            return GP_EDEVICE;
        }
        g_scratch.device = d->device;
        g_scratch.dev = p;
        g_scratch.host = (ResultBlock *)h;
        g_scratch.host_dev = (ResultBlock *)hd;
    }
    *out = &g_scratch;
    return GP_OK;
}

/* The current device's properties and scratch (the start of every reduction entry). */
int device_scratch(const gpc_devinfo **d, Scratch **s)
{
    int rc = gpc_devinfo_get(d);
    return rc ? rc : get_scratch(*d, s);
}

/* The sink of one launch on scratch s (the result block cleared first). */
Sink sink_of(Scratch *s)
{
    memset(s->host, 0, sizeof *s->host);
    Sink k;
    k.parts = s->dev;
    k.ticket = (unsigned *)((char *)s->dev + PARTS_BYTES);
    k.result = s->host_dev;
    return k;
}

/* Resident blocks per SM of a kernel, cached per (kernel, device). */
int per_sm_of(const void *kernel, const gpc_devinfo *d, int *per_sm)
{
    static struct { const void *k; int dev, per_sm; } cache[64];
    static int ncache = 0;
    for (int i = 0; i < ncache; i++)
        if (cache[i].k == kernel && cache[i].dev == d->device) {
            *per_sm = cache[i].per_sm;
            return GP_OK;
        }
    int b = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, RED_THREADS, 0));
    if (b < 1) b = 1;
    if (ncache < 64) cache[ncache++] = {kernel, d->device, b};
    *per_sm = b;
    return GP_OK;
}

/* Grid size for `work` items at `per_thread` items per thread and step: min(RED_MAX_BLOCKS,
 * SMs x resident blocks per SM, ceil(work / (RED_THREADS * per_thread))), at least 1. */
int grid_for(const void *kernel, long long work, int per_thread, const gpc_devinfo *d, int *blocks)
{
    int per_sm = 1;
    int rc = per_sm_of(kernel, d, &per_sm);
    if (rc) return rc;
    long long b = (long long)d->sm_count * per_sm;
    if (b > RED_MAX_BLOCKS) b = RED_MAX_BLOCKS;
    const long long step = (long long)RED_THREADS * per_thread;
    const long long need = (work + step - 1) / step;
    if (b > need) b = need;
    if (b < 1) b = 1;
    *blocks = (int)b;
    return GP_OK;
}

/* Waits for the launch just made and checks it. */
int wait_result(const char *what)
{
    CUDA_CHECK_LAUNCH(what);
    CUDA_CHECK(cudaStreamSynchronize(0));
    return GP_OK;
}

/* Loads in flight per thread of the plain statistics (no order, no hash): RED_UNROLL, or
 * GPUPRIM_STATS_UNROLL = 2, 4 or 8 (a tuning knob for the benchmark; read once). */
int stats_unroll()
{
    const int u = gp_tuning_get()->stats_unroll;
    return u ? u : RED_UNROLL;
}

/* Launches k_stats<T, ORDER, HASH, U> and waits. */
template <typename T, bool ORDER, bool HASH, int U>
int launch_stats_u(const T *y, long long n, const gpc_devinfo *d, Scratch *s)
{
    const void *kp = (const void *)k_stats<T, ORDER, HASH, U>;
    int blocks = 1;
    int rc = grid_for(kp, n, U * (16 / (int)sizeof(T)), d, &blocks);
    if (rc) return rc;
    k_stats<T, ORDER, HASH, U><<<blocks, RED_THREADS>>>(y, n, sink_of(s));
    return wait_result("k_stats");
}

/* Launches stats for one (ORDER, HASH) choice and waits. */
template <typename T, bool ORDER, bool HASH>
int launch_stats(const T *y, long long n, const gpc_devinfo *d, Scratch *s)
{
    if (!ORDER && !HASH) {
        const int u = stats_unroll();
        if (u == 2) return launch_stats_u<T, ORDER, HASH, 2>(y, n, d, s);
        if (u == 8) return launch_stats_u<T, ORDER, HASH, 8>(y, n, d, s);
    }
    return launch_stats_u<T, ORDER, HASH, RED_UNROLL>(y, n, d, s);
}

template <typename T>
int run_stats(const void *yv, long long n, bool order, bool hash, const gpc_devinfo *d, Scratch *s)
{
    const T *y = (const T *)yv;
    return order ? (hash ? launch_stats<T, true, true>(y, n, d, s) : launch_stats<T, true, false>(y, n, d, s))
                 : (hash ? launch_stats<T, false, true>(y, n, d, s) : launch_stats<T, false, false>(y, n, d, s));
}

template <typename T>
int run_trap_x(const void *yv, const double *x, long long n, const gpc_devinfo *d, Scratch *s)
{
    int blocks = 1;
    int rc = grid_for((const void *)k_trap_x<T>, n - 1, 4, d, &blocks);
    if (rc) return rc;
    k_trap_x<T><<<blocks, RED_THREADS>>>((const T *)yv, x, n, sink_of(s));
    return wait_result("k_trap_x");
}

template <int F>
int run_trap_fn(double a, double h, long long n, long long i0, long long i1, const gpc_devinfo *d,
                Scratch *s)
{
    int blocks = 1;
    int rc = grid_for((const void *)k_trap_fn<F>, i1 - i0, 4, d, &blocks);
    if (rc) return rc;
    k_trap_fn<F><<<blocks, RED_THREADS>>>(a, h, n, i0, i1, sink_of(s));
    return wait_result("k_trap_fn");
}

/* The element of type t whose bits are the low gp_dtype_size(t) bytes of `bits`, as
 * double (the CPU twin's (double)value). */
double bits_to_double(gp_dtype t, unsigned long long bits)
{
    switch (t) {
    case GP_F32: { float v; uint32_t u = (uint32_t)bits; memcpy(&v, &u, 4); return (double)v; }
    case GP_F64: { double v; memcpy(&v, &bits, 8); return v; }
    case GP_I32: { int32_t v; uint32_t u = (uint32_t)bits; memcpy(&v, &u, 4); return (double)v; }
    case GP_I64: { int64_t v; memcpy(&v, &bits, 8); return (double)v; }
    case GP_U32: return (double)(uint32_t)bits;
    case GP_U64: return (double)(uint64_t)bits;
    default: return 0.0;
    }
}

/* Key of the element of type t whose bits are the low bytes of `bits` (gp_key_of). */
uint64_t bits_to_key(gp_dtype t, unsigned long long bits)
{
    unsigned char b[8];
    if (gp_dtype_size(t) == 4) {
        uint32_t u = (uint32_t)bits;
        memcpy(b, &u, 4);
    } else {
        uint64_t u = bits;
        memcpy(b, &u, 8);
    }
    return gp_key_of(t, b);
}

} // namespace

/* Statistics of y[0, n) — gp_backend.stats on the GPU.
 *
 * t: element type; y: device pointer to n elements of type t (any element-aligned address;
 * 16-byte aligned data take the vector-load path); flags: GP_STATS_ORDER, GP_STATS_NOHASH; out: host
 * record. Fills count, nan_count, sum / sumsq (float64 over the non-NaN elements; float32
 * data converted exactly; integer data: isum = the exact sum, has_isum = 1, sum = isum
 * rounded once, bitwise the CPU twin's), min_key / max_key (non-NaN elements; UINT64_MAX / 0 if none),
 * hash (sum mod 2^64 of gp_mix64(key) over all elements), first/last key and yfirst/ylast
 * (elements 0 and n-1, NaN kept), descents and order_valid = 1 with GP_STATS_ORDER (else
 * descents = 0, order_valid = 0); has_x = 0, trap = xfirst = xlast = 0. n == 0 gives
 * gp_stats_empty() with has_x = 0 and order_valid as above, with no launch. One-launch
 * deterministic reduction (file comment): bitwise the same on every run on one device.
 * Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL pointers, unknown flags) or GP_EDEVICE. */
extern "C" int gp_cuda_stats(gp_dtype t, const void *y, int64_t n, unsigned flags,
                             gp_stats *out)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!out) GPC_EINVAL("out is NULL");
    if (flags & ~(GP_STATS_ORDER | GP_STATS_NOHASH)) GPC_EINVAL("unknown flags 0x%x", flags);
    const bool order = (flags & GP_STATS_ORDER) != 0;
    const bool hash = (flags & GP_STATS_NOHASH) == 0;
    if (n == 0) {
        *out = gp_stats_empty();
        out->has_x = 0;
        out->order_valid = order ? 1 : 0;
        out->has_isum = gp_dtype_is_float(t) ? 0 : 1;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    Scratch *s = NULL;
    int rc = device_scratch(&d, &s);
    if (rc) return rc;

    rc = gpc_with_dtype(t, [&](auto z) {
        return run_stats<decltype(z)>(y, n, order, hash, d, s);
    });
    if (rc) return rc;
    const ResultBlock r = *s->host;
    const bool isint = !gp_dtype_is_float(t);
    const StatPart &p = isint ? r.istats.s : r.stats;

    gp_stats st;
    memset(&st, 0, sizeof st);
    st.count = n;
    st.nan_count = p.nan;
    if (isint) {
        st.has_isum = 1;
        st.isum.lo = r.istats.ilo;
        st.isum.hi = r.istats.ihi;
        st.sum = gp_i128_to_double(st.isum);
    } else {
        st.sum = p.sum;
    }
    st.sumsq = p.sumsq;
    /* 4-byte types: the kernel's 32-bit min of all ones comes back as ~0 (base_part) */
    st.min_key = (gp_dtype_size(t) == 4 && p.mn == ~0ull && p.nan < n) ? 0xFFFFFFFFull : p.mn;
    st.max_key = p.mx;
    st.hash = p.hash;
    st.first_key = bits_to_key(t, r.ends[0]);
    st.last_key = bits_to_key(t, r.ends[1]);
    st.descents = order ? p.desc : 0;
    st.yfirst = bits_to_double(t, r.ends[0]);
    st.ylast = bits_to_double(t, r.ends[1]);
    st.trap = 0.0;
    st.xfirst = 0.0;
    st.xlast = 0.0;
    st.has_x = 0;
    st.order_valid = order ? 1 : 0;
    *out = st;
    return GP_OK;
}

/* Trapezoid rule over non-uniform samples — gp_backend.trap_x on the GPU.
 *
 * t: type of y; y: device pointer to n elements of type t; x: device pointer to n float64
 * coordinates; io: host record. Sets io->trap = sum over i in [0, n-1) of
 * (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (y converted to double; deterministic one-launch sum),
 * io->xfirst = x[0], io->xlast = x[n-1], io->has_x = 1; other fields are kept. n == 1:
 * trap = 0, xfirst = xlast = x[0]; n == 0: trap = xfirst = xlast = 0, has_x = 1 (as the
 * CPU twin), no launch. Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL pointers) or
 * GP_EDEVICE. */
extern "C" int gp_cuda_trap_x(gp_dtype t, const void *y, const double *x, int64_t n,
                              gp_stats *io)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!io) GPC_EINVAL("io is NULL");
    if (n > 0 && !x) GPC_EINVAL("x is NULL with n = %lld", (long long)n);
    if (n == 0) { /* no samples: an empty x piece */
        io->trap = io->xfirst = io->xlast = 0.0;
        io->has_x = 1;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    Scratch *s = NULL;
    int rc = device_scratch(&d, &s);
    if (rc) return rc;

    rc = gpc_with_dtype(t, [&](auto z) { return run_trap_x<decltype(z)>(y, x, n, d, s); });
    if (rc) return rc;
    const ResultBlock r = *s->host;
    double x0, x1;
    memcpy(&x0, &r.ends[0], 8);
    memcpy(&x1, &r.ends[1], 8);
    io->trap = (n >= 2) ? r.dsum : 0.0;
    io->xfirst = x0;
    io->xlast = x1;
    io->has_x = 1;
    return GP_OK;
}

/* Weighted trapezoid sum of a built-in integrand — gp_backend.trap_fn on the GPU (the
 * chapter's Dev_trap, made deterministic).
 *
 * f: integrand (x*x, sin, exp, exp(-x*x) in float64 device math); a: left end; h: step;
 * n >= 0 trapezoids; [i0, i1) with 0 <= i0 <= i1 <= n+1: the points summed; wsum: host
 * result = sum over i in [i0, i1) of w_i f(a + (double)i*h), w_i = 1/2 at i == 0 and i == n,
 * else 1 (so the integral over [a, a+n*h] is h times the sum over all callers' ranges).
 * An empty range gives 0 with no launch. Returns GP_OK, GP_EINVAL (unknown f, n < 0, bad
 * range, NULL wsum) or GP_EDEVICE. */
extern "C" int gp_cuda_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0,
                               int64_t i1, double *wsum)
{
    if ((unsigned)f >= GP_NFUNCS) GPC_EINVAL("unknown integrand %d", (int)f);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (!wsum) GPC_EINVAL("wsum is NULL");
    if (!(0 <= i0 && i0 <= i1 && i1 - 1 <= n)) /* i1 <= n+1 without overflow */
        GPC_EINVAL("range [%lld, %lld) not inside [0, n+1 = %lld]", (long long)i0,
                   (long long)i1, (long long)n + 1);
    if (i0 == i1) {
        *wsum = 0.0;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    Scratch *s = NULL;
    int rc = device_scratch(&d, &s);
    if (rc) return rc;

    switch (f) {
    case GP_FN_X2: rc = run_trap_fn<GP_FN_X2>(a, h, n, i0, i1, d, s); break;
    case GP_FN_SIN: rc = run_trap_fn<GP_FN_SIN>(a, h, n, i0, i1, d, s); break;
    case GP_FN_EXP: rc = run_trap_fn<GP_FN_EXP>(a, h, n, i0, i1, d, s); break;
    case GP_FN_GAUSS: rc = run_trap_fn<GP_FN_GAUSS>(a, h, n, i0, i1, d, s); break;
    default: GPC_EINVAL("unknown integrand %d", (int)f);
    }
    if (rc) return rc;
    *wsum = s->host->dsum;
    return GP_OK;
}
