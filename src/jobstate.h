/* jobstate.h — the file job's shared state and its small services, the floor under the
 * phases: the job record every phase works on (gp_job, with the outputs the phases register
 * and the pieces the file's data go through), the clock, the backend call of a phase
 * (BE_CALL), the rank exchange a sort creates (jobstate.c) and the out-of-core sort's host
 * buffers as the phases see them (jobstate.c; the rest of that sort: ooc.h). Private to the
 * job's files; the phase table that drives them is job.c's, the phases' entries are ph.h's.
 * Nothing here calls a phase. */
#ifndef GP_JOBSTATE_H
#define GP_JOBSTATE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "fault.h"
#include "gpuprim/exact_sum.h"
#include "gpuprim/exchange.h"
#include "gpuprim/h5io.h"
#include "gpuprim/kernels.h"
#include "result.h"

/* A dataset of --out beside the sorted data, its argsort and its payload (a prefix scan, a
 * histogram, ...), registered by the phase that computes it (gp_job_add_output) and written
 * by the write phase in the order of registration, after those three. */
typedef struct gp_output {
    char name[GP_H5_PATHLEN]; /* its path in the file */
    hid_t file_type;          /* the stored type; H5I_INVALID_HID: the native type of mem */
    gp_dtype mem;             /* the element type in memory */
    gp_h5_extent ext;         /* its length and this rank's part (n_total the same on every
                                 rank; the parts tile [0, n_total)) */
    void *host;               /* this rank's part in host memory (malloc'ed: the job frees
                                 it), or NULL with dev */
    const void *dev;          /* or in backend memory (kept by its owner until the write),
                                 written through the job's pieces */
    int free_dev;             /* the job owns dev: be->free at its end */
} gp_output;

#define GP_MAX_OUTPUTS 8 /* registered outputs of one job */

/* How the job moves its data between the file and the backend's memory. */
typedef struct gp_xfer {
    int unified;   /* the data go straight to and from the backend's memory (host memory) */
    int64_t bytes; /* bytes per piece (0 with unified: the whole shard in one call) */
    void *buf[2];  /* otherwise the two host pieces (pinned on CUDA), reused by every read
                      and write */
} gp_xfer;

/* Everything one rank's file job knows: given, opened, planned, allocated and computed. */
typedef struct gp_job {
    /* given */
    MPI_Comm comm;
    int rank, P;
    const gp_options *o;
    const gp_backend *be;
    gp_result *res;
    char *msg;
    size_t msglen;
    gp_fault fault;
    double t[GP_NPHASES]; /* seconds per table row */
    /* open */
    gp_h5_input in, pin;  /* the data; the --payload dataset */
    int in_open, pin_open;
    gp_dtype dt;
    size_t sz;            /* bytes per element */
    int64_t N, m;         /* elements; slots per rank for the exchange, ceil(N/P) */
    int64_t off, cnt;     /* this rank's shard */
    int sorting, pairs;   /* pairs: a uint64 input position rides with every key */
    char argsort_dset[sizeof ((gp_result *)0)->sort.argsort_dset];
    /* plan */
    int chunked;
    int64_t chunk, nchunks;
    void *dev;            /* the shard (the exchange's when P > 1) */
    uint64_t *hval, *dval; /* the positions: on the host (a backend whose device memory is
                             not host memory; else NULL: dval is host memory) and on the
                             device (the exchange's when P > 1) */
    gp_exchange *xchg;    /* sorting on P > 1 ranks: the rank exchange, owner of the shard
                             (and positions) and their receive buffers */
    gp_xfer x;            /* the pieces of the file's data */
    struct gp_ooc *ooc;   /* out of core (ooc.h): the host holds the shard; NULL: the device */
    /* outputs registered by the phases (gp_job_add_output) */
    gp_output outs[GP_MAX_OUTPUTS];
    int nouts;
    /* computed */
    gp_stats local, total;
    gp_superacc av, aq;   /* --reproducible: exact sums of the values and of their squares */
    int64_t nk;           /* keys this rank holds after the exchange */
    uint64_t hash_in;     /* the input's multiset hash in key space */
} gp_job;

/* The clock of the phase times, seconds. */
static inline double now(void) { return MPI_Wtime(); }

/* 1 when the backend's device memory is host memory (the CPU backend). */
static inline int device_is_host(const gp_backend *be)
{
    return (be->caps & GP_CAP_HOST_MEMORY) != 0;
}

/* A backend call of a phase: on failure, "rank R: what: reason" in j->msg and
 * GP_EXIT_DEVICE in err (a variable of the caller); skipped once err is set. */
#define BE_CALL(what, call)                                                                 \
    do {                                                                                    \
        if (!err && (call)) {                                                               \
            err = GP_EXIT_DEVICE;                                                           \
            snprintf(j->msg, j->msglen, "rank %d: %s: %s", j->rank, what,                   \
                     j->be->last_error());                                                  \
        }                                                                                   \
    } while (0)

/* ---- jobstate.c ------------------------------------------------------------------------ */

/* The exchange transport the file job asks gp_exchange_create for: --transport as given,
 * except that auto on a backend whose memory is host memory (the CPU backend) is mpi. There
 * the shared transport's window is tmpfs memory in 4 KiB pages (transparent huge pages are
 * off for shared memory on most systems), where the mpi transport's buffers are the
 * process's own memory in 2 MiB pages, which the local sort can borrow and the write reuse
 * (gp_job_lends_spare, ph_sort.c): on the 2-core test machine the 1 GiB job at 2 ranks took
 * 6.5-7.1 s with mpi, 8.9-9.2 s with shared (bench/RESULTS.md, 2026-12-02). On the CUDA
 * backend auto stays auto (shared on the node through CUDA IPC, mpi across nodes). The
 * out-of-core sort's host exchange is on the CPU backend, so mpi too: on the H200 host (2^32
 * float32, np 4) the window's merge in place took the exchange from 4.08 s to 1.96 s, but
 * touching its 32 GiB of 4 KiB tmpfs pages took 7.7 s and releasing them 4.2 s
 * (bench/RESULTS.md, h200-d1e89d1). Pure. */
gp_transport gp_job_transport(gp_transport_choice t, int host_memory);

/* The rank exchange of a sort on P > 1 ranks on the buffers of backend be (the job's
 * backend, or the CPU backend for the host buffers of an out-of-core sort) into j->xchg.
 * Collective. Returns 0 or GP_EXIT_DEVICE with j->msg set (the same on every rank). */
int gp_job_create_exchange(gp_job *j, const gp_backend *be);

/* Out of core (ooc.h): the host buffers, the current one (the shard) and the spare, keys and
 * values (NULL without values): the host exchange's with P > 1, else j->ooc's own. */
void *gp_ooc_keys(const gp_job *j);
uint64_t *gp_ooc_vals(const gp_job *j);
void *gp_ooc_spare_keys(const gp_job *j);
uint64_t *gp_ooc_spare_vals(const gp_job *j);

#endif /* GP_JOBSTATE_H */
