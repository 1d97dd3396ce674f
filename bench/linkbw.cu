// linkbw.cu — measures the links the rank-level merge exchange can use, on one host:
//   host-staged (what gpuprim does today): device->pinned host, pinned host->device;
//   GPU-to-GPU: cudaMemcpyPeer between every pair of visible devices, one way and both ways
//   at once, with peer access enabled when the pair supports it.
// usage: linkbw [MiB]   (default 512 MiB per transfer; median of 10 after 2 warm-ups)
// Prints one line per measurement: "linkbw: <what> <GB/s>" (GB = 1e9 bytes, bytes moved in
// one direction per transfer, summed over directions for the bidirectional rows).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            std::fprintf(stderr, "linkbw: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,         \
                         cudaGetErrorString(e_));                                            \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

// Median seconds of `reps` runs of fn (each timed with events on stream s of device dev).
template <class F> static double median_s(int dev, cudaStream_t s, int reps, F fn)
{
    CK(cudaSetDevice(dev));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < reps + 2; i++) {
        CK(cudaEventRecord(a, s));
        fn();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        if (i >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return ms[ms.size() / 2] * 1e-3;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
    size_t bytes = mib << 20;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("SKIP: no CUDA device visible\n");
        return 77;
    }
    std::vector<void *> buf(ndev), buf2(ndev);
    std::vector<cudaStream_t> st(ndev);
    for (int d = 0; d < ndev; d++) {
        CK(cudaSetDevice(d));
        CK(cudaMalloc(&buf[d], bytes));
        CK(cudaMalloc(&buf2[d], bytes));
        CK(cudaMemset(buf[d], d + 1, bytes));
        CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
        cudaDeviceProp p;
        CK(cudaGetDeviceProperties(&p, d));
        char bus[32];
        CK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
        std::printf("linkbw: device %d %s %s\n", d, p.name, bus);
    }
    void *host;
    CK(cudaMallocHost(&host, bytes));
    for (int d = 0; d < ndev; d++) {
        double t = median_s(d, st[d], 10, [&] { CK(cudaMemcpyAsync(host, buf[d], bytes, cudaMemcpyDeviceToHost, st[d])); });
        std::printf("linkbw: device %d -> pinned host %.1f GB/s\n", d, bytes / t / 1e9);
        t = median_s(d, st[d], 10, [&] { CK(cudaMemcpyAsync(buf[d], host, bytes, cudaMemcpyHostToDevice, st[d])); });
        std::printf("linkbw: pinned host -> device %d %.1f GB/s\n", d, bytes / t / 1e9);
        t = median_s(d, st[d], 10, [&] { CK(cudaMemcpyAsync(buf2[d], buf[d], bytes, cudaMemcpyDeviceToDevice, st[d])); });
        std::printf("linkbw: device %d on-device copy %.1f GB/s (read + write: %.1f)\n", d, bytes / t / 1e9, 2.0 * bytes / t / 1e9);
    }
    for (int a = 0; a < ndev; a++)
        for (int b = 0; b < ndev; b++) {
            if (a == b) continue;
            int can = 0;
            CK(cudaDeviceCanAccessPeer(&can, a, b));
            if (can) {
                CK(cudaSetDevice(a));
                cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
                if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CK(e);
                (void)cudaGetLastError();
            }
            double t = median_s(a, st[a], 10, [&] { CK(cudaMemcpyPeerAsync(buf2[b], b, buf[a], a, bytes, st[a])); });
            std::printf("linkbw: peer copy %d -> %d (peer access %s) %.1f GB/s\n", a, b, can ? "on" : "off", bytes / t / 1e9);
            if (a < b) {
                // both directions at once: time on a's stream, b's copy waits on nothing
                cudaEvent_t done;
                CK(cudaSetDevice(b));
                CK(cudaEventCreate(&done));
                t = median_s(a, st[a], 10, [&] {
                    CK(cudaMemcpyPeerAsync(buf2[b], b, buf[a], a, bytes, st[a]));
                    CK(cudaMemcpyPeerAsync(buf2[a], a, buf[b], b, bytes, st[b]));
                    CK(cudaEventRecord(done, st[b]));
                    CK(cudaStreamWaitEvent(st[a], done, 0));
                });
                std::printf("linkbw: peer copy %d <-> %d both ways %.1f GB/s\n", a, b, 2.0 * bytes / t / 1e9);
                CK(cudaEventDestroy(done));
            }
        }
    CK(cudaFreeHost(host));
    for (int d = 0; d < ndev; d++) {
        CK(cudaSetDevice(d));
        CK(cudaFree(buf[d]));
        CK(cudaFree(buf2[d]));
    }
    return 0;
}
