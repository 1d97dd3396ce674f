/* dist_variants.cu — what a histogram's and a radix select's per-element work costs on this
 * GPU: the choices behind kernels/cuda_hist.cu and cuda_select.cu. On uniform data (float32
 * over [-1, 3) and int32 over all values, as gpuprim_bench's), it times variants of a
 * 1024-bin histogram kernel (with and without numpy's edge corrections, a thread's run of one
 * bin, lane or warp copies of the counters, loads in flight, warp-aggregated atomics with
 * __match_any_sync, no atomics at all) and of the select's first pass (the top 11 bits of the
 * order keys), each with its share of the device's read rate. Self-contained: its kernels are
 * simplified copies, not the library's (hist_rule.h's index and corrections are shared).
 *
 * usage: gpuprim_probe_dist_variants [LOG2N]   (default 28)
 * Prints one line per variant: its median time of 10 after an L2 flush, GB/s, and whether its
 * counts sum to n. Exit 0, or 1 with a message naming the failed CUDA call.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "hist_rule.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

constexpr int THREADS = 256;

__device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
__global__ void k_genf(float *o, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        o[i] = (float)(-1.0 + 4.0 * ((double)(mix64(i) >> 11) * 0x1.0p-53));
}
__global__ void k_geni(int *o, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        o[i] = (int)(unsigned)(mix64(i) >> 32);
}

struct HA {
    float lo, hi, den, scale, nf;
    int nb;
};

enum { RUN = 1, FIX = 2, WARPC = 4, NOATOM = 8, MATCH = 16, FASTIDX = 32 };

template <int F>
__device__ __forceinline__ int bin_of(float x, const HA &a, const float *e)
{
    if (!(x >= a.lo && x <= a.hi)) return x != x ? -1 : (x < a.lo ? a.nb : a.nb + 1);
    const float num = __fsub_rn(x, a.lo);
    int i;
    const float fa = __fmul_rn(num, a.scale);
    if (F & FASTIDX) {
        i = (int)fa;
        const float fr = fa - (float)i, m = fa * 0x1p-19f;
        if (!(fr > m && fr < 1.0f - m))
            i = (int)gp_hist_trunc((double)__fmul_rn(__fdiv_rn(num, a.den), a.nf), a.nb);
        else if (i >= a.nb) i = a.nb - 1;
    } else {
        const float m = __fmul_rn(fa, 0x1p-19f);
        const float lo = __fsub_rn(fa, m), hi = __fadd_rn(fa, m);
        if (floorf(lo) == floorf(hi)) i = lo < a.nf ? (int)lo : a.nb - 1;
        else i = (int)gp_hist_trunc((double)__fmul_rn(__fdiv_rn(num, a.den), a.nf), a.nb);
    }
    if (F & FIX) return (int)gp_hist_fix_f32(x, e, i, a.nb);
    return i;
}

template <typename C> struct RunOf {
    int slot; C n;
    __device__ void init() { slot = -1; n = 0; }
    __device__ __forceinline__ void add(C *to, int s)
    {
        if (s == slot) { n++; return; }
        if (slot >= 0) atomicAdd(to + slot, n);
        slot = s; n = 1;
    }
    __device__ void flush(C *to) { if (slot >= 0) atomicAdd(to + slot, n); slot = -1; }
};

template <int F> __device__ __forceinline__ void count(unsigned *mine, RunOf<unsigned> &r, int b)
{
    if (F & NOATOM) { if (b == 123456) mine[0] = 1; return; }
    if (F & MATCH) {
        const unsigned peers = __match_any_sync(0xffffffffu, b);
        if ((threadIdx.x & 31) == __ffs(peers) - 1 && b >= 0) atomicAdd(mine + b, __popc(peers));
        return;
    }
    if (b < 0) return;
    if (F & RUN) r.add(mine, b);
    else atomicAdd(mine + b, 1u);
}

// U 16-byte loads per thread per step; grid-stride
template <int F, int U>
__global__ void __launch_bounds__(THREADS) k_hist(const float *__restrict__ y, long long n, HA a,
                                                  const float *__restrict__ ge,
                                                  unsigned long long *g, int copies)
{
    extern __shared__ unsigned sm[];
    const int nb = a.nb, stride = (nb + 2 + 31) / 32 * 32 + 1;
    float *se = (float *)sm;
    for (int i = threadIdx.x; i <= nb; i += THREADS) se[i] = ge[i];
    unsigned *sc = sm + nb + 1;
    for (int i = threadIdx.x; i < copies * stride; i += THREADS) sc[i] = 0;
    const int cid = (F & WARPC) ? (threadIdx.x >> 5) % copies : (threadIdx.x & 31) % copies;
    unsigned *mine = sc + cid * stride;
    __syncthreads();
    RunOf<unsigned> r; r.init();
    const long long nv = n / 4, tid = blockIdx.x * (long long)THREADS + threadIdx.x,
                    nth = (long long)gridDim.x * THREADS;
    const float4 *yv = (const float4 *)y;
    long long c = tid;
    for (; c + (U - 1) * nth < nv; c += U * nth) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldg(yv + c + u * nth);
#pragma unroll
        for (int u = 0; u < U; u++) {
            count<F>(mine, r, bin_of<F>(v[u].x, a, se));
            count<F>(mine, r, bin_of<F>(v[u].y, a, se));
            count<F>(mine, r, bin_of<F>(v[u].z, a, se));
            count<F>(mine, r, bin_of<F>(v[u].w, a, se));
        }
    }
    for (; c < nv; c += nth) {
        const float4 v = __ldg(yv + c);
        count<F>(mine, r, bin_of<F>(v.x, a, se));
        count<F>(mine, r, bin_of<F>(v.y, a, se));
        count<F>(mine, r, bin_of<F>(v.z, a, se));
        count<F>(mine, r, bin_of<F>(v.w, a, se));
    }
    if ((F & RUN) && !(F & (NOATOM | MATCH))) r.flush(mine);
    __syncthreads();
    for (int i = threadIdx.x; i < nb + 2; i += THREADS) {
        unsigned long long s = 0;
        for (int k = 0; k < copies; k++) s += sc[k * stride + i];
        if (s) atomicAdd(g + i, s);
    }
}

// radix select pass 1: top 11 bits of the order key
__device__ __forceinline__ unsigned keyf(float v)
{
    const unsigned u = __float_as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
template <int F, int U, typename T>
__global__ void __launch_bounds__(THREADS) k_sel(const T *__restrict__ y, long long n,
                                                 unsigned long long *g, int copies)
{
    extern __shared__ unsigned sm[];
    const int stride = 2048 + 1;
    for (int i = threadIdx.x; i < copies * stride; i += THREADS) sm[i] = 0;
    const int cid = (F & WARPC) ? (threadIdx.x >> 5) % copies : (threadIdx.x & 31) % copies;
    unsigned *mine = sm + cid * stride;
    __syncthreads();
    RunOf<unsigned> r; r.init();
    const long long nv = n / 4, tid = blockIdx.x * (long long)THREADS + threadIdx.x,
                    nth = (long long)gridDim.x * THREADS;
    const uint4 *yv = (const uint4 *)y;
    auto dig = [](unsigned u) -> int {
        if (sizeof(T) == 4 && std::is_same<T, float>::value)
            return (int)(((u & 0x80000000u) ? ~u : (u | 0x80000000u)) >> 21);
        return (int)((u ^ 0x80000000u) >> 21);
    };
    long long c = tid;
    for (; c + (U - 1) * nth < nv; c += U * nth) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldg(yv + c + u * nth);
#pragma unroll
        for (int u = 0; u < U; u++) {
            count<F>(mine, r, dig(v[u].x));
            count<F>(mine, r, dig(v[u].y));
            count<F>(mine, r, dig(v[u].z));
            count<F>(mine, r, dig(v[u].w));
        }
    }
    for (; c < nv; c += nth) {
        const uint4 v = __ldg(yv + c);
        count<F>(mine, r, dig(v.x));
        count<F>(mine, r, dig(v.y));
        count<F>(mine, r, dig(v.z));
        count<F>(mine, r, dig(v.w));
    }
    if ((F & RUN) && !(F & (NOATOM | MATCH))) r.flush(mine);
    __syncthreads();
    for (int i = threadIdx.x; i < 2048; i += THREADS) {
        unsigned long long s = 0;
        for (int k = 0; k < copies; k++) s += sm[k * stride + i];
        if (s) atomicAdd(g + i, s);
    }
}

static char *g_flush;
static float time_it(void (*fn)(void *), void *ctx, int reps)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int r = 0; r < reps + 2; r++) {
        CK(cudaMemset(g_flush, r, 256 << 20));
        CK(cudaEventRecord(a));
        fn(ctx);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

struct Ctx {
    const void *y;
    long long n;
    HA a;
    const float *e;
    unsigned long long *g;
    int copies, blocks;
    size_t smem;
    const void *kern;
};

template <int F, int U> static void run_hist(void *p)
{
    Ctx *c = (Ctx *)p;
    CK(cudaMemsetAsync(c->g, 0, 8 * 2048));
    k_hist<F, U><<<c->blocks, THREADS, c->smem>>>((const float *)c->y, c->n, c->a, c->e, c->g,
                                                 c->copies);
}
template <int F, int U, typename T> static void run_sel(void *p)
{
    Ctx *c = (Ctx *)p;
    CK(cudaMemsetAsync(c->g, 0, 8 * 2048));
    k_sel<F, U, T><<<c->blocks, THREADS, c->smem>>>((const T *)c->y, c->n, c->g, c->copies);
}

static int g_sms;
template <int F, int U>
static void hist_row(const char *name, Ctx c, int copies, int reps)
{
    c.copies = copies;
    c.smem = (size_t)(c.a.nb + 1) * 4 + (size_t)copies * ((c.a.nb + 2 + 31) / 32 * 32 + 1) * 4;
    const void *k = (const void *)k_hist<F, U>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, THREADS, c.smem));
    c.blocks = g_sms * per;
    const float ms = time_it(run_hist<F, U>, &c, reps);
    std::vector<unsigned long long> h(c.a.nb + 2);
    CK(cudaMemcpy(h.data(), c.g, 8 * h.size(), cudaMemcpyDeviceToHost));
    unsigned long long s = 0;
    for (auto x : h) s += x;
    printf("hist f32 n=%lld %-28s copies %d U %d blocks/SM %d: %.4f ms, %.1f GB/s, sum %s\n",
           c.n, name, copies, U, per, ms, c.n * 4.0 / ms / 1e6,
           (F & NOATOM) ? "-" : s == (unsigned long long)c.n ? "ok" : "BAD");
}
template <int F, int U, typename T>
static void sel_row(const char *name, Ctx c, int copies, int reps)
{
    c.copies = copies;
    c.smem = (size_t)copies * 2049 * 4;
    const void *k = (const void *)k_sel<F, U, T>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, THREADS, c.smem));
    c.blocks = g_sms * per;
    const float ms = time_it(run_sel<F, U, T>, &c, reps);
    std::vector<unsigned long long> h(2048);
    CK(cudaMemcpy(h.data(), c.g, 8 * h.size(), cudaMemcpyDeviceToHost));
    unsigned long long s = 0, mx = 0;
    for (auto x : h) { s += x; mx = std::max(mx, x); }
    printf("sel1 %s n=%lld %-26s copies %d U %d blocks/SM %d: %.4f ms, %.1f GB/s, sum %s, "
           "top %.3f\n",
           sizeof(T) == 4 && std::is_same<T, float>::value ? "f32" : "i32", c.n, name, copies, U,
           per, ms, c.n * 4.0 / ms / 1e6,
           (F & NOATOM) ? "-" : s == (unsigned long long)c.n ? "ok" : "BAD", (double)mx / c.n);
}

int main(int argc, char **argv)
{
    const int lg = argc > 1 ? atoi(argv[1]) : 28;
    const long long n = 1ll << lg;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    g_sms = p.multiProcessorCount;
    float *yf;
    int *yi;
    unsigned long long *g;
    float *e;
    CK(cudaMalloc(&yf, n * 4));
    CK(cudaMalloc(&yi, n * 4));
    CK(cudaMalloc(&g, 8 * 4096));
    CK(cudaMalloc(&e, 4 * 2048));
    CK(cudaMalloc(&g_flush, 256 << 20));
    k_genf<<<1024, 256>>>(yf, n);
    k_geni<<<1024, 256>>>(yi, n);
    CK(cudaDeviceSynchronize());
    const int nb = 1024;
    std::vector<float> he(nb + 1);
    const double lo = -1.0, hi = 3.0;
    for (int i = 0; i <= nb; i++) he[i] = (float)(lo + (hi - lo) * i / nb);
    CK(cudaMemcpy(e, he.data(), 4 * (nb + 1), cudaMemcpyHostToDevice));
    Ctx c{};
    c.y = yf;
    c.n = n;
    c.a.lo = -1.0f; c.a.hi = 3.0f; c.a.den = 4.0f; c.a.nf = (float)nb; c.a.scale = nb / 4.0f;
    c.a.nb = nb;
    c.e = e;
    c.g = g;
    const int R = 10;
    hist_row<RUN | FIX, 4>("current (run+fix)", c, 4, R);
    hist_row<RUN | FIX, 4>("current, 1 copy", c, 1, R);
    hist_row<RUN | FIX, 4>("current, 8 copies", c, 8, R);
    hist_row<RUN | FIX | WARPC, 4>("warp copies", c, 8, R);
    hist_row<FIX, 4>("no run", c, 4, R);
    hist_row<FIX, 4>("no run, 1 copy", c, 1, R);
    hist_row<RUN, 4>("no fix", c, 4, R);
    hist_row<0, 4>("no run no fix", c, 4, R);
    hist_row<FIX | FASTIDX, 4>("no run, fastidx", c, 4, R);
    hist_row<RUN | FIX, 8>("current U8", c, 4, R);
    hist_row<FIX, 2>("no run U2", c, 4, R);
    hist_row<FIX, 8>("no run U8", c, 4, R);
    hist_row<FIX | NOATOM, 4>("bin only, no atomics", c, 4, R);
    hist_row<NOATOM, 4>("index only, no atomics", c, 4, R);
    hist_row<FIX | MATCH, 4>("match_any", c, 4, R);
    for (int t = 0; t < 2; t++) {
        c.y = t ? (const void *)yi : (const void *)yf;
#define SROW(F, U, name, cp) \
    (t ? sel_row<F, U, int>(name, c, cp, R) : sel_row<F, U, float>(name, c, cp, R))
        SROW(RUN, 4, "current (run, 4 lane copies)", 4);
        SROW(RUN, 4, "run, 1 copy", 1);
        SROW(RUN, 4, "run, 8 lane copies", 8);
        SROW(RUN | WARPC, 4, "run, 8 warp copies", 8);
        SROW(0, 4, "no run, 4 copies", 4);
        SROW(0, 4, "no run, 8 copies", 8);
        SROW(MATCH, 4, "match_any, 1 copy", 1);
        SROW(MATCH, 4, "match_any, 4 copies", 4);
        SROW(NOATOM, 4, "no atomics", 4);
        SROW(RUN, 8, "current U8", 4);
    }
    return 0;
}
