/* bitonic_launch.cuh — the bitonic engine's host side (layer 6 of 6; cuda_bitonic.cuh
 * lists them): the GPU executor of plan() (GpuOp: tile size, grids, shared-memory limits,
 * the tuning knobs), the CUDA-graph cache for repeated sorts of one array, and bn::sort,
 * the entry that cuda_sort.cu calls. Not part of the public contract.
 */
#ifndef GP_BITONIC_LAUNCH_CUH
#define GP_BITONIC_LAUNCH_CUH

#include <stdint.h>
#include <stdlib.h>

#include <type_traits>

#include "bitonic_kernels.cuh"
#include "cuda_internal.cuh"
#include "tuning.h"

namespace bn {

/* ---- host side: the GPU executor of plan() -------------------------------------------- */

/* log2 of the tile: the largest T = 2^logT (LT_MIN <= logT <= LT_MAX) whose padded tile
 * fits the budget. */
template <class P> int tile_log2(const gpc_devinfo *d)
{
    size_t budget = TILE_SMEM_DEFAULT;
    if (gp_tuning_get()->sort_smem > 0) budget = gp_tuning_get()->sort_smem;
    const size_t cap = d->smem_per_block_optin > d->smem_per_block ? d->smem_per_block_optin
                                                                   : d->smem_per_block;
    if (budget > cap) budget = cap;
    int lt = LT_MIN;
    while (lt < LT_MAX && P::smem_bytes(tile_slots(lt + 1)) <= budget) lt++;
    return lt;
}

/* Raises KERNEL's dynamic shared-memory limit to `smem` bytes when that is above the
 * default 48 KiB (once per kernel, device and size: every instantiation has its own
 * static state). */
template <auto KERNEL> int allow_smem(size_t smem, int device)
{
    static int done_dev = -1;
    static size_t done_bytes = 0;
    if (smem <= 48 * 1024) return GP_OK;
    if (done_dev == device && done_bytes >= smem) return GP_OK;
    CUDA_CHECK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)smem));
    done_dev = device;
    done_bytes = smem;
    return GP_OK;
}

/* An integer benchmarking knob of the tuning record (0: unset): dflt when below lo, hi
 * when above hi. */
inline int knob(int x, int dflt, int lo, int hi) { return x < lo ? dflt : x > hi ? hi : x; }

/* The widest global group of a plan for policy P: P::LOGW, or GPUPRIM_SORT_WIDE=<bits>
 * (for benchmarking; 1 .. LOGW; with GPUPRIM_SORT_WIDE=LOGG and
 * GPUPRIM_SORT_WIDE_FROM=LOGG + 1: register groups only, the plan before wide groups). */
template <class P> int max_group_bits()
{
    static const int v = knob(gp_tuning_get()->sort_wide, P::LOGW, 1, P::LOGW);
    return v;
}

/* The narrowest group that runs wide (k_wide) rather than in a thread's registers
 * (k_global): WIDE_MIN (measured on the H200: u32 keys at 2^27 sort in 10.6 ms with
 * 5- and 6-bit groups wide, 11.0 ms with them in registers), or
 * GPUPRIM_SORT_WIDE_FROM=<bits> (for benchmarking; WIDE_MIN .. LOGW + 1). Groups above
 * LOGG always run wide. */
template <class P> int wide_from()
{
    static const int v = knob(gp_tuning_get()->sort_wide_from, WIDE_MIN, WIDE_MIN, P::LOGW + 1);
    return v;
}

/* Resident blocks per multiprocessor of k_global<P, G, KIND> (GLOBAL_THREADS threads, no
 * dynamic shared memory), asked once per instantiation and device. */
template <class P, int G, int KIND> int global_per_sm(int device, int *per_sm)
{
    static int done_dev = -1, value = 0;
    if (done_dev != device) {
        int v = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, k_global<P, G, KIND>,
                                                                 GLOBAL_THREADS, 0));
        value = v < 1 ? 1 : v;
        done_dev = device;
    }
    *per_sm = value;
    return GP_OK;
}

/* Whether GpuOp may split a tile sort (tile(), below): for the key policy only (one set of
 * TILE_LEVEL kernels, not one per pair policy). */
template <class P> struct SplitOk : std::false_type {};
template <typename K> struct SplitOk<TileKeysPolicy<K>> : std::true_type {};

/* The GPU executor of plan(): P = the policy of the global passes, TP = the policy of the
 * tile passes (P itself, or TileKeysPolicy with the first pass's loads and the last pass's
 * stores mapped: TP::in / out are set per launch when TP has them). */
template <class P, class TP = P> struct GpuOp {
    P pol;
    TP tpol;
    long long n;
    const gpc_devinfo *d;
    cudaStream_t st;   /* the stream of every launch */
    int finishes_left; /* finish passes still to come (the last one stores through TP::out) */

    template <class Q> static void set_io(Q &, bool, bool) {}
    template <typename K> static void set_io(TileKeysPolicy<K> &q, bool in, bool out)
    {
        q.in = in;
        q.out = out;
    }

    template <int LT, int MODE> int tiles_lt(bool in, bool out)
    {
        typedef Tile<TP, LT> TL;
        const long long ntiles = (n + TL::T - 1) >> LT;
        if (ntiles > (long long)d->max_grid_x) {
            gpc_set_error("bitonic sort: n = %lld needs %lld tiles, more than the grid limit %d",
                          n, ntiles, d->max_grid_x);
            return GP_EINVAL;
        }
        const size_t smem = TP::smem_bytes(TL::TPAD);
        int rc = allow_smem<k_tile<TP, LT, MODE>>(smem, d->device);
        if (rc) return rc;
        TP q = tpol;
        set_io(q, in, out);
        k_tile<TP, LT, MODE><<<(unsigned)ntiles, TL::NTH, smem, st>>>(q, n);
        CUDA_CHECK_LAUNCH(MODE == TILE_FINISH ? "bitonic k_tile (finish)"
                          : MODE == TILE_LEVEL ? "bitonic k_tile (level)"
                                               : "bitonic k_tile (sort)");
        return GP_OK;
    }
    template <int MODE> int tiles(int lt, bool in, bool out)
    {
        switch (lt) {
        case 9: return tiles_lt<9, MODE>(in, out);
        case 10: return tiles_lt<10, MODE>(in, out);
        case 11: return tiles_lt<11, MODE>(in, out);
        case 12: return tiles_lt<12, MODE>(in, out);
        case 13: return tiles_lt<13, MODE>(in, out);
        case 14: return tiles_lt<14, MODE>(in, out);
        case 15: return tiles_lt<15, MODE>(in, out);
        default:
            gpc_set_error("bitonic sort: tile 2^%d outside 2^%d .. 2^%d", lt, LT_MIN, LT_MAX);
            return GP_EINVAL;
        }
    }
    /* the tile sort is the first pass; it is also the last when no level follows. When
     * levels follow and the tiles of 2^lt would not give every multiprocessor two blocks
     * (n = 2^21 with 2^14 keys per tile: 128 tiles), the key policy sorts tiles of
     * 2^(lt-1) (two blocks per SM, the same network) and then runs level lt alone in the
     * tiles of 2^lt. */
    int tile(int lt)
    {
        finishes_left = lg_ceil(n) > lt ? lg_ceil(n) - lt : 0;
        if constexpr (SplitOk<TP>::value) {
            const long long ntiles = (n + (1ll << lt) - 1) >> lt;
            if (finishes_left > 0 && lt > LT_MIN && ntiles < 2ll * d->sm_count) {
                int rc = tiles<TILE_SORT>(lt - 1, true, false);
                return rc ? rc : tiles<TILE_LEVEL>(lt, false, false);
            }
        }
        return tiles<TILE_SORT>(lt, true, finishes_left == 0);
    }
    int finish(int lt)
    {
        finishes_left--;
        return tiles<TILE_FINISH>(lt, false, finishes_left == 0);
    }

    template <int G> int global_g(int blo, int kind)
    {
        const long long units = units_below(n, G, blo);
        /* one full wave of resident blocks (grid-stride beyond that) */
        int per_sm = 1;
        int rc = kind == MIRROR ? global_per_sm<P, G, MIRROR>(d->device, &per_sm)
                                : global_per_sm<P, G, PLAIN>(d->device, &per_sm);
        if (rc) return rc;
        long long cap = (long long)d->sm_count * per_sm;
        const long long per_block = (long long)GLOBAL_THREADS * global_batch(G);
        long long blocks = (units + per_block - 1) / per_block;
        if (blocks > cap) blocks = cap;
        if (blocks < 1) blocks = 1;
        if (kind == MIRROR)
            k_global<P, G, MIRROR><<<(unsigned)blocks, GLOBAL_THREADS, 0, st>>>(pol, n, units, blo);
        else
            k_global<P, G, PLAIN><<<(unsigned)blocks, GLOBAL_THREADS, 0, st>>>(pol, n, units, blo);
        CUDA_CHECK_LAUNCH("bitonic k_global");
        return GP_OK;
    }
    /* a wide group (k_wide): one block per 32 units */
    template <int GW> int wide_g(int blo, int kind)
    {
        const long long units = units_below(n, GW, blo);
        const long long blocks = (units + 31) / 32;
        if (blocks > (long long)d->max_grid_x) {
            gpc_set_error("bitonic sort: n = %lld needs %lld blocks, more than the grid limit %d",
                          n, blocks, d->max_grid_x);
            return GP_EINVAL;
        }
        const size_t smem = wide_smem<P, GW>();
        int rc = kind == MIRROR ? allow_smem<k_wide<P, GW, MIRROR>>(smem, d->device)
                                : allow_smem<k_wide<P, GW, PLAIN>>(smem, d->device);
        if (rc) return rc;
        if (kind == MIRROR)
            k_wide<P, GW, MIRROR><<<(unsigned)blocks, Wide<GW>::NT, smem, st>>>(pol, n, units, blo);
        else
            k_wide<P, GW, PLAIN><<<(unsigned)blocks, Wide<GW>::NT, smem, st>>>(pol, n, units, blo);
        CUDA_CHECK_LAUNCH("bitonic k_wide");
        return GP_OK;
    }
    int global(int G, int blo, int kind)
    {
        if (G < 1 || G > P::LOGW) {
            gpc_set_error("bitonic sort: a global group of %d bits (1 .. %d)", G, P::LOGW);
            return GP_EINVAL;
        }
        if (runs_wide<P>(G, wide_from<P>()))
            return with_w<P>(G, [&](auto g) {
                return this->template wide_g<decltype(g)::value>(blo, kind);
            });
        return with_g<P>(G, [&](auto g) {
            return this->template global_g<decltype(g)::value>(blo, kind);
        });
    }
};

/* ---- host side: the plan as a CUDA graph, for repeated sorts of one array ------------- */

/* A sort's launches depend only on the policies' pointers and map, n, the tile size and the
 * device, never on the data: the second sort with the same of all these captures its plan
 * as a CUDA graph, and every later one replays it (one launch from the host instead of one
 * per pass, and the device's shorter gaps between graph nodes). The first sighting runs
 * the plan directly (and sets the kernels' attributes outside any capture), so a one-off
 * sort pays no capture. GPUPRIM_SORT_GRAPH=0 turns this off (for benchmarking). */
struct GraphEntry {
    const void *tag;          /* (P, TP) */
    const void *a, *a2;       /* the global policy's arrays (first_of, second_of) */
    const void *b, *b2;       /* the tile policy's */
    int map, logT, device;
    long long n;
    cudaGraphExec_t exec;     /* NULL: seen once, not captured */
};
constexpr int GRAPH_CACHE = 8;

inline GraphEntry *graph_cache() { static GraphEntry c[GRAPH_CACHE]; return c; }
inline int &graph_next() { static int k = 0; return k; }

/* The stream of the sort's launches: a blocking stream (it waits for the legacy default
 * stream's earlier work, as the callers' copies there expect), one per device. */
inline int sort_stream(const gpc_devinfo *d, cudaStream_t *out)
{
    static cudaStream_t st[64];
    static bool made[64];
    if (d->device < 0 || d->device >= 64) {
        *out = 0;
        return GP_OK;
    }
    if (!made[d->device]) {
        CUDA_CHECK(cudaStreamCreate(&st[d->device]));
        made[d->device] = true;
    }
    *out = st[d->device];
    return GP_OK;
}

inline bool graphs_on() { return gp_tuning_get()->sort_graph != 0; }

template <class P, class TP> struct GraphTag { static const char id; };
template <class P, class TP> const char GraphTag<P, TP>::id = 0;

/* What a policy reads and writes: its first and second array (NULL: none), its map. */
template <typename K> const void *first_of(const KeysPolicy<K> &q) { return q.keys; }
template <typename K> const void *first_of(const TileKeysPolicy<K> &q) { return q.keys; }
template <typename K, bool S> const void *first_of(const PairsPolicy<K, S> &q) { return q.keys; }
template <typename K> const void *second_of(const KeysPolicy<K> &) { return NULL; }
template <typename K> const void *second_of(const TileKeysPolicy<K> &q) { return q.hi32; }
template <typename K, bool S> const void *second_of(const PairsPolicy<K, S> &q) { return q.vals; }
template <class Q> int map_of(const Q &) { return 0; }
template <typename K> int map_of(const TileKeysPolicy<K> &q) { return q.map; }

/* Sorts the n elements of `pol` (device memory) in place by the policy's order with the
 * plan (bitonic_plan.cuh), the tile passes through tpol (the same storage as pol; its first
 * pass may map its loads and its last pass its stores: TileKeysPolicy); returns after the
 * device work has finished. Repeated sorts of one array replay a CUDA graph (above). GP_OK,
 * GP_EINVAL (n needs more tiles than the grid allows) or GP_EDEVICE, with the backend's
 * error set. n <= 1: nothing (no map either). */
template <class P, class TP> int sort(const P &pol, const TP &tpol, long long n)
{
    if (n <= 1) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    cudaStream_t st = 0;
    rc = sort_stream(d, &st);
    if (rc) return rc;
    const int logT = tile_log2<TP>(d);
    GpuOp<P, TP> op{pol, tpol, n, d, st, 0};
    GraphEntry *e = NULL;
    if (graphs_on() && st != 0) {
        GraphEntry key{&GraphTag<P, TP>::id, first_of(pol), second_of(pol), first_of(tpol),
                       second_of(tpol), map_of(tpol), logT, d->device, n, NULL};
        GraphEntry *c = graph_cache();
        for (int i = 0; i < GRAPH_CACHE && !e; i++)
            if (c[i].tag == key.tag && c[i].a == key.a && c[i].a2 == key.a2 &&
                c[i].b == key.b && c[i].b2 == key.b2 && c[i].map == key.map &&
                c[i].logT == key.logT && c[i].device == key.device && c[i].n == key.n)
                e = &c[i];
        if (e && e->exec) { /* third sighting on: replay */
            CUDA_CHECK(cudaGraphLaunch(e->exec, st));
            CUDA_CHECK(cudaDeviceSynchronize());
            return GP_OK;
        }
        if (e) { /* second sighting: capture, instantiate, launch */
            cudaGraph_t g = NULL;
            CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
            rc = plan(n, logT, max_group_bits<P>(), op);
            const cudaError_t ec = cudaStreamEndCapture(st, &g);
            if (rc) {
                if (g) cudaGraphDestroy(g);
                return rc;
            }
            cudaGraphExec_t x = NULL;
            if (ec == cudaSuccess && g && cudaGraphInstantiate(&x, g, 0) == cudaSuccess) {
                cudaGraphDestroy(g);
                e->exec = x;
                CUDA_CHECK(cudaGraphLaunch(x, st));
                CUDA_CHECK(cudaDeviceSynchronize());
                return GP_OK;
            }
            /* no graph after all: clear the error and run the plan directly */
            if (g) cudaGraphDestroy(g);
            (void)cudaGetLastError();
            e = NULL;
        } else { /* first sighting: remember it (oldest entry out) */
            GraphEntry &slot = c[graph_next()];
            graph_next() = (graph_next() + 1) % GRAPH_CACHE;
            if (slot.exec) cudaGraphExecDestroy(slot.exec);
            slot = key;
        }
    }
    rc = plan(n, logT, max_group_bits<P>(), op);
    if (rc) return rc;
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* sort(pol, tpol, n) with the tile passes on pol itself. */
template <class P> int sort(const P &pol, long long n) { return sort(pol, pol, n); }

} // namespace bn

#endif /* GP_BITONIC_LAUNCH_CUH */
