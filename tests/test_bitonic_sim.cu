/* test_bitonic_sim.cu — the bitonic engine's index code run on the CPU: the same plan,
 * schedules, unit positions and register networks as the GPU kernels (kernels/
 * bitonic_index.cuh, and through bitonic_plan.cuh the policies and units below it; not the
 * kernels or the launch code), every unit of every group in sequence (units of one group
 * are disjoint, so this is exact). Needs nvcc to build, no GPU to run (CTest label cpu).
 * Checks, for keys (uint32, uint64) and (key, uint64 value) pairs (stable or not) over many
 * sizes, tile sizes and distributions (random, few distinct, all equal, sorted, reversed,
 * the largest key = the padding value; keys of the odd-numbered distributions through the
 * GPU executor's split tile sort: half tiles, then the top level alone; keys also with
 * register groups only and with wide groups only above LOGG): the output is the sorted
 * input (std::sort / std::stable_sort), and nothing past n is written. The wide groups
 * (k_wide's two phases, block by block) also directly: every width and kind against the
 * same group as register units. Exit 0 when every check passes, 1 otherwise. */
#include "bitonic_index.cuh"
#include "bitonic_plan.cuh"

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
        const long long units = bn::units_below(n, GW, blo);
        std::vector<unsigned char> s(bn::wide_smem<P, GW>());
        const int nt = bn::Wide<GW>::NT;
        for (long long blk = 0; blk * 32 < units; blk++) {
            std::fill(s.begin(), s.end(), (unsigned char)0xA5);
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
        if (bn::runs_wide<P>(G, wide_from))
            return bn::with_w<P>(G, [&](auto g) { return this->template wide_g<decltype(g)::value>(blo, kind); });
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

/* maxg: the plan's widest group (KeysPolicy<K>::LOGW, the default; LOGG: register groups
   only, as with GPUPRIM_SORT_WIDE=LOGG); wfrom: the narrowest group run wide (WIDE_MIN by
   default; GPUPRIM_SORT_WIDE_FROM) */
template <typename K>
void test_keys(long long n, int logT, int dist, unsigned long long seed, int maxg, int wfrom)
{
    Rng r{seed | 1};
    std::vector<K> v(n + GUARD);
    for (long long i = 0; i < n; i++) v[i] = draw<K>(r, dist, i, n);
    std::fill(v.begin() + n, v.end(), (K)0x5A5A5A5A5A5A5A5Aull);
    std::vector<K> ref(v.begin(), v.begin() + n);
    std::sort(ref.begin(), ref.end());
    SimOp<bn::KeysPolicy<K>> op{bn::KeysPolicy<K>{v.data()}, n, {}, (dist & 1) != 0, 0, wfrom};
    bn::plan(n, logT, maxg, op);
    g_wide += op.wide_groups;
    CHECK(std::equal(ref.begin(), ref.end(), v.begin()),
          "keys w%d n %lld logT %d dist %d maxg %d: not the sorted input", (int)sizeof(K), n,
          logT, dist, maxg);
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

/* One wide group (SimOp::wide_g, the kernel's two phases) against the same group run as
   register units (unit_global<P, GW, KIND, 1>, i.e. reg_group<GW, KIND> on pos()), on the
   same random data: every width WIDE_MIN .. P::LOGW, both kinds, several blo, n below,
   at and past 2^(blo + GW) (partial blocks of fewer than 32 units, positions >= n). */
template <class P> struct WideData;
template <typename K> struct WideData<bn::KeysPolicy<K>> {
    std::vector<K> k;
    bn::KeysPolicy<K> make(long long n, Rng &r)
    {
        k.resize(n);
        for (auto &x : k) x = (K)(r.next() % 50);
        return bn::KeysPolicy<K>{k.data()};
    }
    bool operator==(const WideData &o) const { return k == o.k; }
};
template <typename K, bool S> struct WideData<bn::PairsPolicy<K, S>> {
    std::vector<K> k;
    std::vector<uint64_t> v;
    bn::PairsPolicy<K, S> make(long long n, Rng &r)
    {
        k.resize(n);
        v.resize(n);
        for (long long i = 0; i < n; i++) {
            k[i] = (K)(r.next() % 50);
            v[i] = (uint64_t)i;
        }
        return bn::PairsPolicy<K, S>{k.data(), v.data()};
    }
    bool operator==(const WideData &o) const { return k == o.k && v == o.v; }
};

template <class P, int GW> void wide_direct_width(unsigned long long seed)
{
    for (int blo : {0, 3, 5, 9}) {
        const long long span = 1ll << (blo + GW);
        for (long long n : {1ll, 100ll, span - 1, span + 7, 3 * span + (1ll << blo) / 3 + 1})
            for (int kind : {(int)bn::MIRROR, (int)bn::PLAIN}) {
                const long long len = n + GUARD;
                Rng ra{seed | 1}, rb{seed | 1};
                WideData<P> a, b;
                P pa = a.make(len, ra), pb = b.make(len, rb);
                const long long units = bn::units_below(n, GW, blo);
                for (long long w = 0; w < units; w++) {
                    if (kind == bn::MIRROR) bn::unit_global<P, GW, bn::MIRROR, 1>(pa, n, w, 1, units, blo);
                    else bn::unit_global<P, GW, bn::PLAIN, 1>(pa, n, w, 1, units, blo);
                }
                SimOp<P> op{pb, n, {}, false, 0, bn::WIDE_MIN};
                op.template wide_g<GW>(blo, kind);
                g_wide += op.wide_groups;
                CHECK(a == b, "wide group w%d GW %d kind %d blo %d n %lld: not the register units'"
                      " result", (int)sizeof(typename P::E), GW, kind, blo, n);
                seed = seed * 6364136223846793005ull + 1;
            }
    }
}

template <class P> void wide_direct(unsigned long long seed)
{
    wide_direct_width<P, 5>(seed);
    wide_direct_width<P, 6>(seed + 1);
    wide_direct_width<P, 7>(seed + 2);
    if constexpr (P::LOGW >= 8) wide_direct_width<P, 8>(seed + 3);
    if constexpr (P::LOGW >= 9) wide_direct_width<P, 9>(seed + 4);
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
    wide_direct<bn::KeysPolicy<uint32_t>>(seed);
    wide_direct<bn::KeysPolicy<uint64_t>>(seed);
    wide_direct<bn::PairsPolicy<uint32_t, true>>(seed);
    wide_direct<bn::PairsPolicy<uint64_t, false>>(seed);
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
