/* cpu_common.h — what every file of the CPU backend uses (kernels/cpu_common.c): the failure
 * record behind its last_error(), the overlap test of byte ranges, the samples of any type as
 * doubles, and the loads and stores of 4- and 8-byte keys at any alignment. The lowest room
 * of the CPU backend: cpu_common.c calls none of the other cpu_*.c files, and every one of
 * them may call it. Private to
 * kernels/ (not installed; the tests use cpu_twins.h).
 *
 * Threading: like the rest of the CPU backend, one calling thread per process, except that
 * the transfers (upload, download and their async forms, copy) may run in one more thread
 * at the same time (the out-of-core staging); the failure record is per thread.
 */
#ifndef GP_CPU_COMMON_H
#define GP_CPU_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuprim/kernels.h"
#include "merge_path.h" /* gp_key_load */

/* Records a one-line failure message "func: message (reason) at file:line" for the CPU
 * backend's last_error() (gp_cpu_last_error, gpuprim/exact_sum.h) and returns `code`
 * (GP_EINVAL: "bad argument", GP_ENOMEM: "out of memory"). */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int gp_cpu_fail(int code, const char *func, const char *file, int line, const char *fmt, ...);

/* Records a failure of the calling function (CPU_FAIL), or of the public entry named by the
 * caller's variable `who` (WHO_FAIL: the checked entries behind several twins), and
 * evaluates to `code`. */
#define CPU_FAIL(code, ...) gp_cpu_fail((code), __func__, __FILE__, __LINE__, __VA_ARGS__)
#define WHO_FAIL(code, ...) gp_cpu_fail((code), who, __FILE__, __LINE__, __VA_ARGS__)

/* 1 when the byte ranges [a, a+na) and [b, b+nb) overlap (both non-empty, neither NULL). */
int gp_cpu_ranges_overlap(const void *a, size_t na, const void *b, size_t nb);

/* dst[j] = (double)y[i0 + j] for j in [0, cnt): elements of type t (any of the six) at any
 * alignment, converted as (double)value (the trapezoid rules' and the scans' samples). */
void gp_cpu_load_doubles(gp_dtype t, const void *y, int64_t i0, int64_t cnt, double *dst);

/* A helper that every loop instance inlines (the element width and flags its constants). */
#if defined(__GNUC__)
#define CPU_INLINE static inline __attribute__((always_inline))
#else
#define CPU_INLINE static inline
#endif

/* Key i of an array of w-byte keys (w = 4: uint32_t, else uint64_t) at any alignment. */
CPU_INLINE uint64_t kld(const unsigned char *k, int w, int64_t i) { return gp_key_load(k, w, i); }

/* Stores x as key i of an array of w-byte keys (w = 4: its low 32 bits). */
CPU_INLINE void kst(unsigned char *k, int w, int64_t i, uint64_t x)
{
    if (w == 4) {
        const uint32_t y = (uint32_t)x;
        memcpy(k + (size_t)i * 4, &y, 4);
    } else {
        memcpy(k + (size_t)i * 8, &x, 8);
    }
}

#endif /* GP_CPU_COMMON_H */
