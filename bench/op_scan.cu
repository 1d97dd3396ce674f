/* op_scan.cu — the `scan` operation of gpuprim_bench: the inclusive prefix sum of n elements
 * of type T into the type the scans write (float32 -> float64, float64 -> float64, int32 ->
 * int64, uint32 -> uint64): be->cumsum with each pass across blocks (the single-pass
 * decoupled look-back and reduce-then-scan, chosen with gp_scan_algo_set) against
 * cub::DeviceScan::InclusiveSum over a transform iterator that reads T and gives the output
 * type, so both sides read the same input and accumulate and write the same type. Rows are
 * GB/s of the bytes read and written (n * (sizeof(T) + 8)); the note gives the share of the
 * device-to-device copy floor (the ceiling's copy rate, read + write bytes). Every output is
 * held against the CPU twin's on a host copy: integers bit for bit, floats within twice the
 * bound of gpuprim/kernels.h (each side within 2^-45 * sum |x| of the exact prefix). The
 * 64-bit integer types are not run: their random data's sums leave int64 / uint64, where ours
 * stops with an overflow index and CUB wraps.
 */
#include "engine.cuh"
#include "tuning.h"

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <cstring>

namespace gpb {

namespace {

/* The scans' output type of T. */
template <class T> struct ScanOut { typedef double type; };
template <> struct ScanOut<int32_t> { typedef int64_t type; };
template <> struct ScanOut<uint32_t> { typedef uint64_t type; };

/* T read as the output type (CUB's input iterator). */
template <class T> struct ToOut {
    typedef typename ScanOut<T>::type O;
    __host__ __device__ O operator()(T v) const { return (O)v; }
};

/* One scan group: the input, the output buffer, and the twin's output on the host. */
template <class T> struct ScanCase {
    typedef typename ScanOut<T>::type O;
    long long n;
    gp_dtype dt = dtype_of<T>();
    const char *tn = gp_dtype_name(dtype_of<T>());
    DevBuf in, out;
    std::vector<T> host;       /* a copy of the input */
    std::vector<O> twin;       /* the CPU twin's outputs */

    explicit ScanCase(long long n_)
        : n(n_), in((size_t)n_ * sizeof(T)), out((size_t)n_ * 8), host((size_t)n_), twin((size_t)n_)
    {
        gen_data<T>(in.as<T>(), n, group_seed(dt, n, 3));
        CK(cudaMemcpy(host.data(), in.get(), (size_t)n * sizeof(T), cudaMemcpyDeviceToHost));
        gp_scan_carry c = gp_scan_carry_start(0);
        CPUCK(gp_cpu_cumsum(dt, host.data(), n, &c, twin.data()));
    }
    /* The multiset hash of the output's bits (the check kernel's), for repeated runs. */
    unsigned long long out_hash() const
    {
        return run_check<O>(out.template as<O>(), n, nullptr).hash_bits;
    }
    /* A fresh row: GB/s of the bytes read and written. */
    Row row(const std::string &impl, Kind kind) const
    {
        const char *ot = gp_dtype_is_float(dt) ? "f64" : dt == GP_I32 ? "i64" : "u64";
        return make_row("scan", format("%s->%s", tn, ot).c_str(), n, impl, kind,
                        (double)n * (double)(sizeof(T) + 8), 0, "GB/s");
    }
    /* The device output against the twin's; extends r's note with the largest difference. */
    void validate(Row &r) const
    {
        std::vector<O> got((size_t)n);
        CK(cudaMemcpy(got.data(), out.get(), (size_t)n * 8, cudaMemcpyDeviceToHost));
        if (!gp_dtype_is_float(dt)) {
            EXPECT(r, memcmp(got.data(), twin.data(), (size_t)n * 8) == 0,
                   "integer prefix sums differ from the CPU twin's");
            return;
        }
        double worst = 0.0, absum = 0.0;
        long long bad = -1;
        for (long long i = 0; i < n; i++) {
            absum += fabs((double)host[(size_t)i]);
            const double d = fabs((double)got[(size_t)i] - (double)twin[(size_t)i]);
            const double rel = absum > 0 ? d / absum : d;
            if (rel > worst) worst = rel;
            if (!(rel <= 0x1.0p-44) && bad < 0) bad = i;
        }
        EXPECT(r, bad < 0, "element %lld: %.17g, CPU twin %.17g (beyond 2 x 2^-45 sum |x|)", bad,
               bad < 0 ? 0.0 : (double)got[(size_t)bad], bad < 0 ? 0.0 : (double)twin[(size_t)bad]);
        add_note(r, format("max |ours - twin| / sum|x| = %.1e", worst));
    }
};

/* The share of the copy floor of a row timed over `bytes`, as a note. */
void note_copy_floor(Row &r)
{
    if (!(G.copy_gbps > 0) || !(r.med > 0)) return;
    const double gbps = r.bytes / (r.med * 1e-3) / 1e9;
    add_note(r, format("%.0f%% of the copy floor", 100.0 * gbps / G.copy_gbps));
}

/* ours: be->cumsum with pass algo; a second run's bits checked against the first's. */
template <class T> void row_ours(const ScanCase<T> &c, int algo, const char *impl)
{
    run_row(c.row(impl, Kind::OURS), [&](Row &r) {
        gp_scan_algo_set(algo);
        unsigned long long first = 0;
        bool once = false;
        time_op(r, noprep, [&] {
            gp_scan_carry k = gp_scan_carry_start(0);
            GP(G.be->cumsum(c.dt, c.in.get(), c.n, &k, c.out.get()));
            if (!once) { /* the warm-up run, untimed */
                first = c.out_hash();
                once = true;
            }
        });
        gp_scan_algo_set(0);
        EXPECT(r, first == c.out_hash(), "results differ bitwise between repetitions (documented "
                                         "as deterministic)");
        c.validate(r);
        note_copy_floor(r);
    });
}

/* cub::DeviceScan::InclusiveSum over T read as the output type. */
template <class T> void row_cub(const ScanCase<T> &c)
{
    typedef typename ScanOut<T>::type O;
    run_row(c.row("cub InclusiveSum", Kind::REF), [&](Row &r) {
        const thrust::transform_iterator<ToOut<T>, const T *> it(c.in.template as<T>(), ToOut<T>());
        O *d_out = c.out.template as<O>();
        auto scan = [&](void *t, size_t &b) {
            return cub::DeviceScan::InclusiveSum(t, b, it, d_out, c.n, 0);
        };
        DevBuf tmp;
        size_t tb = cub_temp(tmp, "cub::DeviceScan::InclusiveSum", scan);
        time_op(r, noprep, [&] { CK(scan(tmp.get(), tb)); });
        c.validate(r);
        note_copy_floor(r);
    });
}

/* Every row of one type and size. */
template <class T> void bench_scan(long long n)
{
    ScanCase<T> c(n);
    row_ours(c, GP_SCAN_ALGO_LOOKBACK, "ours cumsum (look-back)");
    row_ours(c, GP_SCAN_ALGO_RTS, "ours cumsum (reduce-then-scan)");
    row_cub(c);
}

/* The groups: every size, the selected types among f32, f64, i32, u32. */
void run_scan(const std::vector<long long> &sizes)
{
    constexpr unsigned allowed =
        type_bit(GP_F32) | type_bit(GP_F64) | type_bit(GP_I32) | type_bit(GP_U32);
    for (long long n : sizes)
        for_types<allowed>(G.opt.types, [&](auto tag) {
            using T = decltype(tag);
            run_group("scan", gp_dtype_name(dtype_of<T>()), n,
                      (size_t)n * (sizeof(T) + 8) + GROUP_SLACK, [&] { bench_scan<T>(n); });
        });
}

const OpRef SCAN_REFS[] = {
    {"scan", "cub InclusiveSum", nullptr, "InclusiveSum", nullptr, false},
};

} // namespace

extern const Op OP_SCAN = {"scan", true, SCAN_REFS, 1, run_scan, nullptr, nullptr, nullptr};

} // namespace gpb
