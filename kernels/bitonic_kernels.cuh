/* bitonic_kernels.cuh — the bitonic engine's __global__ kernels and their block-level tile
 * loads and stores (layer 5 of 6; cuda_bitonic.cuh lists them). Device code only. Not part
 * of the public contract.
 *
 * Kernels (one plan, bn::plan, run by the host; R = 2^LOGR is the policy's largest unit:
 * 32 keys of 4 bytes, 16 of 8 bytes, 8 pairs):
 *   k_tile<LT, sort>:    a tile of T = 2^LT positions in dynamic shared memory (padded:
 *                        index i at slot i + i/32, and every group of more than one bit
 *                        starts at a multiple of LOGR, so 4-byte units are bank-conflict
 *                        free), levels 1 .. min(LOGR, LT) as one group of consecutive
 *                        positions, then each further level lk <= LT as groups from the
 *                        top (the first with the mirror step); the whole schedule is fixed
 *                        at compile time, so slot offsets are immediates;
 *   k_global<G, kind>:   for a level lk > LT, its stride bits >= LT in the fewest groups
 *                        of <= LOGW bits, as equal as they can be, from the top (the
 *                        first with the mirror step), one launch per group (the launch
 *                        boundary is the grid-wide barrier); a group of G < WIDE_MIN bits
 *                        runs here, a unit per thread, 2^G loads in flight per thread (8
 *                        or more: narrow groups batch units);
 *   k_wide<G, kind>:     a group of WIDE_MIN <= G <= LOGW bits (LOGW: 9 for 4-byte keys,
 *                        8 for 8-byte keys, 7 for pairs: 64 KiB per block): a block runs
 *                        32 units, the first steps in registers, the last ones after an
 *                        exchange through shared memory (Wide, bitonic_index.cuh);
 *   k_tile<LT, finish>:  the level's bits LT-1 .. 0, plain, in groups;
 *   k_tile<LT, level>:   level LT alone: after a tile sort at LT-1, when tiles of 2^LT
 *                        would give fewer than two blocks per SM (n = 2^20, 2^21).
 * The tile kernels run their loads and stores through a tile policy (TileKeysPolicy for
 * keys), which may map the first pass's loads (element -> order key, or key and value ->
 * one packed uint64) and the last pass's stores (the inverse): a value sort or a packed
 * pair sort without map passes of their own.
 */
#ifndef GP_BITONIC_KERNELS_CUH
#define GP_BITONIC_KERNELS_CUH

#include <stdint.h>

#include <type_traits>

#include "bitonic_plan.cuh"

namespace bn {

/* ---- a tile block: its loads, visitor and stores -------------------------------------- */

/* The device visitor: the calling thread's units of each group, then a barrier. */
template <class P, int LT> struct DevVisitor {
    unsigned char *s;
    int tid;
    template <int G, int BLO, int KIND> __device__ __forceinline__ void group()
    {
        Tile<P, LT>::template group<G, BLO, KIND>(s, tid, Tile<P, LT>::NTH);
        __syncthreads();
    }
};

/* Tile positions [base, base + T) of global memory (pol.load(g) for g < n, pad beyond)
 * into the padded shared-memory tile, 2^LOGR loads in flight per thread before their
 * shared-memory stores (a loop of load-then-store would wait for every load in turn).
 * Thread tid writes the slots of the indices i = tid (mod NTH). */
template <class P, class TL>
__device__ __forceinline__ void tile_fill(unsigned char *s, const P &pol, long long base,
                                          long long n, int tid)
{
    constexpr int U = 1 << P::LOGR;
    constexpr int STEP = TL::NTH * U;
#pragma unroll 1
    for (int i0 = tid; i0 < TL::T; i0 += STEP) {
        typename P::E v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int i = i0 + u * TL::NTH;
            const long long g = base + i;
            v[u] = (i < TL::T && g < n) ? pol.load(g) : P::pad();
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int i = i0 + u * TL::NTH;
            if (i < TL::T) P::sput(s, TL::TPAD, spad(i), v[u]);
        }
    }
}

/* The first pass's map of the loaded tile, in shared memory: slot of index i (g = base + i
 * < n) = pol.map_in(g, slot); the calling thread's own slots of tile_fill (i = tid mod NTH),
 * so no barrier is needed between the two. A loop of its own rather than a map inside
 * tile_fill's loads: there it costs the registers of the loads in flight. */
template <class P, class TL>
__device__ __forceinline__ void tile_map_in(unsigned char *s, const P &pol, long long base,
                                            long long n, int tid)
{
#pragma unroll 4
    for (int i = tid; i < TL::T; i += TL::NTH) {
        const long long g = base + i;
        if (g < n) P::sput(s, TL::TPAD, spad(i), pol.map_in(g, P::sget(s, TL::TPAD, spad(i))));
    }
}

/* The tile back to positions [base, base + T) below n (pol.store_out when MAPPED, else
 * pol.store). */
template <class P, class TL, bool MAPPED>
__device__ __forceinline__ void tile_drain(const unsigned char *s, const P &pol, long long base,
                                           long long n, int tid)
{
#pragma unroll 4
    for (int i = tid; i < TL::T; i += TL::NTH) {
        const long long g = base + i;
        if (g < n) {
            if (MAPPED) pol.store_out(g, P::sget(s, TL::TPAD, spad(i)));
            else pol.store(g, P::sget(s, TL::TPAD, spad(i)));
        }
    }
}

/* Whether the tile kernels of policy P may fill and drain full tiles with 16-byte vectors
 * (pol.vec_ok() says whether this launch may: not a packed pair sort's mapped pass). */
template <class P> struct TileVec : std::false_type {};
template <typename K> struct TileVec<KeysPolicy<K>> : std::true_type {};
template <typename K> struct TileVec<TileKeysPolicy<K>> : std::true_type {};

/* The 16-byte vector of keys K (4 of 4 bytes, 2 of 8); get / put key c by its members
 * (selects when c is not a compile-time constant: an index into the vector's bytes would
 * put it in local memory). */
template <typename K> struct KeyVec {
    typedef typename std::conditional<sizeof(K) == 4, uint4, ulonglong2>::type V;
    static constexpr int PER = 16 / (int)sizeof(K);
    __device__ __forceinline__ static K get(const V &v, int c)
    {
        if constexpr (PER == 4) return (K)(c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w);
        else return (K)(c == 0 ? v.x : v.y);
    }
    __device__ __forceinline__ static void put(V &v, int c, K x)
    {
        if constexpr (PER == 4) {
            if (c == 0) v.x = x;
            if (c == 1) v.y = x;
            if (c == 2) v.z = x;
            if (c == 3) v.w = x;
        } else {
            if (c == 0) v.x = x;
            if (c == 1) v.y = x;
        }
    }
};

/* tile_fill + tile_map_in for a full tile (base + T <= n) at a 16-byte aligned pol.keys:
 * thread tid loads the vectors v = tid (mod NTH), all of them in flight, maps them when
 * MAPPED, and stores their keys to the slots of indices PER v .. PER v + PER - 1 (4-byte
 * keys: a warp's 32 lanes hit 32 distinct banks, 4v + v/8 mod 32; 8-byte keys: lanes 8 ..
 * 15 of each half warp store their second key first, so that a half warp's 16 stores hit
 * 16 distinct bank pairs). */
template <class P, class TL, bool MAPPED>
__device__ __forceinline__ void tile_fill_vec(unsigned char *s, const P &pol, long long base,
                                              int tid)
{
    typedef typename P::E K;
    typedef KeyVec<K> KV;
    constexpr int NV = TL::T / KV::PER / TL::NTH; /* vectors per thread */
    static_assert(NV >= 1 && NV * KV::PER * TL::NTH == TL::T, "whole vectors per thread");
    const typename KV::V *src = reinterpret_cast<const typename KV::V *>(pol.keys + base);
    typename KV::V v[NV];
#pragma unroll
    for (int k = 0; k < NV; k++) v[k] = src[tid + k * TL::NTH];
    K *sk = reinterpret_cast<K *>(s);
    const int rot = KV::PER == 2 ? (tid >> 3) & 1 : 0;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int i = KV::PER * (tid + k * TL::NTH);
#pragma unroll
        for (int cc = 0; cc < KV::PER; cc++) {
            const int c = (cc + rot) & (KV::PER - 1);
            const K x = KV::get(v[k], c);
            sk[spad(i + c)] = MAPPED ? pol.map_in(base + i + c, x) : x;
        }
    }
}

/* tile_drain for a full tile at a 16-byte aligned pol.keys: the slots of indices PER v ..
 * PER v + PER - 1 (mapped when MAPPED; read in tile_fill_vec's order) as one 16-byte
 * store per vector v. */
template <class P, class TL, bool MAPPED>
__device__ __forceinline__ void tile_drain_vec(const unsigned char *s, const P &pol,
                                               long long base, int tid)
{
    typedef typename P::E K;
    typedef KeyVec<K> KV;
    constexpr int NV = TL::T / KV::PER / TL::NTH;
    typename KV::V *dst = reinterpret_cast<typename KV::V *>(pol.keys + base);
    const K *sk = reinterpret_cast<const K *>(s);
    const int rot = KV::PER == 2 ? (tid >> 3) & 1 : 0;
#pragma unroll 4
    for (int k = 0; k < NV; k++) {
        const int v = tid + k * TL::NTH;
        typename KV::V out;
#pragma unroll
        for (int cc = 0; cc < KV::PER; cc++) {
            const int c = (cc + rot) & (KV::PER - 1);
            const K x = sk[spad(KV::PER * v + c)];
            KV::put(out, c, MAPPED ? pol.map_out(x) : x);
        }
        dst[v] = out;
    }
}

/* ---- kernels -------------------------------------------------------------------------- */

/* The pass MODE (TileMode) of tile blockIdx.x: positions
 * [blockIdx.x * 2^LT, +2^LT) in dynamic shared memory (P::smem_bytes(Tile::TPAD) bytes),
 * Tile::NTH threads; only positions < n are read and written. */
template <class P, int LT, int MODE>
__global__ void __launch_bounds__(Tile<P, LT>::NTH, (TILE_THREADS / Tile<P, LT>::NTH) * 2)
k_tile(P pol, long long n)
{
    typedef Tile<P, LT> TL;
    extern __shared__ __align__(16) unsigned char bn_smem[];
    const int tid = (int)threadIdx.x;
    const long long base = (long long)blockIdx.x << LT;
    /* in_mapped / out_mapped and vec are uniform (launch parameters, block position); the
     * vector path for 1 .. 8 vectors per thread (more spill at the 64-register cap) */
    constexpr int PER = KeyVec<typename P::E>::PER;
    constexpr bool VEC =
        TileVec<P>::value && TL::T >= PER * TL::NTH && TL::T <= 8 * PER * TL::NTH;
    bool vec = false;
    if constexpr (VEC) {
        vec = base + TL::T <= n && ((uintptr_t)pol.keys & 15) == 0 && pol.vec_ok();
        if (vec) {
            if (pol.in_mapped()) tile_fill_vec<P, TL, true>(bn_smem, pol, base, tid);
            else tile_fill_vec<P, TL, false>(bn_smem, pol, base, tid);
        }
    }
    if (!vec) {
        tile_fill<P, TL>(bn_smem, pol, base, n, tid);
        if (pol.in_mapped()) tile_map_in<P, TL>(bn_smem, pol, base, n, tid);
    }
    __syncthreads();
    DevVisitor<P, LT> v{bn_smem, tid};
    if (MODE == TILE_FINISH) TL::finish(v);
    else if (MODE == TILE_LEVEL) TL::template level<LT, 0, true>(v);
    else TL::sort(v);
    if constexpr (VEC) {
        if (vec) {
            if (pol.out_mapped()) tile_drain_vec<P, TL, true>(bn_smem, pol, base, tid);
            else tile_drain_vec<P, TL, false>(bn_smem, pol, base, tid);
            return;
        }
    }
    if (pol.out_mapped()) tile_drain<P, TL, true>(bn_smem, pol, base, n, tid);
    else tile_drain<P, TL, false>(bn_smem, pol, base, n, tid);
}

/* One global group: units [0, nunits) (grid-stride, global_batch(G) at a time), G bits
 * from blo. Units of 64 elements take the registers of one block per SM (their values and
 * positions), smaller ones two. */
template <class P, int G, int KIND>
__global__ void __launch_bounds__(GLOBAL_THREADS, (1 << G) > 32 ? 1 : 2)
k_global(P pol, long long n, long long nunits, int blo)
{
    constexpr int UB = global_batch(G);
    const long long stride = (long long)gridDim.x * GLOBAL_THREADS;
    for (long long w = (long long)blockIdx.x * GLOBAL_THREADS + threadIdx.x; w < nunits;
         w += stride * UB)
        unit_global<P, G, KIND, UB>(pol, n, w, stride, nunits, blo);
}

/* One wide global group (Wide<GW>): block b runs units 32 b .. 32 b + 31, with
 * wide_smem<P, GW>() bytes of dynamic shared memory. */
template <class P, int GW, int KIND>
__global__ void __launch_bounds__(Wide<GW>::NT)
k_wide(P pol, long long n, long long nunits, int blo)
{
    extern __shared__ __align__(16) unsigned char bn_smem[];
    wide_phase1<P, GW, KIND>(pol, bn_smem, n, nunits, blo, blockIdx.x, (int)threadIdx.x);
    __syncthreads();
    wide_phase2<P, GW, KIND>(pol, bn_smem, n, nunits, blo, blockIdx.x, (int)threadIdx.x);
}

} // namespace bn

#endif /* GP_BITONIC_KERNELS_CUH */
