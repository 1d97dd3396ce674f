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

/* Terms per chunk of the summation order. */
#define GP_CPU_CHUNK 4096

/* ---- deterministic pairwise combination of chunk sums --------------------------------- */

/* A binary-counter stack of partial sums; level[k] = log2 of the chunks covered by v[k].
 * 64 levels cover 2^64 chunks, more than any int64_t count. */
typedef struct psum {
    double v[64];
    int level[64];
    int top;
} psum;

static inline void psum_init(psum *p) { p->top = 0; }

/* Appends the sum of the next chunk (see cpu_stats_ref.c's file comment for the order). */
static inline void psum_push(psum *p, double x)
{
    int lvl = 0;
    while (p->top > 0 && p->level[p->top - 1] == lvl) {
        x = p->v[--p->top] + x; /* older + newer */
        lvl++;
    }
    p->v[p->top] = x;
    p->level[p->top] = lvl;
    p->top++;
}

/* The total: remaining partials added from the newest to the oldest; +0.0 when empty. */
static inline double psum_total(const psum *p)
{
    if (p->top == 0) return 0.0;
    double s = p->v[p->top - 1];
    for (int k = p->top - 2; k >= 0; k--) s = p->v[k] + s;
    return s;
}

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
