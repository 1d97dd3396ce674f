/* bitonic_units.cuh — the bitonic engine's thread-level code (layer 3 of 6;
 * cuda_bitonic.cuh lists them): the register networks, and the units that load 2^G
 * elements, run a group's steps on them in registers and store them back, in global memory
 * (a unit per thread, or a wide block's two phases through shared memory) or in a
 * shared-memory tile. Everything here is __host__ __device__: tests/test_bitonic_sim.cu
 * runs every unit of every group on the CPU (units of one group are disjoint, so running
 * them one after another is exact). Not part of the public contract.
 */
#ifndef GP_BITONIC_UNITS_CUH
#define GP_BITONIC_UNITS_CUH

#include "bitonic_index.cuh"
#include "bitonic_policy.cuh"

namespace bn {

/* ---- register networks (fully unrolled: every index a compile-time constant) ---------- */

/* The steps of one group on a unit r[0, 2^G): the mirror step on bit G-1 if MIRROR, then
 * the plain steps on the remaining bits, top down. */
template <class P, int G, bool MIRROR>
__host__ __device__ __forceinline__ void reg_group(typename P::E (&r)[1 << G])
{
    constexpr int U = 1 << G;
    if (MIRROR) {
#pragma unroll
        for (int q = 0; q < U / 2; q++) P::cas(r[q], r[q ^ (U - 1)]);
    }
#pragma unroll
    for (int b = MIRROR ? G - 2 : G - 1; b >= 0; b--) {
#pragma unroll
        for (int q = 0; q < U; q++)
            if (!(q & (1 << b))) P::cas(r[q], r[q | (1 << b)]);
    }
}

/* Levels 1 .. G (every step of a bitonic sort of 2^G consecutive positions) on r[0, 2^G). */
template <class P, int G>
__host__ __device__ __forceinline__ void reg_levels(typename P::E (&r)[1 << G])
{
    constexpr int U = 1 << G;
#pragma unroll
    for (int l = 1; l <= G; l++) {
#pragma unroll
        for (int q = 0; q < U; q++) /* mirror step of level l */
            if (!(q & (1 << (l - 1)))) P::cas(r[q], r[q ^ ((1 << l) - 1)]);
#pragma unroll
        for (int b = l - 2; b >= 0; b--) {
#pragma unroll
            for (int q = 0; q < U; q++)
                if (!(q & (1 << b))) P::cas(r[q], r[q | (1 << b)]);
        }
    }
}

/* ---- a unit in registers, and in global memory ---------------------------------------- */

/* A group of kind KIND (GroupKind) on a unit r[0, 2^G) in registers. */
template <class P, int G, int KIND>
__host__ __device__ __forceinline__ void run_regs(typename P::E (&r)[1 << G])
{
    if (KIND == LEVELS) reg_levels<P, G>(r);
    else reg_group<P, G, KIND == MIRROR>(r);
}

/* Units w0 + k * ws (k = 0 .. UB-1, those below nunits) of a group in global memory (n
 * elements; positions >= n read as pad, not written). All loads of the UB units are issued
 * before the first compare (UB * 2^G in flight: UB > 1 for the narrow groups, whose single
 * units would leave too few bytes in flight per SM); positions are recomputed for the
 * stores (base + q 2^blo) rather than kept in registers. */
template <class P, int G, int KIND, int UB>
__host__ __device__ __forceinline__ void unit_global(const P &pol, long long n, long long w0,
                                                     long long ws, long long nunits, int blo)
{
    typename P::E r[UB][1 << G];
#pragma unroll
    for (int k = 0; k < UB; k++) {
        const long long w = w0 + k * ws;
        long long b0, b1;
        unit_bases<G, KIND>(w, blo, b0, b1);
#pragma unroll
        for (int q = 0; q < (1 << G); q++) {
            const long long p = ((q >> (G - 1)) ? b1 : b0) + ((long long)q << blo);
            r[k][q] = (w < nunits && p < n) ? pol.load(p) : P::pad();
        }
    }
#pragma unroll
    for (int k = 0; k < UB; k++) {
        const long long w = w0 + k * ws;
        if (w >= nunits) continue;
        run_regs<P, G, KIND>(r[k]);
        long long b0, b1;
        unit_bases<G, KIND>(w, blo, b0, b1);
#pragma unroll
        for (int q = 0; q < (1 << G); q++) {
            const long long p = ((q >> (G - 1)) ? b1 : b0) + ((long long)q << blo);
            if (p < n) pol.store(p, r[k][q]);
        }
    }
}

/* Units per thread and iteration of a global group of G bits: at least 8 elements. */
__host__ __device__ constexpr int global_batch(int G) { return G >= 3 ? 1 : 8 >> G; }

/* ---- a wide group's block: two phases through shared memory (Wide) -------------------- */

/* Shared-memory bytes of a wide group's block. */
template <class P, int GW> __host__ __device__ constexpr size_t wide_smem()
{
    return P::smem_bytes(Wide<GW>::SLOTS);
}

/* Phase 1 of block `blk` (units 32 blk .. 32 blk + 31 below nunits; positions >= n read as
 * pad) for thread tid; s: the block's wide_smem<P, GW>() bytes. */
template <class P, int GW, int KIND>
__host__ __device__ __forceinline__ void wide_phase1(const P &pol, unsigned char *s, long long n,
                                                     long long nunits, int blo, long long blk,
                                                     int tid)
{
    typedef Wide<GW> W;
    const int lane = tid & 31, wi = tid >> 5;
    const long long w = blk * 32 + lane;
    long long b0, b1;
    unit_bases<GW, KIND>(w, blo, b0, b1);
    typename P::E r[1 << W::B1];
#pragma unroll
    for (int j = 0; j < (1 << W::B1); j++) {
        const int q = wide_row<GW, KIND>(j, wi);
        const long long p = ((q >> (GW - 1)) ? b1 : b0) + ((long long)q << blo);
        r[j] = (w < nunits && p < n) ? pol.load(p) : P::pad();
    }
    reg_group<P, W::B1, KIND == MIRROR>(r);
#pragma unroll
    for (int j = 0; j < (1 << W::B1); j++)
        P::sput(s, W::SLOTS, wide_row<GW, KIND>(j, wi) * 32 + lane, r[j]);
}

/* Phase 2 (after every thread's phase 1): the plain steps on the low B2 bits, stores to
 * positions < n. */
template <class P, int GW, int KIND>
__host__ __device__ __forceinline__ void wide_phase2(const P &pol, const unsigned char *s,
                                                     long long n, long long nunits, int blo,
                                                     long long blk, int tid)
{
    typedef Wide<GW> W;
    const int lane = tid & 31, wi = tid >> 5;
    const long long w = blk * 32 + lane;
    long long b0, b1;
    unit_bases<GW, KIND>(w, blo, b0, b1);
#pragma unroll
    for (int u = 0; u < (1 << (W::B1 - W::B2)); u++) {
        const int h = (wi << (W::B1 - W::B2)) | u;
        typename P::E r[1 << W::B2];
#pragma unroll
        for (int k = 0; k < (1 << W::B2); k++)
            r[k] = P::sget(s, W::SLOTS, ((h << W::B2) | k) * 32 + lane);
        reg_group<P, W::B2, false>(r);
        if (w >= nunits) continue;
        const long long base = ((h >> (W::B1 - 1)) & 1) ? b1 : b0;
#pragma unroll
        for (int k = 0; k < (1 << W::B2); k++) {
            const long long p = base + ((long long)((h << W::B2) | k) << blo);
            if (p < n) pol.store(p, r[k]);
        }
    }
}

/* ---- a unit of a shared-memory tile --------------------------------------------------- */

/* Unit w of a group of a shared-memory tile of TPAD slots (every position present), with
 * the group's geometry (G bits from BLO) known at compile time: the 2^G slots are one base
 * slot plus constant offsets (one pad slot per 32 positions: spad(b + q 2^BLO) =
 * spad(b) + q (2^BLO + 2^(BLO-5)) when BLO >= 5, spad(b) + q 2^BLO when BLO + G <= 5). */
template <class P, int G, int BLO, int KIND, int TPAD>
__host__ __device__ __forceinline__ void unit_tile(unsigned char *s, int w)
{
    constexpr int U = 1 << G;
    constexpr int LOWMASK = (1 << BLO) - 1;
    const int hi = (w >> BLO) << (BLO + G);
    const int low = w & LOWMASK;
    const int b0 = hi | low;                                   /* q's top bit clear */
    const int b1 = KIND == MIRROR ? (hi | (low ^ LOWMASK)) : b0; /* q's top bit set */
    typename P::E r[U];
    int a[U];
#pragma unroll
    for (int q = 0; q < U; q++) {
        const int b = (q >> (G - 1)) ? b1 : b0;
        if (BLO >= 5) a[q] = spad(b) + q * ((1 << BLO) + (1 << (BLO >= 5 ? BLO - 5 : 0)));
        else if (BLO + G <= 5) a[q] = spad(b) + (q << BLO);
        else a[q] = spad(b + (q << BLO));
        r[q] = P::sget(s, TPAD, a[q]);
    }
    run_regs<P, G, KIND>(r);
#pragma unroll
    for (int q = 0; q < U; q++) P::sput(s, TPAD, a[q], r[q]);
}

} // namespace bn

#endif /* GP_BITONIC_UNITS_CUH */
