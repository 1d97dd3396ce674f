/* ph.h — the file job's phases (private to the job's files): the entries of the phase
 * functions that job.c's table runs, one ph_*.c file per concept (ph_plan.c, ph_stats.c,
 * ph_scan.c, ph_hist.c, ph_select.c, ph_sort.c, ph_write.c; out of core ph_ooc.c, ooc.h), and
 * what one phase takes from another (the outputs' registry of ph_write.c, the sort's check
 * of ph_sort.c, the statistics of pieces of ph_stats.c). The record they work on and the
 * services under them: jobstate.h.
 *
 * A phase is a function int ph(gp_job *j): it does its work and returns 0 or a GP_EXIT_*
 * code with j->msg set; run_phase (job.c) does the rest. A new phase: its function in a
 * ph_*.c file of its own (declared below), its word in phases.h, and a row of job.c's
 * table with its wanted() predicate. */
#ifndef GP_PH_H
#define GP_PH_H

#include "jobstate.h"

/* ---- the phases outside job.c, in the table's order (their contracts: at each) ---------- */

int gp_ph_plan(gp_job *j);          /* ph_plan.c: device memory, whole shard or chunks */
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

/* ---- what the phases take from each other ---------------------------------------------- */

/* Two dataset paths of the output file clash (ph_write.c): the same path, or one a group
 * above the other ("/a_argsort" and "/a_argsort/x"); an empty path clashes with none. Pure. */
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

#endif /* GP_PH_H */
