/* test_bitonic_sim.cu — the bitonic engine's index code (kernels/cuda_bitonic.cuh) run on
 * the CPU: the same plan, schedules, unit positions and register networks as the GPU
 * kernels, every unit of every group in sequence (units of one group are disjoint, so this
 * is exact). Needs nvcc to build, no GPU to run (CTest label cpu). Checks, for keys
 * (uint32, uint64) and (key, uint64 value) pairs (stable or not) over many sizes, tile sizes
 * and distributions (random, few distinct, all equal, sorted, reversed, the largest key =
 * the padding value; keys of the odd-numbered distributions through the GPU executor's
 * split tile sort: half tiles, then the top level alone): the output is the sorted input
 * (std::sort / std::stable_sort), and nothing past n is written. Exit 0 when every check
 * passes, 1 otherwise. */
#include "cuda_bitonic.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

long long g_checks = 0, g_fail = 0;

#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        g_checks++;                                                                         \
        if (!(cond)) {                                                                      \
            if (g_fail++ < 20) {                                                            \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                 \
                printf(__VA_ARGS__);                                                        \
                printf("\n");                                                               \
            }                                                                               \
        }                                                                                   \
    } while (0)

/* The CPU executor of bn::plan: tiles in a host "shared memory" buffer, global groups over
 * every unit. */
template <class P> struct SimOp {
    P pol;
    long long n;
    std::vector<unsigned char> smem;
    bool split;
    long long wide_groups; /* wide groups run */
    int wide_from;         /* the narrowest group run wide (the GPU's bn::wide_from) */

    /* the host visitor: every thread's units of a group (backwards on odd tiles: the
     * kernel's threads run a group's units in any order, the result must not depend on it) */
    template <int LT> struct Visitor {
        unsigned char *s;
        bool backwards;
        template <int G, int BLO, int KIND> void group()
        {
            const int nth = bn::Tile<P, LT>::NTH;
            if (backwards)
                for (int t = nth - 1; t >= 0; t--) bn::Tile<P, LT>::template group<G, BLO, KIND>(s, t, nth);
            else
                for (int t = 0; t < nth; t++) bn::Tile<P, LT>::template group<G, BLO, KIND>(s, t, nth);
        }
    };
    template <int LT> int tiles_lt(int mode)
    {
        typedef bn::Tile<P, LT> TL;
        smem.assign(P::smem_bytes(TL::TPAD), 0xA5);
        for (long long base = 0; base < n; base += TL::T) {
            for (int i = 0; i < TL::T; i++)
                P::sput(smem.data(), TL::TPAD, bn::spad(i), base + i < n ? pol.load(base + i) : P::pad());
            Visitor<LT> v{smem.data(), ((base >> LT) & 1) != 0};
            if (mode == bn::TILE_FINISH) TL::finish(v);
            else if (mode == bn::TILE_LEVEL) TL::template level<LT, 0, true>(v);
            else TL::sort(v);
            for (int i = 0; i < TL::T; i++)
                if (base + i < n) pol.store(base + i, P::sget(smem.data(), TL::TPAD, bn::spad(i)));
        }
        return 0;
    }
    int tiles(int lt, int finish)
    {
        switch (lt) {
        case 9: return tiles_lt<9>(finish);
        case 10: return tiles_lt<10>(finish);
        case 11: return tiles_lt<11>(finish);
        case 12: return tiles_lt<12>(finish);
        case 13: return tiles_lt<13>(finish);
        case 14: return tiles_lt<14>(finish);
        case 15: return tiles_lt<15>(finish);
        default: CHECK(false, "tile 2^%d outside the range", lt); return 1;
        }
    }
    /* split: as the GPU executor for the key policy when the tiles are few: a tile sort
       of half tiles, then level lt alone */
    int tile(int lt)
    {
        if (split && lt > bn::LT_MIN && n > (1ll << lt)) {
            const int rc = tiles(lt - 1, bn::TILE_SORT);
            return rc ? rc : tiles(lt, bn::TILE_LEVEL);
        }
        return tiles(lt, bn::TILE_SORT);
    }
    int finish(int lt) { return tiles(lt, bn::TILE_FINISH); }

    template <int G> int global_g(int blo, int kind)
    {
        const long long units = bn::units_below(n, G, blo);
        /* every unit past `units` holds only positions >= n: check the claim */
        const long long all = (1ll << bn::lg_ceil(n)) >> G;
        for (long long w = units; w < all; w++)
            if (bn::pos<G, false, long long>(w, 0, blo) < n) {
                CHECK(false, "unit %lld (G %d blo %d) below n = %lld not enumerated", w, G, blo, n);
                break;
            }
        /* the kernel's batches: units w, w + ws, ... (here ws = 1, the last batch partly
           past `units`) */
        constexpr int UB = bn::global_batch(G);
        for (long long w = 0; w < units; w += UB) {
            if (kind == bn::MIRROR) bn::unit_global<P, G, bn::MIRROR, UB>(pol, n, w, 1, units, blo);
            else bn::unit_global<P, G, bn::PLAIN, UB>(pol, n, w, 1, units, blo);
        }
        return 0;
    }
    /* a wide group as k_wide runs it: per block of 32 units, every thread's phase 1 (in
       reverse thread order on odd blocks), then every thread's phase 2, over a host
       "shared memory" block poisoned before each block */
    template <int GW> int wide_g(int blo, int kind)
    {
        typedef typename P::E E;
        const long long units = bn::units_below(n, GW, blo);
        std::vector<E> s(bn::Wide<GW>::ROWS * 32);
        const int nt = bn::Wide<GW>::NT;
        for (long long blk = 0; blk * 32 < units; blk++) {
            memset(static_cast<void *>(s.data()), 0xA5, s.size() * sizeof(E));
            for (int i = 0; i < nt; i++) {
                const int t = (blk & 1) ? nt - 1 - i : i;
                if (kind == bn::MIRROR) bn::wide_phase1<P, GW, bn::MIRROR>(pol, s.data(), n, units, blo, blk, t);
                else bn::wide_phase1<P, GW, bn::PLAIN>(pol, s.data(), n, units, blo, blk, t);
            }
            for (int t = 0; t < nt; t++) {
                if (kind == bn::MIRROR) bn::wide_phase2<P, GW, bn::MIRROR>(pol, s.data(), n, units, blo, blk, t);
                else bn::wide_phase2<P, GW, bn::PLAIN>(pol, s.data(), n, units, blo, blk, t);
            }
        }
        wide_groups++;
        return 0;
    }
    int global(int G, int blo, int kind)
    {
        if constexpr (P::LOGW > P::LOGG) {
            if (G > P::LOGG || G >= wide_from)
                return bn::with_w<P>(G, [&](auto g) { return this->template wide_g<decltype(g)::value>(blo, kind); });
        }
        return bn::with_g<P>(G, [&](auto g) { return this->template global_g<decltype(g)::value>(blo, kind); });
    }
};

/* xorshift64* */
struct Rng {
    unsigned long long s;
    unsigned long long next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
};

template <typename K> K draw(Rng &r, int dist, long long i, long long n)
{
    const K kmax = (K)~(K)0;
    switch (dist) {
    case 0: return (K)r.next();                         /* random */
    case 1: return (K)(r.next() % 5);                   /* few distinct */
    case 2: return (K)7;                                /* all equal */
    case 3: return (K)i;                                /* sorted */
    case 4: return (K)(n - i);                          /* reversed */
    default: return (r.next() & 3) ? kmax : (K)(r.next() % 3); /* mostly the padding value */
    }
}

const int NDIST = 6;
const long long GUARD = 64;

long long g_wide = 0; /* wide groups run in all */

/* logr: the plan's widest group (KeysPolicy<K>::LOGW: wide groups; LOGG: register groups
   only, as with GPUPRIM_SORT_WIDE=LOGG); wfrom: the narrowest group run wide (LOGG + 1 by
   default; GPUPRIM_SORT_WIDE_FROM) */
template <typename K>
void test_keys(long long n, int logT, int dist, unsigned long long seed, int logr, int wfrom)
{
    Rng r{seed | 1};
    std::vector<K> v(n + GUARD);
    for (long long i = 0; i < n; i++) v[i] = draw<K>(r, dist, i, n);
    std::fill(v.begin() + n, v.end(), (K)0x5A5A5A5A5A5A5A5Aull);
    std::vector<K> ref(v.begin(), v.begin() + n);
    std::sort(ref.begin(), ref.end());
    SimOp<bn::KeysPolicy<K>> op{bn::KeysPolicy<K>{v.data()}, n, {}, (dist & 1) != 0, 0, wfrom};
    bn::plan(n, logT, logr, op);
    g_wide += op.wide_groups;
    CHECK(std::equal(ref.begin(), ref.end(), v.begin()),
          "keys w%d n %lld logT %d dist %d logr %d: not the sorted input", (int)sizeof(K), n,
          logT, dist, logr);
    bool guard = true;
    for (long long i = n; i < n + GUARD; i++) guard = guard && v[i] == (K)0x5A5A5A5A5A5A5A5Aull;
    CHECK(guard, "keys w%d n %lld logT %d: wrote past n", (int)sizeof(K), n, logT);
}

template <typename K, bool STABLE> void test_pairs(long long n, int logT, int dist, unsigned long long seed)
{
    Rng r{seed | 1};
    std::vector<K> k(n + GUARD);
    std::vector<uint64_t> val(n + GUARD);
    for (long long i = 0; i < n; i++) {
        k[i] = draw<K>(r, dist, i, n);
        val[i] = (uint64_t)i;
    }
    std::fill(k.begin() + n, k.end(), (K)0x5A5A5A5A5A5A5A5Aull);
    std::fill(val.begin() + n, val.end(), 0x5A5A5A5A5A5A5A5Aull);
    std::vector<std::pair<K, uint64_t>> ref(n);
    for (long long i = 0; i < n; i++) ref[i] = {k[i], val[i]};
    /* stable: (key, index) order = std::stable_sort by key */
    std::stable_sort(ref.begin(), ref.end(),
                     [](const std::pair<K, uint64_t> &a, const std::pair<K, uint64_t> &b) {
                         return a.first < b.first;
                     });
    SimOp<bn::PairsPolicy<K, STABLE>> op{bn::PairsPolicy<K, STABLE>{k.data(), val.data()}, n, {}, false, 0, bn::WIDE_MIN};
    bn::plan(n, logT, bn::PairsPolicy<K, STABLE>::LOGW, op);
    g_wide += op.wide_groups;
    bool keys_ok = true, same = true;
    for (long long i = 0; i < n; i++) {
        keys_ok = keys_ok && k[i] == ref[i].first;
        same = same && val[i] == ref[i].second;
    }
    CHECK(keys_ok, "pairs w%d stable %d n %lld logT %d dist %d: keys not sorted", (int)sizeof(K),
          (int)STABLE, n, logT, dist);
    if (STABLE) {
        CHECK(same, "pairs w%d stable n %lld logT %d dist %d: values not in stable order",
              (int)sizeof(K), n, logT, dist);
    } else {
        /* a permutation of the indices, each with its own key */
        std::vector<char> seen(n, 0);
        bool perm = true;
        for (long long i = 0; i < n && perm; i++) {
            const uint64_t j = val[i];
            perm = j < (uint64_t)n && !seen[j] && ref.size() == (size_t)n;
            if (perm) seen[j] = 1;
        }
        CHECK(perm, "pairs w%d n %lld logT %d dist %d: values not a permutation", (int)sizeof(K), n,
              logT, dist);
        if (perm) {
            /* value j must carry the key it started with */
            Rng r2{seed | 1};
            std::vector<K> orig(n);
            for (long long i = 0; i < n; i++) orig[i] = draw<K>(r2, dist, i, n);
            bool carried = true;
            for (long long i = 0; i < n; i++) carried = carried && orig[val[i]] == k[i];
            CHECK(carried, "pairs w%d n %lld logT %d dist %d: a value lost its key", (int)sizeof(K),
                  n, logT, dist);
        }
    }
    bool guard = true;
    for (long long i = n; i < n + GUARD; i++)
        guard = guard && k[i] == (K)0x5A5A5A5A5A5A5A5Aull && val[i] == 0x5A5A5A5A5A5A5A5Aull;
    CHECK(guard, "pairs w%d n %lld logT %d: wrote past n", (int)sizeof(K), n, logT);
}

} // namespace

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const long long sizes[] = {0,    1,    2,    3,    5,     7,     8,      9,      31,
                               32,   33,   63,   64,   65,    100,   127,    128,    129,
                               255,  257,  511,  513,  1000,  1023,  1024,   1025,   2047,
                               4095, 4096, 4097, 8191, 10007, 65535, 65536,  65537,  100003,
                               (1 << 18) + 3, (1 << 20) - 1};
    const int tiles[] = {9, 10, 11, 12, 13, 14, 15};
    unsigned long long seed = 12345;
    for (long long n : sizes) {
        if (quick && n > 70000) continue;
        for (int lt : tiles) {
            /* large n: the smallest and the default tiles (many global levels) */
            if (n > 70000 && lt != 9 && lt != 13) continue;
            for (int dist = 0; dist < NDIST; dist++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                /* wide groups (the default plan), and register groups only */
                typedef bn::KeysPolicy<uint32_t> K4;
                typedef bn::KeysPolicy<uint64_t> K8;
                test_keys<uint32_t>(n, lt, dist, seed, K4::LOGW, bn::WIDE_MIN);
                test_keys<uint64_t>(n, lt, dist, seed, K8::LOGW, bn::WIDE_MIN);
                if (dist < 2) { /* register groups only; wide only above LOGG */
                    test_keys<uint32_t>(n, lt, dist, seed, K4::LOGG, 99);
                    test_keys<uint64_t>(n, lt, dist, seed, K8::LOGG, 99);
                    test_keys<uint32_t>(n, lt, dist, seed, K4::LOGW, K4::LOGG + 1);
                    test_keys<uint64_t>(n, lt, dist, seed, K8::LOGW, K8::LOGG + 1);
                }
                if (n <= 70000 || dist == 0) {
                    test_pairs<uint32_t, true>(n, lt, dist, seed);
                    test_pairs<uint32_t, false>(n, lt, dist, seed);
                    test_pairs<uint64_t, true>(n, lt, dist, seed);
                    test_pairs<uint64_t, false>(n, lt, dist, seed);
                }
            }
        }
    }
    CHECK(g_wide > 0, "no wide group ran");
    printf("test_bitonic_sim: %lld checks (%lld wide groups), %lld failed\n", g_checks, g_wide,
           g_fail);
    return g_fail ? 1 : 0;
}
