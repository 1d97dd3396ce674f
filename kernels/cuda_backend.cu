/* cuda_backend.cu — the CUDA backend table: device selection and initialisation, memory,
 * transfers, the error buffer and the cached device properties. The kernels live in
 * cuda_stats.cu (stats) and cuda_trap.cu (trap_x, trap_fn), both on the one-launch reduction
 * of cuda_reduce.cu / cuda_reduce.cuh, cuda_sort.cu (key maps of either order, the sorts
 * with or without values, merge-split, merge_path), cuda_exact_sum.cu (exact sums),
 * cuda_scan.cu (prefix scans), cuda_hist.cu (hist, finite_range) and cuda_select.cu
 * (radix_hist, runs), the sort engine in the bitonic_*.cuh layers (cuda_bitonic.cuh).
 * Memory, transfers, the device-to-device copy and the inter-process mappings (cudaIpc*) of
 * the rank exchange are here.
 *
 * Threading: one calling host thread per process is assumed (as for the CPU backend); the
 * device is made current for the thread that calls gp_backend_cuda(). One exception: the
 * transfers of the copy streams (upload_async, upload_wait, download_async, download_wait)
 * may be called from one other thread while the first one launches kernels (the
 * out-of-core staging thread, src/ooc_stage.c): they make the backend's device current in
 * the calling thread, and the failure record is per thread.
 */
#include "cuda_init.h"
#include "cuda_internal.cuh"
#include "backend_table.h"
#include "tuning.h"
#include "gpuprim/exact_sum.h"

#include <cudaTypedefs.h> /* PFN_cuMemGetAddressRange_v3020 (no libcuda link) */

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- error buffer --------------------------------------------------------------------- */

/* The calling thread's last failure (one record per thread: see the file comment). */
static thread_local char g_errbuf[512];

void gpc_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_errbuf, sizeof g_errbuf, fmt, ap);
    va_end(ap);
}

const char *gpc_last_error(void) { return g_errbuf; }

/* ---- device properties ---------------------------------------------------------------- */

static gpc_devinfo g_dev = {-1, 0, 0, 0, 0, 0};

/* Reads the properties of `device` into g_dev. */
static int devinfo_load(int device)
{
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    gpc_devinfo d;
    d.device = device;
    d.sm_count = p.multiProcessorCount > 0 ? p.multiProcessorCount : 1;
    d.max_threads_per_sm = p.maxThreadsPerMultiProcessor > 0 ? p.maxThreadsPerMultiProcessor : 1024;
    d.smem_per_block = p.sharedMemPerBlock;
    d.smem_per_block_optin =
        p.sharedMemPerBlockOptin > p.sharedMemPerBlock ? p.sharedMemPerBlockOptin : p.sharedMemPerBlock;
    d.max_grid_x = p.maxGridSize[0] > 0 ? p.maxGridSize[0] : 65535;
    g_dev = d;
    return GP_OK;
}

int gpc_devinfo_get(const gpc_devinfo **out)
{
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device != g_dev.device) {
        int rc = devinfo_load(device);
        if (rc != GP_OK) return rc;
    }
    *out = &g_dev;
    return GP_OK;
}

/* ---- memory and transfers ------------------------------------------------------------- */

/* cudaMalloc (pinned == false) or cudaMallocHost (pinned) of `bytes` (0 bytes -> 256 so
 * that the pointer is valid and unique); NULL and last_error() set on failure. */
static void *cuda_alloc_kind(size_t bytes, bool pinned)
{
    void *p = NULL;
    const size_t b = bytes ? bytes : 256;
    cudaError_t e = pinned ? cudaMallocHost(&p, b) : cudaMalloc(&p, b);
    if (e != cudaSuccess) {
        gpc_set_error("%s:%d: %s(%zu bytes): %s", __FILE__, __LINE__,
                      pinned ? "cudaMallocHost" : "cudaMalloc", bytes, cudaGetErrorString(e));
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

/* cudaFree (pinned == false) or cudaFreeHost (pinned) of p (NULL: nothing). */
static void cuda_free_kind(void *p, bool pinned)
{
    if (!p) return;
    cudaError_t e = pinned ? cudaFreeHost(p) : cudaFree(p);
    if (e != cudaSuccess) {
        gpc_set_error("%s:%d: %s: %s", __FILE__, __LINE__, pinned ? "cudaFreeHost" : "cudaFree",
                      cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
}

static void *cuda_alloc(size_t bytes) { return cuda_alloc_kind(bytes, false); }
static void cuda_free(void *p) { cuda_free_kind(p, false); }
/* Pinned host memory. */
static void *cuda_host_alloc(size_t bytes) { return cuda_alloc_kind(bytes, true); }
static void cuda_host_free(void *p) { cuda_free_kind(p, true); }

/* Synchronous copy of `bytes` bytes of kind `kind` (NULL pointers with bytes > 0:
 * GP_EINVAL); with `device_sync`, then a device synchronisation, for the copies that
 * cudaMemcpy may return from before the bytes land: from pageable host memory it returns
 * once they are staged, before the DMA, and a device-to-device copy may return before it is
 * done, while the copy must be complete for other streams and for other processes that map
 * the memory. */
static int copy_sync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                     bool device_sync)
{
    if (bytes == 0) return GP_OK;
    if (!dst || !src) GPC_EINVAL("NULL pointer with %zu bytes", bytes);
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    if (device_sync) CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

/* Synchronous host -> device copy of `bytes` bytes (complete when it returns). */
static int cuda_upload(void *dev, const void *host, size_t bytes)
{
    return copy_sync(dev, host, bytes, cudaMemcpyHostToDevice, true);
}

/* Synchronous device -> host copy of `bytes` bytes. */
static int cuda_download(void *host, const void *dev, size_t bytes)
{
    return copy_sync(host, dev, bytes, cudaMemcpyDeviceToHost, false);
}

/* A copy stream of the backend: non-blocking (it does not order itself against the legacy
 * default stream of the kernels; its wait entry is the caller's fence), created on first use
 * for the current device (one of a previously current device is kept). Two of them: the
 * uploads' (upload_async) and the downloads' (download_async), so that the exchange's
 * staging downloads one piece while it uploads another. */
typedef struct copy_stream {
    cudaStream_t s;
    int dev;
} copy_stream;
static copy_stream g_up = {NULL, -1}, g_down = {NULL, -1};

/* The device gp_backend_cuda() bound (-1: none yet). */
static int g_bound = -1;

/* Makes the bound device current in the calling thread (a thread other than the one that
 * called gp_backend_cuda() starts on device 0) and sets *dev to it. */
static int bind_thread(int *dev)
{
    int d = -1;
    CUDA_CHECK(cudaGetDevice(&d));
    if (g_bound >= 0 && d != g_bound) {
        CUDA_CHECK(cudaSetDevice(g_bound));
        d = g_bound;
    }
    *dev = d;
    return GP_OK;
}

/* Starts a copy of `bytes` bytes on stream cs (made for the bound device when needed). */
static int copy_async(copy_stream *cs, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (bytes == 0) return GP_OK;
    if (!dst || !src) GPC_EINVAL("NULL pointer with %zu bytes", bytes);
    int d = -1;
    int rc = bind_thread(&d);
    if (rc) return rc;
    if (cs->s == NULL || cs->dev != d) {
        cudaStream_t s = NULL;
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        cs->s = s;
        cs->dev = d;
    }
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, cs->s));
    return GP_OK;
}

/* Waits for every copy started on stream cs. */
static int copy_wait(const copy_stream *cs)
{
    if (cs->s == NULL) return GP_OK;
    int d = -1;
    int rc = bind_thread(&d);
    if (rc) return rc;
    CUDA_CHECK(cudaStreamSynchronize(cs->s));
    return GP_OK;
}

/* gp_backend.upload_async / upload_wait / download_async / download_wait. */
static int cuda_upload_async(void *dev, const void *host, size_t bytes)
{
    return copy_async(&g_up, dev, host, bytes, cudaMemcpyHostToDevice);
}
static int cuda_upload_wait(void) { return copy_wait(&g_up); }
static int cuda_download_async(void *host, const void *dev, size_t bytes)
{
    return copy_async(&g_down, host, dev, bytes, cudaMemcpyDeviceToHost);
}
static int cuda_download_wait(void) { return copy_wait(&g_down); }

/* Device -> device copy (either side may be a cudaIpcOpenMemHandle mapping: unified
 * addressing tells the runtime where each lies), complete when it returns. */
static int cuda_copy(void *dst, const void *src, size_t bytes)
{
    return copy_sync(dst, src, bytes, cudaMemcpyDefault, true);
}

/* A handle of ipc_get: cudaIpcMemHandle_t, then the byte offset of the pointer in the
 * allocation the handle names. cudaMalloc may sub-allocate small allocations from a larger
 * block of the driver's, and the IPC calls then share (and cudaIpcOpenMemHandle maps) that
 * whole block (CUDA C++ Programming Guide, "Interprocess Communication"), so the opener
 * must add the offset of the pointer within it. */
static_assert(sizeof(cudaIpcMemHandle_t) + sizeof(uint64_t) == GP_IPC_HANDLE_BYTES,
              "GP_IPC_HANDLE_BYTES");

/* The start of the driver allocation that holds p (cuMemGetAddressRange, reached through
 * the runtime's driver entry point, so that the program does not link libcuda and still
 * starts on machines without a driver). */
static int alloc_base(const void *p, char **base)
{
    static PFN_cuMemGetAddressRange_v3020 range = NULL;
    if (!range) {
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        void *fn = NULL;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 3020,
                                                    cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !fn) {
            gpc_set_error("%s:%d: cudaGetDriverEntryPointByVersion(cuMemGetAddressRange): "
                          "not found (result %d)", __FILE__, __LINE__, (int)q);
            return GP_EDEVICE;
        }
        range = (PFN_cuMemGetAddressRange_v3020)fn;
    }
    CUdeviceptr b = 0;
    size_t size = 0;
    const CUresult r = range(&b, &size, (CUdeviceptr)(uintptr_t)p);
    if (r != CUDA_SUCCESS || b > (CUdeviceptr)(uintptr_t)p) {
        gpc_set_error("%s:%d: cuMemGetAddressRange(%p) failed (CUresult %d)", __FILE__, __LINE__,
                      p, (int)r);
        return GP_EDEVICE;
    }
    *base = (char *)(uintptr_t)b;
    return GP_OK;
}

/* The IPC handle of the allocation that holds dev (from cuda_alloc), with dev's offset. */
static int cuda_ipc_get(void *dev, void *handle)
{
    if (!dev || !handle) GPC_EINVAL("NULL pointer");
    char *base = NULL;
    int rc = alloc_base(dev, &base);
    if (rc) return rc;
    cudaIpcMemHandle_t h;
    CUDA_CHECK(cudaIpcGetMemHandle(&h, base));
    const uint64_t off = (uint64_t)((char *)dev - base);
    memcpy(handle, &h, sizeof h);
    memcpy((char *)handle + sizeof h, &off, sizeof off);
    return GP_OK;
}

/* The mappings of cuda_ipc_open: the pointer handed out and the mapping's start, which
 * cudaIpcCloseMemHandle needs. One calling thread (the backend's contract). */
enum { IPC_MAPS = 64 };
static struct { void *dev, *base; } g_maps[IPC_MAPS];

/* Maps the block of another process that a handle names (peer access enabled on demand)
 * and returns the pointer at the handle's offset in it. */
static int cuda_ipc_open(const void *handle, void **dev)
{
    if (!handle || !dev) GPC_EINVAL("NULL pointer");
    cudaIpcMemHandle_t h;
    uint64_t off = 0;
    memcpy(&h, handle, sizeof h);
    memcpy(&off, (const char *)handle + sizeof h, sizeof off);
    int slot = 0;
    while (slot < IPC_MAPS && g_maps[slot].base) slot++;
    if (slot == IPC_MAPS) GPC_EINVAL("more than %d IPC mappings open at once", IPC_MAPS);
    void *p = NULL;
    CUDA_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    g_maps[slot].base = p;
    g_maps[slot].dev = (char *)p + off;
    *dev = g_maps[slot].dev;
    return GP_OK;
}

/* Unmaps what cuda_ipc_open mapped (dev: the pointer it returned). */
static int cuda_ipc_close(void *dev)
{
    if (!dev) GPC_EINVAL("NULL pointer");
    int slot = 0;
    while (slot < IPC_MAPS && !(g_maps[slot].base && g_maps[slot].dev == dev)) slot++;
    if (slot == IPC_MAPS) GPC_EINVAL("%p is not a pointer from ipc_open", dev);
    void *base = g_maps[slot].base;
    g_maps[slot].base = g_maps[slot].dev = NULL;
    CUDA_CHECK(cudaIpcCloseMemHandle(base));
    return GP_OK;
}

/* Waits for all device work of this process. */
static int cuda_synchronize(void)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    return GP_OK;
}

static const char *cuda_last_error(void) { return g_errbuf; }

/* gp_backend.mem_info (meaning: gpuprim/kernels.h): cudaMemGetInfo of the current device, the
 * free bytes capped by the test knob GPUPRIM_DEVICE_MEM_LIMIT (gp_mem_limit_env). */
static int cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes) GPC_EINVAL("NULL output pointer");
    size_t f = 0, t = 0;
    CUDA_CHECK(cudaMemGetInfo(&f, &t));
    char why[128];
    if (gp_mem_limit_env(&f, why, sizeof why) != 0) GPC_EINVAL("%s", why);
    *free_bytes = f;
    *total_bytes = t;
    return GP_OK;
}

/* The table, filled entry by entry by name (C++17 has no designated initializers; a
 * constexpr function keeps the table a compile-time constant, and the compiler checks every
 * name), in gp_backend's groups. sort_spare stays NULL: the bitonic network sorts in place.
 * tests/test_backend_table.c checks that every mandatory entry is filled. */
static constexpr gp_backend cuda_table()
{
    gp_backend t{};
    /* identity and capabilities */
    t.name = "cuda";
    t.caps = GP_CAP_IPC;
    /* device memory */
    t.alloc = cuda_alloc;
    t.free = cuda_free;
    t.host_alloc = cuda_host_alloc;
    t.host_free = cuda_host_free;
    t.mem_info = cuda_mem_info;
    /* transfers */
    t.upload = cuda_upload;
    t.download = cuda_download;
    t.upload_async = cuda_upload_async;
    t.upload_wait = cuda_upload_wait;
    t.download_async = cuda_download_async;
    t.download_wait = cuda_download_wait;
    t.copy = cuda_copy;
    t.synchronize = cuda_synchronize;
    /* statistics and integrals */
    t.stats = gp_cuda_stats;
    t.trap_x = gp_cuda_trap_x;
    t.trap_fn = gp_cuda_trap_fn;
    t.exact_sum = gp_cuda_exact_sum;
    /* prefix scans */
    t.cumsum = gp_cuda_cumsum;
    t.cumint = gp_cuda_cumint;
    /* sort and keys */
    t.to_keys = gp_cuda_to_keys;
    t.from_keys = gp_cuda_from_keys;
    t.sort = gp_cuda_sort;
    t.iota = gp_cuda_iota;
    t.sort_values = gp_cuda_sort_values;
    t.sort_spare = nullptr;
    /* merge: the rank exchange's data plane */
    t.merge_split = gp_cuda_merge_split;
    t.merge_path = gp_cuda_merge_path;
    /* inter-process mapping */
    t.ipc_get = cuda_ipc_get;
    t.ipc_open = cuda_ipc_open;
    t.ipc_close = cuda_ipc_close;
    /* histograms and selection */
    t.hist = gp_cuda_hist;
    t.finite_range = gp_cuda_finite_range;
    t.radix_hist = gp_cuda_radix_hist;
    t.runs = gp_cuda_runs;
    /* errors */
    t.last_error = cuda_last_error;
    return t;
}
static constexpr gp_backend g_cuda_backend = cuda_table();

/* The table itself, without choosing or touching a device (backend_table.h: for the test of
 * its entries). */
extern "C" const gp_backend *gp_backend_cuda_table(void) { return &g_cuda_backend; }

/* ---- public entry points (gpuprim/kernels.h) ----------------------------------------------- */

static void set_why(char *why, size_t whylen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
    char buf[sizeof g_errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gpc_set_error("%s", buf);
    if (why && whylen > 0) snprintf(why, whylen, "%s", buf);
}

/* The CUDA backend bound to visible device `device` (0-based, among the devices this
 * process sees: CUDA_VISIBLE_DEVICES applies). Makes the device current for the calling
 * thread (cudaSetDevice) and creates its primary context (cudaFree(0)), caches its
 * properties for launch sizing, and returns the static table named "cuda". On failure
 * returns NULL and writes one line into why[0, whylen) (truncated, NUL-terminated; why may
 * be NULL): "no CUDA device visible (cudaGetDeviceCount: <message>)", "CUDA device <d> out
 * of range (<count> visible)" or "cannot initialise CUDA device <d>: <call>: <message>". */
extern "C" const gp_backend *gp_backend_cuda(int device, char *why, size_t whylen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        set_why(why, whylen, "no usable CUDA device: no GPU, or no NVIDIA driver for it "
                "(cudaGetDeviceCount: %s)", cudaGetErrorString(e));
        return NULL;
    }
    if (count <= 0) {
        set_why(why, whylen, "no CUDA device visible (cudaGetDeviceCount: 0 devices)");
        return NULL;
    }
    if (device < 0 || device >= count) {
        set_why(why, whylen, "CUDA device %d out of range (%d visible)", device, count);
        return NULL;
    }
    e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        set_why(why, whylen, "cannot initialise CUDA device %d: cudaSetDevice: %s", device,
                cudaGetErrorString(e));
        return NULL;
    }
    e = cudaFree(0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        set_why(why, whylen, "cannot initialise CUDA device %d: cudaFree(0): %s", device,
                cudaGetErrorString(e));
        return NULL;
    }
    if (devinfo_load(device) != GP_OK) {
        char msg[sizeof g_errbuf];
        snprintf(msg, sizeof msg, "%s", g_errbuf);
        set_why(why, whylen, "cannot initialise CUDA device %d: %s", device, msg);
        return NULL;
    }
    g_bound = device;
    if (why && whylen > 0) why[0] = '\0';
    return &g_cuda_backend;
}

/* Number of CUDA devices visible to this process; 0 on any error (no driver, no device,
 * CUDA_VISIBLE_DEVICES empty, ...). */
extern "C" int gp_cuda_device_count(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0 ? count : 0;
}

/* Name (cudaDeviceProp.name) and PCI bus id (cudaDeviceGetPCIBusId, lower-cased, e.g.
 * "0000:3b:00.0") of visible device `device` into name[0, namelen) and busid[0, buslen)
 * (each truncated and NUL-terminated; either may be NULL / 0). Returns 0, GP_EINVAL for a
 * device out of range, or GP_EDEVICE (last_error() set). */
extern "C" int gp_cuda_device_info(int device, char *name, size_t namelen, char *busid,
                                   size_t buslen)
{
    if (name && namelen > 0) name[0] = '\0';
    if (busid && buslen > 0) busid[0] = '\0';
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        GPC_EINVAL("CUDA device %d out of range (%d visible)", device, count);
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    if (name && namelen > 0) snprintf(name, namelen, "%s", p.name);
    if (busid && buslen > 0) {
        char b[64];
        CUDA_CHECK(cudaDeviceGetPCIBusId(b, (int)sizeof b, device));
        b[sizeof b - 1] = '\0';
        for (char *c = b; *c; c++) *c = (char)tolower((unsigned char)*c);
        snprintf(busid, buslen, "%s", b);
    }
    return GP_OK;
}

/* ---- the program's start and end (cuda_init.h) ---------------------------------------- */

/* cudaSetDevice + cudaFree(0): the primary context, with every kernel when the modules load
 * eagerly. The reason of a failure goes to why only: the backend's error buffer belongs to
 * the thread that uses the backend, and this may run on another. */
extern "C" int gp_cuda_prepare(int device, char *why, size_t whylen)
{
    const char *call = "cudaSetDevice";
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) {
        call = "cudaFree(0)";
        e = cudaFree(0);
    }
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError();
    if (why && whylen > 0)
        snprintf(why, whylen, "cannot initialise CUDA device %d: %s: %s", device, call,
                 cudaGetErrorString(e));
    return -1;
}

extern "C" int gp_cuda_release(int device)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaDeviceReset();
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError();
    return -1;
}

extern "C" int gp_cuda_teardown(void)
{
    int device = -1;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceReset();
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError();
    return -1;
}
