/* cuda_reduce.cu — the host side of the CUDA backend's one-launch reductions
 * (cuda_reduce.cuh: the algorithm, the result block): one scratch per device (partials,
 * ticket, mapped result block), the sink of a launch, grid sizes and the wait. The kernels
 * and entry points are in cuda_stats.cu (stats) and cuda_trap.cu (trap_x, trap_fn).
 */
#include "cuda_reduce.cuh"

#include <string.h>

namespace red {

namespace {

static_assert(sizeof(StatPartI) >= sizeof(StatPart) && sizeof(StatPart) >= sizeof(double),
              "the largest partial record sizes the scratch");
constexpr size_t PARTS_BYTES = (RED_MAX_BLOCKS * sizeof(StatPartI) + 255) / 256 * 256;

Scratch g_scratch = {-1, NULL, NULL, NULL};

/* The scratch of the current device (allocated on first use; one of a previously current
 * device is kept, not freed). */
int get_scratch(const gpc_devinfo *d, Scratch **out)
{
    if (g_scratch.device != d->device) {
        void *p = NULL, *h = NULL, *hd = NULL;
        cudaError_t e = cudaMalloc(&p, PARTS_BYTES + 256);
        const char *what = "cudaMalloc(reduction scratch)";
        if (e == cudaSuccess) {
            what = "cudaMemset(reduction scratch)";
            e = cudaMemset(p, 0, PARTS_BYTES + 256); /* the ticket starts at 0 */
        }
        if (e == cudaSuccess) {
            what = "cudaHostAlloc(mapped result block)";
            e = cudaHostAlloc(&h, sizeof(ResultBlock), cudaHostAllocMapped | cudaHostAllocPortable);
        }
        if (e == cudaSuccess) {
            what = "cudaHostGetDevicePointer(result block)";
            e = cudaHostGetDevicePointer(&hd, h, 0);
        }
        if (e != cudaSuccess) {
            gpc_set_error("%s:%d: %s: %s", __FILE__, __LINE__, what, cudaGetErrorString(e));
            (void)cudaGetLastError();
            if (p) (void)cudaFree(p);
            if (h) (void)cudaFreeHost(h);
            return GP_EDEVICE;
        }
        g_scratch.device = d->device;
        g_scratch.dev = p;
        g_scratch.host = (ResultBlock *)h;
        g_scratch.host_dev = (ResultBlock *)hd;
    }
    *out = &g_scratch;
    return GP_OK;
}

/* Resident blocks per SM of a kernel, cached per (kernel, device). */
int per_sm_of(const void *kernel, const gpc_devinfo *d, int *per_sm)
{
    static struct { const void *k; int dev, per_sm; } cache[64];
    static int ncache = 0;
    for (int i = 0; i < ncache; i++)
        if (cache[i].k == kernel && cache[i].dev == d->device) {
            *per_sm = cache[i].per_sm;
            return GP_OK;
        }
    int b = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, RED_THREADS, 0));
    if (b < 1) b = 1;
    if (ncache < 64) cache[ncache++] = {kernel, d->device, b};
    *per_sm = b;
    return GP_OK;
}

} // namespace

/* Contracts of the four below: cuda_reduce.cuh. */

int device_scratch(const gpc_devinfo **d, Scratch **s)
{
    int rc = gpc_devinfo_get(d);
    return rc ? rc : get_scratch(*d, s);
}

Sink sink_of(Scratch *s)
{
    memset(s->host, 0, sizeof *s->host);
    Sink k;
    k.parts = s->dev;
    k.ticket = (unsigned *)((char *)s->dev + PARTS_BYTES);
    k.result = s->host_dev;
    return k;
}

int grid_for(const void *kernel, long long work, int per_thread, const gpc_devinfo *d,
             int *blocks)
{
    int per_sm = 1;
    int rc = per_sm_of(kernel, d, &per_sm);
    if (rc) return rc;
    long long b = (long long)d->sm_count * per_sm;
    if (b > RED_MAX_BLOCKS) b = RED_MAX_BLOCKS;
    const long long step = (long long)RED_THREADS * per_thread;
    const long long need = (work + step - 1) / step;
    if (b > need) b = need;
    if (b < 1) b = 1;
    *blocks = (int)b;
    return GP_OK;
}

int wait_result(const char *what)
{
    CUDA_CHECK_LAUNCH(what);
    CUDA_CHECK(cudaStreamSynchronize(0));
    return GP_OK;
}

} // namespace red
