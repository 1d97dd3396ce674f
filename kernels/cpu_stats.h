/* cpu_stats.h — the pieces the CPU statistics and trapezoid rules share: the chunked,
 * deterministic summation order (cpu_stats_ref.c's file comment gives it in full), the
 * running record of a statistics pass, and the plain chunk loops that the AVX2 file
 * (cpu_stats_avx2.c) finishes its chunks with. Private to kernels/.
 */
#ifndef GP_CPU_STATS_H
#define GP_CPU_STATS_H

#include <stdint.h>
#include <string.h>

#include "gpuprim/kernels.h"

/* GP_CPU_CHUNK and the deterministic pairwise combination of chunk sums (psum), shared with
 * the function job's slices (src/fnslice.c) */
#include "psum.h"

/* ---- the running state of a statistics pass -------------------------------------------- */

/* Running state of one gp_cpu_stats pass. */
typedef struct stats_acc {
    int64_t nan_count;
    int64_t descents;
    uint64_t hash;
    uint64_t min_key, max_key; /* over non-NaN elements */
    uint64_t prev_key;         /* key of the element before the current chunk */
    psum sum, sumsq;
    gp_i128 isum;              /* integer types: the exact sum so far */
} stats_acc;

/* The running sums of one chunk (the lanes of the summation order, and the integer sum's
 * two words) and the running order, hash and extremes, which a chunk loop keeps in
 * registers and an AVX2 prefix hands over to it. */
typedef struct stats_lanes {
    double s[4], q[4];
    uint64_t ilo;
    int64_t ihi;
    uint64_t hash, kmin, kmax, prev;
    int64_t nans, desc;
} stats_lanes;

/* The lanes at the start of a chunk, from the running record. */
static inline stats_lanes lanes_start(const stats_acc *a)
{
    stats_lanes l;
    memset(&l, 0, sizeof l);
    l.hash = a->hash, l.kmin = a->min_key, l.kmax = a->max_key, l.prev = a->prev_key;
    return l;
}

/* Folds the chunk [i0, i1) of y (at most GP_CPU_CHUNK elements) into *a (the hash only when
 * hashing != 0). */
typedef void (*stats_chunk_fn)(const void *y, int64_t i0, int64_t i1, int hashing,
                               stats_acc *a);

/* The plain loops' finish of a chunk whose first elements are in the lanes *l (cpu_stats_ref.c,
 * STATS_CHUNK): folds elements [i0, i1) of y, i0 - the chunk's start a multiple of 4, and
 * the lanes into *a. One per element type. */
#define GP_CPU_STATS_FROM(NAME)                                                              \
    void NAME(const void *y, int64_t i0, int64_t i1, int hashing, stats_acc *a,              \
              const stats_lanes *l)
GP_CPU_STATS_FROM(gp_cpu_stats_f32_from);
GP_CPU_STATS_FROM(gp_cpu_stats_f64_from);
GP_CPU_STATS_FROM(gp_cpu_stats_i32_from);
GP_CPU_STATS_FROM(gp_cpu_stats_i64_from);
GP_CPU_STATS_FROM(gp_cpu_stats_u32_from);
GP_CPU_STATS_FROM(gp_cpu_stats_u64_from);

/* gp_cpu_stats's meaning (cpu_twins.h, gpuprim/kernels.h) with the chunk loop `chunk`, or
 * with the plain loops of cpu_stats_ref.c when chunk is NULL; failures are recorded under the
 * name `who`. Every chunk loop gives the same record bit for bit. */
int gp_cpu_stats_run(const char *who, gp_dtype t, const void *y, int64_t n, unsigned flags,
                     gp_stats *out, stats_chunk_fn chunk);

#endif /* GP_CPU_STATS_H */
