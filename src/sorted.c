/* sorted.c — the view of the sorted shard (sorted.h): in backend memory, or out of core
 * (ooc.h) in host memory. */
#define _POSIX_C_SOURCE 200809L
#include "sorted.h"

#include <stdio.h>
#include <string.h>

#include "jobstate.h"
#include "ooc.h"

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

/* Out of core: element k of the host's sorted shard (gp_ooc_keys: values after the verify). */
static int host_at(gp_job *j, int64_t k, void *elem)
{
    memcpy(elem, (const char *)gp_ooc_keys(j) + (size_t)k * j->sz, j->sz);
    return 0;
}

/* Out of core: the host's sorted shard uploaded into device slot 0 in pieces of
 * j->ooc->visit elements and visited; as many visits on every rank as the largest part
 * needs (an empty part: one visit of n = 0), agreed after each. */
static int host_foreach(gp_job *j, gp_piece_fn fn, void *ctx)
{
    const gp_ooc *p = j->ooc;
    int64_t off = 0, most = 0;
    if (MPI_Exscan(&j->nk, &off, 1, MPI_INT64_T, MPI_SUM, j->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&j->nk, &most, 1, MPI_INT64_T, MPI_MAX, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Exscan / MPI_Allreduce of the sorted counts failed");
        return GP_EXIT_FAIL;
    }
    if (j->rank == 0) off = 0;
    const int64_t visits = most > 0 ? (most + p->visit - 1) / p->visit : 1;
    return gp_job_visit_host(j, gp_ooc_keys(j), j->nk, off, visits, 0, fn, ctx);
}

int gp_job_sorted_view(gp_job *j, gp_sorted_view *v)
{
    v->n = j->nk;
    v->off = 0;
    v->at = j->ooc ? host_at : resident_at;
    v->foreach = j->ooc ? host_foreach : resident_foreach;
    if (MPI_Exscan(&v->n, &v->off, 1, MPI_INT64_T, MPI_SUM, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Exscan of the sorted counts failed");
        return GP_EXIT_FAIL;
    }
    if (j->rank == 0) v->off = 0;
    return 0;
}
