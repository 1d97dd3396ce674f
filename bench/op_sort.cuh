/* op_sort.cuh — what the two files of gpuprim_bench's `sort` operation share: the group's
 * data and its checks (SortCase), used by the sort rows (op_sort.cu) and the sort_pairs
 * rows (op_sort_pairs.cu) of the same group.
 */
#ifndef GPUPRIM_BENCH_OP_SORT_CUH
#define GPUPRIM_BENCH_OP_SORT_CUH

#include "engine.cuh"

#include <cstring>

namespace gpb {

constexpr long long TWIN_MAX_N = 1ll << 24;       /* CPU-twin bit-exact check up to here */
constexpr long long SMALL_SORT_MAX_N = 1ll << 21; /* seed bitonic and qsort up to here */

/* One sort group: fresh input of type T and n elements, the work and output buffers every
 * row sorts in, the input's keys, and the CPU twin's sorted copy as the bit-exact
 * reference up to TWIN_MAX_N. */
template <class T> struct SortCase {
    using UT = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type; /* keys */
    long long n;
    gp_dtype dt = dtype_of<T>();
    const char *tn = gp_dtype_name(dtype_of<T>());
    int width = (int)sizeof(T);
    size_t nb;
    DevBuf in, work, out, keys;
    T *d_in, *d_work, *d_out;
    ChkOut ck_in, ck_keys;
    /* with NaN or -0.0 in the data (never from our generator) sorted outputs of different
       orders may differ bitwise: then only order + multiset are checked for the others */
    bool unique_sorted;
    bool have_ref;               /* n <= TWIN_MAX_N: the CPU twin's sort is the reference */
    bool small;                  /* n <= SMALL_SORT_MAX_N: the seed and qsort rows run */
    HostBuf h_in, h_out;         /* the input on the host (have_ref or small); a result */
    std::vector<T> h_ref;        /* the CPU twin's sort of the input */
    DevBuf d_ref;
    std::string ref_err;         /* why there is no reference, though have_ref */
    const T *d_refp = nullptr;   /* the reference on the device, when every order agrees */

    /* Generates and checks the input, makes the reference and the keys (to_keys, checked). */
    explicit SortCase(long long n_)
        : n(n_), nb((size_t)n_ * sizeof(T)), in(nb), work(nb), out(nb), keys(nb)
    {
        d_in = in.as<T>();
        d_work = work.as<T>();
        d_out = out.as<T>();
        gen_data<T>(d_in, n, group_seed(dt, n, 2));
        ck_in = run_check<T>(d_in, n, nullptr);
        unique_sorted = ck_in.nan == 0 && ck_in.negzero == 0;
        have_ref = n <= TWIN_MAX_N;
        small = n <= SMALL_SORT_MAX_N;
        if (have_ref || small) {
            h_in.alloc(nb);
            CK(cudaMemcpy(h_in.as<T>(), d_in, nb, cudaMemcpyDeviceToHost));
        }
        if (have_ref) make_reference();
        if (have_ref && ref_err.empty() && unique_sorted) d_refp = d_ref.as<T>();
        CK(cudaMemcpy(keys.get(), d_in, nb, cudaMemcpyDeviceToDevice));
        GP(G.be->to_keys(dt, GP_ASCENDING, keys.get(), n));
        ck_keys = run_check<UT>(keys.as<UT>(), n, nullptr);
    }
    /* The CPU twin's full value sort of a copy of the input: the bit-exact reference (a
     * failure is noted in ref_err and fails every row that needs it). */
    void make_reference()
    {
        try {
            h_ref.assign(h_in.as<T>(), h_in.as<T>() + n);
            CPUCK(gp_cpu_to_keys(dt, h_ref.data(), n));
            CPUCK(gp_cpu_sort_keys(width, h_ref.data(), n));
            CPUCK(gp_cpu_from_keys(dt, h_ref.data(), n));
            d_ref.alloc(nb);
            CK(cudaMemcpy(d_ref.get(), h_ref.data(), nb, cudaMemcpyHostToDevice));
            h_out.alloc(nb);
        } catch (const BenchError &e) {
            ref_err = e.what();
        }
    }
    /* A fresh row of op (Gkeys/s). */
    Row row(const char *op, const std::string &impl, Kind kind) const
    {
        return make_row(op, tn, n, impl, kind, 0, (double)n, "Gkeys/s");
    }
    /* The unsorted input into the work buffer (asynchronous: time_op's preparation). */
    void copy_in() const { CK(cudaMemcpyAsync(d_work, d_in, nb, cudaMemcpyDeviceToDevice, 0)); }
    /* A sorted result d[0, n): sorted in its own order (gpuprim's keys for ours, operator<
     * for the others), the input's multiset, and bitwise the CPU twin's where there is one. */
    void check_values(Row &r, const T *d, bool ours_order) const
    {
        const ChkOut c = run_check<T>(d, n, d_refp);
        EXPECT(r, c.hash_bits == ck_in.hash_bits, "multiset changed (hash %#llx != %#llx)",
               c.hash_bits, ck_in.hash_bits);
        const unsigned long long desc = ours_order ? c.desc_key : c.desc_val;
        EXPECT(r, desc == 0, "not sorted: %llu descents", desc);
        if (d_refp)
            EXPECT(r, c.mismatch == 0, "%llu elements differ from the CPU twin's sort", c.mismatch);
        if (have_ref && !ref_err.empty()) fail(r, "no CPU-twin reference: %s", ref_err.c_str());
    }
};

/* The sort_pairs rows of a group (op_sort_pairs.cu; f32, f64, u32): ours with a 64-bit
 * index payload, stable and not, and cub::DeviceRadixSort::SortPairs. */
template <class T> void sort_pairs_rows(SortCase<T> &c);

} // namespace gpb

#endif
