/* ph_stats.c — the file job's statistics phases (ph.h): the statistics of the
 * shard, whole or chunk by chunk; the --x trapezoid rule; the ranks' records combined in
 * rank order, with --reproducible's exact sums, into the result's statistics part. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>

#include "ph.h"
#include "pieces.h"
#include "pipeline.h"
#include "progress.h"

/* ---- statistics ------------------------------------------------------------------------ */

/* The statistics of the whole shard into j->local (the multiset hash only for a sort). */
int gp_ph_stats(gp_job *j)
{
    int err = 0;
    j->local = gp_stats_empty();
    BE_CALL("statistics", j->be->stats(j->dt, j->dev, j->cnt, j->sorting ? 0 : GP_STATS_NOHASH,
                                       &j->local));
    return err;
}

/* In-order combination of chunk records as a binary counter (gp_stats_stack, ph.h):
 * whenever the two newest records each cover 2^k chunks they become one
 * (older, newer); the total folds the rest from the newest to the oldest. The order of the
 * pieces is kept throughout (gp_stats_combine is not commutative), and float64 sums get a
 * pairwise (log2 chunks) error growth. */
void gp_stats_stack_push(gp_stats_stack *s, const gp_stats *rec)
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

gp_stats gp_stats_stack_total(const gp_stats_stack *s)
{
    if (s->top == 0) return gp_stats_empty();
    gp_stats r = s->v[s->top - 1];
    for (int k = s->top - 2; k >= 0; k--) r = gp_stats_combine(&s->v[k], &r);
    return r;
}

/* A piece of the shard already on the device (dev, and dx; pieces.h): its statistics
 * (+ exact sums, + trap_x), the record pushed onto the gp_stats_stack ctx. Books reduce and
 * integrate. */
int gp_stats_piece(gp_job *j, const void *dev, const double *dx, int64_t goff, int64_t ck,
                   int first, int last, void *ctx)
{
    const gp_backend *be = j->be;
    const gp_options *o = j->o;
    int err = 0;
    gp_stats rec = gp_stats_empty();
    double tp = now();
    (void)goff, (void)first, (void)last;
    BE_CALL("statistics", be->stats(j->dt, dev, ck, j->sorting ? 0 : GP_STATS_NOHASH, &rec));
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
    if (!err) gp_stats_stack_push((gp_stats_stack *)ctx, &rec);
    return err;
}

/* The statistics pass of a --no-sort job whose shard does not fit: the chunks visited in
 * input order (gp_job_foreach_piece: each read and uploaded, values and --x coordinates),
 * each reduced (gp_stats_piece); the chunk records go through a gp_stats_stack into j->local,
 * which then describes the whole shard like one be->stats (+ trap_x) call on it;
 * --reproducible's exact sums are added into j->av / j->aq. */
int gp_ph_stats_chunked(gp_job *j)
{
    gp_stats_stack st;
    st.top = 0;
    const int err = gp_job_foreach_piece(j, j->o->xdataset != NULL, gp_stats_piece, &st);
    j->local = gp_stats_stack_total(&st);
    return err;
}

/* ---- integral -------------------------------------------------------------------------- */

/* The non-uniform trapezoid rule of the shard (unchunked): the coordinates read as float64
 * and uploaded (gp_read_upload), and be->trap_x adds the shard's terms to j->local. Books read,
 * upload and integrate. */
int gp_ph_integral(gp_job *j)
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
        gp_progress_phase(gp_phase_progress(GP_PH_READ));
        err = gp_open_reader(j, j->o->xdataset, GP_F64, &r);
        if (!err) err = gp_read_upload(j, r, sizeof(double), j->off, cnt, j->m, dx, 1);
        gp_h5_reader_close(r);
        gp_progress_done();
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    if (!err) {
        const double tp = now();
        gp_progress_phase(gp_phase_progress(GP_PH_INTEGRATE));
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
 * layout (a chunked pass or the out-of-core runs have added their pieces into av / aq
 * already), replace the float64 ones. */
static int exact_sums(gp_job *j)
{
    const gp_backend *be = j->be;
    int err = 0;
    gp_superacc tv, tq;
    if (!j->chunked && !j->ooc) {
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
    j->res->stats.reproducible = 1;
    return 0;
}

/* The ranks' records combined in rank order into j->total (every rank), the exact sums, and
 * the statistics and integral of the result record. */
int gp_ph_combine(gp_job *j)
{
    int err = 0;
    if (gp_stats_allreduce(j->comm, &j->local, &j->total) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the statistics failed");
        return GP_EXIT_FAIL;
    }
    if (j->o->reproducible && (err = exact_sums(j))) return err;
    gp_result_stats *res = &j->res->stats;
    res->global = j->total;
    res->nonuniform = j->o->xdataset != NULL;
    res->integral = j->o->xdataset ? j->total.trap : uniform_trapezoid(&j->total, j->o->dx, j->dt);
    return 0;
}
