/* cuda_scan.cuh — the building blocks of the CUDA prefix scans (kernels/cuda_scan.cu), the
 * reduction's hierarchy with a prefix at every level (the reduction lesson's next primitive):
 *   - a tile of TILE elements is 8 warps' segments of CHUNKS chunks; a chunk is 64 elements,
 *     two per lane, read with one 8- or 16-byte load per lane and written with one 16-byte
 *     store (coalesced: a warp's access is contiguous);
 *   - per thread a sequential scan of its items (the two of a chunk), per warp
 *     __shfl_up_sync steps over the lanes' totals (chunk after chunk, a running warp total),
 *     per block the warp totals scanned in shared memory (tile_scan);
 *   - across tiles (cuda_scan.cu): a decoupled look-back (after Merrill & Garland,
 *     "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016) over a fixed
 *     hierarchy of groups of 32 (lookback below), or a reduce-then-scan over segments of
 *     SEG_TILES tiles.
 * Float data are summed in float64 (at most about 25 roundings on the way from an element to
 * its tile-local prefix), the sums between tiles as compensated pairs (CarryF), so every
 * output is within the bound of gpuprim/kernels.h. The carry into a tile is a fixed formula
 * of the tiles' totals in either way (the look-back's groups, or the segments' fold), so its
 * bits never depend on timing: a non-finite carry is its value class alone, not whichever
 * NaN some copy of an addition kept. Integers are exact (128-bit carries).
 * Not part of the public contract.
 */
#ifndef GP_CUDA_SCAN_CUH
#define GP_CUDA_SCAN_CUH

#include "cuda_blockreduce.cuh"
#include "cuda_internal.cuh"
#include "scan_dd.h"

#include <string.h>

#include <type_traits>

namespace scn {

using blk::FULL_MASK;

constexpr int THREADS = 256;                     /* 8 warps */
constexpr int WARPS = THREADS / 32;
constexpr int CHUNKS = 8;                        /* chunks per warp and tile */
constexpr int WARP_ELEMS = CHUNKS * 64;          /* a warp's segment of a tile */
constexpr int TILE = WARPS * WARP_ELEMS;         /* 4096 elements */
constexpr int SEG_TILES = 32;                    /* reduce-then-scan: tiles per segment */
constexpr int LB_FAN = 32;    /* look-back: members of a group (tiles, or groups a level down) */
constexpr int LB_LEVELS = 7;  /* most levels of groups: 32^7 tiles pass INT_MAX */
static_assert(LB_FAN == 32, "lookback takes a level's digit as 5 bits of the tile index");

/* ---- accumulators: double (float data, the trapezoid's terms), long long / unsigned long
 * long (4-byte integers), __int128 (8-byte integers) ------------------------------------------ */

template <class A> __device__ __forceinline__ A acc_zero() { return A(0); }
/* IEEE's additive identity: a sum of -0.0 stays -0.0, as numpy's sequential sum has it */
template <> __device__ __forceinline__ double acc_zero<double>() { return -0.0; }

template <class A> __device__ __forceinline__ A shfl_up(A v, int d)
{
    return __shfl_up_sync(FULL_MASK, v, d);
}
template <class A> __device__ __forceinline__ A shfl_idx(A v, int src)
{
    return __shfl_sync(FULL_MASK, v, src);
}
template <> __device__ __forceinline__ __int128 shfl_up<__int128>(__int128 v, int d)
{
    const unsigned long long lo = __shfl_up_sync(FULL_MASK, (unsigned long long)v, d);
    const long long hi = __shfl_up_sync(FULL_MASK, (long long)(v >> 64), d);
    return ((__int128)hi << 64) | (__int128)lo;
}
template <> __device__ __forceinline__ __int128 shfl_idx<__int128>(__int128 v, int src)
{
    const unsigned long long lo = __shfl_sync(FULL_MASK, (unsigned long long)v, src);
    const long long hi = __shfl_sync(FULL_MASK, (long long)(v >> 64), src);
    return ((__int128)hi << 64) | (__int128)lo;
}

/* The accumulator of element type T (float data in float64, integers exactly) and its
 * output type (float64, int64 for signed, uint64 for unsigned). */
template <class T> struct ScanOf {
    typedef double A;
    typedef double Out;
    static constexpr bool INT = false;
};
template <> struct ScanOf<int32_t> {
    typedef long long A;
    typedef long long Out;
    static constexpr bool INT = true;
};
template <> struct ScanOf<uint32_t> {
    typedef unsigned long long A;
    typedef unsigned long long Out;
    static constexpr bool INT = true;
};
template <> struct ScanOf<int64_t> {
    typedef __int128 A;
    typedef long long Out;
    static constexpr bool INT = true;
};
template <> struct ScanOf<uint64_t> {
    typedef __int128 A;
    typedef unsigned long long Out;
    static constexpr bool INT = true;
};

/* The cumsum term of an element: float data as float64 with NaN adding nothing (+0.0, as
 * numpy.nancumsum replaces it); integers as themselves. */
template <class A, class T> __device__ __forceinline__ A sum_term(T v)
{
    if constexpr (std::is_floating_point<T>::value) return gpc_is_nan(v) ? 0.0 : (double)v;
    else return (A)v;
}

/* Two adjacent elements p[0], p[1] (p aligned to 2 * sizeof(T)) with one load. */
template <class T> __device__ __forceinline__ void load2(const T *p, T &a, T &b)
{
    if constexpr (sizeof(T) == 4) {
        const uint2 u = *reinterpret_cast<const uint2 *>(p);
        memcpy(&a, &u.x, 4);
        memcpy(&b, &u.y, 4);
    } else {
        const ulonglong2 u = *reinterpret_cast<const ulonglong2 *>(p);
        memcpy(&a, &u.x, 8);
        memcpy(&b, &u.y, 8);
    }
}

/* Two adjacent 8-byte outputs (p aligned to 16 bytes) with one store. */
template <class O> __device__ __forceinline__ void store2(O *p, O a, O b)
{
    ulonglong2 u;
    memcpy(&u.x, &a, 8);
    memcpy(&u.y, &b, 8);
    *reinterpret_cast<ulonglong2 *>(p) = u;
}

/* ---- the tile ----------------------------------------------------------------------------- */

/* The local index (from the tile's start) of element j (0, 1) of chunk k of this thread. */
__device__ __forceinline__ int elem_off(int k, int j)
{
    return (threadIdx.x >> 5) * WARP_ELEMS + k * 64 + 2 * (threadIdx.x & 31) + j;
}

/* The block's inclusive scan of the tile's terms a[k][j] (in place: each becomes the sum of
 * the terms of the tile up to it) and the tile's total (returned to every thread): per lane
 * a[k][0] + a[k][1], per warp the lanes' totals scanned by __shfl_up_sync (Hillis-Steele,
 * 5 steps) chunk after chunk with the warp's running total, then the 8 warp totals, kept in
 * shared memory indexed by warp, scanned in warp order by every thread. All threads must
 * call it; s_warp (WARPS accumulators, shared) may be reused after a __syncthreads(). */
template <class A> __device__ __forceinline__ A tile_scan(A (&a)[CHUNKS][2], A *s_warp)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    A wc = acc_zero<A>();
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const A l1 = a[k][0] + a[k][1];
        A inc = l1;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const A u = shfl_up(inc, d);
            if (lane >= d) inc = u + inc;
        }
        A exc = shfl_up(inc, 1);
        if (lane == 0) exc = acc_zero<A>();
        const A tot = shfl_idx(inc, 31);
        a[k][0] = wc + (exc + a[k][0]);
        a[k][1] = wc + (exc + l1);
        wc = wc + tot;
    }
    if (lane == 0) s_warp[warp] = wc;
    __syncthreads();
    A run = acc_zero<A>(), wo = run;
#pragma unroll
    for (int w = 0; w < WARPS; w++) {
        if (w == warp) wo = run;
        run = run + s_warp[w];
    }
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        a[k][0] = wo + a[k][0];
        a[k][1] = wo + a[k][1];
    }
    return run;
}

/* ---- the carry between tiles -------------------------------------------------------------- */

/* Float carry: s the float64 sum of the tiles' totals, c the sum of its rounding errors; a
 * non-finite s is the total's value class (+inf, -inf, GP_SCAN_NAN) and c is then 0. */
struct CarryF {
    double s, c;
};

/* The carry's kind: float data (CarryF, a tile's total a double) or integers (__int128). Each
 * has the identity, the 16-byte form the status words and the host hold (float: the bits of
 * s and c, as gp_scan_carry's hi and lo; integer: the low and high words), the step of the
 * chain, the addition of two carries, and the warp broadcast. */
template <bool INT> struct Kind;
template <> struct Kind<false> {
    typedef CarryF C;
    typedef double Agg;
    __device__ static C from(ulonglong2 w)
    {
        return C{__longlong_as_double((long long)w.x), __longlong_as_double((long long)w.y)};
    }
    __device__ static ulonglong2 to(C v)
    {
        return make_ulonglong2((unsigned long long)__double_as_longlong(v.s),
                               (unsigned long long)__double_as_longlong(v.c));
    }
    __device__ static Agg agg_from(ulonglong2 w) { return __longlong_as_double((long long)w.x); }
    __device__ static ulonglong2 agg_to(Agg a)
    {
        return make_ulonglong2((unsigned long long)__double_as_longlong(a), 0ull);
    }
    __device__ static Agg agg_zero() { return -0.0; }
    __device__ static C identity() { return C{-0.0, -0.0}; }
    /* e += b, a whole carry (segments' totals): a double-double addition */
    __device__ static void add(C &e, C b) { gp_dd_add2(&e.s, &e.c, b.s, b.c); }
    /* The carry after tile j (its total a): scan_dd.h's step, the same bits for any path
     * to it (a non-finite carry is its value class alone, not the NaN some copy made). */
    __device__ static void step(C &e, Agg a, long long j) { gp_scan_step(&e.s, &e.c, a, j); }
    __device__ static C shfl(C v, int src)
    {
        return C{__shfl_sync(FULL_MASK, v.s, src), __shfl_sync(FULL_MASK, v.c, src)};
    }
    __device__ static Agg shfl_agg(Agg v, int src) { return __shfl_sync(FULL_MASK, v, src); }
};
template <> struct Kind<true> {
    typedef __int128 C;
    typedef __int128 Agg;
    __device__ static C from(ulonglong2 w) { return (C)(((unsigned __int128)w.y << 64) | w.x); }
    __device__ static ulonglong2 to(C v)
    {
        return make_ulonglong2((unsigned long long)v, (unsigned long long)(v >> 64));
    }
    __device__ static Agg agg_from(ulonglong2 w) { return from(w); }
    __device__ static ulonglong2 agg_to(Agg a) { return to(a); }
    __device__ static Agg agg_zero() { return 0; }
    __device__ static C identity() { return 0; }
    __device__ static void add(C &e, C b) { e += b; }
    __device__ static void step(C &e, Agg a, long long) { e += a; }
    __device__ static C shfl(C v, int src) { return shfl_idx(v, src); }
    __device__ static Agg shfl_agg(Agg v, int src) { return shfl_idx(v, src); }
};

/* A tile's status word, read around L1 (other blocks write it). */
__device__ __forceinline__ unsigned load_flag(const unsigned *f)
{
    return *reinterpret_cast<const volatile unsigned *>(f);
}

/* Publishes v in *slot, then flag in *f: a reader that sees the flag (load_flag, then
 * __threadfence) reads v with __ldcg. One thread. */
__device__ __forceinline__ void publish(unsigned *f, ulonglong2 *slot, ulonglong2 v, unsigned flag)
{
    __stcg(slot, v);
    __threadfence();
    *reinterpret_cast<volatile unsigned *>(f) = flag;
}

/* The sums the look-back reads: level 0 holds each tile's total, level l + 1 the sum of
 * each group of LB_FAN consecutive entries of level l (the last group may be short: its sum
 * is never read). Entry i of level l: flags[off[l] + i] (0 until published) and
 * vals[off[l] + i] (Kind's 16-byte form). levels: the fewest with ntiles <= LB_FAN^levels. */
struct Tree {
    unsigned *flags;
    ulonglong2 *vals;
    long long off[LB_LEVELS + 1];
    int levels;
};

/* The sum of the warp's 32 values in one fixed shape (lanes j and j + 16, then j and j + 8,
 * ... to lane 0), returned to every lane; the identity in the lanes that hold no term. */
template <bool INT>
__device__ __forceinline__ typename Kind<INT>::C warp_fold(typename Kind<INT>::C v)
{
    typedef Kind<INT> K;
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const typename K::C o = K::shfl(v, (lane + off) & 31);
        if (lane < off) K::add(v, o);
    }
    return K::shfl(v, 0);
}

/* The decoupled look-back of tile `tile` over the fixed hierarchy of groups (the whole of
 * warp 0 calls it, after thread 0 published the tile's total `own` at level 0). Written in
 * base LB_FAN, tile = sum of d_l 32^l; the tiles before it are, at each level l, the d_l
 * groups of level l before its own ancestor in their common parent: lane j < d_l waits for
 * entry j's flag and reads it, and the warp folds them (warp_fold). The carry is the piece's
 * carry plus the levels' sums, level 0 first: a fixed formula of the tiles' totals, so its
 * bits never depend on which block ran when. Nothing is a chain: a group's sum is published
 * by its last member's block (d_0 = ... = d_l = LB_FAN - 1) from the entries it has just read
 * for its own carry, before it reads the next level, so every sum depends on totals alone.
 * Each block waits only for blocks that took earlier tickets. Returned to every lane. */
template <bool INT>
__device__ typename Kind<INT>::C lookback(long long tile, typename Kind<INT>::C own,
                                          const Tree &tr, typename Kind<INT>::C carry)
{
    typedef Kind<INT> K;
    const int lane = threadIdx.x & 31;
    typename K::C below = K::identity(), cur = own;
    bool last = true; /* the ancestors so far each close their group */
#pragma unroll
    for (int l = 0; l < LB_LEVELS; l++) {
        if (l >= tr.levels) break;
        const long long a = tile >> (5 * l); /* the ancestor at level l */
        const int d = (int)(a & (LB_FAN - 1));
        const long long at = tr.off[l] + (a - d) + lane;
        typename K::C v = K::identity();
        if (lane < d) {
            while (load_flag(tr.flags + at) == 0u) __nanosleep(32);
            __threadfence(); /* the value after the flag */
            v = K::from(__ldcg(tr.vals + at));
        }
        K::add(below, warp_fold<INT>(v));
        last = last && d == LB_FAN - 1;
        if (last && l + 1 < tr.levels) { /* the group's sum, for the tiles after it */
            cur = warp_fold<INT>(lane == LB_FAN - 1 ? cur : v);
            const long long up = tr.off[l + 1] + (a >> 5);
            if (lane == 0) publish(tr.flags + up, tr.vals + up, K::to(cur), 1u);
        }
    }
    K::add(carry, below);
    return carry;
}

} // namespace scn

#endif /* GP_CUDA_SCAN_CUH */
