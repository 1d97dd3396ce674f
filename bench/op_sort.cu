/* op_sort.cu — the `sort` operation of gpuprim_bench (f32, f64, u32): our full value sort
 * as sort_values and as to_keys + sort_keys + from_keys, sort_keys alone on the keys,
 * against cub::DeviceRadixSort::SortKeys, cub::DeviceMergeSort::SortKeys, thrust::sort,
 * the seed's one-launch-per-stage bitonic sort (power-of-two n <= 2^21) and CPU qsort
 * (n <= 2^21, once); then the group's sort_pairs rows (op_sort_pairs.cu). Also the qsort
 * comparison at 2^21 of the summary and the JSON.
 */
#include "op_sort.cuh"
#include "seed_baselines.cuh"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

namespace gpb {

namespace {

/* The f32 sort at n = 2^21 (ms), for the qsort comparison with the chapter's figures. */
double ours_f32_2p21 = NAN, qsort_f32_2p21 = NAN, bitonic_f32_2p21 = NAN;

/* True for the group whose times go into the qsort comparison. */
template <class T> bool qsort_group(const SortCase<T> &c)
{
    return c.dt == GP_F32 && c.n == (1ll << 21);
}

/* The comparison of cub::DeviceMergeSort (the type's operator<). */
struct Less {
    template <class T> __device__ bool operator()(const T &x, const T &y) const { return x < y; }
};

/* qsort comparison by the type's operator< (no NaNs in the data). */
template <class T> int cmp_native(const void *pa, const void *pb)
{
    T x, y;
    memcpy(&x, pa, sizeof x);
    memcpy(&y, pb, sizeof y);
    return (x > y) - (x < y);
}

/* ours: a full value sort, as sort_values (the key maps in the sort's first and last
 * pass; the row the others are held against) or as to_keys + sort_keys + from_keys. */
template <class T> void row_ours_values(SortCase<T> &c, bool fused)
{
    run_row(c.row("sort", fused ? "ours sort_values" : "ours to_keys+sort_keys+from_keys",
                  Kind::OURS),
            [&](Row &r) {
                time_op(r, [&] { c.copy_in(); }, [&] {
                    if (fused) {
                        GP(G.be->sort_values(c.dt, c.d_work, c.n));
                    } else {
                        GP(G.be->to_keys(c.dt, GP_ASCENDING, c.d_work, c.n));
                        GP(G.be->sort(c.width, c.d_work, NULL, c.n, 0));
                        GP(G.be->from_keys(c.dt, GP_ASCENDING, c.d_work, c.n));
                    }
                });
                c.check_values(r, c.d_work, true);
                if (c.have_ref && c.ref_err.empty()) {
                    CK(cudaMemcpy(c.h_out.template as<T>(), c.d_work, c.nb,
                                  cudaMemcpyDeviceToHost));
                    const bool same = memcmp(c.h_out.template as<T>(), c.h_ref.data(), c.nb) == 0;
                    EXPECT(r, same, "not bit-exact against gp_cpu_sort_keys");
                    r.note = same ? "bit-exact vs CPU twin" : "";
                } else {
                    r.note = "checked: sorted + multiset hash";
                }
                if (fused && qsort_group(c)) ours_f32_2p21 = r.ok ? r.med : NAN;
            });
}

/* ours: sort_keys alone, on the keys. */
template <class T> void row_ours_keys(SortCase<T> &c)
{
    using UT = typename SortCase<T>::UT;
    run_row(c.row("sort", "ours sort_keys (keys only)", Kind::OURS), [&](Row &r) {
        EXPECT(r, c.ck_keys.hash_bits == c.ck_in.hash_keys, "to_keys produced wrong keys");
        time_op(
            r,
            [&] { CK(cudaMemcpyAsync(c.d_work, c.keys.get(), c.nb, cudaMemcpyDeviceToDevice, 0)); },
            [&] { GP(G.be->sort(c.width, c.d_work, NULL, c.n, 0)); });
        const ChkOut k = run_check<UT>(reinterpret_cast<const UT *>(c.d_work), c.n, nullptr);
        EXPECT(r, k.desc_val == 0, "keys not sorted: %llu descents", k.desc_val);
        EXPECT(r, k.hash_bits == c.ck_keys.hash_bits, "key multiset changed");
        r.note = format("u%d keys", 8 * c.width);
    });
}

/* A CUB sort, call(temp, temp_bytes) in CUB's convention, of the work copy into result. */
template <class T, class Call>
void row_cub(SortCase<T> &c, const char *impl, const char *what, const T *result, const char *note,
             Call &&call)
{
    run_row(c.row("sort", impl, Kind::REF), [&](Row &r) {
        DevBuf tmp;
        size_t tb = cub_temp(tmp, what, call);
        time_op(r, [&] { c.copy_in(); }, [&] { CK(call(tmp.get(), tb)); });
        c.check_values(r, result, false);
        r.note = note;
    });
}

/* The references on the device: CUB's radix sort (keys only, out of place), CUB's merge
 * sort (in place, operator<), thrust::sort (as users call it: its temporary allocation
 * included) and the seed's bitonic sort (one launch per (bf_sz, stage)). */
template <class T> void rows_device_refs(SortCase<T> &c)
{
    const int n = (int)c.n, bits = c.width * 8;
    row_cub(c, "cub RadixSort::SortKeys", "cub::DeviceRadixSort::SortKeys", c.d_out, "out of place",
            [&](void *t, size_t &b) {
                return cub::DeviceRadixSort::SortKeys(t, b, c.d_work, c.d_out, n, 0, bits, 0);
            });
    row_cub(c, "cub MergeSort::SortKeys", "cub::DeviceMergeSort::SortKeys", c.d_work,
            "comparison sort, like ours", [&](void *t, size_t &b) {
                return cub::DeviceMergeSort::SortKeys(t, b, c.d_work, n, Less{}, 0);
            });
    run_row(c.row("sort", "thrust::sort", Kind::REF), [&](Row &r) {
        time_op(
            r, [&] { c.copy_in(); },
            [&] { thrust::sort(thrust::device, c.d_work, c.d_work + c.n); });
        c.check_values(r, c.d_work, false);
        r.note = "includes thrust's temp allocation";
    });
    if (!c.small || !seed::bitonic_size_ok(c.n)) return;
    run_row(c.row("sort", "seed bitonic (1 launch/stage)", Kind::SEED), [&](Row &r) {
        time_op(r, [&] { c.copy_in(); }, [&] { CK(seed::bitonic_sort(c.d_work, c.n)); });
        c.check_values(r, c.d_work, false);
        int lg = 0;
        while ((1ll << lg) < c.n) lg++;
        r.note = format("%d launches", lg * (lg + 1) / 2);
        if (r.ok && qsort_group(c)) bitonic_f32_2p21 = r.med;
    });
}

/* CPU qsort of the same host data, once (n <= 2^21). */
template <class T> void row_qsort(SortCase<T> &c)
{
    run_row(c.row("sort", "CPU qsort (once)", Kind::CPU), [&](Row &r) {
        std::vector<T> v(c.h_in.template as<T>(), c.h_in.template as<T>() + c.n);
        const auto c0 = std::chrono::steady_clock::now();
        qsort(v.data(), (size_t)c.n, sizeof(T), cmp_native<T>);
        const auto c1 = std::chrono::steady_clock::now();
        r.timed = true;
        r.reps = 1;
        r.med = r.mn = r.mx = std::chrono::duration<double, std::milli>(c1 - c0).count();
        const bool sorted = std::is_sorted(v.begin(), v.end());
        EXPECT(r, sorted, "qsort result not sorted");
        if (c.have_ref && c.ref_err.empty() && c.unique_sorted)
            EXPECT(r, memcmp(v.data(), c.h_ref.data(), c.nb) == 0,
                   "qsort result differs from the CPU twin's");
        r.note = "host wall clock, 1 run";
        if (r.ok && qsort_group(c)) qsort_f32_2p21 = r.med;
    });
}

/* Every row of one type and size (see the file comment); the CPU twin's sort of a copy
 * is the bit-exact reference up to 2^24. */
template <class T> void bench_sort(long long n)
{
    SortCase<T> c(n);
    row_ours_values(c, true);
    row_ours_values(c, false);
    row_ours_keys(c);
    rows_device_refs(c);
    if (c.small) row_qsort(c);
    sort_pairs_rows(c);
}

/* The groups: every size, the selected types among f32, f64 and u32. Device memory: the
 * input, work, output, key and reference buffers, two index buffers, CUB's temporaries. */
void run_sort(const std::vector<long long> &sizes)
{
    constexpr unsigned types = type_bit(GP_F32) | type_bit(GP_F64) | type_bit(GP_U32);
    for (long long n : sizes)
        for_types<types>(G.opt.types, [&](auto tag) {
            using T = decltype(tag);
            const size_t nb = (size_t)n * sizeof(T);
            run_group("sort", gp_dtype_name(dtype_of<T>()), n,
                      8 * nb + 2 * (size_t)n * 8 + GROUP_SLACK, [&] { bench_sort<T>(n); });
        });
}

/* The payload's cost on our sort_pairs rows: time / our keys-only value sort. */
void annotate_sort(Row &r)
{
    if (r.op != "sort_pairs") return;
    const Row *k = find_impl(r, "sort", "ours to_keys+sort_keys+from_keys");
    if (k) add_note(r, format("%.2fx our keys-only time", r.med / k->med));
}

/* The qsort comparison at 2^21 against the chapter's figures. */
void summary_sort(FILE *o)
{
    if (std::isnan(ours_f32_2p21) && std::isnan(qsort_f32_2p21)) return;
    fprintf(o,
            "sort f32 n = 2^21: ours %s ms, CPU qsort %s ms -> %s faster than qsort; seed-style "
            "bitonic here %s ms\n",
            fmt_num(ours_f32_2p21, "%.3f").c_str(), fmt_num(qsort_f32_2p21, "%.1f").c_str(),
            fmt_num(qsort_f32_2p21 / ours_f32_2p21, "%.1fx").c_str(),
            fmt_num(bitonic_f32_2p21, "%.3f").c_str());
    fprintf(o, "  (the chapter: Quadro P5000 bitonic 13.1 ms, Xeon 4116 qsort 539 ms, 41.1x)\n");
}

/* The same as the JSON member "qsort_comparison". */
void json_sort(FILE *f)
{
    fprintf(
        f,
        "  \"qsort_comparison\": {\"n\": 2097152, \"type\": \"f32\", \"ours_ms\": %s, "
        "\"qsort_ms\": %s, \"seed_bitonic_ms\": %s, \"speedup_vs_qsort\": %s, "
        "\"seed_reference\": \"Quadro P5000 bitonic 13.1 ms, Xeon 4116 qsort 539 ms (41.1x)\"},\n",
        json_num(ours_f32_2p21).c_str(), json_num(qsort_f32_2p21).c_str(),
        json_num(bitonic_f32_2p21).c_str(), json_num(qsort_f32_2p21 / ours_f32_2p21).c_str());
}

const OpRef SORT_REFS[] = {
    {"sort", "cub MergeSort::SortKeys", "cub RadixSort::SortKeys", "MergeSort", nullptr, false},
    {"sort_pairs", "cub RadixSort::SortPairs (u64 idx)", nullptr, nullptr, "sort", false},
};

} // namespace

extern const Op OP_SORT = {"sort",   false,         SORT_REFS,    2,
                           run_sort, annotate_sort, summary_sort, json_sort};

} // namespace gpb
