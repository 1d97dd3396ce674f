/* ph_scan.c — the file job's scan phase (ph.h): --cumsum writes DATASET_cumsum, the
 * inclusive prefix sum of the input in its order, --cumulative-integral DATASET_cumint, the
 * cumulative trapezoid rule (scipy's cumulative_trapezoid with initial=0), both to --out.
 *
 * Each rank scans its shard as a visitor of gp_job_foreach_piece (pieces.h), whatever holds
 * it (the device, the file chunk by chunk, host memory), the running total carried from piece
 * to piece (gp_scan_carry); the outputs go to host memory, registered for the write phase
 * with the shard's extent. The rank's carry in comes first: the ranks' totals, gathered and
 * added in rank order (so the bits repeat for a given rank count), from the statistics' exact
 * integer sums for an integer cumsum, else from a first pass that only totals each shard (the
 * backends' out == NULL). The trapezoid that crosses a rank boundary takes the previous
 * non-empty rank's last sample (and x), as a sequential rule would. An integer prefix that
 * does not fit its output type fails the job with the first global index where it happens.
 *
 * On a device, when the shard is resident there, no sort follows and every rank has room
 * (outputs_on_device), each piece is scanned straight into outputs in device memory, which
 * the write phase takes down through its pinned pieces while it writes: nothing crosses to
 * the host in this phase. Otherwise each call scans a sub-piece of at most SCAN_PIECE
 * elements into a buffer of the download ring (dl_ring.h), which takes it down to the host
 * output while the device scans the next sub-piece and the host's threads copy the
 * sub-piece before out of its pinned staging buffer; the ring is drained at the end of every
 * piece, so nothing travels across the loop's collective calls.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl_ring.h"
#include "ph.h"
#include "pieces.h"
#include "scan_dd.h"

/* Elements a backend whose memory is not host memory scans per call: a buffer of the
 * download ring (2^23 * 8 bytes = 64 MiB; two device and two pinned ones: 128 MiB of each). */
#define SCAN_PIECE ((int64_t)1 << 23)

/* The phase's state: the pass, the two scans' carries, their host outputs (the shard's
 * cnt elements each) and, on a device, the ring whose buffers the calls write. */
typedef struct scan_ctx {
    int totals_only;        /* the first pass: totals, nothing written */
    gp_scan_carry cs, ci;   /* --cumsum's and --cumulative-integral's carries */
    void *hs;               /* --cumsum's output (8-byte elements), or NULL */
    double *hi;             /* --cumulative-integral's output, or NULL */
    gp_dl_ring ring;        /* the scans' way down (ring.dev[0] NULL: the backend writes
                               host memory directly, or the outputs stay on the device) */
    char *ds, *di;          /* the outputs in device memory until the write (ondevice), or
                               NULL: hs and hi */
} scan_ctx;

/* What each rank tells the others: its totals, its ends, its count. */
typedef struct rank_total {
    double shi, slo;        /* float cumsum: the shard's total */
    double ihi, ilo;        /* cumint: the shard's total, its first sample's term left out */
    gp_i128 isum;           /* integer data: the shard's exact sum (the statistics') */
    double yfirst, xfirst, ylast, xlast;
    int64_t cnt;
    double last_sum, last_int; /* after the scan: the shard's last outputs (float / cumint) */
    uint64_t last_bits;     /* ... and the last integer cumsum (int64 or uint64 bits) */
} rank_total;

/* One call of a scan on a sub-piece whose outputs start at element `at` of the shard's: into
 * the device outputs in place, or into the ring's buffer, pushed down to the host outputs
 * (complete after the piece's gp_dl_ring_finish), or into the host outputs themselves. */
static int scan_call(gp_job *j, scan_ctx *c, int cumint, const void *y, const double *x,
                     int64_t n, int64_t at)
{
    const gp_backend *be = j->be;
    const int ringed = c->ring.dev[0] != NULL;
    char *dout = cumint ? c->di : c->ds;
    char *hout = cumint ? (char *)c->hi : (char *)c->hs;
    void *out = c->totals_only ? NULL
                : dout         ? dout + (size_t)at * 8
                : ringed       ? gp_dl_ring_buffer(&c->ring)
                               : hout + (size_t)at * 8;
    int err = 0;
    if (cumint)
        BE_CALL("cumulative integral", be->cumint(j->dt, y, x, j->o->dx, n, &c->ci, out));
    else
        BE_CALL("cumulative sum", be->cumsum(j->dt, y, n, &c->cs, out));
    /* the scan is complete on return (kernels.h): its buffer may travel without a fence */
    if (out && ringed && !dout)
        BE_CALL("download of a scan", gp_dl_ring_push(&c->ring, hout + (size_t)at * 8,
                                                      (size_t)n * 8));
    return err;
}

/* A piece of the shard (pieces.h): both scans over it, in sub-pieces of SCAN_PIECE elements
 * on a device, each sub-piece's outputs in place once the ring is finished at the end (also
 * after a failure: nothing in flight on return). Books the scan row. */
static int scan_piece(gp_job *j, const void *dev, const double *dx, int64_t goff, int64_t n,
                      int first, int last, void *ctx)
{
    scan_ctx *c = (scan_ctx *)ctx;
    const double t0 = now();
    const int ringed = c->ring.dev[0] != NULL;
    const int64_t step = ringed ? SCAN_PIECE : (n > 0 ? n : 1); /* ring: its buffers' size */
    int err = 0;
    (void)first, (void)last;
    for (int64_t s = 0; s < n && !err; s += step) {
        const int64_t len = n - s < step ? n - s : step;
        const void *y = (const unsigned char *)dev + (size_t)s * j->sz;
        const int64_t at = goff - j->off + s; /* in the shard's outputs */
        if (c->hs || c->ds) err = scan_call(j, c, 0, y, NULL, len, at);
        if ((c->hi || c->di) && !err) err = scan_call(j, c, 1, y, dx ? dx + s : NULL, len, at);
    }
    if (ringed) {
        const int rc = gp_dl_ring_finish(&c->ring);
        BE_CALL("download of a scan", rc);
    }
    j->t[GP_PH_SCAN] += now() - t0;
    return err;
}

/* Whether the scans' nout outputs stay in device memory until the write, which takes them
 * down through the job's pinned pieces while it writes (gp_write_from), instead of going
 * down to host memory in the scan phase: the shard resident on a device, no sort to come
 * (the plan counted the sort's memory without them), and room for them on every rank with a
 * margin (256 MiB and an eighth) for the phases after. Agreed: the write's calls of a dataset
 * are collective, and differ for device and host memory. */
static int outputs_on_device(gp_job *j, int nout)
{
    int can = !device_is_host(j->be) && !j->chunked && !j->ooc && !j->sorting;
    if (can) {
        size_t mfree = 0, mtotal = 0;
        const size_t need = (size_t)nout * (size_t)(j->cnt > 0 ? j->cnt : 1) * 8;
        can = j->be->mem_info(&mfree, &mtotal) == GP_OK &&
              need + need / 8 + ((size_t)256 << 20) <= mfree;
    }
    int all = 0;
    if (MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, j->comm) != MPI_SUCCESS) return 0;
    return all;
}

/* One output's memory: in device memory (ondevice: owned by the job until its end) or in
 * host memory. 0, or an exit code with j->msg set. */
static int output_memory(gp_job *j, gp_output *out, int ondevice)
{
    const size_t bytes = (size_t)(j->cnt > 0 ? j->cnt : 1) * 8;
    if (ondevice) {
        void *d = j->be->alloc(bytes);
        if (!d) {
            snprintf(j->msg, j->msglen, "rank %d: %s: cannot allocate %.1f MiB of %s memory: %s",
                     j->rank, out->name, (double)bytes / 1048576.0, j->be->name,
                     j->be->last_error());
            return GP_EXIT_DEVICE;
        }
        out->dev = d;
        out->free_dev = 1;
    } else if (!(out->host = malloc(bytes))) {
        snprintf(j->msg, j->msglen, "rank %d: %s: out of host memory (%zu bytes)", j->rank,
                 out->name, bytes);
        return GP_EXIT_FAIL;
    }
    return 0;
}

/* The outputs' memory and names, registered for the write (ph_write.c); on a device whose
 * outputs go to host memory, the download ring. Agreed. */
static int scan_outputs(gp_job *j, scan_ctx *c)
{
    const gp_options *o = j->o;
    gp_result_scan *res = &j->res->scan;
    const gp_dtype st = gp_dtype_is_float(j->dt) ? GP_F64
                        : j->dt == GP_I32 || j->dt == GP_I64 ? GP_I64 : GP_U64;
    const int wants[2] = {o->cumsum, o->cumint};
    const char *const suffix[2] = {"_cumsum", "_cumint"};
    char *const names[2] = {res->cumsum_dset, res->cumint_dset};
    const int ondevice = outputs_on_device(j, wants[0] + wants[1]);
    int err = 0;
    for (int k = 0; k < 2 && !err; k++) {
        if (!wants[k]) continue;
        gp_output out = {"", H5I_INVALID_HID, k ? GP_F64 : st, {j->N, j->off, j->cnt}, NULL, NULL,
                         0};
        if ((size_t)snprintf(out.name, sizeof out.name, "%s%s", j->in.dataset, suffix[k]) >=
            sizeof out.name) {
            snprintf(j->msg, j->msglen, "%s: %s: the path of %s%s is too long", o->file,
                     j->in.dataset, j->in.dataset, suffix[k]);
            err = GP_EXIT_DATASET;
        } else if ((err = output_memory(j, &out, ondevice)) != 0) {
            /* j->msg says why */
        } else if ((err = gp_job_add_output(j, &out)) != 0) {
            free(out.host);
            if (out.dev) j->be->free((void *)out.dev);
        } else {
            snprintf(names[k], sizeof res->cumsum_dset, "%s", out.name);
            if (k) {
                c->hi = (double *)out.host;
                c->di = (char *)out.dev;
            } else {
                c->hs = out.host;
                c->ds = (char *)out.dev;
            }
        }
    }
    res->cumsum_type = st;
    /* The host outputs are not touched here (gp_host_touch): their first-touch page faults
     * are taken by the ring's copies, on the same threads, while the next sub-piece
     * downloads; a touch pass here would take the same faults with nothing to overlap them.
     * A ring of the shard's size when smaller than SCAN_PIECE (every piece lies within the
     * shard). */
    const int64_t cap = j->cnt < SCAN_PIECE ? (j->cnt > 0 ? j->cnt : 1) : SCAN_PIECE;
    if (!err && !device_is_host(j->be) && !ondevice &&
        gp_dl_ring_open(&c->ring, j->be, (size_t)cap * 8) != 0) {
        snprintf(j->msg, j->msglen, "rank %d: cannot allocate the scans' buffer (%.1f MiB of %s "
                 "memory): %s", j->rank, (double)cap * 8 / 1048576.0, j->be->name,
                 j->be->last_error());
        err = GP_EXIT_DEVICE;
    }
    return gp_agree(j->comm, err, j->msg, j->msglen);
}

/* The carries into this rank's shard from every rank's totals (all gathered in t), added in
 * rank order: float sums as double-doubles, integers exactly, the trapezoid across each
 * boundary from the previous non-empty rank's last sample. */
static void carries_in(gp_job *j, scan_ctx *c, const rank_total *t)
{
    const int hasx = j->o->xdataset != NULL;
    c->cs = gp_scan_carry_start(j->off);
    c->ci = gp_scan_carry_start(j->off);
    for (int q = 0; q < j->rank; q++) {
        if (t[q].cnt == 0) continue;
        gp_dd_add2(&c->cs.hi, &c->cs.lo, t[q].shi, t[q].slo);
        c->cs.isum = gp_i128_add(c->cs.isum, t[q].isum);
        gp_scan_carry *ci = &c->ci;
        if (ci->has_prev)
            gp_dd_add(&ci->hi, &ci->lo,
                      gp_trap_term(t[q].yfirst, ci->yprev, t[q].xfirst, ci->xprev, j->o->dx, hasx));
        gp_dd_add2(&ci->hi, &ci->lo, t[q].ihi, t[q].ilo);
        ci->yprev = t[q].ylast;
        ci->xprev = hasx ? t[q].xlast : 0.0;
        ci->has_prev = 1;
    }
}

/* Every rank's rank_total, gathered into t (P entries). */
static int gather_totals(gp_job *j, const rank_total *mine, rank_total *t)
{
    if (MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, t, (int)sizeof *mine, MPI_BYTE,
                      j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allgather of the scans' totals failed");
        return GP_EXIT_FAIL;
    }
    return 0;
}

/* This rank's totals and ends: the first pass (float sums and the trapezoid; not needed on
 * one rank) and the statistics' exact integer sum and end samples. */
static int shard_totals(gp_job *j, scan_ctx *c, rank_total *mine)
{
    const int need = j->P > 1 && (j->o->cumint || (j->o->cumsum && gp_dtype_is_float(j->dt)));
    int err = 0;
    memset(mine, 0, sizeof *mine);
    c->cs = gp_scan_carry_start(j->off);
    c->ci = gp_scan_carry_start(j->off);
    if (need) {
        c->totals_only = 1;
        err = gp_job_foreach_piece(j, j->o->cumint && j->o->xdataset, scan_piece, c);
        c->totals_only = 0;
    }
    mine->shi = c->cs.hi;
    mine->slo = c->cs.lo;
    mine->ihi = c->ci.hi;
    mine->ilo = c->ci.lo;
    mine->isum = j->local.isum; /* integer data: exact (has_isum) */
    mine->yfirst = j->local.yfirst;
    mine->ylast = j->local.ylast;
    mine->xfirst = j->local.xfirst;
    mine->xlast = j->local.xlast;
    mine->cnt = j->cnt;
    return err;
}

/* After the scan: an integer prefix that left its type on any rank (the first global index
 * of all), and the last outputs of the last non-empty rank into the result. */
static int scan_results(gp_job *j, scan_ctx *c, rank_total *t)
{
    gp_result_scan *res = &j->res->scan;
    int64_t ovf = c->cs.overflow >= 0 ? c->cs.overflow : INT64_MAX, first = INT64_MAX;
    if (MPI_Allreduce(&ovf, &first, 1, MPI_INT64_T, MPI_MIN, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the scans' overflow failed");
        return GP_EXIT_FAIL;
    }
    if (first != INT64_MAX) {
        const char *ot = res->cumsum_type == GP_I64 ? "int64" : "uint64";
        snprintf(j->msg, j->msglen, "%s: %s: --cumsum: the prefix sum at index %lld does not fit "
                 "%s (the cumulative sums of %s data are %s); nothing written", j->o->file,
                 j->in.dataset, (long long)first, ot, gp_dtype_name(j->dt), ot);
        return GP_EXIT_DATASET;
    }
    rank_total mine;
    memset(&mine, 0, sizeof mine);
    mine.cnt = j->cnt;
    const size_t last = (size_t)(j->cnt > 0 ? j->cnt - 1 : 0) * 8;
    int err = 0;
    if (j->cnt > 0 && c->hs) memcpy(&mine.last_bits, (const char *)c->hs + last, 8);
    if (j->cnt > 0 && c->ds)
        BE_CALL("download of a scan's last value",
                j->be->download(&mine.last_bits, c->ds + last, 8));
    memcpy(&mine.last_sum, &mine.last_bits, 8);
    if (j->cnt > 0 && c->hi) mine.last_int = c->hi[j->cnt - 1];
    if (j->cnt > 0 && c->di)
        BE_CALL("download of a scan's last value",
                j->be->download(&mine.last_int, c->di + last, 8));
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err) err = gather_totals(j, &mine, t);
    for (int q = j->P - 1; q >= 0 && !err; q--) {
        if (t[q].cnt == 0) continue;
        res->total = gp_dtype_is_float(j->dt) ? t[q].last_sum : 0.0;
        res->itotal = res->cumsum_type == GP_I64 ? gp_i128_from_i64((int64_t)t[q].last_bits)
                                                 : gp_i128_from_u64(t[q].last_bits);
        res->last_integral = t[q].last_int;
        break;
    }
    return err;
}

int gp_ph_scan(gp_job *j)
{
    scan_ctx c;
    memset(&c, 0, sizeof c);
    rank_total mine, *all = calloc((size_t)j->P, sizeof *all);
    int err = all ? 0 : GP_EXIT_FAIL;
    if (!all) snprintf(j->msg, j->msglen, "rank %d: out of host memory", j->rank);
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    const double t0 = now();
    if (!err) err = scan_outputs(j, &c); /* the ring's buffers: pinned memory takes time */
    j->t[GP_PH_SCAN] += now() - t0;
    if (!err) err = shard_totals(j, &c, &mine);
    if (!err) err = gather_totals(j, &mine, all);
    if (!err) {
        carries_in(j, &c, all);
        err = gp_job_foreach_piece(j, j->o->cumint && j->o->xdataset, scan_piece, &c);
    }
    if (!err) err = scan_results(j, &c, all);
    const double t1 = now();
    gp_dl_ring_close(&c.ring);
    j->t[GP_PH_SCAN] += now() - t1;
    free(all);
    return err;
}
