/* pieces.c — the shard visited piece by piece in input order (pieces.h). */
#define _POSIX_C_SOURCE 200809L
#include "pieces.h"

#include <stdio.h>

#include "jobstate.h"
#include "ooc.h"
#include "pipeline.h"
#include "progress.h"

/* Device buffers of `cap` elements (and `cap` float64 coordinates with xdata), agreed. */
static int piece_buffers(gp_job *j, int64_t cap, int xdata, void **dev, double **dx)
{
    const gp_backend *be = j->be;
    const size_t c = (size_t)(cap > 0 ? cap : 1);
    int err = 0;
    *dev = be->alloc(c * j->sz);
    *dx = xdata ? be->alloc(c * sizeof(double)) : NULL;
    if (!*dev || (xdata && !*dx)) {
        err = GP_EXIT_DEVICE;
        snprintf(j->msg, j->msglen, "rank %d: cannot allocate a piece of %lld elements (%.1f MiB) "
                 "of %s memory: %s", j->rank, (long long)cap,
                 (double)cap * (double)(j->sz + (xdata ? 8 : 0)) / 1048576.0, be->name,
                 be->last_error());
    }
    return gp_agree(j->comm, err, j->msg, j->msglen);
}

/* The resident shard: one visit, with its coordinates read and uploaded first for xdata. */
static int visit_resident(gp_job *j, int xdata, gp_piece_fn fn, void *ctx)
{
    double *dx = NULL;
    int err = 0;
    if (xdata) {
        gp_h5_reader *r = NULL;
        dx = j->be->alloc((size_t)(j->cnt > 0 ? j->cnt : 1) * sizeof(double));
        if (!dx) {
            err = GP_EXIT_DEVICE;
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate the --x coordinates: %s",
                     j->rank, j->be->last_error());
        }
        err = gp_agree(j->comm, err, j->msg, j->msglen);
        if (!err) err = gp_open_reader(j, j->o->xdataset, GP_F64, &r);
        if (!err) err = gp_read_upload(j, r, sizeof(double), j->off, j->cnt, j->m, dx, 0);
        gp_h5_reader_close(r);
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    if (!err) err = gp_agree(j->comm, fn(j, j->dev, dx, j->off, j->cnt, 1, 1, ctx), j->msg,
                             j->msglen);
    if (dx) j->be->free(dx);
    return err;
}

/* The chunked shard: every chunk read (and its coordinates), uploaded, visited. */
static int visit_chunks(gp_job *j, int xdata, gp_piece_fn fn, void *ctx)
{
    const int64_t cap = j->chunk < j->cnt ? j->chunk : j->cnt; /* buffer elements */
    void *dev = NULL;
    double *dx = NULL;
    gp_h5_reader *ry = NULL, *rx = NULL;
    int err = piece_buffers(j, cap, xdata, &dev, &dx);
    if (!err) err = gp_open_reader(j, NULL, j->dt, &ry);
    if (!err && xdata) err = gp_open_reader(j, j->o->xdataset, GP_F64, &rx);
    /* the direct chunk path decodes across the pieces' bounds, each file chunk once, the
     * next pieces' chunks while a piece is visited */
    if (!err) gp_h5_reader_expect(ry, j->off, j->cnt);
    if (!err && xdata) gp_h5_reader_expect(rx, j->off, j->cnt);
    gp_progress_work(j->nchunks); /* the phase's progress line counts chunks */
    for (int64_t k = 0; !err && k < j->nchunks; k++) {
        const int64_t lo = k * j->chunk < j->cnt ? k * j->chunk : j->cnt; /* k*chunk < m+chunk */
        const int64_t ck = j->cnt - lo < j->chunk ? j->cnt - lo : j->chunk;
        err = gp_read_upload(j, ry, j->sz, j->off + lo, ck, j->chunk, dev, 0);
        if (!err && xdata)
            err = gp_read_upload(j, rx, sizeof(double), j->off + lo, ck, j->chunk, dx, 0);
        if ((err = gp_agree(j->comm, err, j->msg, j->msglen)) != 0) break;
        if (ck > 0 || (k == 0 && j->cnt == 0)) /* an empty shard: one visit of n = 0 */
            err = fn(j, dev, dx, j->off + lo, ck, lo == 0, lo + ck == j->cnt, ctx);
        err = gp_agree(j->comm, err, j->msg, j->msglen);
        gp_progress_add(1);
    }
    gp_h5_reader_close(ry);
    gp_h5_reader_close(rx);
    if (dev) j->be->free(dev);
    if (dx) j->be->free(dx);
    return err;
}

int gp_job_visit_host(gp_job *j, const void *host, int64_t cnt, int64_t off, int64_t visits,
                      int xdata, gp_piece_fn fn, void *ctx)
{
    const gp_ooc *p = j->ooc;
    const gp_backend *be = j->be;
    int err = 0;
    for (int64_t k = 0; !err && k < visits; k++) {
        const int64_t lo = k * p->visit < cnt ? k * p->visit : cnt;
        const int64_t n = cnt - lo < p->visit ? cnt - lo : p->visit;
        const double tp = now();
        if ((n > 0 && be->upload(p->dk[0], (const char *)host + (size_t)lo * j->sz,
                                 (size_t)n * j->sz)) ||
            (xdata && be->upload(p->dv[0], p->hx + lo, (size_t)n * sizeof(double)))) {
            err = GP_EXIT_DEVICE;
            snprintf(j->msg, j->msglen, "rank %d: upload: %s", j->rank, be->last_error());
        }
        j->t[GP_PH_UPLOAD] += now() - tp;
        if (!err && (n > 0 || (k == 0 && cnt == 0))) /* an empty shard: one visit of n = 0 */
            err = fn(j, p->dk[0], xdata ? (const double *)p->dv[0] : NULL, off + lo, n,
                     lo == 0, lo + n == cnt, ctx);
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    return err;
}

int gp_values_piece(gp_job *j, const void *dev, const double *dx, int64_t goff, int64_t n,
                    int first, int last, void *ctx)
{
    const gp_values_visit *v = (const gp_values_visit *)ctx;
    int err = 0;
    (void)dx, (void)goff, (void)first, (void)last;
    BE_CALL(v->what, v->fn(j, dev, n, v->ctx));
    return err;
}

int gp_job_foreach_piece(gp_job *j, int xdata, gp_piece_fn fn, void *ctx)
{
    if (j->ooc)
        return gp_job_visit_host(j, gp_ooc_keys(j), j->cnt, j->off, j->ooc->nvisits, xdata, fn,
                                 ctx);
    return j->chunked ? visit_chunks(j, xdata, fn, ctx) : visit_resident(j, xdata, fn, ctx);
}
