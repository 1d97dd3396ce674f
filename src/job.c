/* job.c — the gpuprim_mpi job as a list of named phases.
 *
 * The file job (gp_run_file) is the table `file_phases` below, run in order on every rank:
 *
 *   open        the input dataset (and the --x and --payload ones, checked now)
 *   plan        device memory: the sort's need, or the chunks of a statistics-only job
 *   alloc       the buffers and the rank exchange (device memory; on the CUDA backend the
 *               pinned host pieces the file's data go through)
 *   read        this rank's shard, read and uploaded (overlapped), with the --io driver
 *   stats       the statistics of the shard (or, chunked, read + upload + statistics per
 *               chunk)
 *   integral    the --x trapezoid rule (coordinates read and uploaded)
 *   combine     the ranks' records combined in rank order; --reproducible's exact sums
 *   sort        order keys, the local bitonic sort
 *   exchange    the rank-level bitonic merge exchange (P > 1)
 *   verify      the sorted result checked; keys back to values
 *   write       the sorted data (argsort, payload) to --out under a temporary name, the
 *               values streamed from the device
 *
 * One helper, run_phase, does for every phase what the phase itself should not repeat: the
 * progress line, the GPUPRIM_FAULT hook, the time and the agreement of the ranks on an
 * error. A phase function does its work and returns 0 or a GP_EXIT_* code with j->msg set;
 * it needs to agree with the other ranks itself only before a collective call inside it.
 * After a failed phase the later ones are skipped on every rank alike. */
#define _POSIX_C_SOURCE 200809L
#include "job.h"
#include "tuning.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "gpuprim/exact_sum.h"
#include "gpuprim/h5io.h"
#include "progress.h"

const char *const gp_phase_names[GP_NPHASES] = {
    "alloc", "read", "upload", "reduce", "integrate", "local sort", "rank exchange", "verify",
    "write", "total"};

/* How the job moves its data between the file and the backend's memory. */
typedef struct xfer {
    int unified;   /* the data go straight to and from the backend's memory (host memory) */
    int64_t bytes; /* bytes per piece (0 with unified: the whole shard in one call) */
    void *buf[2];  /* otherwise the two host pieces (pinned on CUDA), reused by every read
                      and write */
} xfer;

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
    char argsort_dset[sizeof ((gp_result *)0)->argsort_dset];
    /* plan */
    int chunked;
    int64_t chunk, nchunks;
    void *dev;            /* the shard (the exchange's when P > 1) */
    uint64_t *hval, *dval; /* the positions: on the host (a backend whose device memory is
                             not host memory; else NULL: dval is host memory) and on the
                             device (the exchange's when P > 1) */
    gp_exchange *xchg;    /* sorting on P > 1 ranks: the rank exchange, owner of the shard
                             (and positions) and their receive buffers */
    xfer x;               /* the pieces of the file's data */
    /* computed */
    gp_stats local, total;
    gp_superacc av, aq;   /* --reproducible: exact sums of the values and of their squares */
    int64_t nk;           /* keys this rank holds after the exchange */
    uint64_t hash_in;     /* the input's multiset hash in key space */
} gp_job;

/* A phase of the table: its function, when it runs, and what run_phase does around it. */
typedef struct gp_phase {
    int (*run)(gp_job *j);
    int (*wanted)(const gp_job *j); /* NULL: always */
    const char *progress;           /* the progress line's name; NULL: none */
    int slot;                       /* the time table row; -1: the phase books its own times */
    const char *fault;              /* the GPUPRIM_FAULT phase it answers to; NULL: none */
    int fault_code;                 /* exit code of an injected failure; 0: abort the job */
} gp_phase;

static double now(void) { return MPI_Wtime(); }

/* 1 when the backend's device memory is host memory (the CPU backend). */
static int device_is_host(const gp_backend *be) { return (be->caps & GP_CAP_HOST_MEMORY) != 0; }

/* Runs phase ph when no earlier one failed and it is wanted: progress, fault hook, time,
 * agreement. Collective. */
static int run_phase(gp_job *j, const gp_phase *ph, int err)
{
    if (err || (ph->wanted && !ph->wanted(j))) return err;
    if (ph->progress) gp_progress_phase(ph->progress);
    const double t0 = now();
    if (ph->fault) { /* an injected failure is agreed on before the phase's collectives */
        if (gp_fault_fire(&j->fault, j->rank, ph->fault)) {
            if (ph->fault_code == 0) { /* a rank lost inside a point-to-point phase */
                fprintf(stderr, "gpuprim_mpi: error: rank %d: injected failure in phase %s "
                                "(GPUPRIM_FAULT); aborting the job\n", j->rank, ph->fault);
                fflush(stderr);
                MPI_Abort(j->comm, gp_exit_status(GP_EXIT_DEVICE));
            }
            err = ph->fault_code;
            snprintf(j->msg, j->msglen, "rank %d: injected failure in phase %s (GPUPRIM_FAULT)",
                     j->rank, ph->fault);
        }
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    if (!err) err = ph->run(j);
    if (ph->slot >= 0) j->t[ph->slot] += now() - t0;
    if (ph->progress) gp_progress_done();
    return gp_agree(j->comm, err, j->msg, j->msglen);
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

/* ---- open ------------------------------------------------------------------------------ */

/* Appends " (OPTION)" to an error message about the dataset that option names. */
static void append_option(char *msg, size_t msglen, const char *option)
{
    const size_t l = strnlen(msg, msglen);
    if (l + 1 < msglen) snprintf(msg + l, msglen - l, " (%s)", option);
}

/* Two dataset paths of the output file clash: the same path, or one a group above the
 * other ("/a_argsort" and "/a_argsort/x"). */
static int name_clash(const char *a, const char *b)
{
    if (!a[0] || !b[0]) return 0;
    const size_t la = strlen(a), lb = strlen(b);
    if (la == lb) return strcmp(a, b) == 0;
    const char *s = la < lb ? a : b, *l = la < lb ? b : a;
    const size_t ls = la < lb ? la : lb;
    return strncmp(s, l, ls) == 0 && l[ls] == '/';
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
    if (j->pin.n != j->N || name_clash(j->pin.dataset, j->in.dataset) ||
        name_clash(j->pin.dataset, j->argsort_dset)) {
        snprintf(j->msg, j->msglen, "%s: --payload %s: %s", o->file, j->pin.dataset,
                 j->pin.n != j->N ? "needs the same element count as the data"
                                  : "must be another dataset than the data and its argsort, "
                                    "and not inside or above either in the output file's "
                                    "paths");
        return GP_EXIT_DATASET;
    }
    return 0;
}

/* The input dataset, this rank's shard, what the result record says of the input; --x and
 * --payload checked. */
static int ph_open(gp_job *j)
{
    const gp_options *o = j->o;
    gp_result *res = j->res;
    int err = gp_h5_open_io(j->comm, o->file, o->dataset, o->io, &j->in, j->msg, j->msglen);
    if (err) return err;
    j->in_open = 1;
    res->io_read = j->in.io;
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
                   "gp_result.dims holds every dimension");
    res->ndims = j->in.ndims;
    for (int d = 0; d < res->ndims; d++) res->dims[d] = (int64_t)j->in.dims[d];
    res->dtype = j->dt;
    res->n = j->N;
    res->dx = o->dx;
    res->out = o->out;

    if (o->xdataset && (err = check_xdataset(j))) return err;
    if (o->argsort)
        snprintf(j->argsort_dset, sizeof j->argsort_dset, "%s_argsort", j->in.dataset);
    if (o->payload && (err = open_payload(j))) return err;

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

/* ---- plan ------------------------------------------------------------------------------ */

#define GP_MEM_MARGIN_MAX ((uint64_t)512 << 20) /* the margin is 1/8 of free, at most this */
#define GP_CHUNK_MIN ((int64_t)4096)            /* elements: the smallest chunk */

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t gp_job_mem_need(int64_t m, int64_t cnt, size_t sz, int P, int sorting, int pairs,
                         int xdata)
{
    const uint64_t um = m > 0 ? (uint64_t)m : 0, uc = cnt > 0 ? (uint64_t)cnt : 0;
    const uint64_t slot = (uint64_t)sz + (pairs && sorting ? 8u : 0u);
    /* device: the shard, and for the exchange its receive buffer (exchange.h); the file's
     * data go through two small host pieces (CUDA) or straight to and from the backend's
     * memory (host memory), so no buffer of the shard's size is on the host */
    const int exchanging = sorting && P > 1;
    const uint64_t ndev = exchanging ? 2 : 1;
    const uint64_t xb = xdata ? mul_sat(uc, 8) : 0;
    return add_sat(mul_sat(mul_sat(um, slot), ndev), xb);
}

/* The bytes a rank may use of `free_bytes` reported free on a device shared by `share`
 * ranks: its share, less a margin of 1/8 of it (at most GP_MEM_MARGIN_MAX) for the
 * kernels' scratch, the runtime and fragmentation. */
static uint64_t mem_usable(size_t free_bytes, int share)
{
    const uint64_t avail = (uint64_t)free_bytes / (uint64_t)(share > 0 ? share : 1);
    const uint64_t margin = avail / 8 < GP_MEM_MARGIN_MAX ? avail / 8 : GP_MEM_MARGIN_MAX;
    return avail - margin;
}

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

/* `bytes` in GiB as text: one decimal from 10 GiB, else three significant digits. */
static const char *gib_text(char *buf, size_t len, uint64_t bytes)
{
    const double g = (double)bytes / 1073741824.0;
    snprintf(buf, len, g >= 10.0 ? "%.1f" : "%.3g", g);
    return buf;
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

/* Device memory: a sort that does not fit fails here, before anything is allocated; a
 * statistics-only job whose shard does not fit goes through the device in chunks of the
 * same size on every rank (the largest that fits on the tightest rank). */
static int ph_plan(gp_job *j)
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
    const int share = j->res->mem_share > 0 ? j->res->mem_share : 1;
    const uint64_t usable = mem_usable(mfree, share);
    const uint64_t need = gp_job_mem_need(j->m, j->cnt, j->sz, j->P, j->sorting, j->pairs,
                                          o->xdataset != NULL);
    int64_t chunk_mine = INT64_MAX;
    if (!err && need > usable) {
        if (j->sorting) {
            char g1[32], g2[32];
            err = GP_EXIT_DEVICE;
            snprintf(j->msg, j->msglen, "%s:%s: sorting %lld elements on rank %d needs %s GiB "
                     "of device memory, %s GiB free (use more GPUs or nodes: ranks on one "
                     "device share it)", j->in.file, j->in.dataset, (long long)j->cnt, j->rank,
                     gib_text(g1, sizeof g1, need), gib_text(g2, sizeof g2, usable));
        } else {
            chunk_mine = chunk_elems_for(usable, j->sz, o->xdataset != NULL);
        }
    }
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    j->chunk = INT64_MAX;
    if (!j->sorting &&
        MPI_Allreduce(&chunk_mine, &j->chunk, 1, MPI_INT64_T, MPI_MIN, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the chunk size failed");
        return GP_EXIT_FAIL;
    }
    j->chunked = j->chunk < INT64_MAX;
    if (j->chunked) {
        j->nchunks = (j->m + j->chunk - 1) / j->chunk; /* rank 0 holds the largest shard */
        j->res->chunks = j->nchunks;
        j->res->chunk_elems = j->chunk;
        say_chunked(j, need, usable, mfree, share);
    }
    return 0;
}

gp_transport gp_job_transport(gp_transport_choice t, int host_memory)
{
    if (t == GP_TRANSPORT_OPT_SHARED) return GP_TRANSPORT_SHARED;
    if (t == GP_TRANSPORT_OPT_MPI || host_memory) return GP_TRANSPORT_MPI;
    return GP_TRANSPORT_AUTO;
}

/* The rank exchange of a sort on P > 1 ranks (exchange.h): its buffers (shard and receive
 * buffer of m keys, and of m positions with pairs) and its transport (--transport, as
 * gp_job_transport decides; GPUPRIM_FAULT's xsetup and xstep hooks). A shared transport
 * that falls back to MPI under auto gives one notice from rank 0. Collective. Returns 0 or
 * GP_EXIT_DEVICE with j->msg set (the same on every rank). */
static int create_exchange(gp_job *j)
{
    const int step_fault = gp_fault_hits(&j->fault, j->rank, "xstep");
    gp_exchange_config cfg = {gp_job_transport(j->o->transport, device_is_host(j->be)),
                              (int)j->sz, j->pairs, j->m,
                              gp_fault_hits(&j->fault, j->rank, "xsetup"),
                              step_fault ? (j->fault.kill ? 2 : 1) : 0};
    char why[1024];
    const int rc = gp_exchange_create(j->comm, j->be, &cfg, &j->xchg, why, sizeof why);
    if (rc == GP_OK) {
        if (why[0] && j->rank == 0) {
            fprintf(stderr, "gpuprim_mpi: notice: %s\n", why);
            fflush(stderr);
        }
        return 0;
    }
    const int named = j->o->transport == GP_TRANSPORT_OPT_SHARED && rc != GP_ENOMEM;
    snprintf(j->msg, j->msglen, "%s%s", named ? "--transport shared: " : "", why);
    return GP_EXIT_DEVICE;
}

/* Bytes per piece of a read or a write through host memory: with the posix driver on the
 * CUDA backend (two pinned pieces, each read or written while the other travels to or from
 * the device), and for the collective calls of the mpiio driver (each piece one collective
 * call per rank, large enough for efficient MPI-IO). posix: 4 MiB pieces, which stay in
 * the CPU's cache between the copy from the page cache and the DMA; on the H200 host (4 GiB
 * float32, 4 ranks) they read in 0.19-0.22 s where 32 MiB pieces took 0.32-0.34 s, and
 * their pinned allocation took 8 ms instead of 48 ms. */
#define GP_PIECE_BYTES_POSIX ((int64_t)4 << 20)
#define GP_PIECE_BYTES_MPIIO ((int64_t)256 << 20)

int64_t gp_job_piece_knob(const char *value)
{
    if (!value || !isdigit((unsigned char)value[0])) return 0;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(value, &end, 10);
    return end && *end == '\0' && v > 0 && errno == 0 ? (int64_t)v : 0;
}

int64_t gp_job_piece_bytes(int64_t knob, gp_io_mode io, int unified, int64_t most)
{
    int64_t b = io == GP_IO_MPIIO ? GP_PIECE_BYTES_MPIIO : unified ? 0 : GP_PIECE_BYTES_POSIX;
    if (knob > 0) b = knob;
    if (b == 0) return 0;
    if (b > most) b = most;
    return b < 8 ? 8 : b;
}

/* The buffers: the shard lives in m slots so that the exchange can grow it to m keys; with
 * P > 1 the exchange owns it and its receive buffer; with pairs the positions (a chunked
 * pass allocates its own, chunk-sized buffers). Host memory: on the CUDA backend the two
 * pinned pieces the file's data go through (j->x) and the positions; a backend whose device
 * memory is host memory reads and writes the shard directly and keeps the positions in it.
 * GPUPRIM_FAULT=R:alloc makes a real allocation of 2^62 bytes fail on rank R, so that the
 * path of a genuine out-of-memory is what the test exercises. Collective (the exchange). */
static int ph_alloc(gp_job *j)
{
    const gp_backend *be = j->be;
    const int64_t m = j->m;
    const size_t hm = (size_t)(m > 0 ? m : 1);
    const int host = device_is_host(be);
    const int64_t span = j->chunked && j->chunk < m ? j->chunk : m; /* the largest read */
    /* test knob GPUPRIM_READ_PIECE_BYTES: small pieces in CI; on the CPU backend the data then
     * go through two host pieces as on the CUDA backend, so that CI runs that path */
    const int64_t knob = gp_job_piece_knob(getenv("GPUPRIM_READ_PIECE_BYTES"));
    j->x.unified = host && knob == 0;
    j->x.bytes = gp_job_piece_bytes(knob, j->in.io, j->x.unified, 8 * (span > 1 ? span : 1));
    if (!j->x.unified) {
        j->x.buf[0] = be->host_alloc((size_t)j->x.bytes);
        j->x.buf[1] = be->host_alloc((size_t)j->x.bytes);
        if (!j->x.buf[0] || !j->x.buf[1]) {
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate 2 pieces of %lld bytes of pinned host memory: %s",
                     j->rank, (long long)j->x.bytes, be->last_error());
            return GP_EXIT_DEVICE;
        }
    }
    if (j->sorting && j->P > 1) {
        const int err = create_exchange(j);
        if (err) return err;
        j->dev = gp_exchange_keys(j->xchg);
        j->dval = gp_exchange_values(j->xchg);
    }
    if (j->pairs) {
        if (!j->xchg) j->dval = be->alloc((size_t)m * 8);
        if (!host) j->hval = be->host_alloc(hm * 8);
    }
    const int vals_missing = j->pairs && (!j->dval || (!host && !j->hval));
    if (!j->chunked) {
        if (!j->xchg) j->dev = be->alloc((size_t)m * j->sz);
        if (!j->dev || vals_missing) {
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate %lld elements (%.1f MiB) of %s memory: %s",
                     j->rank, (long long)m, (double)m * j->sz / 1048576.0, be->name,
                     be->last_error());
            return GP_EXIT_DEVICE;
        }
    }
    if (gp_fault_fire(&j->fault, j->rank, "alloc")) {
        const size_t huge = (size_t)1 << 62;
        void *p = be->alloc(huge);
        if (!p) {
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate %zu bytes of %s memory: %s",
                     j->rank, huge, be->name, be->last_error());
            return GP_EXIT_DEVICE;
        }
        be->free(p);
    }
    return 0;
}

/* Frees what ph_alloc allocated (the exchange collectively: every rank gets here) and closes
 * what ph_open opened. */
static void job_release(gp_job *j)
{
    const gp_backend *be = j->be;
    void *host[] = {j->hval, j->x.buf[0], j->x.buf[1]};
    void *dev[] = {j->dval, j->dev};
    for (size_t k = 0; k < sizeof host / sizeof host[0]; k++)
        if (host[k]) be->host_free(host[k]);
    for (size_t k = 0; k < sizeof dev / sizeof dev[0] && !j->xchg; k++)
        if (dev[k]) be->free(dev[k]);
    if (j->xchg) gp_exchange_destroy(j->xchg);
    if (j->pin_open) gp_h5_close(&j->pin);
    if (j->in_open) gp_h5_close(&j->in);
}

/* ---- read ------------------------------------------------------------------------------ */

/* Elements per piece of sz bytes, and how many pieces cover m elements (m: the largest
 * shard or chunk, the same on every rank, so that every rank makes the same number of
 * calls, as the mpiio driver's collective ones need). */
static int64_t piece_elems(const xfer *x, size_t sz, int64_t m, int64_t *npieces)
{
    int64_t pe = x->bytes > 0 ? x->bytes / (int64_t)sz : m;
    if (pe < 1) pe = 1;
    *npieces = m > 0 ? (m + pe - 1) / pe : 0;
    return pe;
}

/* Reads [off, off + cnt) through reader r (sz bytes per element) into dev[0, cnt) of the
 * backend's memory: on the CPU backend straight into it, else through the two pinned
 * pieces of j->x, each piece's upload (be->upload_async) running while the next piece is
 * read. m is the largest shard or chunk (the same on every rank; see piece_elems).
 * `progress`: the upload phase starts a progress line when the reads end. Books the read
 * time in the read row and the final wait for the uploads in the upload row. A failed
 * upload does not stop the reads (with mpiio the other ranks are in them); it is reported
 * after the last one. Returns 0 or a GP_IO_* / GP_EXIT_DEVICE code with j->msg set: with
 * the posix driver the error is this rank's own (as is an upload's; the caller agrees). */
static int read_upload(gp_job *j, gp_h5_reader *r, size_t sz, int64_t off, int64_t cnt,
                       int64_t m, void *dev, int progress)
{
    const gp_backend *be = j->be;
    const xfer *x = &j->x;
    int err = 0, uerr = 0;
    int64_t np;
    char umsg[256] = "";
    const int64_t pe = piece_elems(x, sz, m, &np);
    double tp = now();
    for (int64_t p = 0; p < np; p++) {
        const int64_t lo = p * pe < cnt ? p * pe : cnt;
        const int64_t c = cnt - lo < pe ? cnt - lo : pe;
        void *h = x->unified ? (char *)dev + (size_t)lo * sz : x->buf[p & 1];
        err = gp_h5_reader_read(r, off + lo, c, h, j->msg, j->msglen);
        if (err) break; /* mpiio: on every rank alike; posix: this rank's (it stops here) */
        if (x->unified || c == 0 || uerr) continue;
        /* the upload of the piece before, which ran during this read, must be done before
         * its buffer is read into next */
        if (be->upload_wait() || be->upload_async((char *)dev + (size_t)lo * sz, h, (size_t)c * sz)) {
            uerr = GP_EXIT_DEVICE;
            snprintf(umsg, sizeof umsg, "rank %d: upload: %s", j->rank, be->last_error());
        }
    }
    j->t[GP_PH_READ] += now() - tp;
    tp = now();
    if (progress) gp_progress_phase(gp_phase_names[GP_PH_UPLOAD]);
    if (be->upload_wait() && !uerr) {
        uerr = GP_EXIT_DEVICE;
        snprintf(umsg, sizeof umsg, "rank %d: upload: %s", j->rank, be->last_error());
    }
    j->t[GP_PH_UPLOAD] += now() - tp;
    if (!err && uerr) snprintf(j->msg, j->msglen, "%s", umsg);
    return err ? err : uerr;
}

/* Opens a reader of dataset (NULL: the input's) as type `as`, books the time in the read
 * row. Collective (agreed). */
static int open_reader(gp_job *j, const char *dataset, gp_dtype as, gp_h5_reader **r)
{
    const double tp = now();
    const int err = gp_h5_reader_open(j->comm, &j->in, dataset, as, r, j->msg, j->msglen);
    j->t[GP_PH_READ] += now() - tp;
    return err;
}

/* The shard read and uploaded; a chunked job reads its chunks in its statistics pass. */
static int ph_read(gp_job *j)
{
    if (j->chunked) return 0;
    gp_h5_reader *r = NULL;
    int err = open_reader(j, NULL, j->dt, &r);
    if (!err) err = read_upload(j, r, j->sz, j->off, j->cnt, j->m, j->dev, 1);
    gp_h5_reader_close(r);
    return err;
}

/* ---- statistics ------------------------------------------------------------------------ */

static int ph_stats(gp_job *j)
{
    int err = 0;
    j->local = gp_stats_empty();
    BE_CALL("statistics", j->be->stats(j->dt, j->dev, j->cnt, j->sorting ? 0 : GP_STATS_NOHASH,
                                       &j->local));
    return err;
}

/* In-order combination of chunk records as a binary counter: whenever the two newest
 * records each cover 2^k chunks they become one (older, newer); the total folds the rest
 * from the newest to the oldest. The order of the pieces is kept throughout (gp_stats_combine
 * is not commutative), and float64 sums get a pairwise (log2 chunks) error growth. */
typedef struct stats_stack {
    gp_stats v[64];
    int level[64];
    int top;
} stats_stack;

static void stats_stack_push(stats_stack *s, const gp_stats *rec)
{
    gp_stats x = *rec;
    int lvl = 0;
    while (s->top > 0 && s->level[s->top - 1] == lvl) {
        x = gp_stats_combine(&s->v[s->top - 1], &x); /* older, newer */
        s->top--;
        lvl++;
    }
    s->v[s->top] = x;
    s->level[s->top] = lvl;
    s->top++;
}

static gp_stats stats_stack_total(const stats_stack *s)
{
    if (s->top == 0) return gp_stats_empty();
    gp_stats r = s->v[s->top - 1];
    for (int k = s->top - 2; k >= 0; k--) r = gp_stats_combine(&s->v[k], &r);
    return r;
}

/* One chunk of ck elements already on the device (dev, and dx): statistics (+ exact sums,
 * + trap_x), its record pushed onto st. Books reduce and integrate. */
static int chunk_stats(gp_job *j, int64_t ck, void *dev, double *dx, stats_stack *st)
{
    const gp_backend *be = j->be;
    const gp_options *o = j->o;
    int err = 0;
    gp_stats rec = gp_stats_empty();
    double tp = now();
    BE_CALL("statistics", be->stats(j->dt, dev, ck, GP_STATS_NOHASH, &rec));
    if (o->reproducible) {
        BE_CALL("exact sum", be->exact_sum(j->dt, dev, ck, GP_SA_VALUES, &j->av));
        BE_CALL("exact sum of squares", be->exact_sum(j->dt, dev, ck, GP_SA_SQUARES, &j->aq));
    }
    j->t[GP_PH_REDUCE] += now() - tp;
    if (o->xdataset) {
        tp = now();
        BE_CALL("trapezoid rule", be->trap_x(j->dt, dev, dx, ck, &rec));
        j->t[GP_PH_INTEGRATE] += now() - tp;
    }
    if (!err) stats_stack_push(st, &rec);
    return err;
}

/* The statistics pass of a --no-sort job whose shard does not fit: nchunks chunks of
 * `chunk` elements (the same nchunks on every rank: a rank whose shard ends early makes
 * empty reads, as the mpiio driver's reads are collective), each read and uploaded (values,
 * and --x coordinates; read_upload through the job's readers) and reduced (chunk_stats);
 * the chunk records go through a stats_stack into j->local, which then describes the whole
 * shard like one be->stats (+ trap_x) call on it; --reproducible's exact sums are added
 * into j->av / j->aq. The ranks agree on every error after each chunk's read and after its
 * statistics. */
static int ph_stats_chunked(gp_job *j)
{
    const gp_backend *be = j->be;
    const int xdata = j->o->xdataset != NULL;
    const int64_t cap = j->chunk < j->cnt ? j->chunk : j->cnt; /* buffer elements */
    void *dev = be->alloc((size_t)cap * j->sz);
    double *dx = xdata ? be->alloc((size_t)cap * sizeof(double)) : NULL;
    gp_h5_reader *ry = NULL, *rx = NULL;
    int err = 0;
    if (!dev || (xdata && !dx)) {
        err = GP_EXIT_DEVICE;
        snprintf(j->msg, j->msglen, "rank %d: cannot allocate a chunk of %lld elements (%.1f MiB) of %s memory: %s",
                 j->rank, (long long)cap, (double)cap * (double)(j->sz + (xdata ? 8 : 0)) / 1048576.0,
                 be->name, be->last_error());
    }
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err) err = open_reader(j, NULL, j->dt, &ry);
    if (!err && xdata) err = open_reader(j, j->o->xdataset, GP_F64, &rx);
    stats_stack st;
    st.top = 0;
    for (int64_t k = 0; !err && k < j->nchunks; k++) {
        const int64_t lo = k * j->chunk < j->cnt ? k * j->chunk : j->cnt; /* k * chunk < m + chunk */
        const int64_t ck = j->cnt - lo < j->chunk ? j->cnt - lo : j->chunk;
        err = read_upload(j, ry, j->sz, j->off + lo, ck, j->chunk, dev, 0);
        if (!err && xdata) err = read_upload(j, rx, sizeof(double), j->off + lo, ck, j->chunk, dx, 0);
        if ((err = gp_agree(j->comm, err, j->msg, j->msglen)) != 0) break;
        if (ck > 0 || (k == 0 && j->cnt == 0)) /* an empty shard: the record of n = 0 */
            err = chunk_stats(j, ck, dev, dx, &st);
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    j->local = stats_stack_total(&st);
    gp_h5_reader_close(ry);
    gp_h5_reader_close(rx);
    if (dev) be->free(dev);
    if (dx) be->free(dx);
    return err;
}

/* ---- integral -------------------------------------------------------------------------- */

/* The non-uniform trapezoid rule of the shard (unchunked): the coordinates read as float64
 * and uploaded (read_upload), and be->trap_x adds the shard's terms to j->local. Books read,
 * upload and integrate. */
static int ph_integral(gp_job *j)
{
    const gp_backend *be = j->be;
    const int64_t cnt = j->cnt;
    double *dx = be->alloc((size_t)cnt * sizeof(double));
    gp_h5_reader *r = NULL;
    int err = 0;
    if (!dx) {
        err = GP_EXIT_DEVICE;
        snprintf(j->msg, j->msglen, "rank %d: cannot allocate the --x coordinates: %s", j->rank,
                 be->last_error());
    }
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err) {
        gp_progress_phase(gp_phase_names[GP_PH_READ]);
        err = open_reader(j, j->o->xdataset, GP_F64, &r);
        if (!err) err = read_upload(j, r, sizeof(double), j->off, cnt, j->m, dx, 1);
        gp_h5_reader_close(r);
        gp_progress_done();
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    if (!err) {
        const double tp = now();
        gp_progress_phase(gp_phase_names[GP_PH_INTEGRATE]);
        BE_CALL("trapezoid rule", be->trap_x(j->dt, j->dev, dx, cnt, &j->local));
        j->t[GP_PH_INTEGRATE] += now() - tp;
        gp_progress_done();
    }
    if (dx) be->free(dx);
    return err;
}

/* ---- combine --------------------------------------------------------------------------- */

/* Uniform trapezoid rule from the statistics: h * (sum - (y0 + y_{N-1}) / 2); for integer
 * samples the bracket comes from the exact sum, rounded once. */
static double uniform_trapezoid(const gp_stats *s, double h, gp_dtype dt)
{
    if (s->count < 2) return 0.0;
    if (!gp_dtype_is_float(dt) && s->has_isum) return h * gp_stats_int_trap_bracket(dt, s);
    if (s->nan_count > 0) return NAN;
    /* an infinite sample: every weight is positive, so the rule is inf, -inf, or NaN with
     * both (sum - ends would be inf - inf) */
    if (isinf(s->yfirst) || isinf(s->ylast) || isinf(s->sum)) {
        const int pos = gp_key_to_double(dt, s->max_key) == INFINITY;
        const int neg = gp_key_to_double(dt, s->min_key) == -INFINITY;
        if (pos && neg) return NAN;
        if (pos || neg) return (pos ? h : -h) * INFINITY;
    }
    /* the ends halved apart: y0 + y_{N-1} can overflow where the result does not */
    return h * (s->sum - 0.5 * s->yfirst - 0.5 * s->ylast);
}

/* --reproducible: the exact sums of the values and of their squares, the same bits for any
 * layout (a chunked pass has added its chunks into av / aq already), replace the float64
 * ones. */
static int exact_sums(gp_job *j)
{
    const gp_backend *be = j->be;
    int err = 0;
    gp_superacc tv, tq;
    if (!j->chunked) {
        BE_CALL("exact sum", be->exact_sum(j->dt, j->dev, j->cnt, GP_SA_VALUES, &j->av));
        BE_CALL("exact sum of squares", be->exact_sum(j->dt, j->dev, j->cnt, GP_SA_SQUARES, &j->aq));
    }
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (gp_superacc_allreduce(j->comm, &j->av, &tv) != MPI_SUCCESS ||
        gp_superacc_allreduce(j->comm, &j->aq, &tq) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the exact sums failed");
        return GP_EXIT_FAIL;
    }
    tv.nan = tq.nan = 0; /* the statistics skip NaNs (they are counted apart) */
    j->total.sum = gp_superacc_to_double(&tv);
    j->total.sumsq = gp_superacc_to_double(&tq);
    j->res->reproducible = 1;
    return 0;
}

/* The ranks' records combined in rank order into j->total (every rank), the exact sums, and
 * the statistics and integral of the result record. */
static int ph_combine(gp_job *j)
{
    int err = 0;
    if (gp_stats_allreduce(j->comm, &j->local, &j->total) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the statistics failed");
        return GP_EXIT_FAIL;
    }
    if (j->o->reproducible && (err = exact_sums(j))) return err;
    gp_result *res = j->res;
    res->stats = j->total;
    res->integral_nonuniform = j->o->xdataset != NULL;
    res->integral = j->o->xdataset ? j->total.trap : uniform_trapezoid(&j->total, j->o->dx, j->dt);
    return 0;
}

/* ---- sort ------------------------------------------------------------------------------ */

/* The keys as an element type (4-byte keys: u32, 8-byte: u64). */
static gp_dtype key_type(const gp_job *j) { return j->sz == 4 ? GP_U32 : GP_U64; }

/* The order of the key maps (--descending). */
static gp_order sort_order(const gp_options *o) { return o->descending ? GP_DESCENDING : GP_ASCENDING; }

/* The multiset fingerprint of the input in key space: the input statistics have it for
 * ascending keys; descending keys need their own pass. */
static int input_hash(gp_job *j)
{
    int err = 0;
    j->hash_in = j->total.hash;
    if (!j->o->descending) return 0;
    gp_stats kl = gp_stats_empty(), kt_tot;
    BE_CALL("key statistics", j->be->stats(key_type(j), j->dev, j->cnt, 0, &kl));
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (gp_stats_allreduce(j->comm, &kl, &kt_tot) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the key statistics failed");
        return GP_EXIT_FAIL;
    }
    j->hash_in = kt_tot.hash;
    return 0;
}

/* Whether the exchange's spare buffer serves the local sort as its scratch and is given back
 * before the write: on a backend whose sort takes one (be->sort_spare: the CPU's radix sort)
 * when the exchange's buffers are this process's own memory (the mpi transport). No scratch
 * of a shard's size is allocated, the sort's last pass may leave the keys in the spare (no
 * copy back), and the write's page cache takes the pages the spare gives back. On the 2-core
 * test machine (1 GiB, 2 ranks) the job took 6.5-7.1 s this way, against 8.9-9.2 s with the
 * shared transport and a scratch allocated per sort, and 8.4-8.7 s when the spare was lent
 * but not given back (bench/RESULTS.md, 2026-12-02). With the shared window the spare is
 * not lent: its pages, given back, did not speed the write there. */
static int lends_spare(const gp_job *j)
{
    return j->xchg && j->be->sort_spare && device_is_host(j->be) &&
           gp_exchange_transport(j->xchg) == GP_TRANSPORT_MPI;
}

/* Order keys (with the input positions when pairs) and the local bitonic sort. */
static int ph_sort(gp_job *j)
{
    const gp_backend *be = j->be;
    const gp_options *o = j->o;
    const int width = (int)j->sz;
    int err = 0;
    j->res->descending = o->descending;
    j->res->stable = o->stable;
    if (j->pairs) { /* the CPU backend's dval is host memory */
        const int host = device_is_host(be);
        uint64_t *hp = host ? j->dval : j->hval;
        for (int64_t i = 0; i < j->cnt; i++) hp[i] = (uint64_t)(j->off + i);
        if (!host) BE_CALL("upload positions", be->upload(j->dval, j->hval, (size_t)j->cnt * 8));
    }
    BE_CALL("to keys", be->to_keys(j->dt, sort_order(o), j->dev, j->cnt));
    if (!err) err = input_hash(j);
    if (lends_spare(j)) {
        int in_spare = 0;
        BE_CALL("local sort", be->sort_spare(width, j->dev, j->pairs ? j->dval : NULL,
                                             gp_exchange_spare_keys(j->xchg),
                                             gp_exchange_spare_values(j->xchg), j->cnt,
                                             o->stable, &in_spare));
        if (!err && in_spare) {
            gp_exchange_use_spare(j->xchg);
            j->dev = gp_exchange_keys(j->xchg);
            j->dval = gp_exchange_values(j->xchg);
        }
    } else {
        BE_CALL("local sort", be->sort(width, j->dev, j->pairs ? j->dval : NULL, j->cnt, o->stable));
    }
    return err;
}

/* ---- exchange -------------------------------------------------------------------------- */

/* The rank-level merge exchange (it may switch the shard to its other buffer); the result
 * record gets its steps, the bytes moved between ranks and what the whole-shard exchange
 * would have sent (sums over ranks), and per step the transfer and merge times (max over
 * ranks, ms), the bytes (sum) and the transports (OR of the ranks' GP_TRANSPORT_* flags). */
static int ph_exchange(gp_job *j)
{
    gp_result *res = j->res;
    gp_exchange_info xi;
    gp_exchange_run(j->xchg, &j->nk, j->o->stable, &xi);
    j->dev = gp_exchange_keys(j->xchg);
    j->dval = gp_exchange_values(j->xchg);
    int64_t mine[2] = {xi.bytes_moved, xi.bytes_whole}, sum[2] = {0, 0};
    MPI_Reduce(mine, sum, 2, MPI_INT64_T, MPI_SUM, 0, j->comm);
    res->exchange_stages = xi.stages;
    res->exchange_bytes = sum[0];
    res->exchange_bytes_whole = sum[1];
    const int ns = xi.stages < GP_XSTEPS_MAX ? xi.stages : GP_XSTEPS_MAX;
    MPI_Reduce(xi.step_comm, res->xstep_comm_ms, ns, MPI_DOUBLE, MPI_MAX, 0, j->comm);
    MPI_Reduce(xi.step_merge, res->xstep_merge_ms, ns, MPI_DOUBLE, MPI_MAX, 0, j->comm);
    MPI_Reduce(xi.step_bytes, res->xstep_bytes, ns, MPI_INT64_T, MPI_SUM, 0, j->comm);
    MPI_Reduce(xi.step_transport, res->xstep_transport, ns, MPI_INT, MPI_BOR, 0, j->comm);
    for (int s = 0; s < ns; s++) {
        res->xstep_comm_ms[s] *= 1e3;
        res->xstep_merge_ms[s] *= 1e3;
    }
    return 0;
}

/* ---- verify ---------------------------------------------------------------------------- */

/* The check in key space — every shard ascending, the boundaries in order, the count and the
 * multiset kept — then the keys back to values. */
static int ph_verify(gp_job *j)
{
    const gp_backend *be = j->be;
    int err = 0;
    gp_stats sl = gp_stats_empty(), st;
    BE_CALL("verify statistics", be->stats(key_type(j), j->dev, j->nk, GP_STATS_ORDER, &sl));
    BE_CALL("from keys", be->from_keys(j->dt, sort_order(j->o), j->dev, j->nk));
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (gp_stats_allreduce(j->comm, &sl, &st) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the verification failed");
        return GP_EXIT_FAIL;
    }
    gp_result *res = j->res;
    res->sorted_done = 1;
    res->sorted_stats = st;
    res->sorted_descents = st.descents;
    res->sorted_hash_in = j->hash_in;
    res->sorted_ok = st.descents == 0 && st.count == j->total.count && st.hash == j->hash_in;
    return 0;
}

/* ---- write ----------------------------------------------------------------------------- */

/* --payload: the payload's shard read and moved to the sorted places of this rank's keys
 * (hpos holds their input positions) into *out (malloc'ed; the caller frees). */
static int sorted_payload(gp_job *j, const uint64_t *hpos, void **out)
{
    const size_t psz = gp_dtype_size(j->pin.dtype);
    void *hpay = malloc((size_t)(j->cnt > 0 ? j->cnt : 1) * psz);
    *out = malloc((size_t)(j->nk > 0 ? j->nk : 1) * psz);
    int err = 0;
    if (!hpay || !*out) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "rank %d: --payload: out of host memory", j->rank);
    }
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err)
        err = gp_h5_read(j->comm, &j->pin, NULL, j->pin.dtype, j->off, j->cnt, hpay, j->msg,
                         j->msglen);
    if (!err && gp_gather_by_index(j->comm, j->N, hpos, j->nk, hpay, psz, *out) != MPI_SUCCESS) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "--payload: moving the payload to its sorted places failed "
                                    "(out of host memory, or an MPI error)");
    }
    free(hpay);
    return err;
}

/* Writes dataset k of the output from this rank's nk elements (sz bytes each; global offset
 * woff) in the backend's memory src: on the CPU backend straight from it (one call), else
 * through the two pinned pieces of j->x, piece p + 1 downloading (be->download_async, after
 * be->synchronize) while piece p is written. Every rank makes the same number of writer calls (pieces of the m
 * slots; after a failed download a rank goes on with empty ones), as the mpiio driver's
 * collective writes need. Returns 0 or a GP_IO_EWRITE / GP_EXIT_DEVICE code with j->msg set
 * (posix: this rank's own; the caller agrees). */
static int write_from(gp_job *j, gp_h5_writer *w, int k, const void *src, size_t sz,
                      int64_t woff, int64_t nk)
{
    const gp_backend *be = j->be;
    const xfer *x = &j->x;
    if (x->unified) return gp_h5_writer_write(w, k, woff, nk, src, j->msg, j->msglen);
    int64_t np;
    int err = 0, derr = 0;
    char dmsg[256] = "";
    const int64_t pe = piece_elems(x, sz, j->m, &np);
    /* download_async does not order itself after the kernels (from_keys, the exchange's
     * merges): the caller's fence */
    if (be->synchronize()) {
        derr = 1;
        snprintf(dmsg, sizeof dmsg, "rank %d: synchronize: %s", j->rank, be->last_error());
    }
    for (int64_t p = 0; p < np && !err; p++) {
        const int64_t lo = p * pe < nk ? p * pe : nk, c = nk - lo < pe ? nk - lo : pe;
        const int64_t lo1 = lo + c, c1 = nk - lo1 < pe ? nk - lo1 : pe;
        if (!derr && p == 0 && c > 0 && be->download_async(x->buf[0], src, (size_t)c * sz)) derr = 1;
        /* piece p is in; the next one travels while this one is written */
        if (!derr && be->download_wait()) derr = 1;
        if (!derr && c1 > 0 &&
            be->download_async(x->buf[(p + 1) & 1], (const char *)src + (size_t)lo1 * sz, (size_t)c1 * sz))
            derr = 1;
        if (derr && !dmsg[0])
            snprintf(dmsg, sizeof dmsg, "rank %d: download: %s", j->rank, be->last_error());
        err = gp_h5_writer_write(w, k, woff + lo, derr ? 0 : c, x->buf[p & 1], j->msg, j->msglen);
    }
    if (be->download_wait() && !derr) { /* drains what a failed write left in flight */
        derr = 1;
        snprintf(dmsg, sizeof dmsg, "rank %d: download: %s", j->rank, be->last_error());
    }
    if (!err && derr) snprintf(j->msg, j->msglen, "%s", dmsg);
    return err ? err : derr ? GP_EXIT_DEVICE : 0;
}

/* The datasets of --out written: the sorted values from the device (write_from), the
 * argsort from hpos, the payload from psorted; the ranks agree after each (posix writes fail
 * on their rank). Then the file is finished (staged), or removed after an error. */
static int write_datasets(gp_job *j, gp_h5_writer *w, int64_t woff, const uint64_t *hpos,
                          const void *psorted)
{
    int err = write_from(j, w, 0, j->dev, j->sz, woff, j->nk);
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err && j->o->argsort)
        err = gp_agree(j->comm, gp_h5_writer_write(w, 1, woff, j->nk, hpos, j->msg, j->msglen),
                       j->msg, j->msglen);
    if (!err && psorted)
        err = gp_agree(j->comm, gp_h5_writer_write(w, j->o->argsort ? 2 : 1, woff, j->nk, psorted,
                                                   j->msg, j->msglen),
                       j->msg, j->msglen);
    char cmsg[256];
    const int cerr = gp_h5_writer_close(w, err != 0, err ? cmsg : j->msg, err ? sizeof cmsg : j->msglen);
    return err ? err : cerr;
}

/* The sorted data (and the argsort, the payload) written to --out with the --io driver, left
 * under its temporary name for the program to publish (gp_h5_writer_open with stage = 1). */
static int ph_write(gp_job *j)
{
    const gp_backend *be = j->be;
    gp_result *res = j->res;
    const char *out = j->o->out;
    int err = 0;
    if (!res->sorted_ok) { /* the verdict of every rank */
        snprintf(j->msg, j->msglen, "%s: the sorted result failed its check; nothing written", out);
        return GP_EXIT_VERIFY;
    }
    /* rank r holds global slots [r*m, r*m + nk); an empty rank past N writes nothing */
    const int64_t woff = (int64_t)j->rank * j->m < j->N ? (int64_t)j->rank * j->m : j->N;
    gp_h5_outds ds[3] = {{j->in.dataset, j->in.ftype, j->dt, NULL}};
    int nds = 1;
    const int host = device_is_host(be); /* the CPU backend's dval is host memory */
    const uint64_t *hpos = host ? j->dval : j->hval;
    void *psorted = NULL;
    if (j->pairs && !host)
        BE_CALL("download positions", be->download(j->hval, j->dval, (size_t)j->nk * 8));
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err && j->o->argsort) {
        snprintf(res->argsort_dset, sizeof res->argsort_dset, "%s", j->argsort_dset);
        ds[nds++] = (gp_h5_outds){res->argsort_dset, H5I_INVALID_HID, GP_I64, NULL};
    }
    if (!err && j->o->payload && !(err = sorted_payload(j, hpos, &psorted))) {
        snprintf(res->payload_dset, sizeof res->payload_dset, "%s", j->pin.dataset);
        ds[nds++] = (gp_h5_outds){res->payload_dset, j->pin.ftype, j->pin.dtype, NULL};
    }
    gp_h5_writer *w = NULL;
    if (lends_spare(j)) gp_exchange_release_spare(j->xchg);
    if (!err)
        err = gp_h5_writer_open(j->comm, j->o->io, 1, out, ds, nds, j->N, woff, j->nk,
                                j->o->force, &w, j->msg, j->msglen);
    if (!err) {
        res->io_write = gp_h5_writer_io(w);
        err = write_datasets(j, w, woff, hpos, psorted);
    }
    free(psorted);
    return err;
}

/* ---- the file job ---------------------------------------------------------------------- */

static int is_chunked(const gp_job *j) { return j->chunked; }
static int not_chunked(const gp_job *j) { return !j->chunked; }
static int integral_x(const gp_job *j) { return !j->chunked && j->o->xdataset != NULL; }
static int sorting(const gp_job *j) { return j->sorting; }
static int exchanging(const gp_job *j) { return j->sorting && j->P > 1; }
static int writing(const gp_job *j) { return j->o->out != NULL; }

/* The file job, phase by phase (see the file comment). Opening and planning are booked in
 * the read row of the table. */
static const gp_phase file_phases[] = {
    /* run             wanted       progress         slot             fault       code */
    {ph_open,          NULL,        NULL,            GP_PH_READ,      NULL,       0},
    {ph_plan,          NULL,        NULL,            GP_PH_READ,      NULL,       0},
    {ph_alloc,         NULL,        NULL,            GP_PH_ALLOC,     NULL,       0},
    {ph_read,          NULL,        "read",          -1,              "read",     GP_EXIT_READ},
    {ph_stats_chunked, is_chunked,  "reduce",        -1,              "reduce",   GP_EXIT_DEVICE},
    {ph_stats,         not_chunked, "reduce",        GP_PH_REDUCE,    "reduce",   GP_EXIT_DEVICE},
    {ph_integral,      integral_x,  NULL,            -1,              NULL,       0},
    {ph_combine,       NULL,        NULL,            GP_PH_REDUCE,    NULL,       0},
    {ph_sort,          sorting,     "local sort",    GP_PH_SORT,      "sort",     GP_EXIT_DEVICE},
    {ph_exchange,      exchanging,  "rank exchange", GP_PH_EXCHANGE,  "exchange", 0},
    {ph_verify,        sorting,     "verify",        GP_PH_VERIFY,    NULL,       0},
    {ph_write,         writing,     "write",         GP_PH_WRITE,     "write",    GP_EXIT_WRITE},
};

int gp_run_file(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                char *msg, size_t msglen)
{
    const double t0 = now();
    gp_job j;
    memset(&j, 0, sizeof j);
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
    gp_superacc_zero(&j.av);
    gp_superacc_zero(&j.aq);

    int err = 0;
    for (size_t k = 0; k < sizeof file_phases / sizeof file_phases[0]; k++)
        err = run_phase(&j, &file_phases[k], err);

    job_release(&j);
    j.t[GP_PH_TOTAL] = now() - t0;
    MPI_Reduce(j.t, res->t, GP_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (!err && res->sorted_done && !res->sorted_ok) {
        err = GP_EXIT_VERIFY;
        snprintf(msg, msglen, "%s: %s: the sorted result failed its check (%lld descents, count %lld vs %lld)",
                 res->file, res->dataset, (long long)res->sorted_descents,
                 (long long)res->sorted_stats.count, (long long)res->stats.count);
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
    /* b < a: minus the rule over [b, a] (bitwise); a == b: 0 */
    const int reversed = o->b < o->a;
    const double lo = reversed ? o->b : o->a, hi = reversed ? o->a : o->b;
    const double h = (hi - lo) / (double)o->n;
    int64_t i0, cnt;
    gp_shard_range(o->n + 1, P, rank, &i0, &cnt); /* n + 1 points */
    gp_stats s = gp_stats_empty(), total;
    s.has_x = 0;
    double w = 0.0;
    gp_progress_phase(gp_phase_names[GP_PH_INTEGRATE]);
    if (be->trap_fn(o->func, lo, h, o->n, i0, i0 + cnt, &w)) {
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
    MPI_Reduce(t, res->t, GP_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    res->function_mode = 1;
    res->func = o->func;
    res->a = o->a;
    res->b = o->b;
    res->h = reversed ? -h : h;
    res->ntrap = o->n;
    if (!err && rank == 0) {
        res->integral = o->a == o->b ? 0.0 : reversed ? -(h * total.sum) : h * total.sum;
        res->exact = gp_func_exact(o->func, o->a, o->b);
    }
    return err;
}
