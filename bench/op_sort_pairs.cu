/* op_sort_pairs.cu — the sort_pairs rows of gpuprim_bench's sort groups: keys with a
 * 64-bit index payload (the input positions). Ours: to_keys + sort with values + from_keys,
 * stable ((key, index) order: what CUB's radix sort gives) and not stable; against
 * cub::DeviceRadixSort::SortPairs. Keys are checked as the sort rows' are, the payload by
 * its own kernel: every index points at its key and the indices are a permutation.
 */
#include "op_sort.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace gpb {

namespace {

/* out[i] = i for i in [0, n) (the payload). */
__global__ void __launch_bounds__(UTIL_THREADS) k_iota(uint64_t *out, long long n)
{
    const long long stride = (long long)gridDim.x * UTIL_THREADS;
    for (long long i = (long long)blockIdx.x * UTIL_THREADS + threadIdx.x; i < n; i += stride)
        out[i] = (uint64_t)i;
}

/* Payload check: out[0] += i with idx[i] >= n or bits(kout[i]) != bits(kin[idx[i]]);
 * out[1] += mix64(idx[i]) (a fingerprint of the payload multiset). */
template <class T>
__global__ void __launch_bounds__(CHK_THREADS)
k_pairs_check(const T *__restrict__ kout, const T *__restrict__ kin,
              const uint64_t *__restrict__ idx, long long n, unsigned long long *out)
{
    unsigned long long bad = 0, h = 0;
    const long long stride = (long long)gridDim.x * CHK_THREADS;
    for (long long i = (long long)blockIdx.x * CHK_THREADS + threadIdx.x; i < n; i += stride) {
        const uint64_t j = idx[i];
        h += mix64(j);
        if (j >= (uint64_t)n || Elem<T>::bits(kin[j]) != Elem<T>::bits(kout[i])) bad++;
    }
    bad = shfl_add(bad);
    h = shfl_add(h);
    if ((threadIdx.x & 31) == 0) {
        if (bad) atomicAdd(&out[0], bad);
        atomicAdd(&out[1], h);
    }
}

/* idx[0, n) = 0, 1, ..., n-1 (asynchronous). */
void iota(uint64_t *idx, long long n)
{
    k_iota<<<util_grid(), UTIL_THREADS>>>(idx, n);
    CK_LAUNCH("k_iota");
}

/* k_pairs_check of (kout, kin, idx) into h[0] (bad indices) and h[1] (fingerprint). */
template <class T>
void pairs_check(const T *kout, const T *kin, const uint64_t *idx, long long n,
                 unsigned long long h[2])
{
    unsigned long long *d_pc = static_cast<unsigned long long *>(G.d_small);
    CK(cudaMemset(d_pc, 0, 16));
    k_pairs_check<T><<<util_grid(), CHK_THREADS>>>(kout, kin, idx, n, d_pc);
    CK_LAUNCH("k_pairs_check");
    CK(cudaMemcpy(h, d_pc, 16, cudaMemcpyDeviceToHost));
}

/* The payload idx of the sorted keys kout: each index points at its key in the input, and
 * the indices are 0..n-1 (their fingerprint against that of iota, written into scratch). */
template <class T>
void check_payload(Row &r, const SortCase<T> &c, const T *kout, const uint64_t *idx,
                   uint64_t *scratch)
{
    unsigned long long got[2], want[2];
    pairs_check(kout, c.d_in, idx, c.n, got);
    EXPECT(r, got[0] == 0, "%llu payload indices do not point at their key", got[0]);
    iota(scratch, c.n);
    pairs_check(c.d_in, c.d_in, scratch, c.n, want);
    EXPECT(r, got[1] == want[1] && want[0] == 0, "payload is not a permutation of 0..n-1");
}

/* ours: to_keys + sort with the index payload + from_keys, stable or not. */
template <class T> void row_ours(SortCase<T> &c, int stable)
{
    run_row(c.row("sort_pairs",
                  stable ? "ours to_keys+sort_pairs+from_keys (stable)"
                         : "ours to_keys+sort_pairs+from_keys",
                  Kind::OURS),
            [&](Row &r) {
                DevBuf idx((size_t)c.n * 8);
                uint64_t *d_idx = idx.as<uint64_t>();
                time_op(r,
                        [&] {
                            c.copy_in();
                            iota(d_idx, c.n);
                        },
                        [&] {
                            GP(G.be->to_keys(c.dt, GP_ASCENDING, c.d_work, c.n));
                            GP(G.be->sort(c.width, c.d_work, d_idx, c.n, stable));
                            GP(G.be->from_keys(c.dt, GP_ASCENDING, c.d_work, c.n));
                        });
                c.check_values(r, c.d_work, true);
                check_payload(r, c, c.d_work, d_idx, d_idx);
                r.note = stable ? "payload checked; (key, index) order" : "payload checked";
            });
}

/* cub::DeviceRadixSort::SortPairs of the keys with a uint64 index (out of place). */
template <class T> void row_cub(SortCase<T> &c)
{
    run_row(c.row("sort_pairs", "cub RadixSort::SortPairs (u64 idx)", Kind::REF), [&](Row &r) {
        DevBuf idx_in((size_t)c.n * 8), idx_out((size_t)c.n * 8);
        uint64_t *d_ii = idx_in.as<uint64_t>(), *d_io = idx_out.as<uint64_t>();
        iota(d_ii, c.n);
        const int n = (int)c.n, bits = c.width * 8;
        auto pairs = [&](void *t, size_t &b) {
            return cub::DeviceRadixSort::SortPairs(t, b, c.d_work, c.d_out, d_ii, d_io, n, 0, bits,
                                                   0);
        };
        DevBuf tmp;
        size_t tb = cub_temp(tmp, "cub::DeviceRadixSort::SortPairs", pairs);
        time_op(r, [&] { c.copy_in(); }, [&] { CK(pairs(tmp.get(), tb)); });
        c.check_values(r, c.d_out, false);
        check_payload(r, c, c.d_out, d_io, d_ii);
        r.note = "reference only (payload checked)";
    });
}

} // namespace

template <class T> void sort_pairs_rows(SortCase<T> &c)
{
    row_ours(c, 1);
    row_ours(c, 0);
    row_cub(c);
}

template void sort_pairs_rows<float>(SortCase<float> &);
template void sort_pairs_rows<double>(SortCase<double> &);
template void sort_pairs_rows<uint32_t>(SortCase<uint32_t> &);

} // namespace gpb
