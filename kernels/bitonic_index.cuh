/* bitonic_index.cuh — the index math of the bitonic engine's network (layer 2 of 6;
 * cuda_bitonic.cuh lists them): which positions a comparator, a unit and a wide block's row
 * touch. Not part of the public contract.
 *
 * The network (the chapter's Programs 6.17-6.19, in the "mirror" form, so that any n sorts
 * without materialised padding). With P2 = 2^lp2 the power of two >= n, for each level
 * lk = 1 .. lp2 (blocks of k = 2^lk positions):
 *   mirror step (bit lk-1):        i (bit lk-1 clear) against j = i ^ (k - 1);
 *   plain steps (bits lk-2 .. 0):  i (bit b clear) against j = i ^ 2^b;
 * every comparator puts the smaller element at the lower index. Positions >= n act as +inf:
 * they are read as the policy's pad() (which compares >= every real element and never
 * swaps with one: "strictly less" decides a swap) and never written.
 *
 * Register groups (what makes this faster than one launch per step). Consecutive steps of
 * one level whose stride bits form a range [blo, blo + G) touch closed sets of 2^G
 * positions: a "unit". Unit w (w over [0, P2 / 2^G)) holds the positions
 *     pos(w, q) = (w >> blo) << (blo + G)  |  q << blo  |  low(w),   q = 0 .. 2^G - 1,
 * low(w) = w mod 2^blo, complemented (XOR 2^blo - 1) when the group begins with the
 * level's mirror step and q's top bit is set. With that complement, the mirror partner
 * of pos(w, q) is pos(w, q ^ (2^G - 1)) — the same unit — and every plain step inside the
 * group pairs pos(w, q) with pos(w, q ^ 2^b). A thread loads a unit into 2^G registers,
 * runs the group's steps there (fully unrolled compare-exchanges, no barrier), and stores
 * it back: one read and one write of each element per group instead of per step.
 * Consecutive w are consecutive positions (or, complemented, the same run reversed), so a
 * warp's loads are coalesced when blo >= 5.
 *
 * Everything here is __host__ __device__: tests/test_bitonic_sim.cu runs it on the CPU.
 */
#ifndef GP_BITONIC_INDEX_CUH
#define GP_BITONIC_INDEX_CUH

namespace bn {

/* ---- groups and units ----------------------------------------------------------------- */

/* The kind of a group: LEVELS = levels 1 .. G on consecutive positions (blo = 0);
 * MIRROR = the level's first group; PLAIN = a later group. */
enum GroupKind { PLAIN = 0, MIRROR = 1, LEVELS = 2 };

/* Position of register q of unit w in a group of G stride bits starting at bit blo
 * (file comment); MIRROR: the group begins with its level's mirror step. */
template <int G, bool MIRROR, typename I>
__host__ __device__ __forceinline__ I pos(I w, int q, int blo)
{
    const I lowmask = ((I)1 << blo) - 1;
    I low = w & lowmask;
    if (MIRROR && ((q >> (G - 1)) & 1)) low ^= lowmask;
    return ((w >> blo) << (blo + G)) | ((I)q << blo) | low;
}

/* pos<G, KIND == MIRROR>(w, q, blo) as two bases, b0 for q's top bit clear and b1 for it
 * set, plus q 2^blo: the same positions, in the arithmetic that keeps the wide units free
 * of spills (pos itself, per q, costs the 32- and 64-key MIRROR units 12-52 bytes of
 * spill). */
template <int G, int KIND>
__host__ __device__ __forceinline__ void unit_bases(long long w, int blo, long long &b0,
                                                    long long &b1)
{
    const long long lowmask = (1ll << blo) - 1;
    const long long hi = (w >> blo) << (blo + G), low = w & lowmask;
    b0 = hi | low;
    b1 = KIND == MIRROR ? (hi | (low ^ lowmask)) : b0;
}

/* Number of units w whose lowest position pos(w, 0) is below n (the others hold only
 * positions >= n: nothing to do): pos(w, 0) increases with w. */
__host__ __device__ __forceinline__ long long units_below(long long n, int G, int blo)
{
    const long long span = 1ll << (blo + G), lowcount = 1ll << blo;
    const long long rem = n & (span - 1);
    return ((n >> (blo + G)) << blo) + (rem < lowcount ? rem : lowcount);
}

/* Smallest p with 2^p >= n (n >= 1). */
__host__ __device__ __forceinline__ int lg_ceil(long long n)
{
    int p = 0;
    while ((1ll << p) < n) p++;
    return p;
}

/* ---- tiles in shared memory ----------------------------------------------------------- */

/* Shared-memory slot of tile index i (one pad slot per 32). */
__host__ __device__ __forceinline__ int spad(int i) { return i + (i >> 5); }

/* Slots of a tile of T = 2^logT positions. */
__host__ __device__ __forceinline__ int tile_slots(int logT)
{
    return (1 << logT) + ((1 << logT) >> 5);
}

/* ---- a wide group's rows -------------------------------------------------------------- */

/* A wide global group: GW bits [blo, blo + GW), WIDE_MIN <= GW <= P::LOGW (more than a
 * thread's registers hold above P::LOGG; from WIDE_MIN on it also runs faster than
 * k_global), run by a block on 32 consecutive units (positions consecutive, or reversed,
 * across its lanes: coalesced), with the units' 2^GW x 32 elements staged in shared
 * memory: row q (a unit's register index, pos(w, q)) of the 32 lanes at slots [32 q,
 * 32 q + 32), through P::sput / P::sget (pairs: keys and values in separate arrays). The
 * GW bits go as B1 + B2:
 *   phase 1: thread (warp wi, lane) loads rows q = j 2^B2 | wi (j = 0 .. 2^B1 - 1; for a
 *            MIRROR group wi is complemented in the rows of j's top half, so that the
 *            mirror partner q ^ (2^GW - 1) of every row is the same thread's: wide_row)
 *            and runs the group's steps on q's top B1 bits in registers (the mirror step
 *            first), then stores the rows to shared memory;
 *   phase 2: after a barrier, thread (wi, lane) takes the rows h 2^B2 + k (k = 0 .. 2^B2
 *            - 1) for its 2^(B1 - B2) values of h, runs the plain steps on q's low B2
 *            bits, and stores them to global memory.
 * Every warp reads or writes one row of 32 consecutive slots at a time: no bank conflict
 * for 4- and 8-byte elements. The network is reg_group<GW, KIND> on each unit, in one read
 * and one write of the data for up to LOGW stride bits (9 for 4-byte keys) where the
 * register units stop at LOGG (6). */
template <int GW> struct Wide {
    static constexpr int B2 = GW / 2;   /* warp-index bits: phase 2's registers, 2^B2 */
    static constexpr int B1 = GW - B2;  /* phase 1's registers: 2^B1 per thread */
    static constexpr int NT = 32 << B2; /* threads per block */
    static constexpr int SLOTS = 32 << GW;
};

/* Row of phase-1 register j of warp wi (Wide). */
template <int GW, int KIND> __host__ __device__ __forceinline__ int wide_row(int j, int wi)
{
    typedef Wide<GW> W;
    const bool top = (j >> (W::B1 - 1)) & 1;
    return (j << W::B2) | ((KIND == MIRROR && top) ? (wi ^ ((1 << W::B2) - 1)) : wi);
}

} // namespace bn

#endif /* GP_BITONIC_INDEX_CUH */
