/* cuda_scan.cu — the CUDA backend's prefix scans: gp_backend.cumsum and cumint (their
 * contracts: gpuprim/kernels.h). The tile, the carry and the look-back are in cuda_scan.cuh;
 * here the terms of a tile (cumsum: the elements; cumint: the trapezoids, each with the
 * sample before it), the outputs of a tile, the three kernels, their scratch and the entries.
 *
 * Across tiles, two ways (GPUPRIM_SCAN_ALGO, gp_scan_algo; the bench times both):
 *   lookback  one pass, one tile per block in the order blocks start (a ticket), each block
 *             publishing its total and finding its carry from the totals and group sums
 *             published before it (k_lookback; cuda_scan.cuh's lookback): n elements read
 *             once and written once;
 *   rts       reduce-then-scan over segments of SEG_TILES tiles: the segments' totals
 *             (k_segments, write = 0), their exclusive scan in one block (k_segscan), then
 *             each segment scanned tile after tile from its offset (k_segments, write = 1):
 *             the input read twice.
 * A call with out == NULL (a rank's total before its scan) runs the first two kernels of
 * rts. Every call ends with one copy of a small result block (the total, the first
 * overflow, the last sample) to pinned host memory and a synchronisation.
 */
#include "cuda_scan.cuh"
#include "tuning.h"

#include <limits.h>
#include <string.h>

namespace {

using namespace scn;

enum { OP_SUM = 0, OP_TRAP = 1 };
constexpr int SEG_THREADS = 1024; /* k_segscan's one block */

/* What a call's kernels write for the host: the total of the piece (Kind's 16-byte form),
 * the first element whose integer prefix leaves the output type (local index; ~0: none),
 * the last sample (cumint's next carry), the tile ticket of k_lookback. */
struct Result {
    ulonglong2 total;
    unsigned long long ovf;
    double ylast, xlast;
    unsigned ticket;
    unsigned pad;
};

/* Everything a launch needs, by value. */
struct Args {
    const void *y;
    const double *x; /* cumint's coordinates, or NULL (dx) */
    double dx;
    long long n;
    void *out;       /* NULL: totals only */
    int vec;         /* y, x and out aligned for the 8/16-byte loads and stores */
    int has_prev;    /* cumint: yprev / xprev come before y[0] */
    double yprev, xprev;
    ulonglong2 carry; /* the total before y[0] (Kind's form) */
    long long ntiles, nseg;
    Tree tree;        /* the look-back's sums */
    ulonglong2 *seg_tot, *seg_exc;
    Result *res;
};

/* The accumulator, carry kind and output of element type T in operation OP: cumsum of
 * integers exact (ScanOf), every other sum in float64. */
template <class T, int OP> struct Types {
    static constexpr bool INT = OP == OP_SUM && ScanOf<T>::INT;
    typedef typename std::conditional<INT, typename ScanOf<T>::A, double>::type A;
    typedef typename std::conditional<INT, typename ScanOf<T>::Out, double>::type Out;
    typedef Kind<INT> K;
};

/* ---- a tile's terms ----------------------------------------------------------------------- */

/* cumsum: a[k][j] = the term of this thread's element (k, j) of the tile at base (beyond n:
 * the identity). */
template <class T, class A>
__device__ __forceinline__ void sum_terms(const Args &g, long long base, A (&a)[CHUNKS][2])
{
    const T *y = static_cast<const T *>(g.y);
    const long long rem = g.n - base;
    if (g.vec && rem >= TILE) {
        T v[CHUNKS][2];
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) load2(y + base + elem_off(k, 0), v[k][0], v[k][1]);
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            a[k][0] = sum_term<A>(v[k][0]);
            a[k][1] = sum_term<A>(v[k][1]);
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < CHUNKS; k++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int o = elem_off(k, j);
            a[k][j] = o < rem ? sum_term<A>(y[base + o]) : acc_zero<A>();
        }
}

/* cumint: a[k][j] = the trapezoid ending at this thread's element (k, j): the sample before
 * it is the previous lane's second one, for lane 0 the last of the previous chunk, for a
 * warp's first element the one before in memory (for the piece's first, the carry's; none
 * at the very start: the identity). Beyond n: the identity. */
template <class T>
__device__ __forceinline__ void trap_terms(const Args &g, long long base, double (&a)[CHUNKS][2])
{
    const T *y = static_cast<const T *>(g.y);
    const double *x = g.x;
    const bool hx = x != nullptr;
    const long long rem = g.n - base;
    const bool full = g.vec && rem >= TILE;
    const int lane = threadIdx.x & 31;
    double yv[CHUNKS][2], xv[CHUNKS][2];
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const int o = elem_off(k, 0);
        if (full) {
            T v0, v1;
            load2(y + base + o, v0, v1);
            yv[k][0] = (double)v0;
            yv[k][1] = (double)v1;
            const double2 d = hx ? *reinterpret_cast<const double2 *>(x + base + o)
                                 : make_double2(0.0, 0.0);
            xv[k][0] = d.x;
            xv[k][1] = d.y;
        } else {
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const bool in = o + j < rem;
                yv[k][j] = in ? (double)y[base + o + j] : 0.0;
                xv[k][j] = in && hx ? x[base + o + j] : 0.0;
            }
        }
    }
    const long long first = base + (threadIdx.x >> 5) * WARP_ELEMS;
    double cy = 0.0, cx = 0.0;
    bool cv = true;
    if (first == 0) {
        cy = g.yprev;
        cx = g.xprev;
        cv = g.has_prev != 0;
    } else if (first < g.n) {
        cy = (double)y[first - 1];
        cx = hx ? x[first - 1] : 0.0;
    }
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        double py = shfl_up(yv[k][1], 1), px = shfl_up(xv[k][1], 1);
        bool pv = true;
        if (lane == 0) {
            py = cy;
            px = cx;
            pv = cv;
        }
        a[k][0] = pv ? gp_trap_term(yv[k][0], py, xv[k][0], px, g.dx, hx) : -0.0;
        a[k][1] = gp_trap_term(yv[k][1], yv[k][0], xv[k][1], xv[k][0], g.dx, hx);
        cy = shfl_idx(yv[k][1], 31);
        cx = shfl_idx(xv[k][1], 31);
        cv = true;
        if (!full) {
            const int o = elem_off(k, 0);
            if (o >= rem) a[k][0] = -0.0;
            if (o + 1 >= rem) a[k][1] = -0.0;
        }
    }
}

template <class T, int OP, class A>
__device__ __forceinline__ void tile_terms(const Args &g, long long base, A (&a)[CHUNKS][2])
{
    if constexpr (OP == OP_SUM) sum_terms<T, A>(g, base, a);
    else trap_terms<T>(g, base, a);
}

/* ---- a tile's outputs --------------------------------------------------------------------- */

/* One output from the carry e into the tile and the tile-local prefix p of the element at
 * local index i: float64 rounded once from the carry's pair; an integer exact, whose value
 * outside the output type (CHK) lowers *bad to its index. */
template <class T, int OP, bool CHK>
__device__ __forceinline__ typename Types<T, OP>::Out
out_value(const Args &g, const typename Types<T, OP>::K::C &e, typename Types<T, OP>::A p,
          long long i, unsigned long long *bad)
{
    typedef Types<T, OP> S;
    if constexpr (!S::INT) {
        const double v = gp_dd_round(e.s, e.c, p);
        return (OP == OP_TRAP && i == 0 && !g.has_prev) ? 0.0 : v; /* initial=0 */
    } else if constexpr (!CHK) {
        return (typename S::Out)((typename S::A)e + p); /* no prefix can leave the type */
    } else {
        const __int128 v = e + (__int128)p;
        const bool fits = std::is_signed<typename S::Out>::value
                              ? v >= (__int128)LLONG_MIN && v <= (__int128)LLONG_MAX
                              : v >= 0 && v <= (__int128)ULLONG_MAX;
        if (!fits && i < g.n && (unsigned long long)i < *bad) *bad = (unsigned long long)i;
        return (typename S::Out)v;
    }
}

/* The tile's outputs at base: each element's tile-local prefix p[k][j] after the carry e.
 * CHK: the warp's first index whose integer prefix left the output type goes to the result
 * with one atomicMin. Every thread of the block calls it. */
template <class T, int OP, bool CHK>
__device__ __forceinline__ void store_tile(const Args &g, long long base,
                                           const typename Types<T, OP>::A (&p)[CHUNKS][2],
                                           const typename Types<T, OP>::K::C &e)
{
    typedef typename Types<T, OP>::Out O;
    O *out = static_cast<O *>(g.out);
    const long long rem = g.n - base;
    const bool full = g.vec && rem >= TILE;
    unsigned long long bad = ~0ull;
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const int o = elem_off(k, 0);
        const O v0 = out_value<T, OP, CHK>(g, e, p[k][0], base + o, &bad);
        const O v1 = out_value<T, OP, CHK>(g, e, p[k][1], base + o + 1, &bad);
        if (full) {
            store2(out + base + o, v0, v1);
        } else {
            if (o < rem) out[base + o] = v0;
            if (o + 1 < rem) out[base + o + 1] = v1;
        }
    }
    if constexpr (CHK) {
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            const unsigned long long u = __shfl_down_sync(FULL_MASK, bad, d);
            bad = u < bad ? u : bad;
        }
        if ((threadIdx.x & 31) == 0 && bad != ~0ull) atomicMin(&g.res->ovf, bad);
    }
}

/* The piece's last sample (cumint's next carry), by one thread. */
template <class T> __device__ __forceinline__ void last_sample(const Args &g)
{
    g.res->ylast = (double)static_cast<const T *>(g.y)[g.n - 1];
    g.res->xlast = g.x ? g.x[g.n - 1] : 0.0;
}

/* ---- the kernels -------------------------------------------------------------------------- */

/* The single pass: a ticket gives the block its tile (so every tile before it belongs to a
 * block that started earlier), the tile is scanned, its total published, the look-back finds
 * the carry into it (lookback: from the piece's carry and the totals of the tiles before it)
 * and the outputs are written. The last tile's carry plus its total is the piece's total. */
template <class T, int OP, bool CHK>
__global__ void __launch_bounds__(THREADS) k_lookback(Args g)
{
    typedef Types<T, OP> S;
    typedef typename S::K K;
    __shared__ typename S::A s_warp[WARPS];
    __shared__ unsigned s_tile;
    __shared__ ulonglong2 s_carry;
    if (threadIdx.x == 0) s_tile = atomicAdd(&g.res->ticket, 1u);
    __syncthreads();
    const long long tile = s_tile, base = tile * TILE;
    typename S::A a[CHUNKS][2];
    tile_terms<T, OP>(g, base, a);
    const typename K::Agg total = (typename K::Agg)tile_scan(a, s_warp);
    if (threadIdx.x < 32) {
        const typename K::C own = K::from(K::agg_to(total));
        if (threadIdx.x == 0 && tile + 1 < g.ntiles)
            publish(g.tree.flags + tile, g.tree.vals + tile, K::to(own), 1u);
        const typename K::C e = lookback<S::INT>(tile, own, g.tree, K::from(g.carry));
        if (threadIdx.x == 0) {
            s_carry = K::to(e);
            if (tile == g.ntiles - 1) {
                typename K::C i = e;
                K::add(i, own);
                g.res->total = K::to(i);
                last_sample<T>(g);
            }
        }
    }
    __syncthreads();
    store_tile<T, OP, CHK>(g, base, a, K::from(s_carry));
}

/* Reduce-then-scan, one segment per block, its tiles in order. write = 0: the segment's
 * total (the tiles' totals folded from the identity) into seg_tot; write = 1: the outputs,
 * from the segment's offset in seg_exc, and the last segment's final carry as the piece's
 * total. The last segment's block also records the last sample. */
template <class T, int OP, bool CHK>
__global__ void __launch_bounds__(THREADS) k_segments(Args g, int write)
{
    typedef Types<T, OP> S;
    typedef typename S::K K;
    __shared__ typename S::A s_warp[WARPS];
    const long long seg = blockIdx.x, t0 = seg * SEG_TILES;
    const long long t1 = t0 + SEG_TILES < g.ntiles ? t0 + SEG_TILES : g.ntiles;
    typename K::C e = write ? K::from(g.seg_exc[seg]) : K::identity();
    for (long long tile = t0; tile < t1; tile++) {
        typename S::A a[CHUNKS][2];
        tile_terms<T, OP>(g, tile * TILE, a);
        const typename K::Agg total = (typename K::Agg)tile_scan(a, s_warp);
        if (write) store_tile<T, OP, CHK>(g, tile * TILE, a, e);
        K::step(e, total, tile);
        __syncthreads(); /* s_warp is read again by the next tile */
    }
    if (threadIdx.x != 0) return;
    if (!write) g.seg_tot[seg] = K::to(e);
    if (t1 == g.ntiles) {
        if (write) g.res->total = K::to(e);
        last_sample<T>(g);
    }
}

/* The exclusive scan of the segments' totals from the piece's carry, in one block of
 * SEG_THREADS: each thread folds its run of segments, the threads' folds are scanned
 * (Hillis-Steele in shared memory, a fixed shape), and each thread writes its segments'
 * offsets; the last thread's end is the piece's total. */
template <bool INT> __global__ void __launch_bounds__(SEG_THREADS) k_segscan(Args g)
{
    typedef Kind<INT> K;
    __shared__ ulonglong2 s_x[SEG_THREADS];
    const int tid = threadIdx.x;
    const long long per = (g.nseg + SEG_THREADS - 1) / SEG_THREADS;
    const long long s0 = tid * per < g.nseg ? tid * per : g.nseg;
    const long long s1 = s0 + per < g.nseg ? s0 + per : g.nseg;
    typename K::C x = K::identity();
    for (long long s = s0; s < s1; s++) K::add(x, K::from(g.seg_tot[s]));
    s_x[tid] = K::to(x);
    __syncthreads();
    for (int d = 1; d < SEG_THREADS; d <<= 1) {
        const ulonglong2 lower = tid >= d ? s_x[tid - d] : make_ulonglong2(0ull, 0ull);
        __syncthreads();
        if (tid >= d) {
            typename K::C v = K::from(lower);
            K::add(v, x);
            x = v;
            s_x[tid] = K::to(x);
        }
        __syncthreads();
    }
    typename K::C e = K::from(g.carry);
    if (tid > 0) K::add(e, K::from(s_x[tid - 1]));
    for (long long s = s0; s < s1; s++) {
        g.seg_exc[s] = K::to(e);
        K::add(e, K::from(g.seg_tot[s]));
    }
    if (tid == SEG_THREADS - 1) g.res->total = K::to(e);
}

/* ---- scratch and launches ----------------------------------------------------------------- */

/* The scans' device scratch (grown as needed; one of a previously current device is kept)
 * and the pinned result block. */
struct Scratch {
    int device;
    char *dev;
    size_t bytes;
    Result *host;
};
Scratch g_scratch = {-1, nullptr, 0, nullptr};

size_t round256(size_t b) { return (b + 255) / 256 * 256; }

/* The look-back's levels of ntiles tiles (Tree): their count and each one's offset. */
void tree_shape(long long ntiles, Tree &t)
{
    long long len = ntiles, at = 0;
    t.levels = 0;
    for (;;) {
        t.off[t.levels++] = at;
        at += len;
        if (len <= LB_FAN || t.levels == LB_LEVELS) break;
        len = (len + LB_FAN - 1) / LB_FAN;
    }
    t.off[t.levels] = at;
}

/* Points g's scratch arrays into the scratch (grown to fit the look-back's levels of ntiles
 * tiles and nseg segments). */
int scratch_for(Args &g)
{
    tree_shape(g.ntiles, g.tree);
    const size_t nt = (size_t)g.tree.off[g.tree.levels], ns = (size_t)g.nseg;
    const size_t b_flags = round256(nt * 4), b_vals = round256(nt * 16), b_seg = round256(ns * 16);
    const size_t need = b_flags + b_vals + 2 * b_seg + round256(sizeof(Result));
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    if (g_scratch.device != device || g_scratch.bytes < need) {
        if (g_scratch.device == device && g_scratch.dev) CUDA_CHECK(cudaFree(g_scratch.dev));
        g_scratch.dev = nullptr;
        g_scratch.bytes = 0;
        const size_t want = need + need / 4;
        CUDA_CHECK(cudaMalloc(&g_scratch.dev, want));
        if (g_scratch.device != device || !g_scratch.host) {
            void *h = nullptr;
            CUDA_CHECK(cudaMallocHost(&h, sizeof(Result)));
            g_scratch.host = static_cast<Result *>(h);
        }
        g_scratch.device = device;
        g_scratch.bytes = want;
    }
    char *p = g_scratch.dev;
    g.tree.flags = reinterpret_cast<unsigned *>(p);
    g.tree.vals = reinterpret_cast<ulonglong2 *>(p + b_flags);
    g.seg_tot = reinterpret_cast<ulonglong2 *>(p + b_flags + b_vals);
    g.seg_exc = reinterpret_cast<ulonglong2 *>(p + b_flags + b_vals + b_seg);
    g.res = reinterpret_cast<Result *>(p + b_flags + b_vals + 2 * b_seg);
    return GP_OK;
}

/* The kernels of one call (on the legacy default stream, like the other kernels), then the
 * result block to *r. totals_only: the rts's first two kernels alone. */
template <class T, int OP, bool CHK> int run_scan(Args &g, bool totals_only, Result *r)
{
    g.ntiles = (g.n + TILE - 1) / TILE;
    g.nseg = (g.ntiles + SEG_TILES - 1) / SEG_TILES;
    if (g.ntiles > INT_MAX) GPC_EINVAL("n = %lld: more than %d tiles", g.n, INT_MAX);
    int rc = scratch_for(g);
    if (rc) return rc;
    Result *h = g_scratch.host;
    memset(h, 0, sizeof *h);
    h->ovf = ~0ull;
    CUDA_CHECK(cudaMemcpyAsync(g.res, h, sizeof *h, cudaMemcpyHostToDevice, 0));
    constexpr bool INT = Types<T, OP>::INT;
    if (!totals_only && gp_scan_algo() != GP_SCAN_ALGO_RTS) {
        CUDA_CHECK(cudaMemsetAsync(g.tree.flags, 0, (size_t)g.tree.off[g.tree.levels] * 4, 0));
        k_lookback<T, OP, CHK><<<(unsigned)g.ntiles, THREADS>>>(g);
        CUDA_CHECK_LAUNCH("k_lookback");
    } else {
        k_segments<T, OP, CHK><<<(unsigned)g.nseg, THREADS>>>(g, 0);
        CUDA_CHECK_LAUNCH("k_segments (totals)");
        k_segscan<INT><<<1, SEG_THREADS>>>(g);
        CUDA_CHECK_LAUNCH("k_segscan");
        if (!totals_only) {
            k_segments<T, OP, CHK><<<(unsigned)g.nseg, THREADS>>>(g, 1);
            CUDA_CHECK_LAUNCH("k_segments (scan)");
        }
    }
    CUDA_CHECK(cudaMemcpyAsync(h, g.res, sizeof *h, cudaMemcpyDeviceToHost, 0));
    CUDA_CHECK(cudaStreamSynchronize(0));
    *r = *h;
    return GP_OK;
}

/* The launch arguments of a call on y[0, n) into out. */
Args args_for(const void *y, const double *x, double dx, int64_t n, void *out, size_t esize)
{
    Args g;
    memset(&g, 0, sizeof g);
    g.y = y;
    g.x = x;
    g.dx = dx;
    g.n = n;
    g.out = out;
    g.vec = (uintptr_t)y % (2 * esize) == 0 && (uintptr_t)out % 16 == 0 &&
            (uintptr_t)x % 16 == 0;
    return g;
}

/* The float carry's pair as Kind<false>'s 16-byte form, and back (normalised). */
ulonglong2 float_carry(const gp_scan_carry *c)
{
    ulonglong2 w;
    memcpy(&w.x, &c->hi, 8);
    memcpy(&w.y, &c->lo, 8);
    return w;
}
void set_float_total(gp_scan_carry *c, ulonglong2 w)
{
    memcpy(&c->hi, &w.x, 8);
    memcpy(&c->lo, &w.y, 8);
    gp_dd_norm(&c->hi, &c->lo);
}

} // namespace

/* Inclusive prefix sum — gp_backend.cumsum on the GPU (contract: gpuprim/kernels.h). */
extern "C" int gp_cuda_cumsum(gp_dtype t, const void *y, int64_t n, gp_scan_carry *carry,
                              void *out)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!carry) GPC_EINVAL("carry is NULL");
    if (out && gpc_overlap(y, (size_t)n * gp_dtype_size(t), out, (size_t)n * 8))
        GPC_EINVAL("out overlaps y");
    if (n == 0) return GP_OK;
    Args g = args_for(y, nullptr, 0.0, n, out, gp_dtype_size(t));
    const bool is_int = !gp_dtype_is_float(t);
    if (is_int) g.carry = make_ulonglong2(carry->isum.lo, (unsigned long long)carry->isum.hi);
    else g.carry = float_carry(carry);
    const bool fast = gp_scan_int_fast(t, carry->isum, n) != 0;
    Result r;
    const int rc = gpc_with_dtype(t, [&](auto z) {
        using T = decltype(z);
        if constexpr (!ScanOf<T>::INT || sizeof(T) == 8)
            return run_scan<T, OP_SUM, ScanOf<T>::INT>(g, out == nullptr, &r);
        else
            return fast ? run_scan<T, OP_SUM, false>(g, out == nullptr, &r)
                        : run_scan<T, OP_SUM, true>(g, out == nullptr, &r);
    });
    if (rc) return rc;
    if (is_int) {
        carry->isum.lo = r.total.x;
        carry->isum.hi = (int64_t)r.total.y;
        if (out && r.ovf != ~0ull && carry->overflow < 0)
            carry->overflow = carry->index + (int64_t)r.ovf;
    } else {
        set_float_total(carry, r.total);
    }
    carry->index += n;
    return GP_OK;
}

/* Cumulative trapezoid rule — gp_backend.cumint on the GPU (contract: gpuprim/kernels.h). */
extern "C" int gp_cuda_cumint(gp_dtype t, const void *y, const double *x, double dx, int64_t n,
                              gp_scan_carry *carry, double *out)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!carry) GPC_EINVAL("carry is NULL");
    if (!x && !(fabs(dx) <= DBL_MAX)) GPC_EINVAL("dx = %g is not finite", dx);
    if (out && (gpc_overlap(y, (size_t)n * gp_dtype_size(t), out, (size_t)n * 8) ||
                gpc_overlap(x, x ? (size_t)n * 8 : 0, out, (size_t)n * 8)))
        GPC_EINVAL("out overlaps y or x");
    if (n == 0) return GP_OK;
    Args g = args_for(y, x, dx, n, out, gp_dtype_size(t));
    g.carry = float_carry(carry);
    g.has_prev = carry->has_prev;
    g.yprev = carry->yprev;
    g.xprev = carry->xprev;
    Result r;
    const int rc = gpc_with_dtype(
        t, [&](auto z) { return run_scan<decltype(z), OP_TRAP, false>(g, out == nullptr, &r); });
    if (rc) return rc;
    set_float_total(carry, r.total);
    carry->yprev = r.ylast;
    carry->xprev = x ? r.xlast : 0.0;
    carry->has_prev = 1;
    carry->index += n;
    return GP_OK;
}
