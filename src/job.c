/* job.c — the gpuprim_mpi job as a list of named phases.
 *
 * The file job (gp_run_file) is the table `file_phases` below, run in order on every rank
 * (the phases' entries: ph.h; their record: jobstate.h; their names: phases.h):
 *
 *   open        the input dataset (and the --x and --payload ones, checked now); the
 *               space --out will take, checked against its file system (setup.c)
 *   plan        memory: the sort in device memory or out of core (ooc_plan.c), or the
 *               chunks of a statistics-only job (ph_plan.c; the figures: plan.c)
 *   alloc       the buffers and the rank exchange (device memory; on the CUDA backend the
 *               pinned host pieces the file's data go through, pipeline.c)
 *   read        this rank's shard, read and uploaded (overlapped, pipeline.c), with the --io
 *               driver
 *   stats       the statistics of the shard (or, chunked, read + upload + statistics per
 *               chunk; ph_stats.c)
 *   runs        out of core (ooc.h): the shard through the device in runs, each with its
 *               statistics, keys and sort (ph_ooc.c, ooc_stage.c)
 *   integral    the --x trapezoid rule (coordinates read and uploaded; ph_stats.c)
 *   combine     the ranks' records combined in rank order; --reproducible's exact sums
 *               (ph_stats.c)
 *   scan        --cumsum, --cumulative-integral: the shard's prefix scans in input order,
 *               carried from rank to rank, into host memory for the write (ph_scan.c; out
 *               of core from the host's copy of the shard, still in input order)
 *   histogram   --histogram over the input's pieces, counts summed (ph_hist.c)
 *   quantiles   --quantiles / --median with --no-sort: a radix select over the input's
 *               pieces (ph_select.c)
 *   sort        order keys, the local bitonic sort (ph_sort.c); out of core, the merge of
 *               the runs on the host's threads (ph_ooc.c)
 *   exchange    the rank-level bitonic merge exchange (P > 1; ph_sort.c)
 *   verify      the sorted result checked; keys back to values (ph_sort.c; out of core on
 *               the host, ph_ooc.c)
 *   quantiles   --quantiles / --median read from the sorted data (ph_select.c; sorted.c's
 *               view of it, in device or, out of core, host memory)
 *   distinct    --distinct: the runs of the sorted data (ph_select.c)
 *   write       the sorted data (argsort, payload), the scans and the registered outputs
 *               (the histogram) to --out under a temporary name, the values streamed from
 *               the device or, out of core, from host memory (ph_write.c)
 *
 * One helper, run_phase, does for every phase what the phase itself should not repeat: the
 * progress line, the GPUPRIM_FAULT hook, the time and the agreement of the ranks on an
 * error. A phase function does its work and returns 0 or a GP_EXIT_* code with j->msg set;
 * it needs to agree with the other ranks itself only before a collective call inside it.
 * After a failed phase the later ones are skipped on every rank alike. A new phase is a
 * function in a file of its own, a word in phases.h and a row of the table with its
 * wanted() predicate. This file also runs the function job (gp_run_function). */
#define _POSIX_C_SOURCE 200809L
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnslice.h"
#include "ooc.h"
#include "ph.h"
#include "pipeline.h"
#include "progress.h"
#include "startup.h"

/* What run_phase leaves to a phase that does it itself (gp_phase.own). */
enum {
    OWN_LINE = 1,  /* its progress lines (its word's line is not started) */
    OWN_TIME = 2,  /* its times, in the rows they belong to (its word's row gets none) */
    OWN_FAULT = 4, /* its GPUPRIM_FAULT hook, fired where the failure is real */
};

/* A phase of the table: its function, when it runs, and what run_phase does around it. */
typedef struct gp_phase {
    int (*run)(gp_job *j);
    int (*wanted)(const gp_job *j); /* NULL: always */
    gp_phase_id word;               /* its names (phases.h): the time row its time counts
                                       towards, its progress line, its GPUPRIM_FAULT name */
    int own;                        /* OWN_*: what the phase does itself */
    int fault_code;                 /* exit code of an injected failure; 0: abort the job */
} gp_phase;

/* Runs phase ph when no earlier one failed and it is wanted: progress, fault hook, time,
 * agreement. Collective. */
static int run_phase(gp_job *j, const gp_phase *ph, int err)
{
    if (err || (ph->wanted && !ph->wanted(j))) return err;
    const char *line = ph->own & OWN_LINE ? NULL : gp_phase_progress(ph->word);
    const char *fault = ph->own & OWN_FAULT ? NULL : gp_phase_fault(ph->word);
    if (line) gp_progress_phase(line);
    gp_proc_phase(gp_phase_label(ph->word)); /* the fatal-signal line's phase (startup.h) */
    const double t0 = now();
    if (fault) { /* an injected failure is agreed on before the phase's collectives */
        if (gp_fault_fire(&j->fault, j->rank, fault)) {
            if (ph->fault_code == 0) { /* a rank lost inside a point-to-point phase */
                fprintf(stderr, "gpuprim_mpi: error: rank %d: injected failure in phase %s "
                                "(GPUPRIM_FAULT); aborting the job\n", j->rank, fault);
                fflush(stderr);
                MPI_Abort(j->comm, gp_exit_status(GP_EXIT_DEVICE));
            }
            err = ph->fault_code;
            snprintf(j->msg, j->msglen, "rank %d: injected failure in phase %s (GPUPRIM_FAULT)",
                     j->rank, fault);
        }
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    if (!err) err = ph->run(j);
    if (!(ph->own & OWN_TIME)) j->t[gp_phase_words[ph->word].row] += now() - t0;
    if (line) gp_progress_done();
    return gp_agree(j->comm, err, j->msg, j->msglen);
}

/* ---- open ------------------------------------------------------------------------------ */

/* Appends " (OPTION)" to an error message about the dataset that option names. */
static void append_option(char *msg, size_t msglen, const char *option)
{
    const size_t l = strnlen(msg, msglen);
    if (l + 1 < msglen) snprintf(msg + l, msglen - l, " (%s)", option);
}

/* --x is opened once here, so that a missing or unusable one is found before the work and
 * named as --x. */
static int check_xdataset(gp_job *j)
{
    gp_h5_input xin;
    int err = gp_h5_open_io(j->comm, j->o->file, j->o->xdataset, j->o->io, &xin, j->msg,
                            j->msglen);
    if (err) append_option(j->msg, j->msglen, "--x");
    else gp_h5_close(&xin);
    return err;
}

/* --payload: opened and checked now, before any work (it is written last): the same element
 * count, and an output path apart from the data's and the argsort's; kept open for the
 * write. The outcome is the same on every rank (gp_h5_open agrees; the records are alike). */
static int open_payload(gp_job *j)
{
    const gp_options *o = j->o;
    int err = gp_h5_open_io(j->comm, o->file, o->payload, o->io, &j->pin, j->msg, j->msglen);
    if (err) {
        append_option(j->msg, j->msglen, "--payload");
        return err;
    }
    j->pin_open = 1;
    if (j->pin.n != j->N || gp_job_name_clash(j->pin.dataset, j->in.dataset) ||
        gp_job_name_clash(j->pin.dataset, j->argsort_dset)) {
        snprintf(j->msg, j->msglen, "%s: --payload %s: %s", o->file, j->pin.dataset,
                 j->pin.n != j->N ? "needs the same element count as the data"
                                  : "must be another dataset than the data and its argsort, "
                                    "and not inside or above either in the output file's "
                                    "paths");
        return GP_EXIT_DATASET;
    }
    return 0;
}

/* Rank 0: the space --out will take (values, argsort, payload, metadata) against its file
 * system's free space, before a byte of data is read (gp_check_out_space). GPUPRIM_FAULT's
 * space hook passes it blindly, as a file system that has lost the space by the write would
 * (the writer's reservation then fails). */
static int check_out_space(gp_job *j)
{
    if (gp_fault_hits(&j->fault, j->rank, gp_phase_fault(GP_PH_SPACE))) return 0;
    const size_t vb = H5Tget_size(j->in.ftype);
    const size_t pb = j->pin_open ? H5Tget_size(j->pin.ftype) : 0;
    const uint64_t need = gp_out_bytes_need(j->N, vb, j->o->argsort, pb);
    return gp_check_out_space(j->o->out, need, j->msg, j->msglen);
}

/* The input dataset, this rank's shard, what the result record says of the input; --x and
 * --payload checked; the space --out needs checked. */
static int ph_open(gp_job *j)
{
    const gp_options *o = j->o;
    gp_result_input *res = &j->res->in;
    int err = gp_h5_open_io(j->comm, o->file, o->dataset, o->io, &j->in, j->msg, j->msglen);
    if (err) return err;
    j->in_open = 1;
    res->io = j->in.io;
    j->dt = j->in.dtype;
    j->sz = gp_dtype_size(j->dt);
    j->N = j->in.n;
    j->m = (j->N + j->P - 1) / j->P;
    gp_shard_range(j->N, j->P, j->rank, &j->off, &j->cnt);
    j->nk = j->cnt;
    snprintf(res->file, sizeof res->file, "%s", j->in.file);
    snprintf(res->dataset, sizeof res->dataset, "%s", j->in.dataset);
    snprintf(res->type_desc, sizeof res->type_desc, "%s", j->in.type_desc);
    _Static_assert(GP_H5_MAXDIMS <= sizeof res->dims / sizeof res->dims[0],
                   "gp_result_input.dims holds every dimension");
    res->ndims = j->in.ndims;
    for (int d = 0; d < res->ndims; d++) res->dims[d] = (int64_t)j->in.dims[d];
    res->dtype = j->dt;
    res->n = j->N;
    j->res->stats.dx = o->dx;
    j->res->sort.out = o->out;

    if (o->xdataset && (err = check_xdataset(j))) return err;
    if (o->argsort)
        snprintf(j->argsort_dset, sizeof j->argsort_dset, "%s_argsort", j->in.dataset);
    if (o->payload && (err = open_payload(j))) return err;
    if (o->out && j->rank == 0 && (err = check_out_space(j))) return err;

    j->sorting = !o->no_sort;
    j->pairs = j->sorting && (o->stable || o->argsort || o->payload);
    /* a stored float wider than 8 bytes (long double, quad) is sorted as float64, so --out,
     * written in the stored type, holds values rounded to float64 */
    if (o->out && j->sorting && j->rank == 0 && H5Tget_class(j->in.ftype) == H5T_FLOAT &&
        H5Tget_size(j->in.ftype) > 8)
        fprintf(stderr, "gpuprim_mpi: notice: %s:%s is %s, read as float64: --out %s holds its "
                "values rounded to float64 (beyond its range: inf or 0)\n",
                j->in.file, j->in.dataset, j->in.type_desc, o->out);
    return 0;
}

/* ---- alloc ----------------------------------------------------------------------------- */

/* The buffers of a sort in device memory (or a statistics pass): the shard lives in m slots
 * so that the exchange can grow it to m keys; with P > 1 the exchange owns it and its
 * receive buffer; with pairs the positions (a chunked pass allocates its own, chunk-sized
 * buffers; the positions are made on the device and come to pageable host memory only for
 * the write). Host memory: on the CUDA backend the two pinned pieces the file's data go
 * through (j->x); a backend whose device memory is host memory reads and writes the shard
 * directly. Collective (the exchange). */
static int alloc_device(gp_job *j)
{
    const gp_backend *be = j->be;
    const int64_t m = j->m;
    const int64_t span = j->chunked && j->chunk < m ? j->chunk : m; /* the largest read */
    int err = gp_pieces_alloc(j, span);
    if (err) return err;
    if (j->sorting && j->P > 1) {
        if ((err = gp_job_create_exchange(j, be))) return err;
        j->dev = gp_exchange_keys(j->xchg);
        j->dval = gp_exchange_values(j->xchg);
    }
    if (j->pairs && !j->xchg) j->dval = be->alloc((size_t)m * 8);
    const int vals_missing = j->pairs && !j->dval;
    if (!j->chunked) {
        if (!j->xchg) j->dev = be->alloc((size_t)m * j->sz);
        if (!j->dev || vals_missing) {
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate %lld elements (%.1f MiB) of %s memory: %s",
                     j->rank, (long long)m, (double)m * j->sz / 1048576.0, be->name,
                     be->last_error());
            return GP_EXIT_DEVICE;
        }
    }
    return 0;
}

/* The buffers: in device memory (alloc_device) or out of core (gp_ooc_alloc, ooc.h).
 * GPUPRIM_FAULT=R:alloc makes a real allocation of 2^62 bytes fail on rank R, so that the
 * path of a genuine out-of-memory is what the test exercises. Collective (the exchange). */
static int ph_alloc(gp_job *j)
{
    const gp_backend *be = j->be;
    int err = j->ooc ? gp_ooc_alloc(j) : alloc_device(j);
    if (err) return err;
    if (gp_fault_fire(&j->fault, j->rank, gp_phase_fault(GP_PH_ALLOC))) {
        const size_t huge = (size_t)1 << 62;
        void *p = be->alloc(huge);
        if (!p) {
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate %zu bytes of %s memory: %s",
                     j->rank, huge, be->name, be->last_error());
            return GP_EXIT_DEVICE;
        }
        be->free(p);
    }
    gp_proc_mark(GP_STEP_FIRST_ALLOC);
    return 0;
}

/* Frees what ph_alloc allocated and closes what ph_open opened. The device memory and the
 * pinned host memory are left to the process's exit where gp_proc_leave_memory says so (the
 * program exits right after the job); the exchange is destroyed in any case (collectively:
 * every rank gets here), as MPI's windows must be freed before MPI_Finalize. */
static void job_release(gp_job *j)
{
    const gp_backend *be = j->be;
    void *host[] = {j->x.buf[0], j->x.buf[1]};
    if (j->hval) gp_backend_cpu()->free(j->hval); /* pageable (ph_write.c) */
    if (j->ooc) gp_ooc_release(j);
    void *dev[] = {j->dval, j->dev};
    const int leave = gp_proc_leave_memory(be);
    for (size_t k = 0; k < sizeof host / sizeof host[0] && !leave; k++)
        if (host[k]) be->host_free(host[k]);
    for (size_t k = 0; k < sizeof dev / sizeof dev[0] && !j->xchg && !leave; k++)
        if (dev[k]) be->free(dev[k]);
    if (j->xchg) gp_exchange_destroy(j->xchg);
    if (j->pin_open) gp_h5_close(&j->pin);
    if (j->in_open) gp_h5_close(&j->in);
    for (int k = 0; k < j->nouts; k++) {
        free(j->outs[k].host);
        if (j->outs[k].free_dev && !leave) be->free((void *)j->outs[k].dev);
    }
}

/* ---- read ------------------------------------------------------------------------------ */

/* The shard read and uploaded; a chunked job reads its chunks in its statistics pass. */
static int ph_read(gp_job *j)
{
    if (j->chunked) return 0;
    if (j->ooc) return gp_ooc_read(j);
    gp_h5_reader *r = NULL;
    int err = gp_open_reader(j, NULL, j->dt, &r);
    if (!err) err = gp_read_upload(j, r, j->sz, j->off, j->cnt, j->m, j->dev, 1);
    gp_h5_reader_close(r);
    return err;
}

/* ---- the file job ---------------------------------------------------------------------- */

static int is_chunked(const gp_job *j) { return j->chunked; }
static int resident(const gp_job *j) { return !j->chunked && !j->ooc; }
static int integral_x(const gp_job *j) { return resident(j) && j->o->xdataset != NULL; }
static int device_sort(const gp_job *j) { return j->sorting && !j->ooc; }
static int out_of_core(const gp_job *j) { return j->ooc != NULL; }
static int exchanging(const gp_job *j) { return j->sorting && j->P > 1; }
static int writing(const gp_job *j) { return j->o->out != NULL; }
static int histogram(const gp_job *j) { return j->o->hist_bins > 0; }
static int select_unsorted(const gp_job *j) { return j->o->nq > 0 && !j->sorting; }
static int quantiles_sorted(const gp_job *j)
{
    return j->o->nq > 0 && j->sorting && j->res->sort.ok;
}
static int distinct(const gp_job *j) { return j->o->distinct && j->sorting && j->res->sort.ok; }
static int scanning(const gp_job *j) { return j->o->cumsum || j->o->cumint; }

/* The file job, phase by phase (see the file comment; the names of each word: phases.c).
 * Opening and planning count towards the read row of the table. */
static const gp_phase file_phases[] = {
    /* run                wanted       word             own                  fault code */
    {ph_open,             NULL,        GP_PH_OPEN,      0,                   0},
    {gp_ph_plan,          NULL,        GP_PH_PLAN,      0,                   0},
    {ph_alloc,            NULL,        GP_PH_ALLOC,     OWN_FAULT,           0},
    {ph_read,             NULL,        GP_PH_READ,      OWN_TIME,            GP_EXIT_READ},
    {gp_ph_stats_chunked, is_chunked,  GP_PH_REDUCE,    OWN_TIME,            GP_EXIT_DEVICE},
    {gp_ph_stats,         resident,    GP_PH_REDUCE,    0,                   GP_EXIT_DEVICE},
    {gp_ph_ooc_runs,      out_of_core, GP_PH_RUNS,      OWN_TIME | OWN_FAULT, GP_EXIT_DEVICE},
    {gp_ph_integral,      integral_x,  GP_PH_INTEGRATE, OWN_LINE | OWN_TIME, 0},
    {gp_ph_combine,       NULL,        GP_PH_COMBINE,   0,                   0},
    {gp_ph_scan,          scanning,    GP_PH_SCAN,      OWN_TIME,            GP_EXIT_DEVICE},
    {gp_ph_hist,          histogram,   GP_PH_HIST,      0,                   GP_EXIT_DEVICE},
    {gp_ph_select,        select_unsorted, GP_PH_QUANT, 0,                   GP_EXIT_DEVICE},
    {gp_ph_sort,          device_sort, GP_PH_SORT,      0,                   GP_EXIT_DEVICE},
    {gp_ph_ooc_merge,     out_of_core, GP_PH_MERGE,     0,                   GP_EXIT_DEVICE},
    {gp_ph_exchange,      exchanging,  GP_PH_EXCHANGE,  0,                   0},
    {gp_ph_verify,        device_sort, GP_PH_VERIFY,    0,                   0},
    {gp_ph_ooc_verify,    out_of_core, GP_PH_VERIFY,    0,                   0},
    {gp_ph_quant_sorted,  quantiles_sorted, GP_PH_QUANT, 0,                  GP_EXIT_DEVICE},
    {gp_ph_distinct,      distinct,    GP_PH_DISTINCT,  0,                   GP_EXIT_DEVICE},
    {gp_ph_write,         writing,     GP_PH_WRITE,     0,                   GP_EXIT_WRITE},
};

int gp_run_file(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                char *msg, size_t msglen)
{
    const double t0 = now();
    gp_job j;
    memset(&j, 0, sizeof j);
    j.t[GP_PH_STARTUP] = gp_proc_since_main();
    gp_proc_mark(GP_STEP_FIRST_PHASE);
    j.comm = comm;
    MPI_Comm_rank(comm, &j.rank);
    MPI_Comm_size(comm, &j.P);
    j.o = o;
    j.be = be;
    j.res = res;
    j.msg = msg;
    j.msglen = msglen;
    gp_fault_from_env(&j.fault);
    gp_fault_set_io(&j.fault, j.rank); /* pread, pwrite, tmpfile: io/'s test hooks */
    gp_set_chunk_reads(res->run.node_ranks); /* the direct chunk path and its threads */
    gp_superacc_zero(&j.av);
    gp_superacc_zero(&j.aq);

    int err = 0;
    for (size_t k = 0; k < sizeof file_phases / sizeof file_phases[0]; k++)
        err = run_phase(&j, &file_phases[k], err);

    j.t[GP_PH_TOTAL] = now() - t0;
    gp_proc_mark(GP_STEP_LAST_PHASE);
    gp_proc_phase("teardown");
    job_release(&j);
    gp_proc_mark(GP_STEP_FREES);
    MPI_Reduce(j.t, res->run.t, GP_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    const gp_result_sort *rs = &res->sort;
    if (!err && rs->done && !rs->ok) {
        err = GP_EXIT_VERIFY;
        snprintf(msg, msglen, "%s: %s: the sorted result failed its check (%lld descents, count %lld vs %lld)",
                 res->in.file, res->in.dataset, (long long)rs->descents,
                 (long long)rs->stats.count, (long long)res->stats.global.count);
    }
    return err;
}

/* ---- the function job ------------------------------------------------------------------ */

int gp_run_function(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                    char *msg, size_t msglen)
{
    int rank, P, err = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    double t0 = now(), t[GP_NPHASES] = {0};
    t[GP_PH_STARTUP] = gp_proc_since_main();
    gp_proc_mark(GP_STEP_FIRST_PHASE);
    gp_proc_phase(gp_phase_label(GP_PH_INTEGRATE));
    /* b < a: minus the rule over [b, a] (bitwise); a == b: 0 */
    const int reversed = o->b < o->a;
    const double lo = reversed ? o->b : o->a, hi = reversed ? o->a : o->b;
    const double h = (hi - lo) / (double)o->n;
    int64_t i0, cnt;
    gp_shard_range(o->n + 1, P, rank, &i0, &cnt); /* n + 1 points */
    gp_stats s = gp_stats_empty(), total;
    s.has_x = 0;
    double w = 0.0;
    gp_progress_phase(gp_phase_progress(GP_PH_INTEGRATE));
    /* in slices the progress line counts; rank 0 warns of a run longer than an hour */
    const gp_fn_warn warn = {rank == 0 ? stderr : NULL, gp_func_name(o->func), o->n, 1.0, 3600.0};
    if (gp_trap_fn_sliced(be, o->func, lo, h, o->n, i0, i0 + cnt,
                          device_is_host(be) ? GP_FN_SLICE_CPU : GP_FN_SLICE_GPU, &warn, &w)) {
        err = GP_EXIT_DEVICE;
        snprintf(msg, msglen, "rank %d: trapezoid rule: %s", rank, be->last_error());
    }
    s.count = cnt;
    s.sum = w;
    t[GP_PH_INTEGRATE] = now() - t0;
    gp_progress_done();
    err = gp_agree(comm, err, msg, msglen);
    if (!err && gp_stats_reduce(comm, &s, &total, 0) != MPI_SUCCESS) {
        err = GP_EXIT_FAIL;
        snprintf(msg, msglen, "MPI_Reduce of the partial integrals failed");
    }
    t[GP_PH_TOTAL] = now() - t0;
    gp_proc_mark(GP_STEP_LAST_PHASE);
    gp_proc_phase("teardown");
    MPI_Reduce(t, res->run.t, GP_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    res->run.function_mode = 1;
    gp_result_function *fn = &res->fn;
    fn->func = o->func;
    fn->a = o->a;
    fn->b = o->b;
    fn->h = reversed ? -h : h;
    fn->ntrap = o->n;
    if (!err && rank == 0) {
        fn->integral = o->a == o->b ? 0.0 : reversed ? -(h * total.sum) : h * total.sum;
        fn->exact = gp_func_exact(o->func, o->a, o->b);
    }
    return err;
}
