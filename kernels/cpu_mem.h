/* cpu_mem.h — the CPU backend's memory: its "device" memory, which is host memory (alloc,
 * host_alloc, the copies and mem_info of the table, gpuprim/kernels.h), and the large
 * allocations of its sort scratch (kernels/cpu_mem.c). Private to kernels/.
 */
#ifndef GP_CPU_MEM_H
#define GP_CPU_MEM_H

#include <stddef.h>

/* From this size on, gp_cpu_big_alloc hands out 2 MiB-aligned memory advised for
 * transparent huge pages; smaller requests are plain malloc. */
#define GP_CPU_HUGE_MIN ((size_t)4 << 20)

/* Memory of `bytes` bytes (0 -> 1) that free() releases: malloc below GP_CPU_HUGE_MIN,
 * else posix_memalign to 2 MiB with madvise(MADV_HUGEPAGE) on the whole 2 MiB pages it
 * covers (the advice is best effort: where it fails, or where transparent huge pages are
 * off, the memory is ordinary). First touch of huge-page memory costs a fraction of that
 * of 4 KiB pages (one fault and one clear per 2 MiB), and scattered accesses to it miss
 * the TLB far less. NULL (errno set) on failure. */
void *gp_cpu_big_alloc(size_t bytes);

/* gp_backend.alloc and host_alloc of the CPU backend: gp_cpu_big_alloc (0 bytes gives a
 * unique 1-byte block); NULL with last_error() set ("malloc(N bytes): strerror") on
 * failure. gp_cpu_free (free) releases it. */
void *gp_cpu_alloc(size_t bytes);
void gp_cpu_free(void *p);

/* gp_backend.upload, download (and their _async forms, done on return) and copy of the CPU
 * backend: memcpy of `bytes` bytes ("device" memory is host memory); GP_OK, or GP_EINVAL
 * for a NULL pointer with bytes > 0. */
int gp_cpu_upload(void *dev, const void *host, size_t bytes);
int gp_cpu_download(void *host, const void *dev, size_t bytes);
int gp_cpu_copy(void *dst, const void *src, size_t bytes);

/* gp_backend.mem_info of the CPU backend (meaning: gpuprim/kernels.h): host memory, under
 * a cgroup limit where there is one, capped by GPUPRIM_DEVICE_MEM_LIMIT (gp_mem_limit_env,
 * tuning.h). GP_OK, or GP_EINVAL (a NULL pointer, a malformed knob). */
int gp_cpu_mem_info(size_t *free_bytes, size_t *total_bytes);

#endif /* GP_CPU_MEM_H */
