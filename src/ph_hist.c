/* ph_hist.c — the file job's histogram phase (ph.h): --histogram N [--range A B],
 * numpy's histogram of the finite values (gpuprim/dist.h) over every rank's shard in input
 * order, piece by piece (gp_job_foreach_piece: resident or chunked alike), the counts summed
 * over the ranks (exact int64), into the result's distribution part and, with --out, the
 * datasets DATASET_hist_counts and DATASET_hist_edges. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprim/dist.h"
#include "ph.h"
#include "pieces.h"

/* One histogram pass: the plan, and this rank's counts (nbins + 2: below, above last). */
typedef struct hist_run {
    gp_hist_spec spec;
    int64_t *counts;
} hist_run;

/* A piece's values binned (pieces.h's gp_values_fn). */
static int hist_values(gp_job *j, const void *dev, int64_t n, void *ctx)
{
    hist_run *h = (hist_run *)ctx;
    return j->be->hist(&h->spec, dev, n, h->counts);
}

/* A piece's finite range added into the gp_frange ctx (pieces.h's gp_values_fn). */
static int frange_values(gp_job *j, const void *dev, int64_t n, void *ctx)
{
    return j->be->finite_range(j->dt, dev, n, (gp_frange *)ctx);
}

/* The finite values' count and key range over every rank (every rank gets it): from the
 * combined statistics when neither extreme is infinite, else by a pass of finite_range over
 * the pieces, combined with MPI. */
static int finite_range(gp_job *j, gp_frange *fr)
{
    const gp_stats *s = &j->total;
    const int64_t nn = s->count - s->nan_count;
    *fr = gp_frange_empty();
    if (nn == 0) return 0;
    const double mn = gp_key_to_double(j->dt, s->min_key), mx = gp_key_to_double(j->dt, s->max_key);
    if (!isinf(mn) && !isinf(mx)) {
        fr->finite = nn;
        fr->min_key = s->min_key;
        fr->max_key = s->max_key;
        return 0;
    }
    gp_frange mine = gp_frange_empty();
    gp_values_visit visit = {"finite range", frange_values, &mine};
    int err = gp_job_foreach_piece(j, 0, gp_values_piece, &visit);
    if (err) return err;
    const MPI_Comm c = j->comm;
    if (MPI_Allreduce(&mine.finite, &fr->finite, 1, MPI_INT64_T, MPI_SUM, c) != MPI_SUCCESS ||
        MPI_Allreduce(&mine.min_key, &fr->min_key, 1, MPI_UINT64_T, MPI_MIN, c) != MPI_SUCCESS ||
        MPI_Allreduce(&mine.max_key, &fr->max_key, 1, MPI_UINT64_T, MPI_MAX, c) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the finite range failed");
        return GP_EXIT_FAIL;
    }
    return 0;
}

/* Registers one dataset of the histogram for --out: "DATASET" + suffix, whole on rank 0
 * (cnt elements of type mem copied from src), an empty part elsewhere; its name into name. */
static int add_hist_output(gp_job *j, const char *suffix, gp_dtype mem, int64_t cnt,
                           const void *src, char *name, size_t namelen)
{
    gp_output out;
    memset(&out, 0, sizeof out);
    const int n = snprintf(out.name, sizeof out.name, "%s%s", j->in.dataset, suffix);
    if (n < 0 || (size_t)n >= sizeof out.name) {
        snprintf(j->msg, j->msglen, "%s: output dataset %s%s: the name is too long",
                 j->o->out, j->in.dataset, suffix);
        return GP_EXIT_USAGE;
    }
    const size_t bytes = j->rank == 0 ? (size_t)cnt * gp_dtype_size(mem) : 1;
    out.file_type = H5I_INVALID_HID;
    out.mem = mem;
    out.ext = (gp_h5_extent){cnt, 0, j->rank == 0 ? cnt : 0};
    out.host = malloc(bytes);
    if (!out.host) {
        snprintf(j->msg, j->msglen, "rank %d: the histogram's output: out of host memory", j->rank);
        return GP_EXIT_FAIL;
    }
    if (j->rank == 0) memcpy(out.host, src, bytes);
    const int err = gp_job_add_output(j, &out);
    if (err) free(out.host);
    else snprintf(name, namelen, "%s", out.name);
    return err;
}

/* Rank 0: the summed counts and the edges into the result's distribution part (which keeps
 * `total`), and with --out the two datasets registered (every rank alike). */
static int hist_results(gp_job *j, const hist_run *h, int64_t *total, const void *edges)
{
    gp_result_dist *res = &j->res->dist;
    const int64_t nb = h->spec.nbins;
    int err = 0;
    res->bins = nb;
    res->edge_type = h->spec.edge_type;
    if (j->rank == 0) {
        res->edges = malloc((size_t)(nb + 1) * sizeof(double));
        if (!res->edges) {
            snprintf(j->msg, j->msglen, "rank 0: the histogram's edges: out of host memory");
            err = GP_EXIT_FAIL;
        }
        for (int64_t i = 0; !err && i <= nb; i++)
            res->edges[i] = h->spec.edge_type == GP_F32 ? (double)((const float *)edges)[i]
                                                        : ((const double *)edges)[i];
        res->counts = total;
        res->below = total[nb];
        res->above = total[nb + 1];
    }
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen)) || !j->o->out) return err;
    err = add_hist_output(j, "_hist_counts", GP_I64, nb, total, res->counts_dset,
                          sizeof res->counts_dset);
    if (!err)
        err = add_hist_output(j, "_hist_edges", h->spec.edge_type, nb + 1, edges,
                              res->edges_dset, sizeof res->edges_dset);
    return err;
}

/* The histogram: the range (--range, or the finite values' own), numpy's plan (a bad one is
 * a usage error naming the file, the dataset and the reason, on every rank alike), one pass
 * of be->hist over this rank's pieces, the counts summed on rank 0 (MPI_SUM of int64: exact,
 * whatever the order). Books the distribution row. */
int gp_ph_hist(gp_job *j)
{
    const gp_options *o = j->o;
    const int64_t nb = o->hist_bins;
    const size_t esz = gp_dtype_size(gp_hist_edge_type(j->dt));
    hist_run h;
    gp_frange fr = gp_frange_empty();
    char why[400];
    int err = 0;
    void *edges = malloc((size_t)(nb + 1) * esz);
    int64_t *total = j->rank == 0 ? calloc((size_t)nb + 2, sizeof(int64_t)) : NULL;
    h.counts = calloc((size_t)nb + 2, sizeof(int64_t));
    if (!edges || !h.counts || (j->rank == 0 && !total)) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "rank %d: --histogram %lld: out of host memory", j->rank,
                 (long long)nb);
    }
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err && !o->have_range) err = finite_range(j, &fr);
    if (!err && gp_hist_plan(j->dt, nb, o->have_range, o->range_a, o->range_b, fr.finite,
                             fr.min_key, fr.max_key, &h.spec, edges, why, sizeof why) != 0) {
        err = GP_EXIT_USAGE; /* the same plan, and verdict, on every rank */
        snprintf(j->msg, j->msglen, "%s:%s: --histogram %lld: %s", j->in.file, j->in.dataset,
                 (long long)nb, why);
    }
    gp_values_visit visit = {"histogram", hist_values, &h};
    if (!err) err = gp_job_foreach_piece(j, 0, gp_values_piece, &visit);
    if (!err && MPI_Reduce(h.counts, total, (int)(nb + 2), MPI_INT64_T, MPI_SUM, 0, j->comm) !=
                    MPI_SUCCESS) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "MPI_Reduce of the histogram failed");
    }
    if (!err) err = hist_results(j, &h, total, edges);
    if (err || j->rank != 0) free(total);
    if (err && j->rank == 0) j->res->dist.counts = NULL;
    free(h.counts);
    free(edges);
    return err;
}
