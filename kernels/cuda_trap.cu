/* cuda_trap.cu — the CUDA backend's trapezoid rule: gp_backend.trap_x (samples y over
 * non-uniform coordinates x) and gp_backend.trap_fn (a built-in integrand on a uniform
 * grid, the chapter's Dev_trap), each one launch of the deterministic one-launch reduction
 * of cuda_reduce.cuh on float64 sums (blk::SumD).
 */
#include "cuda_reduce.cuh"

#include <string.h>

namespace {

using namespace red;

/* trap_x: sum over i in [0, n-1) of (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (the CPU twin's
 * expression) into result->dsum; x[0] and x[n-1] into result->ends. */
template <typename T>
__global__ void __launch_bounds__(RED_THREADS)
k_trap_x(const T *__restrict__ y, const double *__restrict__ x, long long n, Sink sk)
{
    double acc = 0.0;
    const long long tid = (long long)blockIdx.x * RED_THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * RED_THREADS;
    for (long long i = tid; i < n - 1; i += nth) {
        const double x0 = __ldg(x + i), x1 = __ldg(x + i + 1);
        const double y0 = (double)__ldg(y + i), y1 = (double)__ldg(y + i + 1);
        acc += (x1 - x0) * (y0 + y1) * 0.5;
    }
    acc = blk::block_reduce<blk::SumD, RED_THREADS>(acc);
    finish_last_block<blk::SumD>(acc, (double *)sk.parts, sk.ticket, &sk.result->dsum, x, n, 8,
                                 sk.result->ends);
}

template <int F> __device__ __forceinline__ double eval_fn(double x)
{
    if (F == GP_FN_X2) return x * x;
    if (F == GP_FN_SIN) return sin(x);
    if (F == GP_FN_EXP) return exp(x);
    return exp(-x * x); /* GP_FN_GAUSS */
}

/* trap_fn: sum over i in [i0, i1) of w_i f(a + i*h), w_i = 1/2 at i == 0 and i == n, else
 * 1; x = a + (double)i * h rounded exactly like the CPU twin (no FMA contraction). Result in
 * result->dsum. */
template <int F>
__global__ void __launch_bounds__(RED_THREADS)
k_trap_fn(double a, double h, long long n, long long i0, long long i1, Sink sk)
{
    double acc = 0.0;
    const long long tid = (long long)blockIdx.x * RED_THREADS + threadIdx.x;
    const long long nth = (long long)gridDim.x * RED_THREADS;
    for (long long i = i0 + tid; i < i1; i += nth) {
        const double xi = __dadd_rn(a, __dmul_rn((double)i, h));
        const double w = (i == 0 || i == n) ? 0.5 : 1.0;
        acc += w * eval_fn<F>(xi);
    }
    acc = blk::block_reduce<blk::SumD, RED_THREADS>(acc);
    finish_last_block<blk::SumD>(acc, (double *)sk.parts, sk.ticket, &sk.result->dsum,
                                 (const void *)NULL, 0, 8, sk.result->ends);
}

template <typename T>
int run_trap_x(const void *yv, const double *x, long long n, const gpc_devinfo *d, Scratch *s)
{
    int blocks = 1;
    int rc = grid_for((const void *)k_trap_x<T>, n - 1, 4, d, &blocks);
    if (rc) return rc;
    k_trap_x<T><<<blocks, RED_THREADS>>>((const T *)yv, x, n, sink_of(s));
    return wait_result("k_trap_x");
}

template <int F>
int run_trap_fn(double a, double h, long long n, long long i0, long long i1, const gpc_devinfo *d,
                Scratch *s)
{
    int blocks = 1;
    int rc = grid_for((const void *)k_trap_fn<F>, i1 - i0, 4, d, &blocks);
    if (rc) return rc;
    k_trap_fn<F><<<blocks, RED_THREADS>>>(a, h, n, i0, i1, sink_of(s));
    return wait_result("k_trap_fn");
}

} // namespace

/* Trapezoid rule over non-uniform samples — gp_backend.trap_x on the GPU.
 *
 * t: type of y; y: device pointer to n elements of type t; x: device pointer to n float64
 * coordinates; io: host record. Sets io->trap = sum over i in [0, n-1) of
 * (x[i+1]-x[i]) * (y[i]+y[i+1]) * 0.5 (y converted to double; deterministic one-launch sum),
 * io->xfirst = x[0], io->xlast = x[n-1], io->has_x = 1; other fields are kept. n == 1:
 * trap = 0, xfirst = xlast = x[0]; n == 0: trap = xfirst = xlast = 0, has_x = 1 (as the
 * CPU twin), no launch. Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL pointers) or
 * GP_EDEVICE. */
extern "C" int gp_cuda_trap_x(gp_dtype t, const void *y, const double *x, int64_t n,
                              gp_stats *io)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!io) GPC_EINVAL("io is NULL");
    if (n > 0 && !x) GPC_EINVAL("x is NULL with n = %lld", (long long)n);
    if (n == 0) { /* no samples: an empty x piece */
        io->trap = io->xfirst = io->xlast = 0.0;
        io->has_x = 1;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    Scratch *s = NULL;
    int rc = device_scratch(&d, &s);
    if (rc) return rc;

    rc = gpc_with_dtype(t, [&](auto z) { return run_trap_x<decltype(z)>(y, x, n, d, s); });
    if (rc) return rc;
    const ResultBlock r = *s->host;
    double x0, x1;
    memcpy(&x0, &r.ends[0], 8);
    memcpy(&x1, &r.ends[1], 8);
    io->trap = (n >= 2) ? r.dsum : 0.0;
    io->xfirst = x0;
    io->xlast = x1;
    io->has_x = 1;
    return GP_OK;
}

/* Weighted trapezoid sum of a built-in integrand — gp_backend.trap_fn on the GPU (the
 * chapter's Dev_trap, made deterministic).
 *
 * f: integrand (x*x, sin, exp, exp(-x*x) in float64 device math); a: left end; h: step;
 * n >= 0 trapezoids; [i0, i1) with 0 <= i0 <= i1 <= n+1: the points summed; wsum: host
 * result = sum over i in [i0, i1) of w_i f(a + (double)i*h), w_i = 1/2 at i == 0 and i == n,
 * else 1 (so the integral over [a, a+n*h] is h times the sum over all callers' ranges).
 * An empty range gives 0 with no launch. Returns GP_OK, GP_EINVAL (unknown f, n < 0, bad
 * range, NULL wsum) or GP_EDEVICE. */
extern "C" int gp_cuda_trap_fn(gp_func f, double a, double h, int64_t n, int64_t i0,
                               int64_t i1, double *wsum)
{
    if ((unsigned)f >= GP_NFUNCS) GPC_EINVAL("unknown integrand %d", (int)f);
    if (n < 0) GPC_EINVAL("n = %lld < 0", (long long)n);
    if (!wsum) GPC_EINVAL("wsum is NULL");
    if (!(0 <= i0 && i0 <= i1 && i1 - 1 <= n)) /* i1 <= n+1 without overflow */
        GPC_EINVAL("range [%lld, %lld) not inside [0, n+1 = %lld]", (long long)i0,
                   (long long)i1, (long long)n + 1);
    if (i0 == i1) {
        *wsum = 0.0;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    Scratch *s = NULL;
    int rc = device_scratch(&d, &s);
    if (rc) return rc;

    switch (f) {
    case GP_FN_X2: rc = run_trap_fn<GP_FN_X2>(a, h, n, i0, i1, d, s); break;
    case GP_FN_SIN: rc = run_trap_fn<GP_FN_SIN>(a, h, n, i0, i1, d, s); break;
    case GP_FN_EXP: rc = run_trap_fn<GP_FN_EXP>(a, h, n, i0, i1, d, s); break;
    case GP_FN_GAUSS: rc = run_trap_fn<GP_FN_GAUSS>(a, h, n, i0, i1, d, s); break;
    default: GPC_EINVAL("unknown integrand %d", (int)f);
    }
    if (rc) return rc;
    *wsum = s->host->dsum;
    return GP_OK;
}
