/* job_internal.h — the file job's record and what its phases share; private to the job's
 * files: job.c (the phase table and its runner; open, alloc, read), plan.c (the memory
 * plan), pipeline.c (the pieces between the file and the backend's memory), pieces.c and
 * sorted.c (the shard as the phases visit it), ooc_plan.c and ooc_stage.c (the out-of-core
 * sort, ooc.h) and one ph_*.c file per concept (ph_stats.c, ph_ooc.c, ph_scan.c, ph_hist.c,
 * ph_select.c, ph_sort.c, ph_write.c).
 *
 * A phase is a function int ph(gp_job *j): it does its work and returns 0 or a GP_EXIT_*
 * code with j->msg set; run_phase (job.c) does the rest. A new phase: its function in a
 * ph_*.c file of its own (declared below), its word in phases.h, and a row of job.c's
 * table with its wanted() predicate. */
#ifndef GP_JOB_INTERNAL_H
#define GP_JOB_INTERNAL_H

#include <stdio.h>

#include "fault.h"
#include "gpuprim/exact_sum.h"
#include "gpuprim/h5io.h"
#include "job.h"
#include "pipeline.h"

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
} gp_output;

#define GP_MAX_OUTPUTS 8 /* registered outputs of one job */

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

/* ---- the phases outside job.c, in the table's order (their contracts: at each) ---------- */

int gp_ph_plan(gp_job *j);          /* plan.c: device memory, whole shard or chunks */
int gp_ph_stats_chunked(gp_job *j); /* ph_stats.c: read + statistics chunk by chunk */
int gp_ph_stats(gp_job *j);         /* ph_stats.c: the statistics of the shard */
int gp_ph_integral(gp_job *j);      /* ph_stats.c: the --x trapezoid rule */
int gp_ph_combine(gp_job *j);       /* ph_stats.c: the ranks' records combined */
int gp_ph_scan(gp_job *j);          /* ph_scan.c: --cumsum, --cumulative-integral */
int gp_ph_sort(gp_job *j);          /* ph_sort.c: order keys, the local sort */
int gp_ph_exchange(gp_job *j);      /* ph_sort.c: the rank-level merge exchange */
int gp_ph_verify(gp_job *j);        /* ph_sort.c: the sorted result checked */
int gp_ph_hist(gp_job *j);          /* ph_hist.c: --histogram over the input's pieces */
int gp_ph_select(gp_job *j);        /* ph_select.c: --quantiles without the sort */
int gp_ph_quant_sorted(gp_job *j);  /* ph_select.c: --quantiles from the sorted data */
int gp_ph_distinct(gp_job *j);      /* ph_select.c: --distinct from the sorted data */
int gp_ph_write(gp_job *j);         /* ph_write.c: the sorted data to --out */

int gp_ph_ooc_runs(gp_job *j);      /* ph_ooc.c: out of core, the runs through the device */
int gp_ph_ooc_merge(gp_job *j);     /* ph_ooc.c: out of core, the runs merged on the host */
int gp_ph_ooc_verify(gp_job *j);    /* ph_ooc.c: out of core, the check on the host */
/* Two dataset paths of the output file clash: the same path, or one a group above the
 * other ("/a_argsort" and "/a_argsort/x"); an empty path clashes with none. Pure. */
int gp_job_name_clash(const char *a, const char *b);

/* Registers *out (copied; its host buffer becomes the job's) as a dataset of --out, written
 * after the sorted data, argsort and payload (ph_write.c). Every rank registers the same
 * datasets in the same order, also with an empty part. Returns 0, or GP_EXIT_USAGE with
 * j->msg set when GP_MAX_OUTPUTS are registered already or the name clashes with another
 * output's (the same path, or one a group above the other). Not collective: the same
 * outcome on every rank. */
int gp_job_add_output(gp_job *j, const gp_output *out);

/* Whether the exchange's spare buffer serves the local sort as its scratch and is given back
 * before the write (ph_sort.c). */
int gp_job_lends_spare(const gp_job *j);

/* The verify phase's end (ph_sort.c): this rank's statistics of its sorted keys (with
 * GP_STATS_ORDER) combined over the ranks and checked against the input, into the result
 * record. Collective. Returns 0 or GP_EXIT_FAIL. */
int gp_verify_finish(gp_job *j, const gp_stats *mine);

/* The rank exchange of a sort on P > 1 ranks on the buffers of backend be (job.c: the job's
 * backend, or the CPU backend for the host buffers of an out-of-core sort). Collective.
 * Returns 0 or GP_EXIT_DEVICE with j->msg set (the same on every rank). */
int gp_job_create_exchange(gp_job *j, const gp_backend *be);

/* The statistics of pieces visited in input order (ph_stats.c): each piece's record pushed
 * onto a binary counter of records (older, newer combined whenever two cover as many
 * pieces), whose total describes the pieces like one be->stats call on them. */
typedef struct gp_stats_stack {
    gp_stats v[64];
    int level[64];
    int top;
} gp_stats_stack;

void gp_stats_stack_push(gp_stats_stack *s, const gp_stats *rec);
gp_stats gp_stats_stack_total(const gp_stats_stack *s);

/* A gp_piece_fn (pieces.h) whose ctx is a gp_stats_stack: the piece's statistics (with the
 * multiset hash when sorting), --reproducible's exact sums into j->av / j->aq and with dx
 * the --x rule, its record pushed; books reduce and integrate. */
int gp_stats_piece(gp_job *j, const void *dev, const double *dx, int64_t goff, int64_t n,
                   int first, int last, void *ctx);

#endif /* GP_JOB_INTERNAL_H */
