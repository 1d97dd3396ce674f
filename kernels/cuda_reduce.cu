/* cuda_reduce.cu — the CUDA backend's reductions: stats, trap_x and trap_fn.
 *
 * Algorithm (Harris, "Optimizing Parallel Reduction in CUDA"; the chapter's Program 6.15):
 *   pass 1: a grid of B <= 1024 blocks of 256 threads strides over the input (thread
 *           coarsening; 16-byte vector loads when the data pointer is 16-byte aligned),
 *           each thread accumulating its own partial record in registers (float32 data in
 *           float64); then a warp reduction with __shfl_down_sync (full mask: all 32 lanes
 *           of every warp take part, lanes without data hold the identity), the per-warp
 *           results go to shared memory indexed by warp id, warp 0 reduces them, and thread
 *           0 writes one partial per block to a device scratch array;
 *   pass 2: ONE block reduces the B partials in a fixed order (thread j takes partials j,
 *           j+256, ... in order, then the same warp/block tree) and writes the result.
 * No atomics anywhere: for a given device and input the grid, the assignment of elements
 * to threads and every reduction tree are fixed, so results are bitwise reproducible from
 * run to run. B = min(1024, SMs x resident blocks per SM, ceil(n / 1024)) — so the result
 * may differ in the last bits between GPU models with different SM counts (but never
 * between runs on the same model). The CPU twin sums in another (also fixed) order, so
 * CPU and GPU sums agree to rounding, not bitwise.
 *
 * Scratch: one device buffer (1024 partial records + the result block), allocated on the
 * first call for the current device and kept (never freed; a new one is allocated if the
 * current device changes). The result block is copied back with one cudaMemcpy, which
 * also waits for both kernels.
 */
#include "cuda_internal.cuh"

#include <string.h>

namespace {

constexpr int RED_THREADS = 256;             /* threads per block, both passes */
constexpr int RED_WARPS = RED_THREADS / 32;  /* warps per block */
constexpr int RED_MAX_BLOCKS = 1024;         /* most pass-1 blocks (= partials) */
constexpr int RED_MIN_PER_THREAD = 4;        /* fewer blocks for small inputs */
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
 * (blockDim.x == RED_THREADS); thread 0 gets the result. */
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

/* ---- the result block (device scratch, copied back in one piece) ---------------------- */

struct ResultBlock {
    StatPart stats;               /* pass-2 result of stats */
    double dsum;                  /* pass-2 result of trap_x / trap_fn */
    unsigned long long ends[2];   /* bits of the first and last elements (y or x),
                                     zero-extended */
};

struct Scratch {
    void *parts;          /* RED_MAX_BLOCKS partial records (StatPart or double) */
    ResultBlock *result;  /* one result block */
};

/* ---- pass 2 --------------------------------------------------------------------------- */

/* One block: reduces parts[0, nparts) in a fixed order into *dst; thread 0 also copies the
 * first and last elements (es = 4 or 8 bytes) of `ends_src` (n elements; skipped when
 * NULL or n == 0) into ends[0] and ends[1]. */
template <class P>
__global__ void __launch_bounds__(RED_THREADS)
k_finish(const P *__restrict__ parts, int nparts, P *dst, const void *ends_src, long long n,
         int es, unsigned long long *ends)
{
    P acc = identity<P>();
    for (int i = threadIdx.x; i < nparts; i += RED_THREADS) acc = combine(acc, parts[i]);
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
    }
}

/* ---- stats pass 1 --------------------------------------------------------------------- */

template <bool HASH, typename T>
__device__ __forceinline__ void stat_add(StatPart &a, T v, unsigned long long k)
{
    if (HASH) a.hash += gp_mix64(k);
    if (gpc_is_nan(v)) {
        a.nan += 1;
    } else {
        const double d = (double)v;
        a.sum += d;
        a.sumsq += d * d;
        a.mn = k < a.mn ? k : a.mn;
        a.mx = k > a.mx ? k : a.mx;
    }
}

/* Pass 1 of stats over y[0, n): one StatPart per block into parts[blockIdx.x]. With ORDER,
 * counts descents key(y[i]) > key(y[i+1]) for i < n-1 (each pair counted by the thread that
 * owns y[i]). */
template <typename T, bool ORDER, bool HASH>
__global__ void __launch_bounds__(RED_THREADS)
k_stats(const T *__restrict__ y, long long n, StatPart *__restrict__ parts)
{
    constexpr int V = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    StatPart a = identity<StatPart>();
    const long long tid = (long long)blockIdx.x * RED_THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * RED_THREADS;
    long long scalar_from = 0;

    if ((reinterpret_cast<uintptr_t>(y) & 15u) == 0) {
        const long long nvec = n / V;
        const uint4 *yv = reinterpret_cast<const uint4 *>(y);
        for (long long c = tid; c < nvec; c += nth) {
            const uint4 raw = __ldg(yv + c);
            T v[V];
            memcpy(v, &raw, sizeof raw);
            unsigned long long k[V];
#pragma unroll
            for (int j = 0; j < V; j++) {
                k[j] = gpc_key_of(v[j]);
                stat_add<HASH>(a, v[j], k[j]);
            }
            if (ORDER) {
#pragma unroll
                for (int j = 0; j + 1 < V; j++) a.desc += (k[j] > k[j + 1]) ? 1 : 0;
                const long long nx = (c + 1) * V; /* first element of the next vector */
                if (nx < n) a.desc += (k[V - 1] > gpc_key_of(__ldg(y + nx))) ? 1 : 0;
            }
        }
        scalar_from = nvec * V;
    }
    for (long long i = scalar_from + tid; i < n; i += nth) {
        const T v = __ldg(y + i);
        const unsigned long long k = gpc_key_of(v);
        stat_add<HASH>(a, v, k);
        if (ORDER && i + 1 < n) a.desc += (k > gpc_key_of(__ldg(y + i + 1))) ? 1 : 0;
    }

    a = block_reduce(a);
    if (threadIdx.x == 0) parts[blockIdx.x] = a;
}

/* ---- trapezoid kernels (pass 1) ------------------------------------------------------- */

/* Pass 1 of trap_x: sum over i in [0, n-1) of (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (the CPU
 * twin's expression), one double per block into parts[blockIdx.x]. */
template <typename T>
__global__ void __launch_bounds__(RED_THREADS)
k_trap_x(const T *__restrict__ y, const double *__restrict__ x, long long n,
         double *__restrict__ parts)
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
    if (threadIdx.x == 0) parts[blockIdx.x] = acc;
}

template <int F> __device__ __forceinline__ double eval_fn(double x)
{
    if (F == GP_FN_X2) return x * x;
    if (F == GP_FN_SIN) return sin(x);
    if (F == GP_FN_EXP) return exp(x);
    return exp(-x * x); /* GP_FN_GAUSS */
}

/* Pass 1 of trap_fn: sum over i in [i0, i1) of w_i f(a + i*h), w_i = 1/2 at i == 0 and
 * i == n, else 1; x = a + (double)i * h rounded exactly like the CPU twin (no FMA
 * contraction). One double per block into parts[blockIdx.x]. */
template <int F>
__global__ void __launch_bounds__(RED_THREADS)
k_trap_fn(double a, double h, long long n, long long i0, long long i1,
          double *__restrict__ parts)
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
    if (threadIdx.x == 0) parts[blockIdx.x] = acc;
}

/* ---- host side ------------------------------------------------------------------------ */

void *g_scratch = NULL; /* device buffer: parts area, then the ResultBlock */
int g_scratch_dev = -1; /* device it belongs to */

constexpr size_t PARTS_BYTES =
    ((RED_MAX_BLOCKS * sizeof(StatPart) > RED_MAX_BLOCKS * sizeof(double)
          ? RED_MAX_BLOCKS * sizeof(StatPart)
          : RED_MAX_BLOCKS * sizeof(double)) +
     255) / 256 * 256;

/* The scratch buffer for the current device (allocated on first use). */
int get_scratch(const gpc_devinfo *d, Scratch *s)
{
    if (g_scratch == NULL || g_scratch_dev != d->device) {
        void *p = NULL;
        CUDA_CHECK(cudaMalloc(&p, PARTS_BYTES + sizeof(ResultBlock)));
        /* zeroed once, so that the fields a call does not write (dsum during stats, ends
         * during trap_fn) are defined when the whole result block is copied back */
        cudaError_t e = cudaMemset(p, 0, PARTS_BYTES + sizeof(ResultBlock));
        if (e != cudaSuccess) {
            gpc_set_error("%s:%d: cudaMemset(scratch): %s", __FILE__, __LINE__,
                          cudaGetErrorString(e));
            (void)cudaGetLastError();
            (void)cudaFree(p);
            return GP_EDEVICE;
        }
        g_scratch = p; /* a buffer of a previously current device is kept (not freed) */
        g_scratch_dev = d->device;
    }
    s->parts = g_scratch;
    s->result = (ResultBlock *)((char *)g_scratch + PARTS_BYTES);
    return GP_OK;
}

/* Pass-1 grid size for `work` items: min(RED_MAX_BLOCKS, SMs x resident blocks of `kernel`
 * per SM, ceil(work / (RED_THREADS * RED_MIN_PER_THREAD))), at least 1. */
template <class K> int grid_for(K kernel, long long work, const gpc_devinfo *d, int *blocks)
{
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, RED_THREADS, 0));
    if (per_sm < 1) per_sm = 1;
    long long b = (long long)d->sm_count * per_sm;
    if (b > RED_MAX_BLOCKS) b = RED_MAX_BLOCKS;
    const long long need = (work + (long long)RED_THREADS * RED_MIN_PER_THREAD - 1) /
                           ((long long)RED_THREADS * RED_MIN_PER_THREAD);
    if (b > need) b = need;
    if (b < 1) b = 1;
    *blocks = (int)b;
    return GP_OK;
}

/* Launches pass 1 of stats, instantiated for one (ORDER, HASH) choice. */
template <typename T, bool ORDER, bool HASH>
int launch_stats(const T *y, long long n, const gpc_devinfo *d, StatPart *parts, int *blocks)
{
    int rc = grid_for(k_stats<T, ORDER, HASH>, n, d, blocks);
    if (rc) return rc;
    k_stats<T, ORDER, HASH><<<*blocks, RED_THREADS>>>(y, n, parts);
    CUDA_CHECK_LAUNCH("k_stats");
    return GP_OK;
}

template <typename T>
int run_stats(const void *yv, long long n, bool order, bool hash, const gpc_devinfo *d,
              const Scratch &s, ResultBlock *host)
{
    const T *y = (const T *)yv;
    StatPart *parts = (StatPart *)s.parts;
    int blocks = 1;
    int rc = order ? (hash ? launch_stats<T, true, true>(y, n, d, parts, &blocks)
                           : launch_stats<T, true, false>(y, n, d, parts, &blocks))
                   : (hash ? launch_stats<T, false, true>(y, n, d, parts, &blocks)
                           : launch_stats<T, false, false>(y, n, d, parts, &blocks));
    if (rc) return rc;
    k_finish<StatPart><<<1, RED_THREADS>>>(parts, blocks, &s.result->stats, y, n,
                                           (int)sizeof(T), s.result->ends);
    CUDA_CHECK_LAUNCH("k_finish<StatPart>");
    CUDA_CHECK(cudaMemcpy(host, s.result, sizeof(ResultBlock), cudaMemcpyDeviceToHost));
    return GP_OK;
}

template <typename T>
int run_trap_x(const void *yv, const double *x, long long n, const gpc_devinfo *d,
               const Scratch &s, ResultBlock *host)
{
    const T *y = (const T *)yv;
    double *parts = (double *)s.parts;
    int blocks = 1;
    int rc = grid_for(k_trap_x<T>, n - 1, d, &blocks);
    if (rc) return rc;
    k_trap_x<T><<<blocks, RED_THREADS>>>(y, x, n, parts);
    CUDA_CHECK_LAUNCH("k_trap_x");
    k_finish<double><<<1, RED_THREADS>>>(parts, blocks, &s.result->dsum, x, n, 8,
                                         s.result->ends);
    CUDA_CHECK_LAUNCH("k_finish<double>");
    CUDA_CHECK(cudaMemcpy(host, s.result, sizeof(ResultBlock), cudaMemcpyDeviceToHost));
    return GP_OK;
}

template <int F>
int run_trap_fn(double a, double h, long long n, long long i0, long long i1,
                const gpc_devinfo *d, const Scratch &s, ResultBlock *host)
{
    double *parts = (double *)s.parts;
    int blocks = 1;
    int rc = grid_for(k_trap_fn<F>, i1 - i0, d, &blocks);
    if (rc) return rc;
    k_trap_fn<F><<<blocks, RED_THREADS>>>(a, h, n, i0, i1, parts);
    CUDA_CHECK_LAUNCH("k_trap_fn");
    k_finish<double><<<1, RED_THREADS>>>(parts, blocks, &s.result->dsum, NULL, 0, 8,
                                         s.result->ends);
    CUDA_CHECK_LAUNCH("k_finish<double>");
    CUDA_CHECK(cudaMemcpy(host, s.result, sizeof(ResultBlock), cudaMemcpyDeviceToHost));
    return GP_OK;
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
 * data converted exactly), min_key / max_key (non-NaN elements; UINT64_MAX / 0 if none),
 * hash (sum mod 2^64 of gp_mix64(key) over all elements), first/last key and yfirst/ylast
 * (elements 0 and n-1, NaN kept), descents and order_valid = 1 with GP_STATS_ORDER (else
 * descents = 0, order_valid = 0); has_x = 0, trap = xfirst = xlast = 0. n == 0 gives
 * gp_stats_empty() with has_x = 0 and order_valid as above, with no launch. Two-pass
 * deterministic reduction (file comment): bitwise the same on every run on one device.
 * Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL pointers, unknown flags) or GP_EDEVICE. */
extern "C" int gp_cuda_stats(gp_dtype t, const void *y, int64_t n, unsigned flags,
                             gp_stats *out)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (!out) GPC_EINVAL("out is NULL");
    if (n > 0 && !y) GPC_EINVAL("y is NULL with n = %lld", (long long)n);
    if (flags & ~(GP_STATS_ORDER | GP_STATS_NOHASH)) GPC_EINVAL("unknown flags 0x%x", flags);
    const bool order = (flags & GP_STATS_ORDER) != 0;
    const bool hash = (flags & GP_STATS_NOHASH) == 0;
    if (n == 0) {
        *out = gp_stats_empty();
        out->has_x = 0;
        out->order_valid = order ? 1 : 0;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    Scratch s;
    rc = get_scratch(d, &s);
    if (rc) return rc;

    ResultBlock r;
    memset(&r, 0, sizeof r);
    switch (t) {
    case GP_F32: rc = run_stats<float>(y, n, order, hash, d, s, &r); break;
    case GP_F64: rc = run_stats<double>(y, n, order, hash, d, s, &r); break;
    case GP_I32: rc = run_stats<int32_t>(y, n, order, hash, d, s, &r); break;
    case GP_I64: rc = run_stats<int64_t>(y, n, order, hash, d, s, &r); break;
    case GP_U32: rc = run_stats<uint32_t>(y, n, order, hash, d, s, &r); break;
    case GP_U64: rc = run_stats<uint64_t>(y, n, order, hash, d, s, &r); break;
    default: GPC_EINVAL("invalid dtype %d", (int)t);
    }
    if (rc) return rc;

    gp_stats st;
    memset(&st, 0, sizeof st);
    st.count = n;
    st.nan_count = r.stats.nan;
    st.sum = r.stats.sum;
    st.sumsq = r.stats.sumsq;
    st.min_key = r.stats.mn;
    st.max_key = r.stats.mx;
    st.hash = r.stats.hash;
    st.first_key = bits_to_key(t, r.ends[0]);
    st.last_key = bits_to_key(t, r.ends[1]);
    st.descents = order ? r.stats.desc : 0;
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
 * (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (y converted to double; deterministic two-pass sum),
 * io->xfirst = x[0], io->xlast = x[n-1], io->has_x = 1; other fields are kept. n == 1:
 * trap = 0, xfirst = xlast = x[0]; n == 0: trap = xfirst = xlast = 0, has_x = 1 (as the
 * CPU twin), no launch. Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL pointers) or
 * GP_EDEVICE. */
extern "C" int gp_cuda_trap_x(gp_dtype t, const void *y, const double *x, int64_t n,
                              gp_stats *io)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (!io) GPC_EINVAL("io is NULL");
    if (n > 0 && (!y || !x)) GPC_EINVAL("%s is NULL with n = %lld", !y ? "y" : "x", (long long)n);
    if (n == 0) {
        io->trap = 0.0;
        io->xfirst = 0.0;
        io->xlast = 0.0;
        io->has_x = 1;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    Scratch s;
    rc = get_scratch(d, &s);
    if (rc) return rc;

    ResultBlock r;
    memset(&r, 0, sizeof r);
    switch (t) {
    case GP_F32: rc = run_trap_x<float>(y, x, n, d, s, &r); break;
    case GP_F64: rc = run_trap_x<double>(y, x, n, d, s, &r); break;
    case GP_I32: rc = run_trap_x<int32_t>(y, x, n, d, s, &r); break;
    case GP_I64: rc = run_trap_x<int64_t>(y, x, n, d, s, &r); break;
    case GP_U32: rc = run_trap_x<uint32_t>(y, x, n, d, s, &r); break;
    case GP_U64: rc = run_trap_x<uint64_t>(y, x, n, d, s, &r); break;
    default: GPC_EINVAL("invalid dtype %d", (int)t);
    }
    if (rc) return rc;
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
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    Scratch s;
    rc = get_scratch(d, &s);
    if (rc) return rc;

    ResultBlock r;
    memset(&r, 0, sizeof r);
    switch (f) {
    case GP_FN_X2: rc = run_trap_fn<GP_FN_X2>(a, h, n, i0, i1, d, s, &r); break;
    case GP_FN_SIN: rc = run_trap_fn<GP_FN_SIN>(a, h, n, i0, i1, d, s, &r); break;
    case GP_FN_EXP: rc = run_trap_fn<GP_FN_EXP>(a, h, n, i0, i1, d, s, &r); break;
    case GP_FN_GAUSS: rc = run_trap_fn<GP_FN_GAUSS>(a, h, n, i0, i1, d, s, &r); break;
    default: GPC_EINVAL("unknown integrand %d", (int)f);
    }
    if (rc) return rc;
    *wsum = r.dsum;
    return GP_OK;
}
