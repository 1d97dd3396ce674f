/* ooc_plan.c — the sort's memory plan (ooc.h): in device memory when the sort fits there on
 * every rank; else out of core on every rank, each with its runs, device slots, staging
 * pieces, host threads and host memory; or an error that names every tier when a rank's host
 * memory is short too. */
#define _POSIX_C_SOURCE 200809L
#include "ooc.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "host.h"
#include "jobstate.h"
#include "plan.h"
#include "tuning.h"

/* The ranks of this rank's node (1 when it cannot be told). Collective. */
static int node_ranks(MPI_Comm comm)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n > 0 ? n : 1;
}

/* This process's share of the node's cores: the online cores over the node's ranks, at
 * most the cores it may run on, at least 1. */
static int core_share(int local)
{
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    int share = online > 0 ? (int)(online / local) : 1;
    const int mine = gp_host_cores();
    if (share > mine) share = mine;
    return share < 1 ? 1 : share;
}

/* The largest power of two <= x (x >= 1), else 0. */
static int64_t pow2_floor(uint64_t x)
{
    if (x == 0) return 0;
    uint64_t p = 1;
    while (p <= x / 2 && p < ((uint64_t)1 << 62)) p *= 2;
    return (int64_t)p;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

/* Bytes per element of a device slot: the key, and 8 more for the positions or the --x
 * coordinates. */
static uint64_t slot_elem(const gp_job *j, const gp_ooc *p) { return j->sz + (p->aux ? 8u : 0u); }

/* This rank's runs and slots for dev_usable bytes of device memory: one run (one slot) when
 * the shard fits whole, else runs of the largest power of two (at least GP_OOC_RUN_MIN)
 * whose two slots fit; the staging pieces (GPUPRIM_READ_PIECE_BYTES, else none on a
 * host-memory backend, else GP_OOC_PIECE), never more than a slot's bytes. */
static void plan_runs(const gp_job *j, gp_ooc *p, uint64_t dev_usable)
{
    const uint64_t per = slot_elem(j, p), cnt = (uint64_t)j->cnt;
    if (mul_sat(cnt, per) <= dev_usable) {
        p->nslots = 1;
        p->slot = p->run = j->cnt > 0 ? j->cnt : 1;
    } else {
        p->nslots = 2;
        p->run = pow2_floor(dev_usable / (2 * per));
        if (p->run < GP_OOC_RUN_MIN) p->run = GP_OOC_RUN_MIN;
        p->slot = p->run;
    }
    p->nruns = j->cnt > 0 ? (j->cnt + p->run - 1) / p->run : 1;
    const int64_t knob = gp_tuning_get()->read_piece_bytes;
    p->piece = knob > 0 ? knob : device_is_host(j->be) ? 0 : GP_OOC_PIECE;
    const int64_t most = p->slot * (int64_t)per;
    if (p->piece > most) p->piece = most;
    if (p->piece > 0 && p->piece < 8) p->piece = 8;
    p->pinned = p->piece > 0 ? 4 * (uint64_t)p->piece : 0;
}

/* Bytes of host memory the plan takes on this rank: the two host buffers of m slots (keys,
 * and positions with pairs), the --x coordinates, --payload's two buffers, the staging
 * pieces, and on a host-memory backend the device slots (and the sort's scratch slot) too. */
static uint64_t host_need(const gp_job *j, const gp_ooc *p)
{
    const uint64_t m = (uint64_t)(j->m > 0 ? j->m : 0), cnt = (uint64_t)j->cnt;
    uint64_t need = mul_sat(2 * m, j->sz + (j->pairs ? 8u : 0u));
    if (j->o->xdataset) need += mul_sat(cnt, 8);
    if (j->o->payload) need += mul_sat(2 * m, gp_dtype_size(j->pin.dtype));
    need += p->pinned;
    if (device_is_host(j->be))
        need += mul_sat((uint64_t)(p->nslots + (j->be->sort_spare ? 1 : 0)) * (uint64_t)p->slot,
                        slot_elem(j, p));
    return need;
}

/* The error when a rank's host memory is short too: every tier's need and free memory. */
static void say_short(gp_job *j, uint64_t need, uint64_t usable, const gp_ooc *p)
{
    char g[5][32];
    const uint64_t dev_ooc = mul_sat((uint64_t)p->nslots * (uint64_t)p->slot, slot_elem(j, p));
    snprintf(j->msg, j->msglen, "%s:%s: sorting %lld elements on rank %d needs %s GiB of device "
             "memory, %s GiB free; out of core %s GiB of host memory, %s GiB free (%.0f MiB of "
             "it pinned), and %s GiB of device memory (use more GPUs or nodes: the ranks of a "
             "device or a node share its memory)", j->in.file, j->in.dataset, (long long)j->cnt,
             j->rank, gp_gib_text(g[0], sizeof g[0], need), gp_gib_text(g[1], sizeof g[1], usable),
             gp_gib_text(g[2], sizeof g[2], p->host_need),
             gp_gib_text(g[3], sizeof g[3], p->host_usable), (double)p->pinned / 1048576.0,
             gp_gib_text(g[4], sizeof g[4], dev_ooc));
}

/* --verbose: this rank's plan; out of core, rank 0's notice. */
static void say_plan(const gp_job *j, uint64_t need, uint64_t usable, size_t mfree, int share,
                     int local, int64_t most_runs)
{
    const gp_ooc *p = j->ooc;
    char g[4][32];
    if (p && j->rank == 0)
        fprintf(stderr, "gpuprim_mpi: notice: %s:%s: a shard of %lld elements does not fit in "
                "the free device memory of every rank; sorted out of core through host memory "
                "(at most %lld runs per rank)\n", j->in.file, j->in.dataset, (long long)j->m,
                (long long)most_runs);
    if (!j->o->verbose) return;
    if (!p)
        fprintf(stderr, "gpuprim_mpi: rank %d: plan: in device memory: %s GiB needed, %s GiB "
                "usable (%zu bytes free, shared by %d rank%s)\n", j->rank,
                gp_gib_text(g[0], sizeof g[0], need), gp_gib_text(g[1], sizeof g[1], usable),
                mfree, share, share == 1 ? "" : "s");
    else
        fprintf(stderr, "gpuprim_mpi: rank %d: plan: out of core: %lld run%s of %lld elements "
                "(%d device slot%s of %.1f MiB, %s GiB usable), %.0f MiB pinned, host memory "
                "%s GiB needed, %s GiB usable (shared by %d rank%s), %d thread%s\n", j->rank,
                (long long)p->nruns, p->nruns == 1 ? "" : "s", (long long)p->run, p->nslots,
                p->nslots == 1 ? "" : "s",
                (double)p->slot * (double)slot_elem(j, p) / 1048576.0,
                gp_gib_text(g[0], sizeof g[0], usable), (double)p->pinned / 1048576.0,
                gp_gib_text(g[2], sizeof g[2], p->host_need),
                gp_gib_text(g[3], sizeof g[3], p->host_usable), local, local == 1 ? "" : "s",
                p->threads, p->threads == 1 ? "" : "s");
    fflush(stderr);
}

/* The out-of-core plan of this rank into a new j->ooc: runs, slots, pieces, threads, host
 * memory. Returns 0, or GP_EXIT_DEVICE with the tiers' line (host memory short), or
 * GP_EXIT_FAIL (out of host memory). */
static int plan_ooc(gp_job *j, uint64_t need, uint64_t usable, int local)
{
    gp_ooc *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(j->msg, j->msglen, "rank %d: out of host memory", j->rank);
        return GP_EXIT_FAIL;
    }
    j->ooc = p;
    p->aux = j->pairs || j->o->xdataset != NULL;
    p->threads = gp_host_threads();
    p->dev_usable = usable;
    plan_runs(j, p, usable);
    size_t havail = 0, htotal = 0;
    (void)gp_host_mem_info(&havail, &htotal, NULL, 0); /* the knob was checked */
    p->host_usable = gp_mem_usable(havail, local);
    p->host_need = host_need(j, p);
    if (p->host_need > p->host_usable) {
        say_short(j, need, usable, p);
        return GP_EXIT_DEVICE;
    }
    return 0;
}

/* The pieces of a visit (gp_job_foreach_piece): as many on every rank, the most any rank's
 * slot needs for its shard; each rank cuts its shard into that many pieces of equal length
 * rounded up to a multiple of GP_OOC_RUN_MIN (within its slot), so that the blocks of the
 * backends' scans (64 elements on the CPU, 4096 on CUDA) start where they start in one call
 * on the whole shard (the CPU's scans then give its bits). A rank whose pieces end early
 * visits the rest with none. */
static int plan_visits(gp_job *j)
{
    gp_ooc *p = j->ooc;
    int64_t mine = j->cnt > 0 ? (j->cnt + p->slot - 1) / p->slot : 1, all = 1;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_MAX, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the visit pieces failed");
        return GP_EXIT_FAIL;
    }
    p->nvisits = all;
    int64_t v = j->cnt > 0 ? (j->cnt + all - 1) / all : 0;
    v = (v + GP_OOC_RUN_MIN - 1) / GP_OOC_RUN_MIN * GP_OOC_RUN_MIN;
    p->visit = v < p->slot ? v : p->slot; /* a slot of runs: a multiple of GP_OOC_RUN_MIN */
    return 0;
}

int gp_ooc_plan(gp_job *j, uint64_t need, uint64_t usable, size_t mfree, int share)
{
    const int local = node_ranks(j->comm);
    gp_host_threads_share(core_share(local));
    char why[160];
    int err = 0, fits = need <= usable, all = 0;
    if (gp_host_mem_info(NULL, NULL, why, sizeof why) != 0) { /* a malformed test knob */
        err = GP_EXIT_DEVICE;
        snprintf(j->msg, j->msglen, "%s", why);
    }
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (MPI_Allreduce(&fits, &all, 1, MPI_INT, MPI_MIN, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the memory plan failed");
        return GP_EXIT_FAIL;
    }
    if (!all) err = plan_ooc(j, need, usable, local);
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    int64_t most = 0;
    if (j->ooc) {
        if ((err = plan_visits(j))) return err;
        if (MPI_Allreduce(&j->ooc->nruns, &most, 1, MPI_INT64_T, MPI_MAX, j->comm) != MPI_SUCCESS) {
            snprintf(j->msg, j->msglen, "MPI_Allreduce of the run counts failed");
            return GP_EXIT_FAIL;
        }
        j->res->sort.runs = most;
    }
    say_plan(j, need, usable, mfree, share, local, most);
    return 0;
}
