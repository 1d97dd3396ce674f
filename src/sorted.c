/* sorted.c — the view of the sorted shard in backend memory (sorted.h). */
#define _POSIX_C_SOURCE 200809L
#include "sorted.h"

#include <stdio.h>

#include "job_internal.h"

/* Element k of the shard in backend memory, downloaded. */
static int resident_at(gp_job *j, int64_t k, void *elem)
{
    int err = 0;
    BE_CALL("read a sorted element", j->be->download(elem, (const char *)j->dev + (size_t)k * j->sz,
                                                     j->sz));
    return err;
}

/* The shard in backend memory as one piece (an empty one too), agreed. */
static int resident_foreach(gp_job *j, gp_piece_fn fn, void *ctx)
{
    int64_t off = 0;
    MPI_Exscan(&j->nk, &off, 1, MPI_INT64_T, MPI_SUM, j->comm);
    if (j->rank == 0) off = 0; /* MPI_Exscan leaves rank 0's undefined */
    return gp_agree(j->comm, fn(j, j->dev, NULL, off, j->nk, 1, 1, ctx), j->msg, j->msglen);
}

int gp_job_sorted_view(gp_job *j, gp_sorted_view *v)
{
    v->n = j->nk;
    v->off = 0;
    v->at = resident_at;
    v->foreach = resident_foreach;
    if (MPI_Exscan(&v->n, &v->off, 1, MPI_INT64_T, MPI_SUM, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Exscan of the sorted counts failed");
        return GP_EXIT_FAIL;
    }
    if (j->rank == 0) v->off = 0;
    return 0;
}
