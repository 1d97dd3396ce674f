/* cpu_common.c — the CPU backend's lowest room (cpu_common.h): the record of the last
 * failure, which the table's last_error() and gp_cpu_last_error() return, the overlap test
 * of the twins' argument checks, and the samples as doubles. Calls no other cpu_*.c file. */
#include "cpu_common.h"
#include "gpuprim/exact_sum.h"

#include <stdarg.h>
#include <stdio.h>

/* The one-line message of the last failure ("" until something fails). Not thread-safe:
 * like the rest of the backend it assumes one calling thread per process. */
static char cpu_errbuf[256];

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

/* The one-line message of the last failure of a CPU twin ("" when none): the CPU table's
 * last_error(). */
const char *gp_cpu_last_error(void) { return cpu_errbuf; }

int gp_cpu_ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    if (!a || !b || na == 0 || nb == 0) return 0;
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}

/* (cpu_common.h) The type switched on once, outside the loop. */
void gp_cpu_load_doubles(gp_dtype t, const void *y, int64_t i0, int64_t cnt, double *dst)
{
    const unsigned char *p = (const unsigned char *)y + (size_t)i0 * gp_dtype_size(t);
#define LOAD_AS(CT)                                                                         \
    for (int64_t j = 0; j < cnt; j++) {                                                     \
        CT v;                                                                               \
        memcpy(&v, p + (size_t)j * sizeof(CT), sizeof(CT));                                 \
        dst[j] = (double)v;                                                                 \
    }                                                                                       \
    break;
    switch (t) {
    case GP_F32: LOAD_AS(float)
    case GP_F64: LOAD_AS(double)
    case GP_I32: LOAD_AS(int32_t)
    case GP_I64: LOAD_AS(int64_t)
    case GP_U32: LOAD_AS(uint32_t)
    case GP_U64: LOAD_AS(uint64_t)
    default: break;
    }
#undef LOAD_AS
}
