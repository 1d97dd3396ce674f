/* ph_plan.c — the file job's plan phase (ph.h): a sort goes to its plan, in device memory or
 * out of core (ooc_plan.c); a statistics-only job whose shard does not fit goes through the
 * device in chunks. The memory figures it plans with: plan.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>

#include "ooc.h"
#include "ph.h"
#include "plan.h"
#include "tuning.h"

#define GP_CHUNK_MIN ((int64_t)4096) /* elements: the smallest chunk */

/* Elements per chunk for `usable` bytes: the largest power of two whose device buffers (sz
 * bytes, + 8 with --x coordinates) fit, and at least GP_CHUNK_MIN. A power-of-two multiple
 * of the CPU backend's 4096-term summation blocks keeps its sums bitwise those of an
 * unchunked run. */
static int64_t chunk_elems_for(uint64_t usable, size_t sz, int xdata)
{
    const uint64_t per = (uint64_t)sz + (xdata ? 8u : 0u);
    const uint64_t fit = usable / per;
    int64_t c = GP_CHUNK_MIN;
    while (c < ((int64_t)1 << 61) && (uint64_t)c * 2 <= fit) c *= 2;
    return c;
}

/* Rank 0's notice of a chunked statistics pass (and with --verbose every rank's line). */
static void say_chunked(const gp_job *j, uint64_t need, uint64_t usable, size_t mfree, int share)
{
    const gp_options *o = j->o;
    const uint64_t cbytes = (uint64_t)j->chunk * (j->sz + (o->xdataset ? 8 : 0));
    if (j->rank == 0)
        fprintf(stderr, "gpuprim_mpi: notice: %s:%s: a shard of %lld elements does not fit in "
                "the free device memory; processed in %lld chunks of %llu bytes (%lld elements%s)\n",
                j->in.file, j->in.dataset, (long long)j->m, (long long)j->nchunks,
                (unsigned long long)cbytes, (long long)j->chunk,
                o->xdataset ? " with their --x coordinates" : "");
    if (o->verbose)
        fprintf(stderr, "gpuprim_mpi: rank %d: shard of %lld elements needs %llu bytes, %llu "
                "usable (%zu free, shared by %d rank%s): %lld chunks of %lld elements\n",
                j->rank, (long long)j->cnt, (unsigned long long)need, (unsigned long long)usable,
                mfree, share, share == 1 ? "" : "s", (long long)((j->cnt + j->chunk - 1) / j->chunk),
                (long long)j->chunk);
    fflush(stderr);
}

/* Device memory: a sort goes to the sort's plan (gp_ooc_plan: in device memory, out of core,
 * or an error naming every tier); a statistics-only job whose shard does not fit goes
 * through the device in chunks of the same size on every rank (the largest that fits on the
 * tightest rank). */
int gp_ph_plan(gp_job *j)
{
    const gp_options *o = j->o;
    const gp_backend *be = j->be;
    int err = 0;
    size_t mfree = 0, mtotal = 0;
    {
        /* a malformed test knob: its own clean line (the backend's would name its source) */
        size_t probe = SIZE_MAX;
        char why[160];
        if (gp_mem_limit_env(&probe, why, sizeof why) != 0) {
            err = GP_EXIT_DEVICE;
            snprintf(j->msg, j->msglen, "%s", why);
        }
    }
    BE_CALL("device memory query", be->mem_info(&mfree, &mtotal));
    const int share = j->res->run.mem_share > 0 ? j->res->run.mem_share : 1;
    const uint64_t usable = gp_mem_usable(mfree, share);
    const uint64_t need = gp_job_mem_need(j->m, j->cnt, j->sz, j->P, j->sorting, j->pairs,
                                          o->xdataset != NULL);
    int64_t chunk_mine = INT64_MAX;
    if (!err && need > usable && !j->sorting)
        chunk_mine = chunk_elems_for(usable, j->sz, o->xdataset != NULL);
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (j->sorting) return gp_ooc_plan(j, need, usable, mfree, share);
    if (MPI_Allreduce(&chunk_mine, &j->chunk, 1, MPI_INT64_T, MPI_MIN, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the chunk size failed");
        return GP_EXIT_FAIL;
    }
    j->chunked = j->chunk < INT64_MAX;
    if (j->chunked) {
        j->nchunks = (j->m + j->chunk - 1) / j->chunk; /* rank 0 holds the largest shard */
        j->res->stats.chunks = j->nchunks;
        j->res->stats.chunk_elems = j->chunk;
        say_chunked(j, need, usable, mfree, share);
    }
    return 0;
}
