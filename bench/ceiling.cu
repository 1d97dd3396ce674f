/* ceiling.cu — the two ceiling rows gpuprim_bench measures first: a read-only kernel over
 * up to 1 GiB (the %ceil denominator of every reduction row) and a device-to-device
 * cudaMemcpy (read + write bytes, for reference). Both are validated by summing the data.
 */
#include "engine.cuh"

namespace gpb {

namespace {

constexpr size_t CEILING_BYTES = 1ull << 30; /* read-ceiling buffer */

/* The read kernel's sum of the 16-byte words p[0, n16) (synchronous). */
unsigned long long read_sum(const void *p, long long n16)
{
    unsigned long long *d_acc = static_cast<unsigned long long *>(G.d_small);
    unsigned long long h = 0;
    CK(cudaMemsetAsync(d_acc, 0, 8, 0));
    launch_read(p, n16, d_acc);
    CK(cudaMemcpy(&h, d_acc, 8, cudaMemcpyDeviceToHost));
    return h;
}

} // namespace

void bench_ceiling()
{
    size_t freeb = 0, totalb = 0;
    CK(cudaMemGetInfo(&freeb, &totalb));
    size_t bytes = CEILING_BYTES;
    while (bytes > (64ull << 20) && 2 * bytes + (512ull << 20) > freeb) bytes /= 2;
    const long long n16 = (long long)(bytes / 16);
    DevBuf a(bytes), b(bytes);
    CK(cudaMemset(a.get(), 0x01, bytes));
    CK(cudaMemset(b.get(), 0x00, bytes));
    CK(cudaDeviceSynchronize());
    const unsigned long long expect = (unsigned long long)n16 * 4ull * 0x01010101ull;
    const int per_sm = G.read_grid / G.prop.multiProcessorCount;

    run_row(make_row("ceiling", "-", (long long)bytes, "read kernel (16-byte loads)", Kind::REF,
                     (double)bytes, 0, "GB/s"),
            [&](Row &r) {
                const unsigned long long sum = time_result<unsigned long long>(
                    r, [&] { CK(cudaMemsetAsync(G.d_small, 0, 8, 0)); },
                    [&](unsigned long long *d) { launch_read(a.get(), n16, d); });
                EXPECT(r, sum == expect, "read kernel sum %llu, expected %llu", sum, expect);
                r.note =
                    format("%d blocks x %d threads (%d per SM)", G.read_grid, READ_THREADS, per_sm);
                if (r.ok) {
                    G.read_ms = r.med;
                    G.read_gbps = (double)bytes / (r.med * 1e-3) / 1e9;
                }
            });
    run_row(make_row("ceiling", "-", (long long)bytes, "cudaMemcpy D2D (read+write)", Kind::REF,
                     2.0 * (double)bytes, 0, "GB/s"),
            [&](Row &r) {
                time_op(r, noprep, [&] {
                    CK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, 0));
                });
                const unsigned long long sum = read_sum(b.get(), n16);
                EXPECT(r, sum == expect, "copy destination sum %llu, expected %llu", sum, expect);
                r.note = "bytes counted: read + written";
                if (r.ok) {
                    G.copy_ms = r.med;
                    G.copy_gbps = 2.0 * (double)bytes / (r.med * 1e-3) / 1e9;
                }
            });
    G.ceiling_check = (G.read_gbps > 0 && G.copy_gbps > 0) ? "ok" : "failed";
}

} // namespace gpb
