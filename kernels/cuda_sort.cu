/* cuda_sort.cu — the CUDA backend's order keys, bitonic sort and merge-split.
 *
 * Bitonic sort: the engine of cuda_bitonic.cuh (Programs 6.17-6.19 in the mirror form, any
 * n without materialised padding; tile sort in shared memory, then per level above the tile
 * its global strides in groups of up to LOGW bits per launch — a thread's registers for
 * narrow groups, a block's 32 units through shared memory for wide ones (LOGW: 9 for 4-byte
 * keys, 8 for 8-byte keys) — and the in-tile finish), with the KeysPolicy:
 * compare-exchange = min / max of the unsigned keys, padding = all ones.
 *
 * Merge-split (Green, Odeh, Birk, "GPU Merge Path", 2012): the output ranks [r0, r1) are
 * cut into pieces of 2048 per block, 8 per thread; each thread finds the start of its 8
 * outputs in lo / hi by a binary search along the cross diagonal (ties: lo first), merges
 * sequentially into shared memory, and the block writes its 2048 outputs coalesced.
 * O(n) work (+ n/8 log n searches): the two shards may hold different counts, and no
 * padding is materialised.
 *
 * Every entry point validates its arguments like the CPU twin and returns after its device
 * work has finished (cudaDeviceSynchronize), so asynchronous faults are reported by the
 * call that caused them.
 */
#include "cuda_bitonic.cuh"
#include "cuda_internal.cuh"
#include "gp_merge_path.h"

#include <string.h>

namespace {

constexpr int MAP_THREADS = 256;             /* threads per block of key maps */
constexpr int MERGE_THREADS = 256;           /* threads per merge block */
constexpr int MERGE_IPT = 8;                 /* outputs per merge thread */
constexpr int MERGE_TILE = MERGE_THREADS * MERGE_IPT; /* outputs per merge block */


/* ---- kernels: key maps ---------------------------------------------------------------- */

enum KeyOp { TO_F32, TO_F64, FROM_F32, FROM_F64, FLIP32, FLIP64 };

/* In-place elementwise map of n words (uint32 for the *32 ops, uint64 for the *64 ops). */
template <KeyOp OP>
__global__ void __launch_bounds__(MAP_THREADS) k_keymap(void *buf, long long n)
{
    const long long nth = (long long)gridDim.x * MAP_THREADS;
    for (long long i = (long long)blockIdx.x * MAP_THREADS + threadIdx.x; i < n; i += nth) {
        if (OP == TO_F32 || OP == FROM_F32 || OP == FLIP32) {
            uint32_t *p = (uint32_t *)buf;
            const uint32_t u = p[i];
            p[i] = OP == TO_F32 ? gp_key_f32_bits(u)
                 : OP == FROM_F32 ? gp_unkey_f32_bits(u)
                                  : (u ^ 0x80000000u);
        } else {
            uint64_t *p = (uint64_t *)buf;
            const uint64_t u = p[i];
            p[i] = OP == TO_F64 ? gp_key_f64_bits(u)
                 : OP == FROM_F64 ? gp_unkey_f64_bits(u)
                                  : (u ^ 0x8000000000000000ull);
        }
    }
}

/* ---- kernels: merge path -------------------------------------------------------------- */

/* Number of lo keys among the first r outputs of the merge of lo and hi (ties: lo first),
 * 0 <= r <= nlo + nhi: the smallest a in [max(0, r-nhi), min(r, nlo)] with
 * lo[a] > hi[r-1-a] (or the upper end when there is none). */
template <typename K>
__host__ __device__ __forceinline__ long long merge_path(const K *lo, long long nlo,
                                                         const K *hi, long long nhi, long long r)
{
    /* lo[i] is among the first r outputs iff lo[i] <= hi[r-1-i] (gp_merge_path.h) */
    auto lo_first = [&](long long i, long long j) { return lo[i] <= hi[j]; };
    long long a = 0;
    GP_MERGE_PATH(a, nlo, nhi, r, lo_first);
    return a;
}

/* Merged outputs [rs, rs + cnt) (cnt <= MERGE_IPT, rs + cnt <= nlo + nhi) to f(q, key),
 * q = 0 .. cnt-1: diagonal search, then a sequential two-finger merge (ties: lo first). */
#pragma nv_exec_check_disable
template <typename K, class F>
__host__ __device__ __forceinline__ void merge_run(const K *lo, long long nlo, const K *hi,
                                                   long long nhi, long long rs, long long cnt,
                                                   F &&f)
{
    long long a = merge_path(lo, nlo, hi, nhi, rs);
    long long b = rs - a;
    for (int q = 0; q < MERGE_IPT; q++) { /* constant trip count: unrolled by nvcc */
        if (q < cnt) {
            bool take_lo;
            if (a >= nlo) take_lo = false;
            else if (b >= nhi) take_lo = true;
            else take_lo = lo[a] <= hi[b];
            f(q, take_lo ? lo[a++] : hi[b++]);
        }
    }
}

/* Writes merged[r0, r1) of lo and hi to out[0, r1-r0): blocks take MERGE_TILE outputs
 * (grid-stride), threads MERGE_IPT each, staged in padded shared memory so that the global
 * stores are coalesced. */
template <typename K>
__global__ void __launch_bounds__(MERGE_THREADS)
k_merge(const K *__restrict__ lo, long long nlo, const K *__restrict__ hi, long long nhi,
        long long r0, long long r1, K *__restrict__ out)
{
    __shared__ K buf[MERGE_TILE + MERGE_TILE / 32];
    for (long long bs = r0 + (long long)blockIdx.x * MERGE_TILE; bs < r1;
         bs += (long long)gridDim.x * MERGE_TILE) {
        const long long rs = bs + (long long)threadIdx.x * MERGE_IPT;
        if (rs < r1) {
            const long long cnt = r1 - rs < MERGE_IPT ? r1 - rs : MERGE_IPT;
            merge_run(lo, nlo, hi, nhi, rs, cnt, [&](int q, K v) {
                const int idx = (int)threadIdx.x * MERGE_IPT + q;
                buf[idx + (idx >> 5)] = v;
            });
        }
        __syncthreads();
        const long long left = r1 - bs;
        const int cntb = left < MERGE_TILE ? (int)left : MERGE_TILE;
        for (int q = threadIdx.x; q < cntb; q += MERGE_THREADS) out[bs - r0 + q] = buf[q + (q >> 5)];
        __syncthreads();
    }
}

/* ---- host side ------------------------------------------------------------------------ */

/* Grid-stride grid for `work` items of `threads` each: at most the device's resident
 * thread count, at least 1 block. */
int stride_grid(long long work, int threads, const gpc_devinfo *d)
{
    long long cap = (long long)d->sm_count * (d->max_threads_per_sm / threads);
    if (cap < 1) cap = 1;
    long long b = (work + threads - 1) / threads;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    return (int)b;
}

template <KeyOp OP> int run_keymap(void *buf, long long n, const gpc_devinfo *d)
{
    k_keymap<OP><<<stride_grid(n, MAP_THREADS, d), MAP_THREADS>>>(buf, n);
    CUDA_CHECK_LAUNCH("k_keymap");
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* 1 when the byte ranges [a, a+na) and [b, b+nb) overlap (both non-empty). */
bool ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return false;
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}

template <typename K>
int run_merge(const void *lo, long long nlo, const void *hi, long long nhi, long long r0,
              long long r1, void *out, const gpc_devinfo *d)
{
    long long b = (r1 - r0 + MERGE_TILE - 1) / MERGE_TILE;
    long long cap = (long long)d->sm_count * 64;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    k_merge<K><<<(unsigned)b, MERGE_THREADS>>>((const K *)lo, nlo, (const K *)hi, nhi, r0, r1,
                                                (K *)out);
    CUDA_CHECK_LAUNCH("k_merge");
    CUDA_CHECK(cudaDeviceSynchronize());
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

} // namespace

/* Maps buf[0, n) (type t, device memory) in place to order keys — gp_backend.to_keys on the
 * GPU: afterwards buf holds n uint32 keys (4-byte t) or n uint64 keys (8-byte t) equal to
 * gp_key_of(t, element) (floats: NaN -> all ones, negative -> ~bits, else bits | sign bit;
 * signed ints: sign bit flipped; unsigned: unchanged, no launch). Returns GP_OK, GP_EINVAL
 * (bad t, n < 0, NULL buf with n > 0) or GP_EDEVICE. */
extern "C" int gp_cuda_to_keys(gp_dtype t, void *buf, int64_t n)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !buf) GPC_EINVAL("buf is NULL with n = %lld", (long long)n);
    if (n == 0 || t == GP_U32 || t == GP_U64) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    switch (t) {
    case GP_F32: return run_keymap<TO_F32>(buf, n, d);
    case GP_F64: return run_keymap<TO_F64>(buf, n, d);
    case GP_I32: return run_keymap<FLIP32>(buf, n, d);
    case GP_I64: return run_keymap<FLIP64>(buf, n, d);
    default: return GP_OK;
    }
}

/* Maps n keys in buf (device memory; uint32 for 4-byte t, uint64 for 8-byte t) in place
 * back to elements of type t — gp_backend.from_keys on the GPU, the inverse of to_keys
 * (gp_key_to_elem per element; the NaN key comes back as the default quiet NaN
 * 0x7FC00000 / 0x7FF8000000000000). Returns GP_OK, GP_EINVAL or GP_EDEVICE. */
extern "C" int gp_cuda_from_keys(gp_dtype t, void *buf, int64_t n)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !buf) GPC_EINVAL("buf is NULL with n = %lld", (long long)n);
    if (n == 0 || t == GP_U32 || t == GP_U64) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    switch (t) {
    case GP_F32: return run_keymap<FROM_F32>(buf, n, d);
    case GP_F64: return run_keymap<FROM_F64>(buf, n, d);
    case GP_I32: return run_keymap<FLIP32>(buf, n, d);
    case GP_I64: return run_keymap<FLIP64>(buf, n, d);
    default: return GP_OK;
    }
}

/* Sorts n unsigned keys of `width` bytes (4: uint32, 8: uint64) ascending, in place, in
 * device memory — gp_backend.sort_keys on the GPU: the multi-block bitonic sort of the file
 * comment (Programs 6.17-6.19, mirror form, any n, no padding materialised, nothing at or
 * past keys[n] read or written). n <= 1: nothing. Returns GP_OK, GP_EINVAL (width not 4/8,
 * n < 0, NULL keys with n > 0, n beyond the grid limit) or GP_EDEVICE. */
extern "C" int gp_cuda_sort_keys(int width, void *keys, int64_t n)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !keys) GPC_EINVAL("keys is NULL with n = %lld", (long long)n);
    if (n <= 1) return GP_OK;
    return sort_mapped(width, keys, bn::MAP_NONE, n);
}

/* Sorts n elements of type t (device memory) ascending in place by their keys —
 * gp_backend.sort_values on the GPU: the bitonic sort of gp_cuda_sort_keys on the order
 * keys, with gp_key_of applied in the loads of the first pass (the tile sort) and its
 * inverse in the stores of the last (bn::TileKeysPolicy), so the result has the bits of
 * to_keys + sort_keys + from_keys without their two passes. n == 1: the two maps only (a
 * NaN comes back as the default quiet NaN, as there). Returns GP_OK, GP_EINVAL (bad t,
 * n < 0, NULL buf with n > 0, n beyond the grid limit) or GP_EDEVICE. */
extern "C" int gp_cuda_sort_values(gp_dtype t, void *buf, int64_t n)
{
    if (gp_dtype_size(t) == 0) GPC_EINVAL("invalid dtype %d", (int)t);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (n > 0 && !buf) GPC_EINVAL("buf is NULL with n = %lld", (long long)n);
    if (n == 0) return GP_OK;
    if (n == 1) {
        int rc = gp_cuda_to_keys(t, buf, n);
        return rc ? rc : gp_cuda_from_keys(t, buf, n);
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

/* Merge-split of two ascending key arrays — gp_backend.merge_split_keys on the GPU (merge
 * path, file comment).
 *
 * width: 4 (uint32 keys) or 8 (uint64); lo: nlo ascending keys (device), hi: nhi ascending
 * keys (device), 0 <= nlo, nhi <= m; out: device room for m keys, not overlapping lo / hi.
 * keep_upper == 0: out[0, c) = merged[0, c), c = min(m, nlo+nhi); keep_upper != 0:
 * out[0, c) = merged[m, nlo+nhi), c = max(0, nlo+nhi-m); merged = the stable merge with lo
 * before equal hi keys. out[c, m) is not written; *nout (host) = c. Returns GP_OK, GP_EINVAL
 * (width, negative counts, nlo > m or nhi > m, NULL pointers, overlap) or GP_EDEVICE. */
extern "C" int gp_cuda_merge_split_keys(int width, const void *lo, int64_t nlo,
                                        const void *hi, int64_t nhi, int64_t m,
                                        int keep_upper, void *out, int64_t *nout)
{
    if (width != 4 && width != 8) GPC_EINVAL("width = %d, not 4 or 8", width);
    if (nlo < 0 || nhi < 0 || m < 0)
        GPC_EINVAL("negative count (nlo = %lld, nhi = %lld, m = %lld)", (long long)nlo,
                   (long long)nhi, (long long)m);
    if (nlo > m || nhi > m)
        GPC_EINVAL("nlo = %lld or nhi = %lld exceeds m = %lld", (long long)nlo,
                   (long long)nhi, (long long)m);
    if (!nout) GPC_EINVAL("nout is NULL");
    if ((nlo > 0 && !lo) || (nhi > 0 && !hi))
        GPC_EINVAL("%s is NULL with a nonzero count", (nlo > 0 && !lo) ? "lo" : "hi");
    const long long total = (long long)nlo + nhi;
    const long long r0 = keep_upper ? m : 0;
    const long long r1 = keep_upper ? total : (total < m ? total : m);
    const long long cnt = r1 > r0 ? r1 - r0 : 0;
    if (cnt > 0 && !out) GPC_EINVAL("out is NULL");
    const size_t w = (size_t)width;
    if (ranges_overlap(out, (size_t)cnt * w, lo, (size_t)nlo * w) ||
        ranges_overlap(out, (size_t)cnt * w, hi, (size_t)nhi * w))
        GPC_EINVAL("out overlaps lo or hi");
    *nout = 0;
    if (cnt == 0) return GP_OK;
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    rc = width == 4 ? run_merge<uint32_t>(lo, nlo, hi, nhi, r0, r0 + cnt, out, d)
                    : run_merge<uint64_t>(lo, nlo, hi, nhi, r0, r0 + cnt, out, d);
    if (rc) return rc;
    *nout = cnt;
    return GP_OK;
}
