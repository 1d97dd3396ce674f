/* cuda_sort.cu — the CUDA backend's order keys, bitonic sort and merge-split.
 *
 * Bitonic sort (the chapter's Programs 6.17-6.19, in the "mirror" form of the network, so
 * that any n sorts without materialised padding). With P2 = the power of two >= n:
 *   for k = 2, 4, ..., P2:
 *     step 1:           inside each k-block, i (bit k/2 clear) against its mirror
 *                       j = i ^ (k-1);
 *     later steps s = k/4, ..., 1:   i (bit s clear) against j = i ^ s;
 *   every comparator puts the minimum at the lower index i < j; a comparator with j >= n is
 *   skipped, so the elements past n act as +inf and are never read or written.
 * Program 6.19's three kernels:
 *   (a) k_sort_tile (finish = 0): each block loads a tile of T keys (T a power of two,
 *       chosen from the device's shared memory: T x width <= 32 KiB, so T = 8192 for
 *       4-byte and 4096 for 8-byte keys on current GPUs) into dynamic shared memory,
 *       positions past n filled with the largest key (they compare >= every real key, so
 *       comparators against them never move a real key: the same as skipping them, and
 *       they are not written back), and runs every step of k = 2 .. min(T, P2) with
 *       __syncthreads() between steps; 512 threads, T/1024 comparators per thread a step;
 *   (b) k_sort_step: one launch per step whose stride (k/2 for the mirror step, else s) is
 *       >= T; the launch boundary is the grid-wide barrier. Comparator c (grid-stride,
 *       64-bit) has lower index i = c with a zero bit inserted at position log2(stride),
 *       partner j = i ^ (k-1) (mirror step) or i ^ s; skipped when j >= n; only the
 *       comparators with i < n are enumerated;
 *   (c) k_sort_tile (finish = 1): for k > T, once the stride is below T, each tile is
 *       loaded (padded as in (a)), strides T/2 .. 1 run in shared memory, written back.
 * Host driver (bitonic_plan): (a); then for k = 2T .. P2: (b) for strides k/2 .. T, then
 * (c). Launches: 1 + sum over the levels above T of (level + 1).
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
#include "cuda_internal.cuh"

#include <string.h>

namespace {

constexpr int SORT_THREADS = 512;            /* threads per tile block */
constexpr size_t SORT_SMEM_BUDGET = 32768;   /* bytes of shared memory per tile */
constexpr int STEP_THREADS = 256;            /* threads per block of global steps */
constexpr int MAP_THREADS = 256;             /* threads per block of key maps */
constexpr int MERGE_THREADS = 256;           /* threads per merge block */
constexpr int MERGE_IPT = 8;                 /* outputs per merge thread */
constexpr int MERGE_TILE = MERGE_THREADS * MERGE_IPT; /* outputs per merge block */


/* ---- per-thread work of the sort kernels (host and device, see the simulation note) -- */
/* The kernels below are thin: they call these helpers for their thread and add only the
 * __syncthreads() barriers, so a CPU program can run the very same index code for every
 * thread of every block in sequence (comparators of one step never share an element, so
 * running the threads of a step one after another is exact). */

/* Compare-exchange: minimum to s[i], maximum to s[j]. */
template <typename K> __host__ __device__ __forceinline__ void cas_shared(K *s, int i, int j)
{
    const K a = s[i], b = s[j];
    s[i] = a < b ? a : b;
    s[j] = a < b ? b : a;
}

/* Thread `tid` of `nthreads` loads tile keys[base, base+T) into s[0, T), padding past n
 * with the largest key. */
template <typename K>
__host__ __device__ __forceinline__ void tile_load(const K *keys, long long n, long long base,
                                                   K *s, int T, int tid, int nthreads)
{
    const K kmax = (K)~(K)0;
    for (int l = tid; l < T; l += nthreads) {
        const long long g = base + l;
        s[l] = g < n ? keys[g] : kmax;
    }
}

/* Thread `tid` of `nthreads` stores s[0, T) back to keys[base, base+T), below n only. */
template <typename K>
__host__ __device__ __forceinline__ void tile_store(K *keys, long long n, long long base,
                                                    const K *s, int T, int tid, int nthreads)
{
    for (int l = tid; l < T; l += nthreads) {
        const long long g = base + l;
        if (g < n) keys[g] = s[l];
    }
}

/* Thread `tid`'s comparators of one in-tile step of stride 2^ls (T/2 comparators in the
 * tile, c = tid, tid + nthreads, ...): lower index i = c with a zero bit at ls, partner
 * i ^ (2^(ls+1) - 1) for the mirror step, else i | 2^ls. */
template <typename K>
__host__ __device__ __forceinline__ void tile_pass(K *s, int half, int ls, bool mirror,
                                                   int tid, int nthreads)
{
    const int jx = mirror ? (2 << ls) - 1 : (1 << ls);
    for (int c = tid; c < half; c += nthreads) {
        const int i = (int)insert_zero_bit(c, ls);
        cas_shared(s, i, i ^ jx);
    }
}

/* The in-tile steps of kernels (a) and (c), in order: f(ls, mirror) per step.
 * finish == 0: for k = 2 .. 2^log_kmax: the mirror step (ls = log2(k)-1), then strides
 * k/4 .. 1; finish != 0: strides T/2 .. 1 (no mirror step). */
#pragma nv_exec_check_disable
template <class F>
__host__ __device__ __forceinline__ void tile_schedule(int logT, int log_kmax, int finish, F &&f)
{
    if (!finish) {
        for (int lk = 1; lk <= log_kmax; lk++) {
            f(lk - 1, true);
            for (int ls = lk - 2; ls >= 0; ls--) f(ls, false);
        }
    } else {
        for (int ls = logT - 1; ls >= 0; ls--) f(ls, false);
    }
}

/* Comparators c = c0, c0 + cstride, ... < ncomp of one global step of stride 2^ls:
 * lower index i = c with a zero bit at ls (< n by the choice of ncomp), partner
 * j = i ^ (2^(ls+1) - 1) (mirror) or i ^ 2^ls, skipped when j >= n. */
template <typename K>
__host__ __device__ __forceinline__ void step_pass(K *keys, long long n, long long ncomp, int ls,
                                                   bool mirror, long long c0, long long cstride)
{
    const long long s = 1ll << ls;
    const long long jx = mirror ? (2 * s - 1) : s;
    for (long long c = c0; c < ncomp; c += cstride) {
        const long long i = insert_zero_bit(c, ls);
        const long long j = i ^ jx;
        if (j < n) {
            const K a = keys[i], b = keys[j];
            if (b < a) {
                keys[i] = b;
                keys[j] = a;
            }
        }
    }
}

/* ---- kernels: bitonic sort ------------------------------------------------------------ */

/* Kernels (a) and (c): tile blockIdx.x = keys[blockIdx.x * T, +T), T = 2^logT, in dynamic
 * shared memory (T * sizeof(K) bytes). finish == 0: all steps of k = 2 .. 2^log_kmax;
 * finish != 0: strides T/2 .. 1 (plain XOR partners). Only keys below n are written. */
template <typename K>
__global__ void __launch_bounds__(SORT_THREADS)
k_sort_tile(K *__restrict__ keys, long long n, int logT, int log_kmax, int finish)
{
    extern __shared__ __align__(16) unsigned char sort_smem[];
    K *s = reinterpret_cast<K *>(sort_smem);
    const int T = 1 << logT;
    const long long base = (long long)blockIdx.x << logT;
    tile_load(keys, n, base, s, T, (int)threadIdx.x, SORT_THREADS);
    __syncthreads();
    tile_schedule(logT, log_kmax, finish, [&](int ls, bool mirror) {
        tile_pass(s, T >> 1, ls, mirror, (int)threadIdx.x, SORT_THREADS);
        __syncthreads();
    });
    tile_store(keys, n, base, s, T, (int)threadIdx.x, SORT_THREADS);
}

/* Kernel (b): one step of stride 2^ls over the whole array (comparators [0, ncomp), those
 * with lower index < n; grid-stride), mirror or plain partners, see step_pass. */
template <typename K>
__global__ void __launch_bounds__(STEP_THREADS)
k_sort_step(K *__restrict__ keys, long long n, long long ncomp, int ls, int mirror)
{
    step_pass(keys, n, ncomp, ls, mirror != 0,
              (long long)blockIdx.x * STEP_THREADS + threadIdx.x,
              (long long)gridDim.x * STEP_THREADS);
}

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
    long long a0 = r - nhi > 0 ? r - nhi : 0;
    long long a1 = r < nlo ? r : nlo;
    while (a0 < a1) {
        const long long mid = a0 + ((a1 - a0) >> 1);
        /* lo[mid] is among the first r outputs iff lo[mid] <= hi[r-1-mid] */
        if (lo[mid] <= hi[r - 1 - mid]) a0 = mid + 1;
        else a1 = mid;
    }
    return a0;
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

/* log2 of the tile size for keys of `width` bytes: the largest power of two T with
 * T * width <= min(SORT_SMEM_BUDGET, shared memory per block), between 2 * SORT_THREADS
 * and 32 * SORT_THREADS. */
int tile_log2(int width, const gpc_devinfo *d)
{
    size_t budget = d->smem_per_block < SORT_SMEM_BUDGET ? d->smem_per_block : SORT_SMEM_BUDGET;
    int lt = 0;
    while (((size_t)2 << lt) * (size_t)width <= budget) lt++;
    const int lmin = ceil_log2(2 * SORT_THREADS), lmax = ceil_log2(32 * SORT_THREADS);
    if (lt < lmin) lt = lmin;
    if (lt > lmax) lt = lmax;
    return lt;
}

/* The GPU executor of bitonic_plan. */
template <typename K> struct GpuSortOp {
    K *keys;
    long long n;
    int logT;
    const gpc_devinfo *d;

    int tile(int log_kmax)
    {
        const long long ntiles = (n + (1ll << logT) - 1) >> logT;
        const size_t smem = ((size_t)1 << logT) * sizeof(K);
        k_sort_tile<K><<<(unsigned)ntiles, SORT_THREADS, smem>>>(keys, n, logT, log_kmax, 0);
        CUDA_CHECK_LAUNCH("k_sort_tile (tile sort)");
        return 0;
    }
    int step(int ls, bool mirror)
    {
        const long long ncomp = comparators_below(n, ls);
        const int blocks = stride_grid(ncomp, STEP_THREADS, d);
        k_sort_step<K><<<blocks, STEP_THREADS>>>(keys, n, ncomp, ls, mirror ? 1 : 0);
        CUDA_CHECK_LAUNCH("k_sort_step");
        return 0;
    }
    int finish()
    {
        const long long ntiles = (n + (1ll << logT) - 1) >> logT;
        const size_t smem = ((size_t)1 << logT) * sizeof(K);
        k_sort_tile<K><<<(unsigned)ntiles, SORT_THREADS, smem>>>(keys, n, logT, 0, 1);
        CUDA_CHECK_LAUNCH("k_sort_tile (finish)");
        return 0;
    }
};

template <typename K> int run_sort(void *keys, long long n, const gpc_devinfo *d)
{
    const int logT = tile_log2((int)sizeof(K), d);
    const long long ntiles = (n + (1ll << logT) - 1) >> logT;
    if (ntiles > (long long)d->max_grid_x)
        GPC_EINVAL("n = %lld needs %lld tiles, more than the grid limit %d", n, ntiles,
                   d->max_grid_x);
    GpuSortOp<K> op{(K *)keys, n, logT, d};
    int rc = bitonic_plan(n, logT, op);
    if (rc) return rc;
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
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
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    return width == 4 ? run_sort<uint32_t>(keys, n, d) : run_sort<uint64_t>(keys, n, d);
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
