/* bitonic_policy.cuh — the bitonic engine's policies (layer 1 of 6; cuda_bitonic.cuh lists
 * them): the tuning constants, and the element policies that say what an element is, how
 * two compare and where they are loaded and stored. Plain data and __host__ __device__
 * code: tests/test_bitonic_sim.cu runs it on the CPU. Not part of the public contract.
 */
#ifndef GP_BITONIC_POLICY_CUH
#define GP_BITONIC_POLICY_CUH

#include <stddef.h>
#include <stdint.h>

#include "gpuprim/kernels.h"

namespace bn {

/* ---- tuning --------------------------------------------------------------------------- */
/* The engine's fixed sizes; the per-element ones (LOGR, LOGG, LOGW) are each policy's. */

constexpr int TILE_THREADS = 512;   /* most threads per tile block */
constexpr int GLOBAL_THREADS = 256; /* threads per block of a global group */
constexpr int LT_MIN = 9;           /* smallest tile: 2^9 positions (any n <= 2^9: one tile) */
constexpr int LT_MAX = 15;          /* largest tile */

/* The narrowest wide group there is a kernel for. */
constexpr int WIDE_MIN = 5;

/* Default shared-memory budget of a tile, bytes (tunable per call with the environment
 * variable GPUPRIM_SORT_SMEM=<bytes>, for benchmarking; capped by the device's opt-in
 * limit). */
constexpr size_t TILE_SMEM_DEFAULT = 96 * 1024;

/* ---- element policies ----------------------------------------------------------------- */
/* A policy P gives: the element type P::E; LOGR (log2 of the largest unit in registers in
 * the tile kernels), LOGG (in the global register groups, whose threads have twice the
 * registers: one more stride per pass over the data) and LOGW (the widest global group, a
 * block's wide group through shared memory: 64 KiB of elements per block);
 * P::pad() (compares >= every real element); P::cas(a, b) (compare-exchange: afterwards
 * a is the smaller, and a swap happens only when b is strictly less than a); load / store
 * of position p in global memory; smem_bytes(Tpad) and sget / sput of shared-memory slot i
 * (Tpad slots). */

/* Keys only: unsigned K (uint32_t or uint64_t). */
template <typename K> struct KeysPolicy {
    typedef K E;
    static constexpr int LOGR = sizeof(K) == 4 ? 5 : 4; /* 32 x 4 or 16 x 8 bytes */
    static constexpr int LOGG = sizeof(K) == 4 ? 6 : 5; /* 64 x 4 or 32 x 8 bytes */
    static constexpr int LOGW = sizeof(K) == 4 ? 9 : 8; /* wide groups: 64 KiB of keys */
    K *keys;
    __host__ __device__ static E pad() { return (K)~(K)0; }
    __host__ __device__ static void cas(E &a, E &b)
    {
#ifdef __CUDA_ARCH__
        const K lo = min(a, b), hi = max(a, b); /* one IMNMX each for 32-bit keys */
#else
        const K lo = b < a ? b : a, hi = b < a ? a : b;
#endif
        a = lo;
        b = hi;
    }
    __host__ __device__ E load(long long p) const { return keys[p]; }
    __host__ __device__ void store(long long p, const E &e) const { keys[p] = e; }
    /* the first pass's load and the last pass's store (TileKeysPolicy maps there) */
    __host__ __device__ bool in_mapped() const { return false; }
    __host__ __device__ bool out_mapped() const { return false; }
    __host__ __device__ E map_in(long long, const E &e) const { return e; }
    __host__ __device__ E map_out(const E &e) const { return e; } /* store_out's map */
    __host__ __device__ bool vec_ok() const { return true; } /* map_in / map_out per key */
    __host__ __device__ void store_out(long long p, const E &e) const { store(p, e); }
    __host__ __device__ static size_t smem_bytes(int Tpad) { return (size_t)Tpad * sizeof(K); }
    __host__ __device__ static E sget(const unsigned char *s, int Tpad, int i)
    {
        (void)Tpad;
        return reinterpret_cast<const K *>(s)[i];
    }
    __host__ __device__ static void sput(unsigned char *s, int Tpad, int i, const E &e)
    {
        (void)Tpad;
        reinterpret_cast<K *>(s)[i] = e;
    }
};

/* (key, uint64 value) pairs in two arrays; STABLE: ordered by (key, value), else by key
 * only (a pair moves past another only when its key is strictly smaller). */
template <typename K, bool STABLE> struct PairsPolicy {
    struct E {
        K k;
        uint64_t v;
    };
    static constexpr int LOGR = 3;
    static constexpr int LOGG = 4;
    static constexpr int LOGW = 7; /* wide groups: 64 KiB of 16-byte pairs */
    K *keys;
    uint64_t *vals;
    __host__ __device__ static E pad() { return E{(K)~(K)0, ~0ull}; }
    __host__ __device__ static bool less(const E &a, const E &b)
    {
        return STABLE ? (a.k < b.k || (a.k == b.k && a.v < b.v)) : (a.k < b.k);
    }
    __host__ __device__ static void cas(E &a, E &b)
    {
        if (less(b, a)) {
            const E t = a;
            a = b;
            b = t;
        }
    }
    __host__ __device__ E load(long long p) const { return E{keys[p], vals[p]}; }
    __host__ __device__ void store(long long p, const E &e) const
    {
        keys[p] = e.k;
        vals[p] = e.v;
    }
    __host__ __device__ bool in_mapped() const { return false; }
    __host__ __device__ bool out_mapped() const { return false; }
    __host__ __device__ E map_in(long long, const E &e) const { return e; }
    __host__ __device__ void store_out(long long p, const E &e) const { store(p, e); }
    /* values first (8-byte aligned), then keys */
    __host__ __device__ static size_t smem_bytes(int Tpad)
    {
        return (size_t)Tpad * (sizeof(uint64_t) + sizeof(K));
    }
    __host__ __device__ static E sget(const unsigned char *s, int Tpad, int i)
    {
        const uint64_t *sv = reinterpret_cast<const uint64_t *>(s);
        const K *sk = reinterpret_cast<const K *>(sv + Tpad);
        return E{sk[i], sv[i]};
    }
    __host__ __device__ static void sput(unsigned char *s, int Tpad, int i, const E &e)
    {
        uint64_t *sv = reinterpret_cast<uint64_t *>(s);
        K *sk = reinterpret_cast<K *>(sv + Tpad);
        sk[i] = e.k;
        sv[i] = e.v;
    }
};

/* Element maps that the first pass may apply on load (element -> order key, gp_key_of) and
 * the last pass on store (order key -> element, gp_key_to_elem): a value sort in the passes
 * of the key sort, without a separate map pass over the data before and after. */
enum KeyMap { MAP_NONE = 0, MAP_F32, MAP_I32, MAP_F64, MAP_I64 };

__host__ __device__ __forceinline__ uint32_t map_in32(int m, uint32_t u)
{
    return m == MAP_F32 ? gp_key_f32_bits(u) : m == MAP_I32 ? (u ^ 0x80000000u) : u;
}
__host__ __device__ __forceinline__ uint32_t map_out32(int m, uint32_t k)
{
    return m == MAP_F32 ? gp_unkey_f32_bits(k) : m == MAP_I32 ? (k ^ 0x80000000u) : k;
}
__host__ __device__ __forceinline__ uint64_t map_in64(int m, uint64_t u)
{
    return m == MAP_F64 ? gp_key_f64_bits(u) : m == MAP_I64 ? (u ^ 0x8000000000000000ull) : u;
}
__host__ __device__ __forceinline__ uint64_t map_out64(int m, uint64_t k)
{
    return m == MAP_F64 ? gp_unkey_f64_bits(k) : m == MAP_I64 ? (k ^ 0x8000000000000000ull) : k;
}

/* Keys policy of the tile kernels (KeysPolicy for every other pass) with the first pass's
 * load and the last pass's store mapped:
 *   hi32 == NULL: keys[p] holds an element of a type (map) on input / output and its order
 *                 key in between; map applies to the whole K;
 *   hi32 != NULL: packed (key, value) pairs (K = uint64 only): on input hi32[p] is a 32-bit
 *                 element (map a 4-byte map) and keys[p] a value below 2^32; in between
 *                 keys[p] = key << 32 | value, so the uint64 order is the (key, value) order;
 *                 on output hi32[p] = the element again, keys[p] = the value.
 * in / out: whether this launch is the first pass (maps its loads) / the last (its stores);
 * the executor (GpuOp) sets them per launch. */
template <typename K> struct TileKeysPolicy : KeysPolicy<K> {
    typedef K E;
    uint32_t *hi32;
    int map;
    bool in, out;
    __host__ __device__ bool in_mapped() const { return in; }
    __host__ __device__ bool out_mapped() const { return out; }
    /* element p as loaded (keys[p]) -> its first-pass value */
    __host__ __device__ E map_in(long long p, const E &raw) const
    {
        if constexpr (sizeof(K) == 8) {
            if (hi32) return ((K)map_in32(map, hi32[p]) << 32) | (uint32_t)raw;
            return map_in64(map, raw);
        } else {
            return map_in32(map, raw);
        }
    }
    /* whether map_in / map_out apply to a key alone: not for a packed pair sort's mapped
     * passes (they read or write hi32 too) */
    __host__ __device__ bool vec_ok() const { return !hi32 || (!in && !out); }
    /* store_out's map of a whole K (not for packed pairs) */
    __host__ __device__ E map_out(const E &e) const
    {
        if constexpr (sizeof(K) == 8) return map_out64(map, e);
        else return map_out32(map, e);
    }
    __host__ __device__ void store_out(long long p, const E &e) const
    {
        if constexpr (sizeof(K) == 8) {
            if (hi32) {
                hi32[p] = map_out32(map, (uint32_t)(e >> 32));
                this->keys[p] = e & 0xFFFFFFFFull;
            } else {
                this->keys[p] = map_out64(map, e);
            }
        } else {
            this->keys[p] = map_out32(map, e);
        }
    }
};

} // namespace bn

#endif /* GP_BITONIC_POLICY_CUH */
