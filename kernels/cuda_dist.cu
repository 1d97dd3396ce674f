/* cuda_dist.cu — what the CUDA backend's histogram and selection files share (cuda_dist.cuh,
 * namespace dst): the grow-only device scratch slots and pinned host slots, the counts' way
 * back to the host, and the launch sizing of a grid-stride kernel. Not part of the public
 * contract.
 */
#include "cuda_dist.cuh"

#include <string.h>

namespace dst {

/* One scratch slot (one anonymous namespace per file: nvcc's kernel stubs need that). */
struct Slot {
    int device;
    void *p;
    size_t cap;
};
static Slot g_slots[NSLOTS] = {{-1, NULL, 0}, {-1, NULL, 0}, {-1, NULL, 0}};

int scratch(int slot, size_t bytes, void **p)
{
    int dev = -1;
    CUDA_CHECK(cudaGetDevice(&dev));
    Slot &s = g_slots[slot];
    if (s.device != dev || s.cap < bytes) {
        size_t cap = bytes < 4096 ? 4096 : bytes;
        if (s.device == dev && s.p) CUDA_CHECK(cudaFree(s.p));
        s.p = NULL;
        s.cap = 0;
        void *q = NULL;
        CUDA_CHECK(cudaMalloc(&q, cap));
        s.device = dev;
        s.p = q;
        s.cap = cap;
    }
    *p = s.p;
    return GP_OK;
}

/* The pinned host slots (grow-only, kept for the process's life). */
static void *g_pinned[NHSLOTS];
static size_t g_pinned_cap[NHSLOTS];

int pinned(int slot, size_t bytes, void **p)
{
    if (g_pinned_cap[slot] < bytes) {
        if (g_pinned[slot]) CUDA_CHECK(cudaFreeHost(g_pinned[slot]));
        g_pinned[slot] = NULL;
        g_pinned_cap[slot] = 0;
        const size_t cap = bytes < 65536 ? 65536 : bytes;
        void *q = NULL;
        CUDA_CHECK(cudaMallocHost(&q, cap));
        g_pinned[slot] = q;
        g_pinned_cap[slot] = cap;
    }
    *p = g_pinned[slot];
    return GP_OK;
}

int add_counts(const void *d, size_t len, int64_t *counts)
{
    void *h = NULL;
    const int rc = pinned(HSLOT_COUNTS, len * 8, &h);
    if (rc) return rc;
    CUDA_CHECK(cudaMemcpyAsync(h, d, len * 8, cudaMemcpyDeviceToHost, 0));
    CUDA_CHECK(cudaStreamSynchronize(0));
    const unsigned long long *c = static_cast<const unsigned long long *>(h);
    for (size_t i = 0; i < len; i++) counts[i] += (int64_t)c[i];
    return GP_OK;
}

int smem_max(size_t *bytes)
{
    const gpc_devinfo *d = NULL;
    const int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    *bytes = d->smem_per_block_optin;
    return GP_OK;
}

int grid_of(const void *kernel, size_t smem, long long work, int per_thread, int *blocks)
{
    const gpc_devinfo *d = NULL;
    int rc = gpc_devinfo_get(&d);
    if (rc) return rc;
    if (smem > 48 * 1024)
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
    if (per_sm < 1) per_sm = 1;
    long long b = (long long)d->sm_count * per_sm;
    const long long step = (long long)THREADS * per_thread;
    const long long need = (work + step - 1) / step;
    if (b > need) b = need;
    const long long least = (work >> 30) + 1; /* < 2^30 items per block */
    if (b < least) b = least;
    if (b > d->max_grid_x) b = d->max_grid_x;
    *blocks = (int)(b < 1 ? 1 : b);
    return GP_OK;
}

} // namespace dst
