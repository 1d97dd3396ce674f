/* ph_select.c — the file job's quantile and distinct phases (ph.h): --quantiles /
 * --median as numpy's nanquantile (linear; gpuprim/dist.h), from the sorted data (the owner
 * of each wanted position sends its value) or, with --no-sort, by a distributed radix select
 * over the input's pieces; --distinct from the runs of the sorted data, combined across the
 * rank boundaries in rank order. The sorted side reads through the sorted view (sorted.h),
 * so that an out-of-core sorted shard serves it too. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprim/dist.h"
#include "ph.h"
#include "pieces.h"
#include "sorted.h"

/* ---- quantiles ------------------------------------------------------------------------- */

/* The non-NaN values the quantiles are of (every rank: from the combined statistics). */
static int64_t nonnan(const gp_job *j) { return j->total.count - j->total.nan_count; }

/* The wanted ascending ranks among nn >= 1 non-NaN values: quantile i's neighbours
 * ranks[2i] <= ranks[2i + 1], and its weight w[i] (numpy's virtual index). */
static void quantile_ranks(const gp_options *o, int64_t nn, int64_t *ranks, double *w)
{
    for (int i = 0; i < o->nq; i++)
        gp_quantile_index(nn, o->q[i], &ranks[2 * i], &ranks[2 * i + 1], &w[i]);
}

/* The result part from the keys of the order statistics (keys NULL: no non-NaN value, every
 * quantile NaN). */
static void quantile_results(gp_job *j, const uint64_t *keys, const double *w, int select)
{
    gp_result_dist *res = &j->res->dist;
    res->nq = j->o->nq;
    res->q_select = select;
    res->q_count = nonnan(j);
    for (int i = 0; i < res->nq; i++) {
        res->q[i] = j->o->q[i];
        res->value[i] = keys ? gp_quantile_lerp(j->dt, keys[2 * i], keys[2 * i + 1], w[i]) : NAN;
    }
}

/* The start of either way to the quantiles (select: the radix select's): the non-NaN count
 * *nn and, when there is one, the wanted ranks and weights (quantile_ranks). Returns 1 when
 * there are none, with every quantile's result NaN already set (nothing left to do), else 0. */
static int quantile_start(gp_job *j, int select, int64_t *nn, int64_t *ranks, double *w)
{
    *nn = nonnan(j);
    if (*nn == 0) {
        quantile_results(j, NULL, NULL, select);
        return 1;
    }
    quantile_ranks(j->o, *nn, ranks, w);
    return 0;
}

/* One pass of the select: the counts of this rank's pieces. */
typedef struct select_run {
    gp_select sel;
    int64_t *counts, *sum; /* GP_SELECT_MAX << GP_SELECT_DIGIT each */
} select_run;

/* A piece's digit histograms added (pieces.h's gp_values_fn). */
static int select_values(gp_job *j, const void *dev, int64_t n, void *ctx)
{
    select_run *s = (select_run *)ctx;
    return j->be->radix_hist(j->dt, dev, n, &s->sel, s->counts);
}

/* The passes of the radix select over the input's pieces, each pass's counts summed over
 * the ranks (every rank advances the same state). */
static int select_passes(gp_job *j, select_run *s)
{
    gp_values_visit visit = {"radix select", select_values, s};
    int err = 0;
    while (!err && !s->sel.done) {
        const size_t len = gp_select_counts_len(&s->sel);
        memset(s->counts, 0, len * sizeof(int64_t));
        err = gp_job_foreach_piece(j, 0, gp_values_piece, &visit);
        if (err) break;
        if (MPI_Allreduce(s->counts, s->sum, (int)len, MPI_INT64_T, MPI_SUM, j->comm) !=
            MPI_SUCCESS) {
            snprintf(j->msg, j->msglen, "MPI_Allreduce of the radix select's counts failed");
            return GP_EXIT_FAIL;
        }
        if (gp_select_advance(&s->sel, s->sum) != 0) {
            snprintf(j->msg, j->msglen, "%s:%s: the radix select's counts do not add up "
                     "(an element changed between passes?)", j->in.file, j->in.dataset);
            return GP_EXIT_FAIL;
        }
    }
    return err;
}

/* The quantiles without the sort (--no-sort): a radix select of the wanted ranks over this
 * rank's pieces in input order (resident or chunked), 11 key bits per pass. */
int gp_ph_select(gp_job *j)
{
    int64_t nn, ranks[GP_SELECT_MAX];
    double w[GP_MAX_QUANTILES];
    if (quantile_start(j, 1, &nn, ranks, w)) return 0;
    uint64_t keys[GP_SELECT_MAX];
    select_run s;
    int err = 0;
    const size_t cap = (size_t)GP_SELECT_MAX << GP_SELECT_DIGIT;
    s.counts = malloc(cap * sizeof(int64_t));
    s.sum = malloc(cap * sizeof(int64_t));
    if (!s.counts || !s.sum || gp_select_init(&s.sel, j->dt, ranks, 2 * j->o->nq) != 0) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "rank %d: the radix select: out of host memory", j->rank);
    }
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err) err = select_passes(j, &s);
    if (!err) {
        for (int i = 0; i < 2 * j->o->nq; i++) keys[i] = s.sel.prefix[i];
        quantile_results(j, keys, w, 1);
    }
    free(s.counts);
    free(s.sum);
    return err;
}

/* The quantiles from the sorted data: the owner of each wanted position (ascending rank k
 * at sorted position k, or nn - 1 - k in descending order: NaNs are last in both) reads it
 * from its sorted view; the keys are summed over the ranks (one owner each). */
int gp_ph_quant_sorted(gp_job *j)
{
    int64_t nn, ranks[GP_SELECT_MAX];
    double w[GP_MAX_QUANTILES];
    if (quantile_start(j, 0, &nn, ranks, w)) return 0;
    const int nt = 2 * j->o->nq;
    uint64_t mine[GP_SELECT_MAX], keys[GP_SELECT_MAX];
    gp_sorted_view v;
    int err = gp_job_sorted_view(j, &v);
    if (err) return err;
    for (int i = 0; i < nt && !err; i++) {
        const int64_t g = j->o->descending ? nn - 1 - ranks[i] : ranks[i];
        unsigned char elem[8];
        mine[i] = 0;
        if (g >= v.off && g < v.off + v.n && !(err = v.at(j, g - v.off, elem)))
            mine[i] = gp_key_of(j->dt, elem);
    }
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (MPI_Allreduce(mine, keys, nt, MPI_UINT64_T, MPI_SUM, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the quantiles' elements failed");
        return GP_EXIT_FAIL;
    }
    quantile_results(j, keys, w, 0);
    return 0;
}

/* ---- distinct ---------------------------------------------------------------------------- */

/* A piece's runs appended to the gp_runs ctx (pieces.h's gp_values_fn). */
static int runs_values(gp_job *j, const void *dev, int64_t n, void *ctx)
{
    gp_runs *acc = (gp_runs *)ctx, r = gp_runs_empty();
    if (j->be->runs(j->dt, dev, n, &r)) return -1;
    *acc = gp_runs_combine(acc, &r);
    return 0;
}

/* The distinct non-NaN values of the sorted data: each rank's runs (its sorted view's
 * pieces in order), gathered on rank 0 and combined in rank order, so that a value that
 * crosses a rank boundary counts once. */
int gp_ph_distinct(gp_job *j)
{
    gp_sorted_view v;
    gp_runs mine = gp_runs_empty();
    gp_runs *all = NULL;
    int err = gp_job_sorted_view(j, &v);
    gp_values_visit visit = {"distinct count", runs_values, &mine};
    if (!err) err = v.foreach(j, gp_values_piece, &visit);
    if (err) return err;
    if (j->rank == 0 && !(all = malloc((size_t)j->P * sizeof *all))) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "rank 0: --distinct: out of host memory");
    }
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                   j->comm) != MPI_SUCCESS) {
        free(all);
        snprintf(j->msg, j->msglen, "MPI_Gather of the runs failed");
        return GP_EXIT_FAIL;
    }
    if (j->rank == 0) {
        gp_runs t = gp_runs_empty();
        for (int r = 0; r < j->P; r++) t = gp_runs_combine(&t, &all[r]);
        j->res->dist.distinct = t.runs;
        j->res->dist.distinct_done = 1;
    }
    free(all);
    return 0;
}
