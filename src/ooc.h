/* ooc.h — the out-of-core sort (private to the job's files): a sort whose shard does not fit
 * in device memory on some rank, done from host memory on every rank of the job.
 *
 * The plan (ooc_plan.c, in the plan phase) decides it: when the in-memory sort fits on every
 * rank, j->ooc stays NULL and nothing here runs. Otherwise every rank gets a gp_ooc record:
 *
 *   read   the shard straight into host memory (the current buffer), in input order; the
 *          --x coordinates too (ph_ooc.c)
 *   runs   (the statistics' place in the phase table; ph_ooc.c, ooc_stage.c) the shard cut
 *          into runs that fit on the device; each run staged up (through a ring of four
 *          pinned pieces, or straight on a host-memory backend), its statistics (in input
 *          order, combined as the chunked statistics are), order keys, input positions
 *          (be->iota) and the device sort, then staged down into the other host buffer; a
 *          staging thread moves run k+1 up and run k-1 down while the device sorts run k.
 *          A rank whose whole shard fits on the device has one run.
 *   scan   (its place in the table, ph_scan.c) gp_job_foreach_piece (pieces.c) visits the
 *          current buffer, in input order until the merge, piece by piece through device
 *          slot 0 (pieces of a multiple of GP_OOC_RUN_MIN elements)
 *   merge  (the sort's place) the runs merged on the host's threads into one sorted shard
 *          (gp_cpu_merge_runs, kernels/cpu_merge_mt.h)
 *   exchange  P > 1: the job's exchange is made with the CPU backend on the host buffers
 *          (gp_job_create_exchange), so gp_ph_exchange runs on them unchanged
 *   verify on the host's threads: the sorted keys' statistics with GP_STATS_ORDER, combined
 *          in order, and the keys back to values
 *   write  from host memory (ph_write.c)
 *
 * The sorted values are the in-memory path's bytes, and with --stable the argsort and the
 * payload too: runs in input order, each sorted by (key, position), merged with ties to the
 * earlier run. */
#ifndef GP_OOC_H
#define GP_OOC_H

#include <stddef.h>
#include <stdint.h>

struct gp_job;

#define GP_OOC_RUN_MIN ((int64_t)4096)          /* elements: the shortest run of a plan */
#define GP_OOC_PIECE ((int64_t)16 << 20)        /* bytes per staging piece (CUDA) */

typedef struct gp_ooc {
    /* the plan (ooc_plan.c) */
    int64_t run;          /* elements per run (the shard's last run may be shorter) */
    int64_t nruns;        /* this rank's runs (an empty shard: 1 run of 0 elements) */
    int nslots;           /* device run slots: 1 (one run) or 2 (staged while the other sorts) */
    int64_t slot;         /* elements per slot */
    int aux;              /* the slots have 8 more bytes per element: the input positions
                             (pairs) and, for the statistics, the --x coordinates */
    int64_t piece;        /* bytes per staging piece; 0: straight to and from the backend's
                             memory (a host-memory backend without GPUPRIM_READ_PIECE_BYTES) */
    int64_t visit;        /* elements per piece of a visit (ceil(cnt / nvisits) rounded up
                             to a multiple of GP_OOC_RUN_MIN, at most a slot; nvisits the
                             same on every rank) */
    int64_t nvisits;
    int threads;          /* the host's threads of this rank */
    uint64_t dev_usable, host_usable, host_need, pinned;
    /* host memory: the shard and the other buffer (the host exchange's with P > 1, else
       these), and the --x coordinates */
    char *hk[2];
    uint64_t *hv[2];
    int cur;
    double *hx;
    /* device memory: the slots, and on a backend whose sort takes a scratch (be->sort_spare:
       the CPU backend) one more slot as its scratch, which trades places with the slot
       whose sorted run ends in it; pinned host memory: the ring (up 0, up 1, down 0,
       down 1) */
    void *dk[2], *sk;
    uint64_t *dv[2], *sv;
    void *ring[4];
    /* what the runs found and how long they took (--verbose) */
    uint64_t hash_desc;   /* descending keys' multiset hash of this rank's input */
    double t_up, t_down, t_dev, t_merge;
} gp_ooc;

/* ---- ooc_plan.c ---------------------------------------------------------------------- */

/* The sort's memory plan (called by gp_ph_plan with this rank's in-memory need and usable
 * device memory): in device memory when the need fits on every rank (j->ooc stays NULL),
 * else out of core on every rank (j->ooc set: runs, slots, pieces, threads), or, when a
 * rank's host memory is short too, GP_EXIT_DEVICE with one line that names every tier's
 * need and free memory. --verbose: a line per rank; out of core, one notice from rank 0.
 * Collective. Returns 0 or the agreed GP_EXIT_* code with j->msg set. */
int gp_ooc_plan(struct gp_job *j, uint64_t need, uint64_t usable, size_t mfree, int share);

/* ---- ph_ooc.c: buffers and phases ------------------------------------------------------ */

/* The host buffers as the phases see them, the current one and the spare (gp_ooc_keys,
 * gp_ooc_spare_keys, ...): jobstate.h. */

/* The buffers (alloc phase): host buffers (through the host exchange when P > 1), the
 * device slots, the ring. Collective. Returns 0 or an agreed GP_EXIT_* code. */
int gp_ooc_alloc(struct gp_job *j);

/* Frees what gp_ooc_alloc allocated (not the exchange: job_release destroys it, collectively):
 * the host buffers always; the device slots, the sort's scratch and the pinned ring only where
 * the job frees its device memory (gp_proc_leave_memory, startup.h: else the process's exit
 * does). Not collective. */
void gp_ooc_release(struct gp_job *j);

/* The read phase out of core: the shard (and --x coordinates) straight into host memory.
 * Returns 0 or a GP_* code with j->msg set (this rank's; the caller agrees). */
int gp_ooc_read(struct gp_job *j);

/* ---- ooc_stage.c: the run pass --------------------------------------------------------- */

/* The work on one run in device memory: keys (dk) and the aux slot (dv: the --x coordinates
 * on entry when the pass stages them, the positions on return with pairs) of run k, n
 * elements at shard offset lo. Returns 0 or a GP_EXIT_* code with j->msg set. */
typedef int (*gp_ooc_run_fn)(struct gp_job *j, int64_t k, void *dk, uint64_t *dv, int64_t lo,
                             int64_t n, void *ctx);

/* Every run of this rank through the device: run k staged up from the current host buffer
 * (and from j->ooc->hx into dv with xdata), fn on it in this thread, then its keys (and
 * values with pairs) staged down into the spare buffer, while a staging thread moves the
 * next run up and the one before down. Not collective (no agreement inside). Returns 0 or a
 * GP_EXIT_* code with j->msg set. */
int gp_ooc_run_pass(struct gp_job *j, int xdata, gp_ooc_run_fn fn, void *ctx);

#endif /* GP_OOC_H */
