/* op_trap.cu — the `trap` operation of gpuprim_bench: the trapezoid rule of a built-in
 * function over n points (trap_fn:x2 on [0, 1], trap_fn:sin on [0, pi], f64): be->trap_fn
 * against cub::DeviceReduce::TransformReduce over a counting iterator computing
 * w_i f(a + i h) with the same doubles, and for x2 the seed's naive one-atomicAdd-per-point
 * kernel and Program 6.15 in double and in float. Every result is held against the exact
 * integral and against ours.
 */
#include "engine.cuh"
#include "seed_baselines.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

namespace gpb {

namespace {

constexpr double TOL_EXACT = 1e-6; /* trapezoid vs the exact integral */

/* The trapezoid term of CUB's TransformReduce: w_i f(a + i h) with x = a + i*h rounded
 * like gpuprim's trap_fn (no FMA), w = 1/2 at i = 0 and i = last. */
template <int F> struct TrapTerm {
    double a, h;
    long long last;
    __device__ double operator()(long long i) const
    {
        const double x = __dadd_rn(a, __dmul_rn((double)i, h));
        const double w = (i == 0 || i == last) ? 0.5 : 1.0;
        return w * (F == GP_FN_X2 ? x * x : sin(x));
    }
};

/* One trap_fn group: integrand F over npts points. */
struct TrapCase {
    gp_func f;
    std::string op;     /* "trap_fn:x2", "trap_fn:sin" */
    double a, b, h;
    long long npts, ntrap;
    double exact;       /* the integral, from gp_func_exact */
    double w_ours = NAN; /* our weighted sum (the integral / h) */

    TrapCase(int F, long long n)
        : f((gp_func)F), op(std::string("trap_fn:") + gp_func_name((gp_func)F)), a(0.0),
          b(F == GP_FN_X2 ? 1.0 : 3.14159265358979323846), h((b - a) / (double)(n - 1)), npts(n),
          ntrap(n - 1), exact(gp_func_exact((gp_func)F, a, b))
    {
    }
    /* A fresh row (Gpts/s of the points). */
    Row row(const char *type, const char *impl, Kind kind) const
    {
        return make_row(op, type, npts, impl, kind, 0, (double)npts, "Gpts/s");
    }
    /* Another implementation's weighted sum w against the exact integral and against ours,
     * to tolerance tol. */
    void cross(Row &r, double w, double tol) const
    {
        EXPECT(r, rel_err(h * w, exact) <= std::max(tol, TOL_EXACT),
               "integral %.17g vs exact %.17g", h * w, exact);
        if (!std::isnan(w_ours))
            EXPECT(r, rel_err(w, w_ours) <= tol, "weighted sum %.17g vs ours %.17g (rel %.2e)", w,
                   w_ours, rel_err(w, w_ours));
        r.note = format("rel diff vs ours %.1e", std::isnan(w_ours) ? NAN : rel_err(w, w_ours));
    }
};

/* ours: be->trap_fn. */
void row_ours(TrapCase &c)
{
    run_row(c.row("f64", "ours trap_fn", Kind::OURS), [&](Row &r) {
        double w = NAN;
        time_op(r, noprep, [&] { GP(G.be->trap_fn(c.f, c.a, c.h, c.ntrap, 0, c.npts, &w)); });
        EXPECT(r, rel_err(c.h * w, c.exact) <= TOL_EXACT, "integral %.17g vs exact %.17g", c.h * w,
               c.exact);
        c.w_ours = w;
        r.note = format("integral - exact = %.1e", c.h * w - c.exact);
    });
}

/* cub::DeviceReduce::TransformReduce of TrapTerm<F> over a counting iterator. */
template <int F> void row_cub(const TrapCase &c)
{
    run_row(c.row("f64", "cub TransformReduce", Kind::REF), [&](Row &r) {
        const thrust::counting_iterator<long long> it(0);
        const TrapTerm<F> term{c.a, c.h, c.ntrap};
        double *d_w = static_cast<double *>(G.d_small);
        auto reduce = [&](void *t, size_t &b) {
            return cub::DeviceReduce::TransformReduce(t, b, it, d_w, (int)c.npts,
                                                      cuda::std::plus<double>{}, term, 0.0, 0);
        };
        DevBuf tmp;
        size_t tb = cub_temp(tmp, "cub::DeviceReduce::TransformReduce", reduce);
        c.cross(r, time_result<double>(r, noprep, [&](double *) { CK(reduce(tmp.get(), tb)); }),
                TOL_F64);
    });
}

/* A seed row: launch(d) leaves the weighted sum (type A) at d; held against ours to tol;
 * `extra` is appended to the note. */
template <class A, class Launch>
void row_seed(const TrapCase &c, const char *type, const char *impl, double tol, const char *extra,
              Launch &&launch)
{
    run_row(c.row(type, impl, Kind::SEED), [&](Row &r) {
        c.cross(r, (double)time_result<A>(r, noprep, launch), tol);
        r.note += extra;
    });
}

/* Every row of integrand F at npts points. */
template <int F> void bench_trap_fn(long long npts)
{
    TrapCase c(F, npts);
    row_ours(c);
    row_cub<F>(c);
    if (F != GP_FN_X2) return;
    const long long nblk = (npts + seed::SEED_BLOCK - 1) / seed::SEED_BLOCK; /* P6.15 atomics */
    const double a = c.a, h = c.h;
    row_seed<double>(c, "f64", "seed naive atomicAdd/point (f64)", tol_seq(TOL_F64, npts, false),
                     "", [&](double *d) { CK(seed::trap_naive_x2(a, h, npts, d)); });
    row_seed<double>(c, "f64", "seed P6.15 atomicAdd/block (f64)", tol_seq(TOL_F64, nblk, false),
                     "", [&](double *d) { CK(seed::trap_p615_x2(a, h, npts, d)); });
    row_seed<float>(c, "f32", "seed P6.15 atomicAdd/block (f32)", tol_seq(TOL_F32ACC, nblk, true),
                    " (float throughout, as the seed)",
                    [&](float *d) { CK(seed::trap_p615_x2((float)a, (float)h, npts, d)); });
}

/* The groups: x2 then sin at every size (f64 only; --types does not apply). */
void run_trap(const std::vector<long long> &sizes)
{
    for (long long n : sizes) {
        run_group("trap_fn:x2", "f64", n, GROUP_SLACK, [&] { bench_trap_fn<GP_FN_X2>(n); });
        run_group("trap_fn:sin", "f64", n, GROUP_SLACK, [&] { bench_trap_fn<GP_FN_SIN>(n); });
    }
}

const OpRef TRAP_REFS[] = {
    {"trap_fn:", "cub TransformReduce", nullptr, "TransformReduce", nullptr, true},
};

} // namespace

extern const Op OP_TRAP = {"trap", true, TRAP_REFS, 1, run_trap, nullptr, nullptr, nullptr};

} // namespace gpb
