/* cuda_sort.cu — the CUDA backend's order keys, sorts, merge-split and merge-path split.
 *
 * Key maps: one grid-stride kernel template over the word (uint32 / uint64), the map (a
 * float's key or its inverse, or an integer's XOR with a mask) and the order (ascending:
 * gp_key_of; descending: those keys with every bit but the NaN key's flipped, keys.h).
 *
 * Sorts: the engine of cuda_bitonic.cuh (Programs 6.17-6.19 in the mirror form, any n
 * without materialised padding; tile sort in shared memory, then per level above the tile
 * its global strides in groups of up to LOGW bits per launch — a thread's registers for
 * narrow groups, a block's 32 units through shared memory for wide ones (LOGW: 9 for 4-byte
 * keys, 8 for 8-byte keys, 7 for pairs) — and the in-tile finish). Keys only (vals == NULL):
 * the KeysPolicy, compare-exchange = min / max of the unsigned keys, padding = all ones.
 * With values: the PairsPolicy, units of up to 8 pairs per thread in registers, padding
 * (max key, max value); a compare-exchange swaps when (key_j, val_j) < (key_i, val_i)
 * (stable) or key_j < key_i (not stable). The network is data-oblivious, so the result is a
 * deterministic function of the input, and with stable the (key, value) order is total, so
 * the result is the unique sorted sequence (bitwise equal to the CPU twin's). 4-byte keys
 * whose values are all below 2^32 (checked: one read of the values) take a faster path:
 * key << 32 | value packed in place into the value array by the tile sort's loads, sorted
 * as 8-byte keys, unpacked by the last pass's stores (the (key, value) order, for stable
 * and not stable alike; 8 bytes per element through the network instead of 12).
 *
 * Merge-split (Green, Odeh, Birk, "GPU Merge Path", 2012): one kernel template over the
 * key, the value (NoValue for keys only: CUB's NullType, no value loads, stores or shared
 * memory) and the order (by key, or by (key, value) when stable). The output ranks [r0, r1)
 * are cut into pieces of 2048 per block, 8 per thread; each thread finds the start of its
 * 8 outputs in lo / hi by a binary search along the cross diagonal (GP_MERGE_PATH, ties: lo
 * first), merges sequentially into padded shared memory, and the block writes its 2048
 * outputs coalesced. O(n) work (+ n/8 log n searches): the two shards may hold different
 * counts, and no padding is materialised. merge_path runs the same search in one thread.
 *
 * Every entry point validates its arguments like the CPU twin and returns after its device
 * work has finished, so asynchronous faults are reported by the call that caused them.
 * Threading: one calling host thread per process (the __device__ answer words are shared).
 */
#include "cuda_bitonic.cuh"
#include "cuda_internal.cuh"
#include "keys.h"
#include "merge_path.h"

#include <string.h>

#include <type_traits>

namespace {

constexpr int MAP_THREADS = 256;             /* threads per block of key maps */
constexpr int MERGE_THREADS = 256;           /* threads per merge block */
constexpr int MERGE_IPT = 8;                 /* outputs per merge thread */
constexpr int MERGE_TILE = MERGE_THREADS * MERGE_IPT; /* outputs per merge block */

/* ---- kernels: key maps ---------------------------------------------------------------- */

enum MapKind { MAP_XOR, MAP_FLOAT_TO, MAP_FLOAT_FROM };

/* A float's bit pattern <-> its key in the order DESC (gpuprim/kernels.h, keys.h). */
template <bool DESC> __device__ __forceinline__ uint32_t float_to_key(uint32_t u)
{
    return DESC ? gp_desc_key_f32_bits(u) : gp_key_f32_bits(u);
}
template <bool DESC> __device__ __forceinline__ uint64_t float_to_key(uint64_t u)
{
    return DESC ? gp_desc_key_f64_bits(u) : gp_key_f64_bits(u);
}
template <bool DESC> __device__ __forceinline__ uint32_t float_from_key(uint32_t k)
{
    return DESC ? gp_desc_unkey_f32_bits(k) : gp_unkey_f32_bits(k);
}
template <bool DESC> __device__ __forceinline__ uint64_t float_from_key(uint64_t k)
{
    return DESC ? gp_desc_unkey_f64_bits(k) : gp_unkey_f64_bits(k);
}

/* In-place map of n words W: a float's key in the order DESC (MAP_FLOAT_TO), its inverse
 * (MAP_FLOAT_FROM), or an integer's bits XOR mask (MAP_XOR, its own inverse). */
template <typename W, int KIND, bool DESC>
__global__ void __launch_bounds__(MAP_THREADS) k_keymap(W *buf, long long n, W mask)
{
    const long long nth = (long long)gridDim.x * MAP_THREADS;
    for (long long i = (long long)blockIdx.x * MAP_THREADS + threadIdx.x; i < n; i += nth) {
        const W u = buf[i];
        buf[i] = KIND == MAP_FLOAT_TO ? float_to_key<DESC>(u)
               : KIND == MAP_FLOAT_FROM ? float_from_key<DESC>(u)
                                        : (W)(u ^ mask);
    }
}

/* ---- kernels: merge path -------------------------------------------------------------- */

/* The value type of a keys-only merge: nothing is loaded, stored or staged. */
struct NoValue {};

__host__ __device__ __forceinline__ uint64_t value_at(const uint64_t *p, long long i) { return p[i]; }
__host__ __device__ __forceinline__ NoValue value_at(const NoValue *, long long) { return NoValue(); }
/* The value as the order compares it (keys only: 0, never read). */
__host__ __device__ __forceinline__ uint64_t order_value(const uint64_t *p, long long i) { return p[i]; }
__host__ __device__ __forceinline__ uint64_t order_value(const NoValue *, long long) { return 0; }

/* lo entry (ka, va) goes before hi entry (kb, vb) in the merge (ties: lo first): by key,
 * then (STABLE, with values) by value. */
template <typename K, bool STABLE>
__host__ __device__ __forceinline__ bool lo_first(K ka, uint64_t va, K kb, uint64_t vb)
{
    return STABLE ? (ka < kb || (ka == kb && va <= vb)) : (ka <= kb);
}

/* Number of lo entries among the first r outputs of the merge (0 <= r <= nlo + nhi): the
 * smallest a in [max(0, r-nhi), min(r, nlo)] whose lo entry does not go before hi entry
 * r-1-a (the upper end when there is none; merge_path.h). Values are read only when
 * STABLE. */
template <typename K, typename V, bool STABLE>
__host__ __device__ __forceinline__ long long merge_path(const K *lk, const V *lv, long long nlo,
                                                         const K *hk, const V *hv, long long nhi,
                                                         long long r)
{
    static_assert(!STABLE || !std::is_same<V, NoValue>::value, "a stable merge needs values");
    auto lo_goes_first = [&](long long i, long long j) {
        return lo_first<K, STABLE>(lk[i], STABLE ? order_value(lv, i) : 0, hk[j],
                                   STABLE ? order_value(hv, j) : 0);
    };
    long long a = 0;
    GP_MERGE_PATH(a, nlo, nhi, r, lo_goes_first);
    return a;
}

/* Merged outputs [rs, rs + cnt) (cnt <= MERGE_IPT, rs + cnt <= nlo + nhi) to
 * f(q, key, value), q = 0 .. cnt-1: diagonal search, then a sequential two-finger merge. */
#pragma nv_exec_check_disable
template <typename K, typename V, bool STABLE, class F>
__host__ __device__ __forceinline__ void merge_run(const K *lk, const V *lv, long long nlo,
                                                   const K *hk, const V *hv, long long nhi,
                                                   long long rs, long long cnt, F &&f)
{
    long long a = merge_path<K, V, STABLE>(lk, lv, nlo, hk, hv, nhi, rs);
    long long b = rs - a;
    for (int q = 0; q < MERGE_IPT; q++) { /* constant trip count: unrolled by nvcc */
        if (q < cnt) {
            bool take_lo;
            if (a >= nlo) take_lo = false;
            else if (b >= nhi) take_lo = true;
            else take_lo = lo_first<K, STABLE>(lk[a], order_value(lv, a), hk[b], order_value(hv, b));
            if (std::is_same<V, NoValue>::value) { /* keys only: one select, one store */
                f(q, take_lo ? lk[a++] : hk[b++], V());
            } else if (take_lo) {
                f(q, lk[a], value_at(lv, a));
                a++;
            } else {
                f(q, hk[b], value_at(hv, b));
                b++;
            }
        }
    }
}

/* Writes merged[r0, r1) of lo and hi to ok / ov [0, r1-r0): blocks take MERGE_TILE outputs
 * (grid-stride), threads MERGE_IPT each, staged in padded shared memory so that the global
 * stores are coalesced. V = NoValue: keys only (ov, lv, hv unused, no value staging). */
template <typename K, typename V, bool STABLE>
__global__ void __launch_bounds__(MERGE_THREADS)
k_merge(const K *__restrict__ lk, const V *__restrict__ lv, long long nlo,
        const K *__restrict__ hk, const V *__restrict__ hv, long long nhi, long long r0,
        long long r1, K *__restrict__ ok, V *__restrict__ ov)
{
    constexpr bool HAS_V = !std::is_same<V, NoValue>::value;
    constexpr int PAD = MERGE_TILE + MERGE_TILE / 32;
    __shared__ K kbuf[PAD];
    __shared__ V vbuf[HAS_V ? PAD : 1];
    for (long long bs = r0 + (long long)blockIdx.x * MERGE_TILE; bs < r1;
         bs += (long long)gridDim.x * MERGE_TILE) {
        const long long rs = bs + (long long)threadIdx.x * MERGE_IPT;
        if (rs < r1) {
            const long long cnt = r1 - rs < MERGE_IPT ? r1 - rs : MERGE_IPT;
            merge_run<K, V, STABLE>(lk, lv, nlo, hk, hv, nhi, rs, cnt, [&](int q, K k, V v) {
                const int idx = (int)threadIdx.x * MERGE_IPT + q;
                kbuf[idx + (idx >> 5)] = k;
                if (HAS_V) vbuf[idx + (idx >> 5)] = v;
            });
        }
        __syncthreads();
        const long long left = r1 - bs;
        const int cntb = left < MERGE_TILE ? (int)left : MERGE_TILE;
        for (int q = threadIdx.x; q < cntb; q += MERGE_THREADS) {
            ok[bs - r0 + q] = kbuf[q + (q >> 5)];
            if (HAS_V) ov[bs - r0 + q] = vbuf[q + (q >> 5)];
        }
        __syncthreads();
    }
}

/* The answer of k_merge_path (one launch at a time: one calling host thread). */
__device__ long long g_split;

/* gp_backend.merge_path on the device: one thread runs the merge-path search (either run
 * may be another process's memory mapped with cudaIpcOpenMemHandle). */
template <typename K, typename V, bool STABLE>
__global__ void k_merge_path(const K *lk, const V *lv, long long nlo, const K *hk,
                             const V *hv, long long nhi, long long t)
{
    g_split = merge_path<K, V, STABLE>(lk, lv, nlo, hk, hv, nhi, t);
}

/* ---- kernels: packed (32-bit key, value < 2^32) pairs --------------------------------- */

/* Set to 1 by k_any_wide when some value is >= 2^32 (zeroed by the host before). */
__device__ unsigned long long g_wide;

/* g_wide |= 1 when some vals[i] >= 2^32 (grid-stride). */
__global__ void __launch_bounds__(MAP_THREADS) k_any_wide(const uint64_t *__restrict__ vals,
                                                          long long n)
{
    bool wide = false;
    const long long nth = (long long)gridDim.x * MAP_THREADS;
    for (long long i = (long long)blockIdx.x * MAP_THREADS + threadIdx.x; i < n; i += nth)
        wide |= (vals[i] >> 32) != 0;
    if (__any_sync(0xFFFFFFFFu, wide) && (threadIdx.x & 31) == 0) atomicOr(&g_wide, 1ull);
}

/* ---- kernel: the input positions ------------------------------------------------------ */

/* dst[i] = start + i (grid-stride). */
__global__ void __launch_bounds__(MAP_THREADS) k_iota(uint64_t *__restrict__ dst, long long n,
                                                      unsigned long long start)
{
    const long long nth = (long long)gridDim.x * MAP_THREADS;
    for (long long i = (long long)blockIdx.x * MAP_THREADS + threadIdx.x; i < n; i += nth)
        dst[i] = start + (unsigned long long)i;
}

/* ---- host side ------------------------------------------------------------------------ */

/* The key map of n words W of an element type: kind and order fixed at compile time. */
template <typename W>
int run_keymap(int kind, bool desc, void *buf, long long n, W mask, const gpc_devinfo *d)
{
    const int grid = gpc_stride_grid(n, MAP_THREADS, d);
    W *p = (W *)buf;
    if (kind == MAP_XOR) k_keymap<W, MAP_XOR, false><<<grid, MAP_THREADS>>>(p, n, mask);
    else if (kind == MAP_FLOAT_TO && desc) k_keymap<W, MAP_FLOAT_TO, true><<<grid, MAP_THREADS>>>(p, n, mask);
    else if (kind == MAP_FLOAT_TO) k_keymap<W, MAP_FLOAT_TO, false><<<grid, MAP_THREADS>>>(p, n, mask);
    else if (desc) k_keymap<W, MAP_FLOAT_FROM, true><<<grid, MAP_THREADS>>>(p, n, mask);
    else k_keymap<W, MAP_FLOAT_FROM, false><<<grid, MAP_THREADS>>>(p, n, mask);
    CUDA_CHECK_LAUNCH("k_keymap");
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* to_keys (to) or from_keys of buf[0, n) in `order`, arguments checked. An integer's key
 * is its bits XOR a mask, its own inverse: ascending flips the sign bit of a signed type
 * (an unsigned type's keys are its bits: no launch), descending flips every bit but the
 * sign bit of a signed type and every bit of an unsigned one. */
int keymap(gp_dtype t, gp_order order, void *buf, int64_t n, bool to)
{
    if (order != GP_ASCENDING && order != GP_DESCENDING)
        GPC_EINVAL("order = %d, not GP_ASCENDING or GP_DESCENDING", (int)order);
    const bool desc = order == GP_DESCENDING;
    uint64_t mask = 0;
    switch (t) {
    case GP_I32: mask = desc ? 0x7FFFFFFFull : 0x80000000ull; break;
    case GP_U32: mask = desc ? 0xFFFFFFFFull : 0; break;
    case GP_I64: mask = desc ? 0x7FFFFFFFFFFFFFFFull : 0x8000000000000000ull; break;
    case GP_U64: mask = desc ? ~0ull : 0; break;
    default: break;
    }
    const bool isfloat = gp_dtype_is_float(t) != 0;
    if (n == 0 || (!isfloat && mask == 0)) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    const int kind = !isfloat ? MAP_XOR : to ? MAP_FLOAT_TO : MAP_FLOAT_FROM;
    if (gp_dtype_size(t) == 4) return run_keymap<uint32_t>(kind, desc, buf, n, (uint32_t)mask, d);
    return run_keymap<uint64_t>(kind, desc, buf, n, mask, d);
}

/* A merge's key type, value type (NoValue: keys only) and order, as one tag type. */
template <typename KK, typename VV, bool SS> struct MergeKind {
    typedef KK K;
    typedef VV V;
    static constexpr bool STABLE = SS;
};

/* f(MergeKind<K, V, STABLE>()) for the key width, with values or not, stable or not (a
 * stable merge without values is the keys-only merge: equal keys are the same bits). */
template <class F> int with_merge_kind(int width, bool vals, bool stable, F &&f)
{
    if (width == 4) {
        if (!vals) return f(MergeKind<uint32_t, NoValue, false>());
        return stable ? f(MergeKind<uint32_t, uint64_t, true>())
                      : f(MergeKind<uint32_t, uint64_t, false>());
    }
    if (!vals) return f(MergeKind<uint64_t, NoValue, false>());
    return stable ? f(MergeKind<uint64_t, uint64_t, true>())
                  : f(MergeKind<uint64_t, uint64_t, false>());
}

template <typename K, typename V, bool STABLE>
int run_merge(const void *lk, const uint64_t *lv, long long nlo, const void *hk,
              const uint64_t *hv, long long nhi, long long r0, long long r1, void *ok,
              uint64_t *ov, const gpc_devinfo *d)
{
    long long b = (r1 - r0 + MERGE_TILE - 1) / MERGE_TILE;
    long long cap = (long long)d->sm_count * 64;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    k_merge<K, V, STABLE><<<(unsigned)b, MERGE_THREADS>>>(
        (const K *)lk, reinterpret_cast<const V *>(lv), nlo, (const K *)hk,
        reinterpret_cast<const V *>(hv), nhi, r0, r1, (K *)ok, reinterpret_cast<V *>(ov));
    CUDA_CHECK_LAUNCH("k_merge");
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

template <typename K, typename V, bool STABLE>
int run_merge_path(const void *lk, const uint64_t *lv, long long nlo, const void *hk,
                   const uint64_t *hv, long long nhi, long long t, long long *split)
{
    k_merge_path<K, V, STABLE><<<1, 1>>>((const K *)lk, reinterpret_cast<const V *>(lv), nlo,
                                         (const K *)hk, reinterpret_cast<const V *>(hv), nhi, t);
    CUDA_CHECK_LAUNCH("k_merge_path");
    CUDA_CHECK(cudaMemcpyFromSymbol(split, g_split, sizeof *split)); /* waits for it */
    return GP_OK;
}

/* The bitonic sort of n > 1 keys of `width` bytes in buf, the tile passes through
 * TileKeysPolicy with element map `map` on the first pass's loads and the last pass's
 * stores (MAP_NONE: a key sort; one set of tile kernels for keys, values and packed pairs). */
int sort_mapped(int width, void *buf, int map, long long n)
{
    if (width == 4) {
        uint32_t *k = (uint32_t *)buf;
        return bn::sort(bn::KeysPolicy<uint32_t>{k},
                        bn::TileKeysPolicy<uint32_t>{{k}, NULL, map, false, false}, n);
    }
    uint64_t *k = (uint64_t *)buf;
    return bn::sort(bn::KeysPolicy<uint64_t>{k},
                    bn::TileKeysPolicy<uint64_t>{{k}, NULL, map, false, false}, n);
}

/* The pairs sort of 4-byte keys when every value is below 2^32: key and value packed into
 * one uint64 (key << 32 | value) in the value array by the tile sort's loads, sorted as
 * 8-byte keys by the engine, unpacked by the last pass's stores (bn::TileKeysPolicy): the
 * (key, value) order (stable or not: a valid result for both), with 8 bytes per element
 * through the network instead of 12. *packed = 0 (nothing done) when some value is wide. */
int sort_packed(uint32_t *keys, uint64_t *vals, long long n, const gpc_devinfo *d, int *packed)
{
    *packed = 0;
    const unsigned long long zero = 0;
    unsigned long long wide = 0;
    CUDA_CHECK(cudaMemcpyToSymbol(g_wide, &zero, sizeof zero));
    k_any_wide<<<gpc_stride_grid(n, MAP_THREADS, d), MAP_THREADS>>>(vals, n);
    CUDA_CHECK_LAUNCH("k_any_wide");
    CUDA_CHECK(cudaMemcpyFromSymbol(&wide, g_wide, sizeof wide)); /* waits for it */
    if (wide) return GP_OK;
    /* the tile sort packs as it loads, the last pass unpacks as it stores */
    const bn::TileKeysPolicy<uint64_t> tp{{vals}, keys, bn::MAP_NONE, false, false};
    int rc = bn::sort(bn::KeysPolicy<uint64_t>{vals}, tp, n);
    if (rc) return rc;
    *packed = 1;
    return GP_OK;
}

/* The bitonic sort of n > 1 (key, value) pairs (arguments checked). */
int sort_pairs(int width, void *keys, uint64_t *vals, long long n, int stable)
{
    if (width == 4) {
        uint32_t *k = (uint32_t *)keys;
        const gpc_devinfo *d = NULL;
        int rc = gpc_devinfo_get(&d);
        if (rc) return rc;
        int packed = 0;
        rc = sort_packed(k, vals, n, d, &packed);
        if (rc || packed) return rc;
        return stable ? bn::sort(bn::PairsPolicy<uint32_t, true>{k, vals}, n)
                      : bn::sort(bn::PairsPolicy<uint32_t, false>{k, vals}, n);
    }
    uint64_t *k = (uint64_t *)keys;
    return stable ? bn::sort(bn::PairsPolicy<uint64_t, true>{k, vals}, n)
                  : bn::sort(bn::PairsPolicy<uint64_t, false>{k, vals}, n);
}

} // namespace

/* Maps buf[0, n) (type t, device memory) in place to order keys in `order` —
 * gp_backend.to_keys on the GPU: afterwards buf holds n uint32 keys (4-byte t) or n uint64
 * keys (8-byte t). GP_ASCENDING: gp_key_of(t, element) (floats: NaN -> all ones, negative
 * -> ~bits, else bits | sign bit; signed ints: sign bit flipped; unsigned: unchanged, no
 * launch); GP_DESCENDING: those keys with every bit flipped except a float's NaN key (all
 * ones). One grid-stride launch. Returns GP_OK, GP_EINVAL (bad t or order, n < 0, NULL buf
 * with n > 0) or GP_EDEVICE. */
extern "C" int gp_cuda_to_keys(gp_dtype t, gp_order order, void *buf, int64_t n)
{
    GPC_CHECK_ARRAY(t, n, buf, "buf");
    return keymap(t, order, buf, n, true);
}

/* Maps n keys of `order` in buf (device memory; uint32 for 4-byte t, uint64 for 8-byte t)
 * in place back to elements of type t — gp_backend.from_keys on the GPU, the inverse of
 * to_keys of the same order (the NaN key comes back as the default quiet NaN 0x7FC00000 /
 * 0x7FF8000000000000). Returns GP_OK, GP_EINVAL or GP_EDEVICE. */
extern "C" int gp_cuda_from_keys(gp_dtype t, gp_order order, void *buf, int64_t n)
{
    GPC_CHECK_ARRAY(t, n, buf, "buf");
    return keymap(t, order, buf, n, false);
}

/* Sorts n unsigned keys of `width` bytes (4: uint32, 8: uint64) ascending, in place, in
 * device memory, with the uint64 vals moved along when vals != NULL — gp_backend.sort on
 * the GPU: the bitonic sort of the file comment (any n, no padding materialised, nothing
 * at or past n read or written). Keys only: the KeysPolicy (stable ignored). With values:
 * stable != 0, (key, value) order (unique result, equal to the CPU twin's); stable == 0,
 * key order, equal keys' values in the network's deterministic order. n <= 1: nothing.
 * Returns GP_OK, GP_EINVAL (width not 4/8, n < 0, NULL keys with n > 0, keys overlapping
 * vals, n beyond the grid limit) or GP_EDEVICE. */
extern "C" int gp_cuda_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !keys) GPC_EINVAL("keys is NULL with n = %lld", (long long)n);
    if (gpc_overlap(keys, (size_t)n * (size_t)width, vals, (size_t)n * 8))
        GPC_EINVAL("keys overlap vals");
    if (n <= 1) return GP_OK;
    if (!vals) return sort_mapped(width, keys, bn::MAP_NONE, n);
    return sort_pairs(width, keys, vals, n, stable);
}

/* dst[0, n) = start, start + 1, ... (device memory) — gp_backend.iota on the GPU: one
 * grid-stride launch on the default stream, then a device synchronisation (complete on
 * return, for every stream). Returns GP_OK, GP_EINVAL (n < 0, NULL dst with n > 0) or
 * GP_EDEVICE. */
extern "C" int gp_cuda_iota(uint64_t *dst, int64_t n, uint64_t start)
{
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !dst) GPC_EINVAL("dst is NULL with n = %lld", (long long)n);
    if (n == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    k_iota<<<gpc_stride_grid(n, MAP_THREADS, d), MAP_THREADS>>>(dst, n, start);
    CUDA_CHECK_LAUNCH("k_iota");
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* Sorts n elements of type t (device memory) ascending in place by their keys —
 * gp_backend.sort_values on the GPU: the bitonic sort of gp_cuda_sort (keys only) on the order
 * keys, with gp_key_of applied in the loads of the first pass (the tile sort) and its
 * inverse in the stores of the last (bn::TileKeysPolicy), so the result has the bits of
 * to_keys + sort + from_keys (ascending) without their two passes. n == 1: the two maps only (a
 * NaN comes back as the default quiet NaN, as there). Returns GP_OK, GP_EINVAL (bad t,
 * n < 0, NULL buf with n > 0, n beyond the grid limit) or GP_EDEVICE. */
extern "C" int gp_cuda_sort_values(gp_dtype t, void *buf, int64_t n)
{
    GPC_CHECK_ARRAY(t, n, buf, "buf");
    if (n == 0) return GP_OK;
    if (n == 1) {
        int rc = keymap(t, GP_ASCENDING, buf, n, true);
        return rc ? rc : keymap(t, GP_ASCENDING, buf, n, false);
    }
    int map = bn::MAP_NONE;
    switch (t) {
    case GP_F32: map = bn::MAP_F32; break;
    case GP_I32: map = bn::MAP_I32; break;
    case GP_F64: map = bn::MAP_F64; break;
    case GP_I64: map = bn::MAP_I64; break;
    default: break;
    }
    return sort_mapped((int)gp_dtype_size(t), buf, map, n);
}

/* Merge-split of two ascending runs, with values or keys only — gp_backend.merge_split on
 * the GPU (merge path, file comment).
 * width: 4 (uint32 keys) or 8 (uint64); lo: nlo ascending entries, hi: nhi (device), 0 <=
 * nlo, nhi <= m; out_keys (and out_vals): device room for m entries, not overlapping any
 * input or each other. Keys only when lo_vals, hi_vals and out_vals are all NULL; else
 * every one of them with entries must be non-NULL. keep_upper == 0: out[0, c) = merged[0,
 * c), c = min(m, nlo+nhi); keep_upper != 0: out[0, c) = merged[m, nlo+nhi), c = max(0,
 * nlo+nhi-m); merged orders by key (ties lo first), or with values and stable by (key,
 * value). out[c, m) is not written; *nout (host) = c. Returns GP_OK, GP_EINVAL (width,
 * negative counts, nlo > m or nhi > m, NULL pointers, overlap) or GP_EDEVICE. */
extern "C" int gp_cuda_merge_split(int width, const void *lo_keys, const uint64_t *lo_vals,
                                   int64_t nlo, const void *hi_keys, const uint64_t *hi_vals,
                                   int64_t nhi, int64_t m, int keep_upper, int stable,
                                   void *out_keys, uint64_t *out_vals, int64_t *nout)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || m < 0)
        GPC_EINVAL("negative count (nlo = %lld, nhi = %lld, m = %lld)", (long long)nlo,
                   (long long)nhi, (long long)m);
    if (nlo > m || nhi > m)
        GPC_EINVAL("nlo = %lld or nhi = %lld exceeds m = %lld", (long long)nlo,
                   (long long)nhi, (long long)m);
    if (!nout) GPC_EINVAL("nout is NULL");
    const bool vals = lo_vals || hi_vals || out_vals;
    const bool lo_bad = nlo > 0 && (!lo_keys || (vals && !lo_vals));
    if (lo_bad || (nhi > 0 && (!hi_keys || (vals && !hi_vals))))
        GPC_EINVAL("%s input is NULL with a nonzero count", lo_bad ? "lo" : "hi");
    const long long total = (long long)nlo + nhi;
    const long long r0 = keep_upper ? m : 0;
    const long long r1 = keep_upper ? total : (total < m ? total : m);
    const long long cnt = r1 > r0 ? r1 - r0 : 0;
    if (cnt > 0 && (!out_keys || (vals && !out_vals))) GPC_EINVAL("output is NULL");
    const size_t w = (size_t)width, ck = (size_t)cnt * w, cv = (size_t)cnt * 8;
    const void *in[4] = {lo_keys, hi_keys, lo_vals, hi_vals};
    const size_t inb[4] = {(size_t)nlo * w, (size_t)nhi * w, (size_t)nlo * 8, (size_t)nhi * 8};
    bool overlap = gpc_overlap(out_keys, ck, out_vals, cv);
    for (int i = 0; i < 4; i++)
        overlap = overlap || gpc_overlap(out_keys, ck, in[i], inb[i]) ||
                  gpc_overlap(out_vals, cv, in[i], inb[i]);
    if (overlap) GPC_EINVAL("an output overlaps an input or the other output");
    *nout = 0;
    if (cnt == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    rc = with_merge_kind(width, vals, stable != 0, [&](auto kind) {
        typedef decltype(kind) MK;
        return run_merge<typename MK::K, typename MK::V, MK::STABLE>(
            lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, r0, r0 + cnt, out_keys, out_vals, d);
    });
    if (rc) return rc;
    *nout = cnt;
    return GP_OK;
}

/* The merge-path split of two ascending runs — gp_backend.merge_path on the GPU (meaning:
 * gpuprim/kernels.h): one thread of one block runs merge_path (GP_MERGE_PATH with the order of
 * merge_split; stable == 0 reads no values), the answer comes back with
 * cudaMemcpyFromSymbol. A search with one candidate (an empty run, t = 0 or t = nlo + nhi)
 * is answered on the host without a launch. Returns GP_OK, GP_EINVAL (width, counts, t out of
 * range, NULL pointers) or GP_EDEVICE. */
extern "C" int gp_cuda_merge_path(int width, const void *lo_keys, const uint64_t *lo_vals,
                                  int64_t nlo, const void *hi_keys, const uint64_t *hi_vals,
                                  int64_t nhi, int64_t t, int stable, int64_t *split)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || t < 0 || t > nlo + nhi)
        GPC_EINVAL("nlo = %lld, nhi = %lld, t = %lld: need counts >= 0 and 0 <= t <= nlo + nhi",
                   (long long)nlo, (long long)nhi, (long long)t);
    if (!split) GPC_EINVAL("split is NULL");
    if ((nlo > 0 && (!lo_keys || (stable && !lo_vals))) ||
        (nhi > 0 && (!hi_keys || (stable && !hi_vals))))
        GPC_EINVAL("an input is NULL with a nonzero count");
    const long long a0 = t > nhi ? t - nhi : 0, a1 = t < nlo ? t : nlo;
    if (a0 >= a1) {
        *split = a0;
        return GP_OK;
    }
    long long v = 0;
    /* not stable: the keys-only search (no values read) */
    int rc = with_merge_kind(width, stable != 0, stable != 0, [&](auto kind) {
        typedef decltype(kind) MK;
        return run_merge_path<typename MK::K, typename MK::V, MK::STABLE>(
            lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, t, &v);
    });
    if (rc) return rc;
    *split = v;
    return GP_OK;
}
