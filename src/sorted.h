/* sorted.h — this rank's part of the globally sorted data, as the phases after the sort read
 * it (the quantiles read with the sort, the distinct count): a small view, so that these
 * phases do not care where the sorted shard lives. The job's own view is the shard in
 * backend memory (j->dev, j->nk elements, values again after the verify phase); an
 * out-of-core sort that keeps its shard in host memory gives a view of its own with the
 * same contract. */
#ifndef GP_SORTED_H
#define GP_SORTED_H

#include <stdint.h>

#include "pieces.h"

struct gp_job;

typedef struct gp_sorted_view {
    int64_t n;   /* elements this rank holds, in the sorted order (NaNs last) */
    int64_t off; /* the global position of the first: the lower ranks' n summed */
    /* Element k (0 <= k < n) into host memory elem (the element size). Returns 0 or a
     * GP_EXIT_* code with j->msg set. Not collective. */
    int (*at)(struct gp_job *j, int64_t k, void *elem);
    /* Visits the n elements in order as pieces in backend memory (pieces.h's visitor: goff
     * global sorted positions, first / last of this rank's part; dx NULL), at least once (an
     * empty part: one visit with n = 0). Collective like gp_job_foreach_piece. */
    int (*foreach)(struct gp_job *j, gp_piece_fn fn, void *ctx);
} gp_sorted_view;

/* The view of this rank's sorted part after the verify phase: the shard in backend memory
 * or, out of core, in host memory visited through a device slot (n = j->nk), off from the
 * ranks' counts (MPI_Exscan). Collective. Returns 0 or a
 * GP_EXIT_* code with j->msg set (the same on every rank). */
int gp_job_sorted_view(struct gp_job *j, gp_sorted_view *v);

#endif /* GP_SORTED_H */
