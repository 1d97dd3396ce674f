/* cpu_common.c — the CPU backend's lowest room (cpu_common.h): the record of the last
 * failure, which the table's last_error() and gp_cpu_last_error() return, and the overlap
 * test of the twins' argument checks. Calls no other cpu_*.c file. */
#include "cpu_common.h"
#include "gpuprim/exact_sum.h"

#include <stdarg.h>
#include <stdio.h>

/* The one-line message of the calling thread's last failure ("" until something fails):
 * one record per thread, so that the out-of-core staging thread (src/ooc_stage.c), which
 * calls the transfers while the job's thread calls the kernels, reads its own failures. */
static _Thread_local char cpu_errbuf[256];

int gp_cpu_fail(int code, const char *func, const char *file, int line, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(cpu_errbuf, sizeof cpu_errbuf, "%s: %s (%s) at %s:%d", func, msg,
             code == GP_ENOMEM ? "out of memory" : "bad argument", file, line);
    return code;
}

/* The one-line message of the calling thread's last failure of a CPU twin ("" when none):
 * the CPU table's last_error(). */
const char *gp_cpu_last_error(void) { return cpu_errbuf; }

int gp_cpu_ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return 0;
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}
