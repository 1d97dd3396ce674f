/* op_reduce.cu — the `reduce` operation of gpuprim_bench: the stats rows (be->stats with
 * and without the multiset hash, be->exact_sum, cub::DeviceReduce::Sum, Sum + Min + Max one
 * after another, the seed's Program 6.15 for f32, f64 and u32) and the trap_sample rows
 * (the uniform trapezoid rule of the samples: one be->stats call against CUB's Sum plus the
 * end correction), for each type and size on the same fresh data. For the integer types
 * our exact 128-bit sum is checked bit for bit against the CPU twin's on a host copy.
 */
#include "engine.cuh"
#include "gpuprim/exact_sum.h"
#include "seed_baselines.cuh"

#include <cub/device/device_reduce.cuh>

#include <cstring>

namespace gpb {

namespace {

/* One stats group: the input d_in[0, n) of type T and what the checks know of it. */
template <class T> struct ReduceCase {
    long long n;
    gp_dtype dt = dtype_of<T>();
    const char *tn = gp_dtype_name(dtype_of<T>());
    double bytes;
    DevBuf in;
    const T *d_in;
    ChkOut ck;
    T first, last;
    double h;                    /* the trapezoid's spacing, 1/(n-1) */
    double trap_ref;             /* the trapezoid rule from the check's sum */
    bool have_twin = false;      /* integer data: the CPU twin's record is in twin */
    double sabs = 0.0;           /* integer data: sum |x|, the scale of float64 errors */
    gp_stats twin{};
    gp_stats ours{};             /* our stats row's record (without the hash) */
    bool have_ours = false;      /* ... and it was validated */

    /* Generates the data, checks it and, for integer data, takes the CPU twin's record of
     * a host copy (the reference of the exact sum). */
    explicit ReduceCase(long long n_)
        : n(n_), bytes((double)n_ * sizeof(T)), in((size_t)n_ * sizeof(T))
    {
        d_in = in.as<T>();
        gen_data<T>(in.as<T>(), n, group_seed(dt, n, 1));
        ck = run_check<T>(d_in, n, nullptr);
        first = fetch(d_in, 0);
        last = fetch(d_in, n - 1);
        h = 1.0 / (double)(n - 1);
        trap_ref = h * (ck.sum - 0.5 * ((double)first + (double)last));
        if (gp_dtype_is_float(dt)) return;
        std::vector<T> hv((size_t)n);
        CK(cudaMemcpy(hv.data(), d_in, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost));
        CPUCK(gp_cpu_stats(dt, hv.data(), n, GP_STATS_NOHASH, &twin));
        for (const T v : hv) sabs += fabs((double)v);
        have_twin = true;
    }
    /* The error of a float64 sum a against b: relative to |b| for float data (sums far
     * from 0), to sum |x| (times the trapezoid's h) for integer data. */
    double sum_err(double a, double b, double mult = 1.0) const
    {
        return have_twin ? fabs(a - b) / (sabs * mult) : rel_err(a, b);
    }
    /* A fresh row of op (GB/s of the input bytes). */
    Row row(const char *op, const std::string &impl, Kind kind) const
    {
        return make_row(op, tn, n, impl, kind, bytes, 0, "GB/s");
    }
    /* cub::DeviceReduce::Sum of the input into *out (float64), CUB's calling convention. */
    cudaError_t cub_sum(void *tmp, size_t &tb, double *out) const
    {
        return cub::DeviceReduce::Sum(tmp, tb, d_in, out, (int)n, 0);
    }
};

/* The end correction of the uniform trapezoid rule after a CUB sum:
 * *t = h * (*sum - (y[0] + y[n-1]) / 2). One thread. */
template <class T>
__global__ void k_trap_end(const T *y, long long n, double h, const double *sum, double *t)
{
    *t = h * (*sum - 0.5 * ((double)y[0] + (double)y[n - 1]));
}

/* True when two stats records are bitwise the same in the reduced fields. */
bool same_stats(const gp_stats &a, const gp_stats &b)
{
    return a.count == b.count && a.nan_count == b.nan_count &&
           memcmp(&a.sum, &b.sum, sizeof a.sum) == 0 &&
           memcmp(&a.sumsq, &b.sumsq, sizeof a.sumsq) == 0 && a.min_key == b.min_key &&
           a.max_key == b.max_key && a.hash == b.hash && a.has_isum == b.has_isum &&
           a.isum.lo == b.isum.lo && a.isum.hi == b.isum.hi;
}

/* The uniform trapezoid rule as gpuprim_mpi computes it from a record with spacing h:
 * integer data from the exact sum (bracket rounded once), float data in float64. */
double trap_of(gp_dtype dt, const gp_stats &st, double h)
{
    if (!gp_dtype_is_float(dt) && st.has_isum) return h * gp_stats_int_trap_bracket(dt, &st);
    return h * (st.sum - 0.5 * (st.yfirst + st.ylast));
}

/* Our record st against the check (hash expected when hashed) and, for integer data, the
 * exact sum against the CPU twin's; extends r's note. */
template <class T> void check_stats(Row &r, const ReduceCase<T> &c, const gp_stats &st, bool hashed)
{
    const ChkOut &ck = c.ck;
    const unsigned long long hash = hashed ? ck.hash_keys : 0ull;
    EXPECT(r, st.count == c.n, "count %lld != %lld", (long long)st.count, c.n);
    EXPECT(r, st.nan_count == (int64_t)ck.nan, "nan_count %lld != %llu", (long long)st.nan_count,
           ck.nan);
    EXPECT(r, st.min_key == ck.min_key, "min_key %#llx != %#llx", (unsigned long long)st.min_key,
           ck.min_key);
    EXPECT(r, st.max_key == ck.max_key, "max_key %#llx != %#llx", (unsigned long long)st.max_key,
           ck.max_key);
    EXPECT(r, st.hash == hash, "hash %#llx != %#llx", (unsigned long long)st.hash, hash);
    EXPECT(r, c.sum_err(st.sum, ck.sum) <= TOL_F64, "sum %.17g vs check %.17g (rel %.2e)", st.sum,
           ck.sum, c.sum_err(st.sum, ck.sum));
    EXPECT(r, rel_err(st.sumsq, ck.sumsq) <= TOL_F64, "sumsq %.17g vs check %.17g", st.sumsq,
           ck.sumsq);
    EXPECT(r, st.first_key == gp_key_of(c.dt, &c.first) && st.yfirst == (double)c.first &&
                  st.ylast == (double)c.last,
           "first/last element wrong");
}

/* The exact sum of st against the CPU twin's, bit for bit; extends r's note. */
template <class T> void check_twin(Row &r, const ReduceCase<T> &c, const gp_stats &st)
{
    char dec[GP_I128_DEC_LEN] = "", tdec[GP_I128_DEC_LEN] = "";
    gp_i128_to_dec(st.isum, dec, sizeof dec);
    gp_i128_to_dec(c.twin.isum, tdec, sizeof tdec);
    EXPECT(r, st.has_isum == 1 && st.isum.lo == c.twin.isum.lo && st.isum.hi == c.twin.isum.hi,
           "exact sum %s != CPU twin's %s", dec, tdec);
    EXPECT(r, memcmp(&st.sum, &c.twin.sum, sizeof st.sum) == 0, "sum %.17g != CPU twin's %.17g",
           st.sum, c.twin.sum);
    r.note += format("; exact 128-bit sum %s = CPU twin's", dec);
}

/* ours: be->stats, without the multiset hash (the statistics the issue names) or with it
 * (what gpuprim_mpi computes when it sorts, to check that the sort kept the multiset). */
template <class T> void row_ours_stats(ReduceCase<T> &c, unsigned flags)
{
    const bool hashed = flags == 0u;
    run_row(c.row("stats", hashed ? "ours stats + multiset hash" : "ours stats", Kind::OURS),
            [&](Row &r) {
                gp_stats st{}, st0{};
                int calls = 0;
                bool det = true;
                time_op(r, noprep, [&] {
                    GP(G.be->stats(c.dt, c.d_in, c.n, flags, &st));
                    if (calls++ == 0)
                        st0 = st;
                    else if (!same_stats(st, st0))
                        det = false;
                });
                check_stats(r, c, st, hashed);
                EXPECT(r, det,
                       "results differ bitwise between repetitions (documented as deterministic)");
                r.note = hashed ? "sum,min,max,sumsq,nan + multiset hash in one pass"
                                : "sum,min,max,sumsq,nan in one pass";
                if (c.have_twin) check_twin(r, c, st);
                if (!hashed) {
                    c.ours = st;
                    c.have_ours = r.ok;
                }
            });
}

/* ours: the exact (reproducible) sum of --reproducible: a Kulisch accumulator per block,
 * correctly rounded at the end; the cost of bitwise reproducibility. */
template <class T> void row_exact_sum(ReduceCase<T> &c)
{
    run_row(c.row("stats", "ours exact_sum (reproducible)", Kind::OURS), [&](Row &r) {
        gp_superacc acc;
        time_op(r, noprep, [&] {
            gp_superacc_zero(&acc);
            GP(G.be->exact_sum(c.dt, c.d_in, c.n, GP_SA_VALUES, &acc));
        });
        acc.nan = 0;
        const double s = gp_superacc_to_double(&acc);
        EXPECT(r, c.sum_err(s, c.ck.sum) <= TOL_F64, "exact sum %.17g vs check %.17g (rel %.2e)", s,
               c.ck.sum, c.sum_err(s, c.ck.sum));
        if (c.have_twin) /* both the exact integer sum, rounded once */
            EXPECT(r, memcmp(&s, &c.twin.sum, sizeof s) == 0, "exact sum %.17g != CPU twin's %.17g",
                   s, c.twin.sum);
        r.note = "values only, exact and correctly rounded; bitwise the same for any split";
    });
}

/* cub::DeviceReduce::Sum (float64 result, copied to the host like ours). */
template <class T> void row_cub_sum(const ReduceCase<T> &c)
{
    run_row(c.row("stats", "cub Sum", Kind::REF), [&](Row &r) {
        DevBuf tmp;
        size_t tb = cub_temp(tmp, "cub::DeviceReduce::Sum", [&](void *t, size_t &b) {
            return c.cub_sum(t, b, static_cast<double *>(G.d_small));
        });
        const double s =
            time_result<double>(r, noprep, [&](double *d) { CK(c.cub_sum(tmp.get(), tb, d)); });
        EXPECT(r, c.sum_err(s, c.ck.sum) <= TOL_F64, "sum %.17g vs check %.17g", s, c.ck.sum);
        if (c.have_ours)
            EXPECT(r, c.sum_err(s, c.ours.sum) <= TOL_F64, "sum %.17g vs ours %.17g (rel %.2e)", s,
                   c.ours.sum, c.sum_err(s, c.ours.sum));
        r.note = "float64 accumulation; result copied to host";
    });
}

/* Sum + Min + Max one after another (3 passes), results copied to the host. */
template <class T> void row_cub_smm(const ReduceCase<T> &c)
{
    run_row(c.row("stats", "cub Sum+Min+Max", Kind::REF), [&](Row &r) {
        char *d = static_cast<char *>(G.d_small);
        double *d_sum = reinterpret_cast<double *>(d);
        T *d_min = reinterpret_cast<T *>(d + 8);
        T *d_max = reinterpret_cast<T *>(d + 16);
        const int n = (int)c.n;
        size_t t1 = 0, t2 = 0, t3 = 0;
        CK(cub::DeviceReduce::Sum(nullptr, t1, c.d_in, d_sum, n, 0));
        CK(cub::DeviceReduce::Min(nullptr, t2, c.d_in, d_min, n, 0));
        CK(cub::DeviceReduce::Max(nullptr, t3, c.d_in, d_max, n, 0));
        DevBuf tmp(std::max(t1, std::max(t2, t3)));
        time_op(r, noprep, [&] {
            size_t b1 = t1, b2 = t2, b3 = t3;
            CK(cub::DeviceReduce::Sum(tmp.get(), b1, c.d_in, d_sum, n, 0));
            CK(cub::DeviceReduce::Min(tmp.get(), b2, c.d_in, d_min, n, 0));
            CK(cub::DeviceReduce::Max(tmp.get(), b3, c.d_in, d_max, n, 0));
            CK(cudaMemcpyAsync(G.h_small, d, 24, cudaMemcpyDeviceToHost, 0));
        });
        const char *h = static_cast<const char *>(G.h_small);
        double s;
        T mn, mx;
        memcpy(&s, h, 8);
        memcpy(&mn, h + 8, sizeof(T));
        memcpy(&mx, h + 16, sizeof(T));
        EXPECT(r, c.sum_err(s, c.ck.sum) <= TOL_F64, "sum %.17g vs check %.17g", s, c.ck.sum);
        EXPECT(r, gp_key_of(c.dt, &mn) == c.ck.min_key, "min %.17g differs from the check's",
               (double)mn);
        EXPECT(r, gp_key_of(c.dt, &mx) == c.ck.max_key, "max %.17g differs from the check's",
               (double)mx);
        if (c.have_ours) {
            EXPECT(r, gp_key_of(c.dt, &mn) == c.ours.min_key, "min differs from ours");
            EXPECT(r, gp_key_of(c.dt, &mx) == c.ours.max_key, "max differs from ours");
        }
        r.note = "3 passes over the input";
    });
}

/* The seed's Program 6.15 array sum (one element per thread, one atomicAdd per block):
 * f32, f64 and u32, the types the seed has; accumulated in the data type, u64 for u32. */
template <class T> void row_seed_sum(const ReduceCase<T> &c)
{
    using A =
        typename std::conditional<std::is_same<T, uint32_t>::value, unsigned long long, T>::type;
    const bool f32acc = std::is_same<A, float>::value;
    const char *acc = f32acc ? "f32" : std::is_same<A, double>::value ? "f64" : "u64";
    run_row(c.row("stats", format("seed P6.15 sum (%s acc)", acc), Kind::SEED), [&](Row &r) {
        const double s =
            (double)time_result<A>(r, noprep, [&](A *d) { CK(seed::sum_p615(c.d_in, c.n, d)); });
        const long long nblk = (c.n + seed::SEED_BLOCK - 1) / seed::SEED_BLOCK;
        const double tol = f32acc ? tol_seq(TOL_F32ACC, nblk, true) : tol_seq(TOL_F64, nblk, false);
        EXPECT(r, rel_err(s, c.ck.sum) <= tol, "sum %.17g vs check %.17g (rel %.2e > %.0e)", s,
               c.ck.sum, rel_err(s, c.ck.sum), tol);
        r.note = format("sum only; rel err %.1e vs f64 check", rel_err(s, c.ck.sum));
    });
}

/* The sampled trapezoid: ours = one stats call + the end correction on the host; CUB =
 * Sum, an end-correction kernel and the copy of the result. */
template <class T> void rows_trap_sample(const ReduceCase<T> &c)
{
    run_row(c.row("trap_sample", "ours stats+ends", Kind::OURS), [&](Row &r) {
        gp_stats st{};
        time_op(r, noprep, [&] { GP(G.be->stats(c.dt, c.d_in, c.n, GP_STATS_NOHASH, &st)); });
        const double t = trap_of(c.dt, st, c.h);
        EXPECT(r, c.sum_err(t, c.trap_ref, c.h) <= TOL_F64, "integral %.17g vs check %.17g", t,
               c.trap_ref);
        r.note = format("h = 1/(n-1); integral %.10g", t);
    });
    run_row(c.row("trap_sample", "cub Sum+ends", Kind::REF), [&](Row &r) {
        double *d_sum = static_cast<double *>(G.d_small) + 1;
        DevBuf tmp;
        size_t tb = cub_temp(tmp, "cub::DeviceReduce::Sum",
                             [&](void *t, size_t &b) { return c.cub_sum(t, b, d_sum); });
        const double t = time_result<double>(r, noprep, [&](double *d) {
            CK(c.cub_sum(tmp.get(), tb, d_sum));
            k_trap_end<T><<<1, 1>>>(c.d_in, c.n, c.h, d_sum, d);
            CK_LAUNCH("k_trap_end");
        });
        EXPECT(r, c.sum_err(t, c.trap_ref, c.h) <= TOL_F64, "integral %.17g vs check %.17g", t,
               c.trap_ref);
        if (c.have_ours) {
            const double to = trap_of(c.dt, c.ours, c.h);
            EXPECT(r, c.sum_err(t, to, c.h) <= TOL_F64, "integral %.17g vs ours %.17g", t, to);
        }
        r.note = "Sum, end-correction kernel, copy";
    });
}

/* Every row of one type and size, in the table's order. */
template <class T> void bench_reduce(long long n)
{
    ReduceCase<T> c(n);
    for (const unsigned flags : {(unsigned)GP_STATS_NOHASH, 0u}) row_ours_stats(c, flags);
    row_exact_sum(c);
    row_cub_sum(c);
    row_cub_smm(c);
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                  std::is_same<T, uint32_t>::value)
        row_seed_sum(c);
    rows_trap_sample(c);
}

/* The groups: every size, every selected type. */
void run_reduce(const std::vector<long long> &sizes)
{
    for (long long n : sizes)
        for_types(G.opt.types, [&](auto tag) {
            using T = decltype(tag);
            run_group("stats", gp_dtype_name(dtype_of<T>()), n, (size_t)n * sizeof(T) + GROUP_SLACK,
                      [&] { bench_reduce<T>(n); });
        });
}

const OpRef REDUCE_REFS[] = {
    {"stats", "cub Sum", "cub Sum+Min+Max", "Sum", nullptr, false},
    {"trap_sample", "cub Sum+ends", nullptr, "Sum+ends", nullptr, false},
};

} // namespace

extern const Op OP_REDUCE = {"reduce", true, REDUCE_REFS, 2, run_reduce, nullptr, nullptr, nullptr};

} // namespace gpb
