/* cpu_mem.c — the CPU backend's memory (cpu_mem.h): malloc'd "device" memory (huge pages
 * from 4 MiB on), memcpy transfers, and mem_info from /proc/meminfo, sysconf and the
 * cgroup limits, capped by the test knob GPUPRIM_DEVICE_MEM_LIMIT; and the host's memory
 * for the out-of-core plan (gp_host_mem_info, host.h), capped by GPUPRIM_HOST_MEM_LIMIT.
 */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES, madvise, MADV_HUGEPAGE */
#include "cpu_mem.h"
#include "cpu_common.h"
#include "host.h"
#include "tuning.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- allocations -------------------------------------------------------------------------- */

#define HUGE_ALIGN ((size_t)2 << 20)

void *gp_cpu_big_alloc(size_t bytes)
{
    if (bytes < GP_CPU_HUGE_MIN) return malloc(bytes ? bytes : 1);
    if (bytes > SIZE_MAX - HUGE_ALIGN) {
        errno = ENOMEM;
        return NULL;
    }
    const size_t len = (bytes + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
    void *p = NULL;
    const int rc = posix_memalign(&p, HUGE_ALIGN, len);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE); /* advice only: ordinary pages where refused */
#endif
    return p;
}

void *gp_cpu_alloc(size_t bytes)
{
    void *p = gp_cpu_big_alloc(bytes);
    if (!p) (void)CPU_FAIL(GP_ENOMEM, "malloc(%zu bytes): %s", bytes, strerror(errno));
    return p;
}

void gp_cpu_free(void *p) { free(p); }

/* ---- transfers ------------------------------------------------------------------------------ */

/* memcpy of `bytes` bytes for the public entry `who` (large ones cut over the host's threads,
 * gp_host_memcpy); NULL pointers only with bytes == 0. */
static int copy_as(const char *who, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return GP_OK;
    if (!dst || !src) return WHO_FAIL(GP_EINVAL, "NULL pointer with %zu bytes", bytes);
    gp_host_memcpy(dst, src, bytes);
    return GP_OK;
}

int gp_cpu_upload(void *dev, const void *host, size_t bytes)
{
    return copy_as(__func__, dev, host, bytes);
}

int gp_cpu_download(void *host, const void *dev, size_t bytes)
{
    return copy_as(__func__, host, dev, bytes);
}

int gp_cpu_copy(void *dst, const void *src, size_t bytes)
{
    return copy_as(__func__, dst, src, bytes);
}

/* ---- how much memory is free ------------------------------------------------------------- */

/* The first number of the one-line file `path` (a cgroup control file) into *v. Returns 0,
 * or -1 when the file cannot be read or holds no number ("max": no limit). */
static int read_u64_file(const char *path, uint64_t *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned long long x = 0;
    int n = fscanf(f, "%llu", &x);
    fclose(f);
    if (n != 1) return -1;
    *v = (uint64_t)x;
    return 0;
}

/* MemAvailable of /proc/meminfo in bytes into *v. Returns 0, or -1 when it is not there. */
static int meminfo_available(uint64_t *v)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kb = 0;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            *v = kb > UINT64_MAX / 1024 ? UINT64_MAX : (uint64_t)kb * 1024;
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* The host's memory before any knob: *avail what can still be allocated (MemAvailable, or
 * the available pages; lowered to the room under a cgroup limit), *total the physical memory
 * or the cgroup limit when smaller; SIZE_MAX where nothing can be read. */
static void host_memory(size_t *avail_out, size_t *total_out)
{
    uint64_t total = UINT64_MAX, avail = UINT64_MAX, v = 0;
    const long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) total = (uint64_t)pages * (uint64_t)psz;
    if (meminfo_available(&v) == 0) {
        avail = v;
    } else {
        const long av = sysconf(_SC_AVPHYS_PAGES);
        if (av > 0 && psz > 0) avail = (uint64_t)av * (uint64_t)psz;
    }
    /* a cgroup memory limit (containers, Slurm jobs): the room left under it */
    static const char *const lims[2][2] = {
        {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
         "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
    for (int k = 0; k < 2; k++) {
        uint64_t lim = 0, used = 0;
        if (read_u64_file(lims[k][0], &lim) != 0) continue;
        if (lim >= total) break; /* no limit below the machine's memory (v1: a huge number) */
        total = lim;
        if (read_u64_file(lims[k][1], &used) != 0) used = 0;
        const uint64_t room = lim > used ? lim - used : 0;
        if (room < avail) avail = room;
        break;
    }
    if (avail > total) avail = total;
    *avail_out = avail > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)avail;
    *total_out = total > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)total;
}

/* gp_backend.mem_info of the CPU backend (meaning: gpuprim/kernels.h): host memory. */
int gp_cpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes) return CPU_FAIL(GP_EINVAL, "NULL output pointer");
    size_t f = 0, t = 0;
    host_memory(&f, &t);
    char why[128];
    if (gp_mem_limit_env(&f, why, sizeof why) != 0) return CPU_FAIL(GP_EINVAL, "%s", why);
    *free_bytes = f;
    *total_bytes = t;
    return GP_OK;
}

int gp_host_mem_info(size_t *avail, size_t *total, char *why, size_t whylen)
{
    const gp_tuning *k = gp_tuning_get();
    if (k->host_mem_limit_error[0]) {
        if (why && whylen > 0) snprintf(why, whylen, "%s", k->host_mem_limit_error);
        return -1;
    }
    size_t f = 0, t = 0;
    host_memory(&f, &t);
    if (k->host_mem_limit_set && k->host_mem_limit < (uint64_t)f) f = (size_t)k->host_mem_limit;
    if (avail) *avail = f;
    if (total) *total = t;
    return 0;
}
