/* cuda_hist.cu — the CUDA backend's histogram entries: gp_backend.hist (numpy's histogram
 * rule, gpuprim/dist.h) and finite_range.
 *
 * hist: a grid-stride pass with 16-byte vector loads (UNROLL in flight per thread); each
 * thread bins its elements with numpy's rule (hist_rule.h: the same code as the CPU twin
 * after the index) and counts them into the block's private histogram in shared memory
 * (with the edges beside it), a vector of one bin costing one shared atomic; at the end each
 * block adds its nonzero counters into the device counts with 64-bit integer atomics, whose
 * totals do not depend on the order of the blocks. A histogram too large for shared memory
 * counts straight into global memory. The index: numpy's ((x - lo) / (hi - lo)) * N is
 * first taken as one product (x - lo) * (N / (hi - lo)); when its fraction lies inside the
 * plan's accept window (accept_window: far enough from every integer that the edges' own
 * rounding cannot reach it), the product's integer part is the bin, with no division and no
 * edge read: all but about 2^-19 N of the elements, when N < 2^19 and the range is not far
 * from zero for its width. Else, when the product is more than
 * 2^-19 (float32; 2^-48 in float64) of itself away from an integer, its truncation is the
 * truncation of numpy's quotient (the two differ by a few units in the last place), and
 * otherwise numpy's division itself decides. Then numpy's two corrections against the
 * edges.
 */
#include "cuda_dist.cuh"
#include "gpuprim/dist.h"
#include "hist_rule.h"

#include <float.h>
#include <math.h>
#include <string.h>
#include <type_traits>
#include <vector>

namespace {

using namespace dst;

/* ---- hist --------------------------------------------------------------------------------- */

/* What the kernel needs of a plan (by value). */
struct HistArgs {
    int nbins;
    int fast;             /* the scale's products may be tried (finite, normal) */
    float lo_f, hi_f, den_f, scale_f, nf;
    double lo_d, hi_d, den_d, scale_d, nd;
    /* 32-bit integer data (IntEdges): the binned range as integers, ceil(lo_d) and
     * floor(hi_d) clamped to [-2^33, 2^33]; lo_i - lo_d in float32; float32 N / den */
    long long lo_i, hi_i;
    float frac_f, scale_i;
    int fast_i;
    /* The accept window (GP_HIST_F32 and IntEdges, when acc is set): a float32 product fa
     * of the fast index whose fraction lies in (acc_lo, acc_hi) is the bin itself, with no
     * division and no edge read (accept_window). */
    int acc;
    float acc_lo, acc_hi;
    /* 32-bit integer data whose [lo_i, hi_i] lies within the type (bin_i32n): x - lo_i in
     * 32-bit arithmetic, in range when at most span_u */
    int narrow;
    unsigned span_u;
};

/* 32-bit integer data compare with the edges as integer thresholds: for an integer x,
 * x < e exactly when x < ceil(e) (clamped to [-2^33, 2^33], beyond every 32-bit value). */
template <typename T> struct IntEdges {
    static constexpr bool value = std::is_integral<T>::value && sizeof(T) == 4;
};

/* The edge table's type of element type T under MODE: float32 edges, float64 edges, or
 * int64 thresholds (IntEdges). */
template <typename T, int MODE> struct EdgeOf {
    typedef typename std::conditional<
        MODE != GP_HIST_F64, float,
        typename std::conditional<IntEdges<T>::value, long long, double>::type>::type type;
};

/* The below / above / NaN bin of a value outside [lo, hi] (NaN fails both comparisons). */
__device__ __forceinline__ int outside(bool nan, bool below, int nb)
{
    return nan ? -1 : below ? nb : nb + 1;
}

/* The bin of a fast product fa >= 0 when its fraction lies inside the accept window
 * (accept_window: then x lies strictly between the bin's edges and numpy's truncated index
 * is that bin, so neither correction can move it), else -1. */
__device__ __forceinline__ int accepted(float fa, const HistArgs &a)
{
    const int i = (int)fa;
    const float fr = __fsub_rn(fa, (float)i); /* exact: fa < 2^24 */
    return fr > a.acc_lo && fr < a.acc_hi ? i : -1;
}

/* numpy's truncated index of the float32 quotient f = (num / den) * n (GP_HIST_F32): first
 * num * (n / den), whose truncation is f's when it lies more than 2^-19 of itself from an
 * integer (the two differ by at most 4 units of 2^-24 of themselves), else numpy's
 * division itself. */
__device__ __forceinline__ int index_f32(float num, const HistArgs &a)
{
    if (a.fast) {
        const float fa = __fmul_rn(num, a.scale_f);
        const float m = __fmul_rn(fa, 0x1p-19f);
        const float lo = __fsub_rn(fa, m), hi = __fadd_rn(fa, m);
        if (floorf(lo) == floorf(hi)) return lo < a.nf ? (int)lo : a.nbins - 1;
    }
    return (int)gp_hist_trunc((double)__fmul_rn(__fdiv_rn(num, a.den_f), a.nf), a.nbins);
}

/* The same in float64 (GP_HIST_F32R and GP_HIST_F64): the margin 2^-48. */
__device__ __forceinline__ int index_f64(double num, const HistArgs &a)
{
    if (a.fast) {
        const double fa = __dmul_rn(num, a.scale_d);
        const double m = __dmul_rn(fa, 0x1p-48);
        const double lo = __dsub_rn(fa, m), hi = __dadd_rn(fa, m);
        if (floor(lo) == floor(hi)) return (int)gp_hist_trunc(lo, a.nbins);
    }
    return (int)gp_hist_trunc(__dmul_rn(__ddiv_rn(num, a.den_d), a.nd), a.nbins);
}

/* The bin of float32 x (GP_HIST_F32 when R is false, GP_HIST_F32R when true) against the
 * float32 edges e: 0 .. nbins - 1, nbins below, nbins + 1 above, -1 NaN. */
template <bool R>
__device__ __forceinline__ int bin_f32(float x, const HistArgs &a, const float *e)
{
    if (!(x >= a.lo_f && x <= a.hi_f)) return outside(gpc_is_nan(x), x < a.lo_f, a.nbins);
    const float num = __fsub_rn(x, a.lo_f);
    if (!R && a.acc) {
        const int b = accepted(__fmul_rn(num, a.scale_f), a);
        if (b >= 0) return b;
    }
    const int i = R ? index_f64((double)num, a) : index_f32(num, a);
    return (int)gp_hist_fix_f32(x, e, i, a.nbins);
}

/* The bin of x as float64 (GP_HIST_F64) against the float64 edges e. */
__device__ __forceinline__ int bin_f64(double x, const HistArgs &a, const double *e)
{
    if (!(x >= a.lo_d && x <= a.hi_d)) return outside(x != x, x < a.lo_d, a.nbins);
    const int i = index_f64(__dsub_rn(x, a.lo_d), a);
    return (int)gp_hist_fix_f64(x, e, i, a.nbins);
}

/* The bin of 32-bit integer x (GP_HIST_F64) against the integer thresholds t (IntEdges):
 * the range and numpy's corrections in integers (exact for integer x); the index first from
 * float32 (x - lo_i) + (lo_i - lo_d) times N / den, a sum of two non-negative terms within
 * 3 units of 2^-24 of x - lo_d, when it lies more than 2^-19 of itself from an integer
 * (numpy's float64 quotient is within 2^-51 of the exact one), else numpy's float64 steps. */
__device__ __forceinline__ int bin_i32(long long x, const HistArgs &a, const long long *t)
{
    const int nb = a.nbins;
    if (x < a.lo_i) return nb;
    if (x > a.hi_i) return nb + 1;
    int i = -1;
    if (a.fast_i) {
        const float num = __fadd_rn((float)(x - a.lo_i), a.frac_f);
        const float fa = __fmul_rn(num, a.scale_i);
        if (a.acc) {
            const int b = accepted(fa, a);
            if (b >= 0) return b;
        }
        const float m = __fmul_rn(fa, 0x1p-19f);
        const float lo = __fsub_rn(fa, m), hi = __fadd_rn(fa, m);
        if (floorf(lo) == floorf(hi)) i = lo < a.nf ? (int)lo : nb - 1;
    }
    if (i < 0) {
        const double q = __ddiv_rn(__dsub_rn((double)x, a.lo_d), a.den_d);
        i = (int)gp_hist_trunc(__dmul_rn(q, a.nd), nb);
    }
    if (i > 0 && x < t[i]) i--;
    if (i < nb - 1 && x >= t[i + 1]) i++;
    return i;
}

/* bin_i32 of a 32-bit integer x of type T when the plan is narrow: the range check and the
 * accept window's product in 32-bit arithmetic ((float)(x - lo_i) rounded from the same
 * value as bin_i32's), bin_i32 itself otherwise. */
template <typename T>
__device__ __forceinline__ int bin_i32n(T x, const HistArgs &a, const long long *t)
{
    const unsigned d = (unsigned)x - (unsigned)a.lo_i;
    if (d > a.span_u) return x < (T)a.lo_i ? a.nbins : a.nbins + 1;
    if (a.acc) {
        const float num = __fadd_rn(__uint2float_rn(d), a.frac_f);
        const int b = accepted(__fmul_rn(num, a.scale_i), a);
        if (b >= 0) return b;
    }
    return bin_i32((long long)x, a, t);
}

/* The bin of element v of type T under MODE (gp_hist_mode). */
template <int MODE, typename T, typename E>
__device__ __forceinline__ int bin_of(T v, const HistArgs &a, const E *e)
{
    if constexpr (MODE == GP_HIST_F64 && IntEdges<T>::value) {
        if (a.narrow) return bin_i32n(v, a, (const long long *)e);
        return bin_i32((long long)v, a, (const long long *)e);
    } else if constexpr (MODE == GP_HIST_F64) {
        return bin_f64((double)v, a, (const double *)e);
    } else {
        return bin_f32<MODE == GP_HIST_F32R>((float)v, a, (const float *)e);
    }
}

/* The visitor of k_hist's grid_pass: each element's bin counted into `to` (a block's
 * shared counters, or the device counts), a vector whose elements share one bin (sorted or
 * constant data, where every lane of a warp would hit one counter) with one atomic. */
template <typename T, int MODE, typename C, typename E> struct HistPass {
    static constexpr bool RAW = false;
    const HistArgs &a;
    const E *e;
    C *to;
    template <int V> __device__ __forceinline__ void vec(const T (&v)[V], long long)
    {
        int b[V];
        bool same = true;
#pragma unroll
        for (int k = 0; k < V; k++) {
            b[k] = bin_of<MODE>(v[k], a, e);
            same = same && b[k] == b[0];
        }
        if (same) {
            if (b[0] >= 0) atomicAdd(to + b[0], (C)V);
            return;
        }
#pragma unroll
        for (int k = 0; k < V; k++)
            if (b[k] >= 0) atomicAdd(to + b[k], (C)1);
    }
    __device__ __forceinline__ void elem(T v, long long)
    {
        const int b = bin_of<MODE>(v, a, e);
        if (b >= 0) atomicAdd(to + b, (C)1);
    }
};

/* hist of y[0, n) into the device counts g[0, nbins + 2) (added to). SMEM: the edges and
 * `copies` copies of the block's counters in dynamic shared memory (cuda_dist.cuh); else
 * edges read through the cache and counts added in global memory. */
template <typename T, int MODE, bool SMEM>
__global__ void __launch_bounds__(THREADS)
k_hist(const T *__restrict__ y, long long n, HistArgs a, const void *__restrict__ gedges,
       unsigned long long *__restrict__ g, int copies)
{
    typedef typename EdgeOf<T, MODE>::type E;
    extern __shared__ unsigned long long sm_raw[];
    const int nb = a.nbins;
    const E *e = (const E *)gedges;
    const int stride = copy_stride(nb + 2);
    if (SMEM) {
        E *se = (E *)sm_raw;
        for (int i = threadIdx.x; i <= nb; i += THREADS) se[i] = e[i];
        unsigned *sc = (unsigned *)(se + nb + 1);
        zero_counts(sc, copies, stride);
        __syncthreads();
        HistPass<T, MODE, unsigned, E> f{a, se, sc + (threadIdx.x & 31) % copies * stride};
        blk::grid_pass<THREADS, UNROLL>(y, n, f);
        __syncthreads();
        flush_counts(sc, copies, stride, g, nb + 2);
    } else {
        HistPass<T, MODE, unsigned long long, E> f{a, e, g};
        blk::grid_pass<THREADS, UNROLL>(y, n, f);
    }
}

/* Launches k_hist for element type T and mode MODE: the shared-memory form when the edges
 * and one copy of the counters fit one block's shared memory (with as many copies, up to
 * COPIES, as keep the block within OCC_SMEM, so that 8 blocks of 256 threads fill an SM),
 * else the global one. */
template <typename T, int MODE>
int launch_hist(const T *y, long long n, const HistArgs &a, const void *d_edges,
                unsigned long long *d_counts)
{
    typedef typename EdgeOf<T, MODE>::type E;
    size_t smax = 0;
    int rc = smem_max(&smax), blocks = 1;
    if (rc) return rc;
    const size_t etab = (size_t)(a.nbins + 1) * sizeof(E);
    const size_t per = (size_t)copy_stride(a.nbins + 2) * 4u;
    int copies = COPIES;
    while (copies > 1 && etab + per * (size_t)copies > OCC_SMEM) copies /= 2;
    const size_t need = etab + per * (size_t)copies;
    if (need <= smax) {
        const void *k = (const void *)k_hist<T, MODE, true>;
        if ((rc = grid_of(k, need, n, UNROLL * (16 / (int)sizeof(T)), &blocks))) return rc;
        k_hist<T, MODE, true><<<blocks, THREADS, need>>>(y, n, a, d_edges, d_counts, copies);
    } else {
        const void *k = (const void *)k_hist<T, MODE, false>;
        if ((rc = grid_of(k, 0, n, UNROLL * (16 / (int)sizeof(T)), &blocks))) return rc;
        k_hist<T, MODE, false><<<blocks, THREADS, 0>>>(y, n, a, d_edges, d_counts, 1);
    }
    CUDA_CHECK_LAUNCH("k_hist");
    return GP_OK;
}

/* v rounded up (ceil) or down (floor) to an integer, clamped into [-2^33, 2^33]: beyond
 * every 32-bit value, so that comparisons of such values with it are those with v. */
long long int33(double v, bool up)
{
    const double lim = 0x1p33;
    if (!(v > -lim)) return -(1ll << 33);
    if (!(v < lim)) return 1ll << 33;
    return (long long)(up ? ceil(v) : floor(v));
}

/* The accept window of a plan whose fast index is a float32 product fa of x's offset and
 * N / den (GP_HIST_F32, and 32-bit integers under GP_HIST_F64): in units of bins, u(x) =
 * (x - lo) * N / den is within 2^-21.6 N of fa (at most 5 roundings of 2^-24 each, on
 * u <= N (1 + 2^-23)), numpy's own index f is as close to u, and each edge e_i lies D_i =
 * |u(e_i) - i| from its integer, D their largest (measured here, in float64, from the plan's
 * edges). A fraction of fa inside (M, 1 - M) with M = D + 2^-20 N therefore puts x strictly
 * between e_i and e_{i+1} and truncates f to i = floor(fa): numpy's bin, before and after its
 * two corrections. Off (acc = 0) when M reaches 0.4 (e.g. N >= 2^19 bins, or a range far
 * from zero relative to its width, where the edges round coarsely). */
void accept_window(const gp_hist_spec *s, HistArgs &a)
{
    const bool f32 = s->mode == GP_HIST_F32;
    const double lo = f32 ? (double)s->lo_f : s->lo_d;
    const double scale = (double)s->nbins / (f32 ? (double)s->den_f : s->den_d);
    const double m0 = 0x1p-20 * (double)s->nbins + 0x1p-40 * (double)s->nbins;
    a.acc = 0;
    if (!(m0 < 0.4) || !(f32 ? a.fast : a.fast_i)) return; /* no window: no edges to measure */
    double d = 0.0;
    for (int64_t i = 0; i <= s->nbins && m0 + d < 0.5; i++) { /* past 0.5: surely no window */
        const double e = f32 ? (double)((const float *)s->edges)[i]
                             : ((const double *)s->edges)[i];
        const double u = fabs((e - lo) * scale - (double)i);
        d = u > d || u != u ? u : d; /* NaN: no window */
    }
    const double m = d + 0x1p-20 * (double)s->nbins + 0x1p-40 * (double)s->nbins;
    a.acc = m < 0.4;
    a.acc_lo = nextafterf((float)m, 1.0f);        /* rounded up, then one more */
    a.acc_hi = nextafterf((float)(1.0 - m), 0.0f); /* rounded down, then one less */
}

/* The kernel's arguments of a plan (the scales computed here, in the plan's types). */
HistArgs hist_args_of(const gp_hist_spec *s)
{
    HistArgs a;
    memset(&a, 0, sizeof a);
    a.nbins = (int)s->nbins;
    a.lo_f = s->lo_f;
    a.hi_f = s->hi_f;
    a.den_f = s->den_f;
    a.nf = (float)s->nbins;
    a.lo_d = s->lo_d;
    a.hi_d = s->hi_d;
    a.den_d = s->den_d;
    a.nd = (double)s->nbins;
    if (s->mode == GP_HIST_F32) {
        a.scale_f = a.nf / s->den_f;
        a.fast = isfinite(a.scale_f) && a.scale_f >= FLT_MIN; /* normal: 2^-24 relative */
    } else {
        a.scale_d = a.nd / s->den_d;
        a.fast = isfinite(a.scale_d) && a.scale_d >= DBL_MIN;
    }
    if (s->t == GP_I32 || s->t == GP_U32) { /* IntEdges */
        a.lo_i = int33(s->lo_d, true);
        a.hi_i = int33(s->hi_d, false);
        a.frac_f = (float)((double)a.lo_i - s->lo_d);
        a.scale_i = (float)a.scale_d;
        a.fast_i = a.fast && isfinite(a.frac_f) && isfinite(a.scale_i) && a.scale_i >= FLT_MIN;
        const long long tmin = s->t == GP_I32 ? INT32_MIN : 0;
        const long long tmax = s->t == GP_I32 ? INT32_MAX : (long long)UINT32_MAX;
        a.narrow = a.lo_i >= tmin && a.hi_i <= tmax && a.lo_i <= a.hi_i;
        a.span_u = a.narrow ? (unsigned)(a.hi_i - a.lo_i) : 0u;
    }
    if (s->mode == GP_HIST_F32 || s->t == GP_I32 || s->t == GP_U32) accept_window(s, a);
    return a;
}

/* The edge table the kernel reads: the plan's edges, or for 32-bit integer data their
 * integer thresholds (IntEdges) converted into tbl (host); the table's address. */
const void *edge_table(const gp_hist_spec *s, std::vector<long long> &tbl)
{
    if (s->t != GP_I32 && s->t != GP_U32) return s->edges;
    const double *e = (const double *)s->edges;
    tbl.resize((size_t)s->nbins + 1);
    for (size_t i = 0; i < tbl.size(); i++) tbl[i] = int33(e[i], true);
    return tbl.data();
}

/* The checks of gp_cuda_hist's arguments (GPC_EINVAL returns). */
int hist_check(const gp_hist_spec *s, const void *y, int64_t n, const int64_t *counts)
{
    if (!s) GPC_EINVAL("spec is NULL");
    GPC_CHECK_ARRAY(s->t, n, y, "y");
    if (s->nbins < 1 || s->nbins > GP_HIST_MAX_BINS)
        GPC_EINVAL("nbins = %lld", (long long)s->nbins);
    const bool f32 = s->mode == GP_HIST_F32 || s->mode == GP_HIST_F32R;
    if (s->mode < GP_HIST_F32 || s->mode > GP_HIST_F64 || f32 != (s->t == GP_F32) ||
        s->edge_type != gp_hist_edge_type(s->t))
        GPC_EINVAL("mode %d / edge type %d do not fit dtype %s", (int)s->mode,
                   (int)s->edge_type, gp_dtype_name(s->t));
    if (!s->edges || !counts) GPC_EINVAL("%s is NULL", !s->edges ? "edges" : "counts");
    return GP_OK;
}

/* ---- finite_range ------------------------------------------------------------------------- */

/* A partial finite range (gp_frange's fields, typed for the warp shuffles). */
struct FR {
    unsigned long long mn, mx, fin, ninf, pinf;
};

struct FROp {
    typedef FR T;
    __device__ __forceinline__ static FR identity() { return FR{~0ull, 0ull, 0ull, 0ull, 0ull}; }
    __device__ __forceinline__ static FR combine(const FR &a, const FR &b)
    {
        return FR{a.mn < b.mn ? a.mn : b.mn, a.mx > b.mx ? a.mx : b.mx, a.fin + b.fin,
                  a.ninf + b.ninf, a.pinf + b.pinf};
    }
    __device__ __forceinline__ static FR shfl_down(const FR &v, int off)
    {
        return FR{__shfl_down_sync(blk::FULL_MASK, v.mn, off),
                  __shfl_down_sync(blk::FULL_MASK, v.mx, off),
                  __shfl_down_sync(blk::FULL_MASK, v.fin, off),
                  __shfl_down_sync(blk::FULL_MASK, v.ninf, off),
                  __shfl_down_sync(blk::FULL_MASK, v.pinf, off)};
    }
};

/* +1 / -1 for +inf / -inf, else 0 (integers: 0). */
template <typename T> __device__ __forceinline__ int inf_sign(T v)
{
    if constexpr (std::is_floating_point<T>::value) return isinf(v) ? (v > 0 ? 1 : -1) : 0;
    else return 0;
}

/* The finite range of y[0, n) combined into *out (atomics: min, max, sums). */
template <typename T>
__global__ void __launch_bounds__(THREADS) k_frange(const T *__restrict__ y, long long n, FR *out)
{
    FR a = FROp::identity();
    const long long nth = (long long)gridDim.x * THREADS;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += nth) {
        const T v = __ldg(y + i);
        if (gpc_is_nan(v)) continue;
        const int s = inf_sign(v);
        if (s) {
            if (s > 0) a.pinf++;
            else a.ninf++;
            continue;
        }
        const unsigned long long k = gpc_key_of(v);
        a.fin++;
        a.mn = k < a.mn ? k : a.mn;
        a.mx = k > a.mx ? k : a.mx;
    }
    const FR r = blk::block_reduce<FROp, THREADS>(a);
    if (threadIdx.x == 0) {
        atomicMin(&out->mn, r.mn);
        atomicMax(&out->mx, r.mx);
        atomicAdd(&out->fin, r.fin);
        atomicAdd(&out->ninf, r.ninf);
        atomicAdd(&out->pinf, r.pinf);
    }
}

} // namespace

/* Histogram with numpy's rule — gp_backend.hist on the GPU (contract: gpuprim/kernels.h):
 * the edges copied to the device, the device counts zeroed, one launch, the counts copied
 * back and added into counts[0, nbins + 2). */
extern "C" int gp_cuda_hist(const gp_hist_spec *s, const void *y, int64_t n, int64_t *counts)
{
    int rc = hist_check(s, y, n, counts);
    if (rc || n == 0) return rc;
    const size_t ebytes = (size_t)(s->nbins + 1) * gp_dtype_size(s->edge_type);
    const size_t ncount = (size_t)s->nbins + 2;
    void *d_edges = NULL, *d_counts = NULL;
    if ((rc = scratch(SLOT_TABLE, ebytes, &d_edges)) ||
        (rc = scratch(SLOT_COUNTS, ncount * 8, &d_counts)))
        return rc;
    std::vector<long long> tbl;
    void *h_edges = NULL;
    if ((rc = pinned(HSLOT_EDGES, ebytes, &h_edges))) return rc;
    memcpy(h_edges, edge_table(s, tbl), ebytes); /* the last call's copy from it is done */
    CUDA_CHECK(cudaMemcpyAsync(d_edges, h_edges, ebytes, cudaMemcpyHostToDevice, 0));
    CUDA_CHECK(cudaMemsetAsync(d_counts, 0, ncount * 8, 0));
    const HistArgs a = hist_args_of(s);
    unsigned long long *dc = (unsigned long long *)d_counts;
    rc = gpc_with_dtype(s->t, [&](auto z) {
        typedef decltype(z) T;
        if constexpr (std::is_same<T, float>::value) {
            return s->mode == GP_HIST_F32
                       ? launch_hist<float, GP_HIST_F32>((const float *)y, n, a, d_edges, dc)
                       : launch_hist<float, GP_HIST_F32R>((const float *)y, n, a, d_edges, dc);
        } else {
            return launch_hist<T, GP_HIST_F64>((const T *)y, n, a, d_edges, dc);
        }
    });
    if (rc) {
        (void)cudaStreamSynchronize(0); /* the edges' copy is done before the next call's */
        return rc;
    }
    return add_counts(d_counts, ncount, counts);
}

/* The finite range — gp_backend.finite_range on the GPU: one launch, the record copied back
 * and combined into *io. */
extern "C" int gp_cuda_finite_range(gp_dtype t, const void *y, int64_t n, gp_frange *io)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!io) GPC_EINVAL("io is NULL");
    if (n == 0) return GP_OK;
    void *d = NULL;
    int rc = scratch(SLOT_RECORD, sizeof(FR), &d);
    if (rc) return rc;
    const FR init = {~0ull, 0ull, 0ull, 0ull, 0ull};
    CUDA_CHECK(cudaMemcpy(d, &init, sizeof init, cudaMemcpyHostToDevice));
    rc = gpc_with_dtype(t, [&](auto z) {
        typedef decltype(z) T;
        int blocks = 1;
        const int r = grid_of((const void *)k_frange<T>, 0, n, 1, &blocks);
        if (r) return r;
        k_frange<T><<<blocks, THREADS>>>((const T *)y, n, (FR *)d);
        CUDA_CHECK_LAUNCH("k_frange");
        return (int)GP_OK;
    });
    if (rc) return rc;
    FR r;
    CUDA_CHECK(cudaMemcpy(&r, d, sizeof r, cudaMemcpyDeviceToHost));
    const gp_frange x = {(int64_t)r.fin, (int64_t)r.ninf, (int64_t)r.pinf, r.mn, r.mx};
    gp_frange_add(io, &x);
    return GP_OK;
}
