/* seed_baselines.cuh — the chapter's plain GPU versions, as baselines for gpuprim_bench.
 *
 * Written for the benchmark from the seed texts (shared/seeds): they are deliberately the
 * simple forms, not tuned:
 *   - the "original" trapezoid rule: one thread per point and one global atomicAdd per
 *     point into a single accumulator (Table 6.10's "Naive global atomicAdd");
 *   - Program 6.15: one element per thread, 1024-thread blocks, per-warp sums in shared
 *     memory (Shared_mem_sum), the warp sums in warp_sum_arr indexed by warp, warp 0 sums
 *     those, and ONE atomicAdd per block into the accumulator; as the trapezoid rule of
 *     x^2 (the seed's form) and as a plain array sum, in float or double;
 *   - the bitonic sort of Program 6.17 driven like Program 6.19 but with one kernel launch
 *     per (bf_sz, stage) pair for EVERY stride (no shared-memory tiles), 1024 threads per
 *     block, n/2 threads, power-of-two n only.
 * Everything runs on the legacy default stream (stream 0) and is asynchronous: the caller
 * records events around it and synchronises. Each function returns the first CUDA error
 * (launch configuration or an earlier asynchronous fault), cudaSuccess otherwise.
 */
#ifndef GPUPRIM_BENCH_SEED_BASELINES_CUH
#define GPUPRIM_BENCH_SEED_BASELINES_CUH

#include <cuda_runtime.h>
#include <stdint.h>

namespace seed {

/* Threads per block of the Program 6.15 kernels and of the bitonic stage kernel (the
 * chapter's 1024). */
constexpr int SEED_BLOCK = 1024;

/* Naive trapezoid sum of x^2: zeroes *d_acc, then one thread per point i in [0, npts)
 * adds w_i * x_i^2 (x_i = a + i*h in double without FMA contraction, w = 1/2 for i = 0
 * and i = npts-1, else 1) with one atomicAdd(double) to *d_acc. The integral is h times
 * *d_acc. npts >= 2. */
cudaError_t trap_naive_x2(double a, double h, long long npts, double *d_acc);

/* Program 6.15 trapezoid sum of x^2 in float (the seed's types): zeroes *d_acc, then
 * per point w_i * x_i^2 with x_i = a + i*h in float; per-block shared-memory reduction and
 * one atomicAdd(float) per block. npts >= 2. */
cudaError_t trap_p615_x2(float a, float h, long long npts, float *d_acc);

/* Program 6.15 trapezoid sum of x^2 in double (same structure, double throughout). */
cudaError_t trap_p615_x2(double a, double h, long long npts, double *d_acc);

/* Program 6.15 as an array sum: zeroes *d_acc, then each thread loads one element of
 * d_in[0, n), blocks reduce in shared memory and add their sum with one atomicAdd into
 * *d_acc (float accumulation for float data, the seed's choice). */
cudaError_t sum_p615(const float *d_in, long long n, float *d_acc);
/* Same for double data, double accumulation. */
cudaError_t sum_p615(const double *d_in, long long n, double *d_acc);
/* Same for uint32 data, exact 64-bit integer accumulation. */
cudaError_t sum_p615(const uint32_t *d_in, long long n, unsigned long long *d_acc);

/* 1 when n is a power of two >= 2 (what bitonic_sort accepts). */
bool bitonic_size_ok(long long n);

/* Program 6.17's network, launched as in Program 6.19 but one kernel per (bf_sz, stage)
 * for every stride: sorts d[0, n) ascending in place by the type's operator< (no NaNs
 * expected: a NaN makes the result unspecified). n must satisfy bitonic_size_ok (else
 * cudaErrorInvalidValue, nothing launched). log2(n)(log2(n)+1)/2 launches. */
cudaError_t bitonic_sort(float *d, long long n);
/* Same for double. */
cudaError_t bitonic_sort(double *d, long long n);
/* Same for uint32. */
cudaError_t bitonic_sort(uint32_t *d, long long n);

} // namespace seed

#endif /* GPUPRIM_BENCH_SEED_BASELINES_CUH */
