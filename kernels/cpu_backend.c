/* cpu_backend.c — the CPU backend's table (gp_backend_cpu) and the glue between the table's
 * entries and the CPU twins: the order of the key maps, the keys-only or pairs forms of the
 * sort and the merge-split, the entries a host-memory backend has nothing to do for, and
 * the inter-process mapping it does not offer.
 *
 * The twins live in rooms of their own, each the plain, obviously correct, deterministic
 * oracle the tests compare the CUDA backend against (one thread, a fixed summation order,
 * no dependence on alignment, thread count or timing):
 *   cpu_stats_ref.c   the statistics' frozen plain loops and summation order;
 *   cpu_stats_avx2.c  the same statistics, bit for bit, with AVX2 where the CPU has it;
 *   cpu_trap.c        the trapezoid rules;     cpu_exact_sum.c  the exact sums;
 *   cpu_scan.c        the prefix scans;
 *   cpu_keys.c        the order-key maps;      cpu_sort.c       the radix sort;
 *   cpu_merge.c       merge path, one merge;   cpu_merge_mt.c   merge-split, merges on threads;
 *   cpu_hist.c        numpy's histogram rule;  cpu_select.c     radix select, runs;
 *   cpu_mem.c         memory, copies and mem_info;
 *   cpu_common.c      the failure record and what every room shares (calls none of them).
 * Every entry has exactly the meaning documented for it in gpuprim/kernels.h.
 */
#include "cpu_common.h"
#include "cpu_mem.h"
#include "cpu_twins.h"
#include "gpuprim/kernels.h"

/* ---- glue ------------------------------------------------------------------------------- */

/* gp_backend.upload_wait / download_wait / synchronize of the CPU backend: its
 * upload_async and download_async (gp_cpu_upload, gp_cpu_download) are done on return, and
 * it has no device work in flight. */
static int cpu_done(void) { return GP_OK; }

/* gp_backend.ipc_get / ipc_open / ipc_close of the CPU backend: no inter-process mapping of
 * malloc memory (the rank exchange maps host memory through MPI shared-memory windows). */
static int cpu_ipc_get(void *dev, void *handle)
{
    (void)dev, (void)handle;
    return CPU_FAIL(GP_EINVAL, "inter-process mapping is not supported by the CPU backend");
}
static int cpu_ipc_open(const void *handle, void **dev)
{
    (void)handle, (void)dev;
    return CPU_FAIL(GP_EINVAL, "inter-process mapping is not supported by the CPU backend");
}
static int cpu_ipc_close(void *dev)
{
    (void)dev;
    return CPU_FAIL(GP_EINVAL, "inter-process mapping is not supported by the CPU backend");
}

/* gp_backend.to_keys / from_keys: the ascending or the descending twin. */
static int cpu_to_keys(gp_dtype t, gp_order order, void *buf, int64_t n)
{
    if (order != GP_ASCENDING && order != GP_DESCENDING)
        return CPU_FAIL(GP_EINVAL, "order = %d, not GP_ASCENDING or GP_DESCENDING", (int)order);
    return order == GP_DESCENDING ? gp_cpu_to_keys_desc(t, buf, n) : gp_cpu_to_keys(t, buf, n);
}
static int cpu_from_keys(gp_dtype t, gp_order order, void *buf, int64_t n)
{
    if (order != GP_ASCENDING && order != GP_DESCENDING)
        return CPU_FAIL(GP_EINVAL, "order = %d, not GP_ASCENDING or GP_DESCENDING", (int)order);
    return order == GP_DESCENDING ? gp_cpu_from_keys_desc(t, buf, n)
                                  : gp_cpu_from_keys(t, buf, n);
}

/* gp_backend.sort: keys only when vals is NULL (stable ignored), else the pairs twin. */
static int cpu_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable)
{
    return vals ? gp_cpu_sort_pairs(width, keys, vals, n, stable)
                : gp_cpu_sort_keys(width, keys, n);
}

/* gp_backend.merge_split: keys only when every value pointer is NULL (stable ignored), else
 * the pairs twin (which checks the value pointers). */
static int cpu_merge_split(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                           const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t m,
                           int keep_upper, int stable, void *out_keys, uint64_t *out_vals,
                           int64_t *nout)
{
    if (!lo_vals && !hi_vals && !out_vals)
        return gp_cpu_merge_split_keys(width, lo_keys, nlo, hi_keys, nhi, m, keep_upper,
                                       out_keys, nout);
    return gp_cpu_merge_split_pairs(width, lo_keys, lo_vals, nlo, hi_keys, hi_vals, nhi, m,
                                    keep_upper, stable, out_keys, out_vals, nout);
}

/* ---- the table (the groups of gp_backend, in its order) -------------------------------- */

static const gp_backend cpu_backend = {
    /* identity and capabilities */
    .name = "cpu",
    .caps = GP_CAP_HOST_MEMORY,
    /* device memory (host memory) */
    .alloc = gp_cpu_alloc,
    .free = gp_cpu_free,
    .host_alloc = gp_cpu_alloc,
    .host_free = gp_cpu_free,
    .mem_info = gp_cpu_mem_info,
    /* transfers (memcpy, done on return) */
    .upload = gp_cpu_upload,
    .download = gp_cpu_download,
    .upload_async = gp_cpu_upload,
    .upload_wait = cpu_done,
    .download_async = gp_cpu_download,
    .download_wait = cpu_done,
    .copy = gp_cpu_copy,
    .synchronize = cpu_done,
    /* statistics and integrals */
    .stats = gp_cpu_stats,
    .trap_x = gp_cpu_trap_x,
    .trap_fn = gp_cpu_trap_fn,
    .exact_sum = gp_cpu_exact_sum,
    /* prefix scans */
    .cumsum = gp_cpu_cumsum,
    .cumint = gp_cpu_cumint,
    /* sort and keys */
    .to_keys = cpu_to_keys,
    .from_keys = cpu_from_keys,
    .sort = cpu_sort,
    .iota = gp_cpu_iota,
    .sort_values = gp_cpu_sort_values,
    .sort_spare = gp_cpu_sort_spare,
    /* merge: the rank exchange's data plane */
    .merge_split = cpu_merge_split,
    .merge_path = gp_cpu_merge_path,
    /* inter-process mapping (not offered: GP_EINVAL) */
    .ipc_get = cpu_ipc_get,
    .ipc_open = cpu_ipc_open,
    .ipc_close = cpu_ipc_close,
    /* histograms and selection */
    .hist = gp_cpu_hist,
    .finite_range = gp_cpu_finite_range,
    .radix_hist = gp_cpu_radix_hist,
    .runs = gp_cpu_runs,
    /* errors */
    .last_error = gp_cpu_last_error,
};

/* The CPU backend: a static table whose memory functions are malloc/free (alloc(0) and
 * host_alloc(0) return a unique 1-byte block), whose upload/download/copy are memcpy and
 * whose kernels are the gp_cpu_* twins, whose mem_info reports host memory
 * (gp_cpu_mem_info), whose caps say GP_CAP_HOST_MEMORY (its ipc_* entries fail, GP_EINVAL);
 * last_error() returns the message of the last failure of any of them ("" when none).
 * Never NULL. */
const gp_backend *gp_backend_cpu(void) { return &cpu_backend; }
