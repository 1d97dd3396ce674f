/* op_select.cu — the `select` operation of gpuprim_bench (f32, f64, i32): three quantiles
 * (0.01, 0.5, 0.99: six order statistics) without a sort, by our radix select (gp_select_*
 * with be->radix_hist: 3 passes over 4-byte keys, 6 over 8-byte ones, the counts summed on
 * the host as gpuprim_mpi sums them over the ranks), against a full sort that then reads
 * the six elements: cub::DeviceRadixSort::SortKeys and our own sort_values (each on a copy
 * of the input, the copy not timed). Every row's six keys are held against the sorted
 * data's bit for bit.
 */
#include "engine.cuh"
#include "gpuprim/dist.h"

#include <cub/device/device_radix_sort.cuh>

#include <cstring>

namespace gpb {

namespace {

constexpr int NQ = 3;
constexpr double QS[NQ] = {0.01, 0.5, 0.99};

/* One group: the data, the wanted ranks, the sorted keys at those ranks (from CUB's row). */
template <class T> struct SelCase {
    long long n;
    gp_dtype dt = dtype_of<T>();
    const char *tn = gp_dtype_name(dtype_of<T>());
    DevBuf in, work;
    const T *d_in;
    int64_t ranks[2 * NQ];
    uint64_t want[2 * NQ];
    bool have_want = false;

    explicit SelCase(long long n_) : n(n_), in((size_t)n_ * sizeof(T)), work((size_t)n_ * sizeof(T))
    {
        d_in = in.as<T>();
        gen_data<T>(in.as<T>(), n, group_seed(dt, n, 11));
        for (int i = 0; i < NQ; i++) {
            double w;
            gp_quantile_index(n, QS[i], &ranks[2 * i], &ranks[2 * i + 1], &w);
        }
    }
    Row row(const char *impl, Kind kind) const
    {
        return make_row("select3", tn, n, impl, kind, (double)n * sizeof(T), 0, "GB/s");
    }
    /* The keys of the sorted array d at the wanted ranks. */
    void keys_at(const T *d, uint64_t *k) const
    {
        for (int i = 0; i < 2 * NQ; i++) {
            const T v = fetch(d, ranks[i]);
            k[i] = gp_key_of(dt, &v);
        }
    }
    /* k against the sorted keys (when known). */
    void check(Row &r, const uint64_t *k) const
    {
        if (!have_want) return;
        for (int i = 0; i < 2 * NQ; i++)
            EXPECT(r, k[i] == want[i], "rank %lld: key %#llx, sorted %#llx", (long long)ranks[i],
                   (unsigned long long)k[i], (unsigned long long)want[i]);
    }
};

/* CUB: a radix sort of a copy, then the six elements. */
template <class T> void row_cub(SelCase<T> &c)
{
    run_row(c.row("cub RadixSort + read", Kind::REF), [&](Row &r) {
        DevBuf out((size_t)c.n * sizeof(T));
        auto call = [&](void *t, size_t &b) {
            return cub::DeviceRadixSort::SortKeys(t, b, c.d_in, out.as<T>(), c.n, 0,
                                                  (int)(8 * sizeof(T)), 0);
        };
        DevBuf tmp;
        size_t tb = cub_temp(tmp, "cub::DeviceRadixSort::SortKeys", call);
        uint64_t k[2 * NQ];
        time_op(r, noprep, [&] {
            size_t b = tb;
            CK(call(tmp.get(), b));
            c.keys_at(out.as<T>(), k);
        });
        memcpy(c.want, k, sizeof k);
        c.have_want = true;
        r.note = "a full sort, then 6 elements";
    });
}

/* ours: the radix select of the six ranks, no sort. */
template <class T> void row_ours(SelCase<T> &c)
{
    run_row(c.row("ours radix select (3 quantiles)", Kind::OURS), [&](Row &r) {
        std::vector<int64_t> counts((size_t)GP_SELECT_MAX << GP_SELECT_DIGIT);
        gp_select s;
        int passes = 0;
        time_op(r, noprep, [&] {
            if (gp_select_init(&s, c.dt, c.ranks, 2 * NQ) != 0) throw BenchError("gp_select_init");
            passes = 0;
            while (!s.done) {
                const size_t len = gp_select_counts_len(&s);
                std::fill(counts.begin(), counts.begin() + (long)len, 0);
                GP(G.be->radix_hist(c.dt, c.d_in, c.n, &s, counts.data()));
                if (gp_select_advance(&s, counts.data()) != 0)
                    throw BenchError("gp_select_advance: the counts do not add up");
                passes++;
            }
        });
        uint64_t k[2 * NQ];
        for (int i = 0; i < 2 * NQ; i++) k[i] = s.prefix[i];
        c.check(r, k);
        r.note = format("%d passes; keys = the sorted data's", passes);
    });
}

/* ours: our own local sort of a copy (sort_values), then the six elements. */
template <class T> void row_ours_sort(SelCase<T> &c)
{
    run_row(c.row("ours sort_values + read", Kind::REF), [&](Row &r) {
        uint64_t k[2 * NQ];
        time_op(r, [&] { CK(cudaMemcpy(c.work.get(), c.d_in, (size_t)c.n * sizeof(T),
                                       cudaMemcpyDeviceToDevice)); },
                [&] {
                    GP(G.be->sort_values(c.dt, c.work.get(), c.n));
                    c.keys_at(c.work.template as<T>(), k);
                });
        c.check(r, k);
        r.note = "our local sort, then 6 elements";
    });
}

template <class T> void bench_select(long long n)
{
    SelCase<T> c(n);
    row_cub(c);
    row_ours(c);
    row_ours_sort(c);
}

void run_select(const std::vector<long long> &sizes)
{
    constexpr unsigned allowed = type_bit(GP_F32) | type_bit(GP_F64) | type_bit(GP_I32);
    for (long long n : sizes)
        for_types<allowed>(G.opt.types, [&](auto tag) {
            using T = decltype(tag);
            run_group("select3", gp_dtype_name(dtype_of<T>()), n,
                      4 * (size_t)n * sizeof(T) + GROUP_SLACK, [&] { bench_select<T>(n); });
        });
}

const OpRef SELECT_REFS[] = {
    {"select3", "cub RadixSort + read", "ours sort_values + read", "RadixSort", nullptr, false},
};

} // namespace

extern const Op OP_SELECT = {"select", true, SELECT_REFS, 1, run_select, nullptr, nullptr,
                             nullptr};

} // namespace gpb
