/* bitonic_plan.cuh — the bitonic engine's schedules (layer 4 of 6; cuda_bitonic.cuh lists
 * them): the order of a tile's groups (Tile, fixed at compile time), the host's plan of
 * passes over the data (plan), and where a runtime group width becomes a template argument
 * (with_g, with_w). An executor runs the plan: GpuOp (bitonic_launch.cuh) on the GPU, SimOp
 * (tests/test_bitonic_sim.cu) on the CPU. Not part of the public contract.
 *
 * Passes over the data for n = 2^lp2 > T: 1 + sum over lk = LT+1 .. lp2 of
 * (ceil((lk - LT) / LOGW) + 1); e.g. 31 for n = 2^27 f32 keys, T = 2^14, LOGW = 9 (35 with
 * the register groups alone, up to 6 bits), against 105 with one launch per global step
 * (the seed's Program 6.19 driver). T comes from a shared-memory budget (TILE_SMEM_DEFAULT,
 * or GPUPRIM_SORT_SMEM=<bytes>), between 2^9 and 2^15 positions.
 */
#ifndef GP_BITONIC_PLAN_CUH
#define GP_BITONIC_PLAN_CUH

#include <type_traits>

#include "bitonic_units.cuh"

namespace bn {

/* ---- tiles: compile-time schedules ---------------------------------------------------- */

/* A tile of 2^LT positions of policy P: its slot count, threads per block, and the order of
 * its groups. A visitor V gets v.template group<G, BLO, KIND>() for each group in order
 * (the device visitor runs the calling thread's units and a barrier; the CPU simulation
 * runs every thread's units). */
template <class P, int LT> struct Tile {
    static constexpr int T = 1 << LT;
    static constexpr int TPAD = T + (T >> 5);
    static constexpr int NTH0 = T >> P::LOGR;
    static constexpr int NTH = NTH0 < 32 ? 32 : (NTH0 > TILE_THREADS ? TILE_THREADS : NTH0);

    /* thread tid of nth: its units of one group */
    template <int G, int BLO, int KIND>
    __host__ __device__ __forceinline__ static void group(unsigned char *s, int tid, int nth)
    {
        for (int w = tid; w < (T >> G); w += nth) unit_tile<P, G, BLO, KIND, TPAD>(s, w);
    }

    /* bits [LO, HI) of one level, top down: the remainder of (HI - LO) / LOGR bits first,
     * then LOGR bits each, so that the lower groups start at multiples of LOGR (with
     * LOGR = 5: bank-conflict-free slots for 4-byte units); the first with the mirror
     * step */
#pragma nv_exec_check_disable
    template <int HI, int LO, bool MIR, class V>
    __host__ __device__ __forceinline__ static void level(V &v)
    {
        if constexpr (HI > LO) {
            constexpr int REM = (HI - LO) % P::LOGR;
            constexpr int G = REM ? REM : P::LOGR;
            v.template group<G, HI - G, MIR ? (int)MIRROR : (int)PLAIN>();
            level<HI - G, LO, false>(v);
        }
    }
#pragma nv_exec_check_disable
    template <int LK, class V> __host__ __device__ __forceinline__ static void levels_from(V &v)
    {
        if constexpr (LK <= LT) {
            level<LK, 0, true>(v);
            levels_from<LK + 1>(v);
        }
    }
    /* the tile sort: levels 1 .. min(LOGR, LT) as one LEVELS group, then levels .. LT */
#pragma nv_exec_check_disable
    template <class V> __host__ __device__ __forceinline__ static void sort(V &v)
    {
        constexpr int G0 = LT < P::LOGR ? LT : P::LOGR;
        v.template group<G0, 0, (int)LEVELS>();
        levels_from<G0 + 1>(v);
    }
    /* the finish: bits LT-1 .. 0, plain */
#pragma nv_exec_check_disable
    template <class V> __host__ __device__ __forceinline__ static void finish(V &v)
    {
        level<LT, 0, false>(v);
    }
};

/* What a tile kernel runs on its tile: the tile sort (levels 1 .. LT), the finish (bits
 * LT-1 .. 0 of a level above LT), or level LT alone (after a tile sort at LT-1). */
enum TileMode { TILE_SORT = 0, TILE_FINISH = 1, TILE_LEVEL = 2 };

/* ---- schedules of the host plan ------------------------------------------------------- */

/* The groups of bits [lo, hi) of one level, top down: the fewest groups of at most maxg
 * bits, as equal as they can be (the wider ones first): with maxg = 9, 11 bits go as 6 + 5
 * rather than 9 + 2 (measured with the register groups, maxg = 6: a pass costs about the
 * same for 1 to 4 bits and more for 6, so 7 bits as 4 + 3 beat 1 + 6). The first group
 * has the mirror step when `mirror`: f(G, blo, kind). */
#pragma nv_exec_check_disable
template <class F>
__host__ __device__ __forceinline__ void level_groups(int hi, int lo, bool mirror, int maxg,
                                                      F &&f)
{
    const int bits = hi - lo;
    if (bits <= 0) return;
    const int groups = (bits + maxg - 1) / maxg;
    const int base = bits / groups, wider = bits % groups;
    for (int k = 0; k < groups; k++) {
        const int G = base + (k < wider ? 1 : 0);
        f(G, hi - G, (k == 0 && mirror) ? (int)MIRROR : (int)PLAIN);
        hi -= G;
    }
}

/* The host's sequence of passes for n elements with tiles of 2^logT (LT_MIN <= logT <=
 * LT_MAX):
 *   op.tile(lt)                    the tile sort, tiles of 2^lt positions, lt = logT, or
 *                                  LT_MIN .. logT just covering n when n is smaller;
 *   per level lk = lt+1 .. lp2:    op.global(G, blo, kind) for the level's bits [lt, lk)
 *                                  in groups of at most maxg bits (level_groups), then
 *                                  op.finish(lt);
 * stops at the first nonzero return. Nothing for n <= 1. */
template <class Op> int plan(long long n, int logT, int maxg, Op &op)
{
    if (n <= 1) return 0;
    const int lp2 = lg_ceil(n);
    int lt = lp2 < logT ? lp2 : logT;
    if (lt < LT_MIN) lt = LT_MIN;
    int rc = op.tile(lt);
    if (rc) return rc;
    for (int lk = lt + 1; lk <= lp2; lk++) {
        level_groups(lk, lt, true, maxg, [&](int G, int blo, int kind) {
            if (!rc) rc = op.global(G, blo, kind);
        });
        if (rc) return rc;
        rc = op.finish(lt);
        if (rc) return rc;
    }
    return 0;
}

/* ---- group widths: registers or wide, as template arguments --------------------------- */

/* f(std::integral_constant<int, G>()) for a runtime group width G (1 .. P::LOGG; widths
 * above LOGG never occur and are not instantiated): the one place where a runtime G
 * becomes a template argument (the GPU executor's and the CPU simulation's launches). */
template <class P, class F> auto with_g(int G, F &&f)
{
    switch (G) {
    case 1: return f(std::integral_constant<int, 1>());
    case 2: return f(std::integral_constant<int, 2>());
    case 3: return f(std::integral_constant<int, (P::LOGG >= 3 ? 3 : 1)>());
    case 4: return f(std::integral_constant<int, (P::LOGG >= 4 ? 4 : 1)>());
    case 5: return f(std::integral_constant<int, (P::LOGG >= 5 ? 5 : 1)>());
    default: return f(std::integral_constant<int, (P::LOGG >= 6 ? 6 : 1)>());
    }
}

/* Whether a global group of G bits runs wide (k_wide) rather than in registers
 * (k_global), with wide groups from `from` bits (bitonic_launch.cuh's wide_from; groups
 * above P::LOGG always). */
template <class P> __host__ __device__ constexpr bool runs_wide(int G, int from)
{
    static_assert(P::LOGG >= WIDE_MIN - 1 && P::LOGW >= P::LOGG,
                  "every group above LOGG has a wide kernel");
    return G > P::LOGG || G >= from;
}

/* f(std::integral_constant<int, GW>()) for a wide group width GW, WIDE_MIN <= GW <=
 * P::LOGW (the callers' range: runs_wide and the check in GpuOp::global; other widths are
 * not instantiated). */
template <class P, int G>
using wide_c = std::integral_constant<int, (G >= WIDE_MIN && G <= P::LOGW) ? G : P::LOGW>;
template <class P, class F> auto with_w(int G, F &&f)
{
    switch (G) {
    case 5: return f(wide_c<P, 5>());
    case 6: return f(wide_c<P, 6>());
    case 7: return f(wide_c<P, 7>());
    case 8: return f(wide_c<P, 8>());
    default: return f(wide_c<P, 9>());
    }
}

} // namespace bn

#endif /* GP_BITONIC_PLAN_CUH */
