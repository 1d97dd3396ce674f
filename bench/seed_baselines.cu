/* seed_baselines.cu — the chapter's plain GPU versions (see seed_baselines.cuh), written
 * for gpuprim_bench. Correct on current GPUs (Volta and later: the warp-synchronous
 * shared-memory steps are separated by __syncwarp()), otherwise as plain as the seeds. */
#include "seed_baselines.cuh"

namespace seed {
namespace {

constexpr int WARPSZ = 32;
constexpr int NAIVE_BLOCK = 256;

/* ---- the naive trapezoid: one global atomicAdd per point ------------------------------ */

__global__ void __launch_bounds__(NAIVE_BLOCK)
k_trap_naive_x2(double a, double h, long long npts, double *acc)
{
    const long long i = (long long)blockIdx.x * NAIVE_BLOCK + threadIdx.x;
    if (i < npts) {
        const double x = __dadd_rn(a, __dmul_rn((double)i, h));
        const double w = (i == 0 || i == npts - 1) ? 0.5 : 1.0;
        atomicAdd(acc, w * (x * x));
    }
}

/* ---- Program 6.15 ---------------------------------------------------------------------- */

/* The chapter's Shared_mem_sum, race-free: the 32 lanes of one warp reduce vals[0, 32)
 * (this warp's slice of shared memory) with sequential addressing (lane l adds l + diff,
 * conflict-free); every lane must call it; returns the sum (valid in every lane). */
template <class A> __device__ __forceinline__ A shared_mem_sum(A *vals)
{
    const int lane = threadIdx.x % WARPSZ;
#pragma unroll
    for (int diff = WARPSZ / 2; diff > 0; diff >>= 1) {
        const A mine = vals[lane];
        const A other = vals[(lane + diff) % WARPSZ];
        __syncwarp();
        if (lane < diff) vals[lane] = mine + other;
        __syncwarp();
    }
    return vals[0];
}

/* Program 6.15's block: each thread brings one value v; warp sums in shared memory, the
 * warp sums in warp_sum_arr[my_warp], warp 0 sums them, thread 0 does the block's single
 * atomicAdd into *out. blockDim.x == SEED_BLOCK, every thread must call it. */
template <class A> __device__ __forceinline__ void p615_block(A v, A *out)
{
    __shared__ A thread_calcs[SEED_BLOCK];
    __shared__ A warp_sum_arr[WARPSZ];
    const int my_warp = threadIdx.x / WARPSZ;
    const int my_lane = threadIdx.x % WARPSZ;
    A *shared_vals = thread_calcs + my_warp * WARPSZ;

    shared_vals[my_lane] = v;
    __syncwarp();
    const A my_result = shared_mem_sum(shared_vals);
    if (my_lane == 0) warp_sum_arr[my_warp] = my_result;
    __syncthreads();
    if (my_warp == 0) {
        if (threadIdx.x >= blockDim.x / WARPSZ) warp_sum_arr[threadIdx.x] = A(0);
        __syncwarp();
        const A blk_result = shared_mem_sum(warp_sum_arr);
        if (threadIdx.x == 0) atomicAdd(out, blk_result);
    }
}

template <class A>
__global__ void __launch_bounds__(SEED_BLOCK)
k_trap_p615_x2(A a, A h, long long npts, A *acc)
{
    const long long my_i = (long long)blockIdx.x * SEED_BLOCK + threadIdx.x;
    A v = A(0);
    if (my_i < npts) {
        const A my_x = a + (A)my_i * h;
        const A w = (my_i == 0 || my_i == npts - 1) ? A(0.5) : A(1);
        v = w * (my_x * my_x);
    }
    p615_block(v, acc);
}

template <class T, class A>
__global__ void __launch_bounds__(SEED_BLOCK)
k_sum_p615(const T *__restrict__ in, long long n, A *acc)
{
    const long long my_i = (long long)blockIdx.x * SEED_BLOCK + threadIdx.x;
    const A v = my_i < n ? (A)in[my_i] : A(0);
    p615_block(v, acc);
}

/* ---- Program 6.17 / 6.19: one launch per (bf_sz, stage) -------------------------------- */

/* Thread th (of n/2) compares my_elt1 = th with a zero bit inserted at which_bit and
 * my_elt2 = my_elt1 ^ stage, increasing when (my_elt1 & bf_sz) == 0 (Compare_swap). */
template <class T>
__global__ void __launch_bounds__(SEED_BLOCK)
k_bitonic_stage(T *list, long long half, long long bf_sz, int which_bit, long long stage)
{
    const long long th = (long long)blockIdx.x * SEED_BLOCK + threadIdx.x;
    if (th >= half) return;
    const long long my_elt1 = ((th >> which_bit) << (which_bit + 1)) | (th & (stage - 1));
    const long long my_elt2 = my_elt1 ^ stage;
    const bool increasing = (my_elt1 & bf_sz) == 0;
    const T x = list[my_elt1], y = list[my_elt2];
    if (increasing ? (y < x) : (x < y)) {
        list[my_elt1] = y;
        list[my_elt2] = x;
    }
}

long long blocks_for(long long work, int threads) { return (work + threads - 1) / threads; }

template <class A> cudaError_t run_trap_p615(A a, A h, long long npts, A *d_acc)
{
    if (npts < 2 || !d_acc) return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(d_acc, 0, sizeof(A), 0);
    if (e != cudaSuccess) return e;
    k_trap_p615_x2<A><<<(unsigned)blocks_for(npts, SEED_BLOCK), SEED_BLOCK>>>(a, h, npts, d_acc);
    return cudaGetLastError();
}

template <class T, class A> cudaError_t run_sum_p615(const T *d_in, long long n, A *d_acc)
{
    if (n < 1 || !d_in || !d_acc) return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(d_acc, 0, sizeof(A), 0);
    if (e != cudaSuccess) return e;
    k_sum_p615<T, A><<<(unsigned)blocks_for(n, SEED_BLOCK), SEED_BLOCK>>>(d_in, n, d_acc);
    return cudaGetLastError();
}

template <class T> cudaError_t run_bitonic(T *d, long long n)
{
    if (!d || !bitonic_size_ok(n)) return cudaErrorInvalidValue;
    const long long half = n / 2;
    const unsigned grid = (unsigned)blocks_for(half, SEED_BLOCK);
    for (long long bf_sz = 2; bf_sz <= n; bf_sz *= 2) {
        for (long long stage = bf_sz / 2; stage > 0; stage /= 2) {
            int which_bit = 0;
            while ((1ll << which_bit) < stage) which_bit++;
            k_bitonic_stage<T><<<grid, SEED_BLOCK>>>(d, half, bf_sz, which_bit, stage);
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) return e;
        }
    }
    return cudaSuccess;
}

} // namespace

cudaError_t trap_naive_x2(double a, double h, long long npts, double *d_acc)
{
    if (npts < 2 || !d_acc) return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(d_acc, 0, sizeof(double), 0);
    if (e != cudaSuccess) return e;
    k_trap_naive_x2<<<(unsigned)blocks_for(npts, NAIVE_BLOCK), NAIVE_BLOCK>>>(a, h, npts, d_acc);
    return cudaGetLastError();
}

cudaError_t trap_p615_x2(float a, float h, long long npts, float *d_acc)
{
    return run_trap_p615<float>(a, h, npts, d_acc);
}

cudaError_t trap_p615_x2(double a, double h, long long npts, double *d_acc)
{
    return run_trap_p615<double>(a, h, npts, d_acc);
}

cudaError_t sum_p615(const float *d_in, long long n, float *d_acc)
{
    return run_sum_p615<float, float>(d_in, n, d_acc);
}

cudaError_t sum_p615(const double *d_in, long long n, double *d_acc)
{
    return run_sum_p615<double, double>(d_in, n, d_acc);
}

cudaError_t sum_p615(const uint32_t *d_in, long long n, unsigned long long *d_acc)
{
    return run_sum_p615<uint32_t, unsigned long long>(d_in, n, d_acc);
}

bool bitonic_size_ok(long long n) { return n >= 2 && (n & (n - 1)) == 0; }

cudaError_t bitonic_sort(float *d, long long n) { return run_bitonic<float>(d, n); }
cudaError_t bitonic_sort(double *d, long long n) { return run_bitonic<double>(d, n); }
cudaError_t bitonic_sort(uint32_t *d, long long n) { return run_bitonic<uint32_t>(d, n); }

} // namespace seed
