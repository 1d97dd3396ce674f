/* cuda_select.cu — the CUDA backend's selection entries: gp_backend.radix_hist (one pass of
 * the radix select over the order keys, gpuprim/dist.h) and runs (the runs of equal values
 * that count the distinct ones in sorted data).
 *
 * radix_hist: a grid-stride pass with 16-byte vector loads; each element's order key (the
 * sort's map, gpc_key_of) is matched against the pass's prefixes (all of them at once: a
 * filter of 1024 bits holding the low 10 bits of each prefix turns most keys away with one
 * conflict-free shared read, then a table of those low bits names the one prefix to compare,
 * or for several a binary search over the launch's prefixes in shared memory; the first pass
 * has one prefix that every key matches) and its digit counted into the block's histograms
 * in shared memory (on the first pass a thread's run of one counter costing one shared
 * atomic, with four copies taken by lane against the conflicts of skewed digits; later, a
 * vector of one counter), which each block adds into the device counts with 64-bit integer
 * atomics at the end. As many prefixes' histograms as fit one block's shared memory go in one
 * launch (2^11 counters each: 26 per launch in the 227 KiB of an H100 / H200), more in
 * further launches.
 * runs: the same pass comparing each element with the one before it; a block sum, then one
 * 64-bit atomic per block.
 */
#include "cuda_dist.cuh"
#include "gpuprim/dist.h"
#include "hist_rule.h"

#include <string.h>
#include <type_traits>

namespace {

using namespace dst;

/* ---- radix_hist --------------------------------------------------------------------------- */

/* One launch's share of a pass (by value). */
struct SelArgs {
    int shift, bits, top; /* the digit: key bits [shift, shift + bits); top = shift + bits */
    int np;               /* this launch's prefixes */
    unsigned long long p[GP_SELECT_MAX]; /* ... ascending */
};

/* A later pass's counter of one key (its prefix's histogram, its digit), or -1 when no
 * prefix of the launch is its: the filter sf (bit h % 1024 of each prefix h, one word a
 * bank: a conflict-free read turns most keys away), then the table st (h % 1024 -> the one
 * prefix with those low bits, plus 1; 255 for several: a binary search over sp). */
struct SelMatch {
    const SelArgs &a;
    const unsigned long long *sp;
    const unsigned *sf;
    const unsigned char *st;
    __device__ __forceinline__ int slot(unsigned long long k) const
    {
        const unsigned long long h = k >> a.top;
        if (!((sf[(h >> 5) & 31u] >> (h & 31u)) & 1u)) return -1;
        const unsigned t = st[h & 1023u];
        int p = (int)t - 1;
        if (t == 255u) {
            int lo = 0, hi = a.np;
            while (lo < hi) {
                const int mid = (lo + hi) >> 1;
                if (sp[mid] < h) lo = mid + 1;
                else hi = mid;
            }
            p = lo < a.np ? lo : 0;
        }
        if (p < 0 || sp[p] != h) return -1;
        return (p << a.bits) + (int)((k >> a.shift) & ((1ull << a.bits) - 1ull));
    }
};

/* The visitor of a later pass: each matching key counted into the block's counters `to`, a
 * vector whose keys share one counter (constant or sorted data) with one atomic. */
template <typename T> struct SelPass {
    static constexpr bool RAW = false;
    const SelMatch &m;
    unsigned *to;
    template <int V> __device__ __forceinline__ void vec(const T (&v)[V], long long)
    {
        int b[V];
        bool same = true;
#pragma unroll
        for (int k = 0; k < V; k++) {
            b[k] = m.slot(gpc_key_of(v[k]));
            same = same && b[k] == b[0];
        }
        if (same) {
            if (b[0] >= 0) atomicAdd(to + b[0], (unsigned)V);
            return;
        }
#pragma unroll
        for (int k = 0; k < V; k++)
            if (b[k] >= 0) atomicAdd(to + b[k], 1u);
    }
    __device__ __forceinline__ void elem(T v, long long)
    {
        const int b = m.slot(gpc_key_of(v));
        if (b >= 0) atomicAdd(to + b, 1u);
    }
};

/* radix_hist of y[0, n) into the device counts g (this launch's np << bits), in `copies`
 * copies of the block's counters (cuda_dist.cuh). ALL: the first pass, whose one prefix
 * every key has (a thread's run of one digit costing one atomic); else SelPass. */
template <typename T, bool ALL>
__global__ void __launch_bounds__(THREADS)
k_radix(const T *__restrict__ y, long long n, SelArgs a, unsigned long long *__restrict__ g,
        int copies)
{
    extern __shared__ unsigned sc[];
    __shared__ unsigned long long sp[GP_SELECT_MAX];
    __shared__ unsigned sf[32];
    __shared__ unsigned char st[1024];
    const int ncnt = a.np << a.bits, stride = copy_stride(ncnt);
    zero_counts(sc, copies, stride);
    unsigned *mine = sc + (threadIdx.x & 31) % copies * stride;
    for (int i = threadIdx.x; i < a.np; i += THREADS) sp[i] = a.p[i];
    if (threadIdx.x < 32) {
        unsigned w = 0u;
        for (int i = 0; i < a.np; i++)
            if ((int)((a.p[i] >> 5) & 31u) == (int)threadIdx.x) w |= 1u << (a.p[i] & 31u);
        sf[threadIdx.x] = w;
    }
    for (int e = threadIdx.x; e < 1024; e += THREADS) {
        unsigned t = 0u;
        for (int i = 0; i < a.np; i++)
            if ((a.p[i] & 1023u) == (unsigned)e) t = t ? 255u : (unsigned)i + 1u;
        st[e] = (unsigned char)t;
    }
    __syncthreads();
    if constexpr (ALL) {
        Run run;
        run.init();
        auto put = [&](T v) {
            run.add(mine, (int)((gpc_key_of(v) >> a.shift) & ((1ull << a.bits) - 1ull)));
        };
        for_each_elem(y, n, put);
        run.flush(mine);
    } else {
        const SelMatch m{a, sp, sf, st};
        SelPass<T> f{m, mine};
        blk::grid_pass<THREADS, UNROLL>(y, n, f);
    }
    __syncthreads();
    flush_counts(sc, copies, stride, g, ncnt);
}

/* The launches of one pass for element type T: groups of as many prefixes as fit shared
 * memory, each into its part of the device counts g. The first pass, where every element
 * counts (skewed data put most of them on a few digits), counts into COPIES copies;
 * the later ones, where few elements match a prefix, into one. */
template <typename T>
int launch_radix(const T *y, long long n, const gp_select *sel, unsigned long long *g)
{
    size_t smax = 0;
    int rc = smem_max(&smax);
    if (rc) return rc;
    const size_t per = (size_t)4 << sel->bits; /* bytes of one prefix's counters */
    const size_t room = smax > 4096 + per ? smax - 4096 : per; /* static: prefixes, filter, table */
    const int group = (int)((room - 4 * 32) / per);            /* with copy_stride's pad */
    const bool all = sel->shift + sel->bits >= sel->width;
    const int copies = all ? COPIES : 1; /* 4 x 8 KiB: 6 blocks of 256 threads per SM */
    for (int first = 0; first < sel->nprefix; first += group) {
        SelArgs a;
        a.shift = sel->shift;
        a.bits = sel->bits;
        a.top = sel->shift + sel->bits;
        a.np = sel->nprefix - first < group ? sel->nprefix - first : group;
        for (int i = 0; i < a.np; i++) a.p[i] = sel->prefixes[first + i];
        const size_t smem = (size_t)copy_stride(a.np << a.bits) * 4u * (size_t)copies;
        const void *k = all ? (const void *)k_radix<T, true> : (const void *)k_radix<T, false>;
        int blocks = 1;
        if ((rc = grid_of(k, smem, n, UNROLL * (16 / (int)sizeof(T)), &blocks))) return rc;
        unsigned long long *gp = g + ((size_t)first << sel->bits);
        if (all) k_radix<T, true><<<blocks, THREADS, smem>>>(y, n, a, gp, copies);
        else k_radix<T, false><<<blocks, THREADS, smem>>>(y, n, a, gp, copies);
        CUDA_CHECK_LAUNCH("k_radix");
    }
    return GP_OK;
}

/* ---- runs --------------------------------------------------------------------------------- */

/* The runs key of an element (gp_runs_key: -0.0 as +0.0). */
__device__ __forceinline__ unsigned long long rkey(float v)
{
    return gp_runs_key_f32_bits(__float_as_uint(v));
}
__device__ __forceinline__ unsigned long long rkey(double v)
{
    return gp_runs_key_f64_bits((uint64_t)__double_as_longlong(v));
}
template <typename T> __device__ __forceinline__ unsigned long long rkey(T v)
{
    return gpc_key_of(v);
}

/* 1 when v starts a run after prev (v not NaN and prev NaN or another value). */
template <typename T> __device__ __forceinline__ unsigned starts(T prev, T v)
{
    return !gpc_is_nan(v) && (gpc_is_nan(prev) || rkey(prev) != rkey(v)) ? 1u : 0u;
}

/* The 64-bit sum as a reduction operator. */
struct SumU {
    typedef unsigned long long T;
    __device__ __forceinline__ static T identity() { return 0ull; }
    __device__ __forceinline__ static T combine(T a, T b) { return a + b; }
    __device__ __forceinline__ static T shfl_down(T v, int off)
    {
        return __shfl_down_sync(blk::FULL_MASK, v, off);
    }
};

/* The visitor of k_runs's blk::grid_pass over y[0, n): into c, the elements that start a run
 * after the element before them (element 0 when it is not NaN). */
template <typename T> struct RunsPass {
    static constexpr bool RAW = false;
    const T *__restrict__ y;
    unsigned long long c;
    /* The vector v: e = y[v*V, v*V + V). */
    template <int V> __device__ __forceinline__ void vec(const T (&e)[V], long long v)
    {
        if (v == 0) c += gpc_is_nan(e[0]) ? 0u : 1u;
        else c += starts(__ldg(y + v * V - 1), e[0]);
#pragma unroll
        for (int k = 1; k < V; k++) c += starts(e[k - 1], e[k]);
    }
    /* The element i: v = y[i]. */
    __device__ __forceinline__ void elem(T v, long long i)
    {
        if (i == 0) c += gpc_is_nan(v) ? 0u : 1u;
        else c += starts(__ldg(y + i - 1), v);
    }
};

/* The runs of y[0, n) added into *out: element i counts when it starts a run after element
 * i - 1 (element 0 when it is not NaN). */
template <typename T>
__global__ void __launch_bounds__(THREADS) k_runs(const T *__restrict__ y, long long n,
                                                  unsigned long long *out)
{
    RunsPass<T> f{y, 0ull};
    blk::grid_pass<THREADS, 1>(y, n, f);
    const unsigned long long r = blk::block_reduce<SumU, THREADS>(f.c);
    if (threadIdx.x == 0 && r) atomicAdd(out, r);
}

/* The checks of gp_cuda_radix_hist's arguments (GPC_EINVAL returns). */
int radix_check(gp_dtype t, const void *y, int64_t n, const gp_select *sel, const int64_t *counts)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!sel || !counts) GPC_EINVAL("%s is NULL", !sel ? "sel" : "counts");
    if (sel->width != (int)gp_dtype_size(t) * 8 || sel->done || sel->nprefix < 1 ||
        sel->nprefix > GP_SELECT_MAX || sel->bits < 1 || sel->bits > GP_SELECT_DIGIT)
        GPC_EINVAL("the select state does not fit dtype %s (width %d, pass bits %d, %d "
                   "prefixes, done %d)", gp_dtype_name(t), sel->width, sel->bits, sel->nprefix,
                   sel->done);
    return GP_OK;
}

} // namespace

/* One pass of a radix select — gp_backend.radix_hist on the GPU (contract:
 * gpuprim/kernels.h): the device counts zeroed, the launches of the pass, the counts copied
 * back and added into counts[0, gp_select_counts_len(sel)). */
extern "C" int gp_cuda_radix_hist(gp_dtype t, const void *y, int64_t n, const gp_select *sel,
                                  int64_t *counts)
{
    int rc = radix_check(t, y, n, sel, counts);
    if (rc || n == 0) return rc;
    const size_t len = gp_select_counts_len(sel);
    void *d = NULL;
    if ((rc = scratch(SLOT_COUNTS, len * 8, &d))) return rc;
    CUDA_CHECK(cudaMemsetAsync(d, 0, len * 8, 0));
    unsigned long long *g = (unsigned long long *)d;
    rc = gpc_with_dtype(t, [&](auto z) {
        typedef decltype(z) T;
        return launch_radix<T>((const T *)y, n, sel, g);
    });
    return rc ? rc : add_counts(d, len, counts);
}

/* The runs of equal non-NaN values — gp_backend.runs on the GPU: one launch for the count,
 * the first and last elements copied for the record's ends. */
extern "C" int gp_cuda_runs(gp_dtype t, const void *y, int64_t n, gp_runs *out)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!out) GPC_EINVAL("out is NULL");
    gp_runs r = gp_runs_empty();
    if (n == 0) {
        *out = r;
        return GP_OK;
    }
    void *d = NULL;
    int rc = scratch(SLOT_RECORD, 8, &d);
    if (rc) return rc;
    CUDA_CHECK(cudaMemset(d, 0, 8));
    rc = gpc_with_dtype(t, [&](auto z) {
        typedef decltype(z) T;
        int blocks = 1;
        const int e = grid_of((const void *)k_runs<T>, 0, n, 16 / (int)sizeof(T), &blocks);
        if (e) return e;
        k_runs<T><<<blocks, THREADS>>>((const T *)y, n, (unsigned long long *)d);
        CUDA_CHECK_LAUNCH("k_runs");
        return (int)GP_OK;
    });
    if (rc) return rc;
    const size_t sz = gp_dtype_size(t);
    unsigned long long c = 0;
    unsigned char first[8], last[8];
    CUDA_CHECK(cudaMemcpy(&c, d, 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(first, y, sz, cudaMemcpyDeviceToHost));
    const char *yl = (const char *)y + (size_t)(n - 1) * sz;
    CUDA_CHECK(cudaMemcpy(last, yl, sz, cudaMemcpyDeviceToHost));
    const bool isf = gp_dtype_is_float(t);
    r.n = n;
    r.runs = (int64_t)c;
    r.first_key = gp_runs_key(t, first);
    r.last_key = gp_runs_key(t, last);
    r.first_nan = isf && gp_elem_to_double(t, first) != gp_elem_to_double(t, first);
    r.last_nan = isf && gp_elem_to_double(t, last) != gp_elem_to_double(t, last);
    *out = r;
    return GP_OK;
}
