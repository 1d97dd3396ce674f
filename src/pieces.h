/* pieces.h — this rank's shard visited in input order, one device-resident piece at a time,
 * whatever holds it: the shard in device memory (one piece), the file itself, chunk by
 * chunk (a job whose shard does not fit: each chunk read and uploaded into a buffer of the
 * chunk's size), or host memory (an out-of-core sort, ooc.h: each piece uploaded from the
 * host's copy of the shard into a device run slot). The statistics, and every primitive
 * that reads the input in its order (a prefix scan, a histogram, a selection), are visitors
 * of this one loop, so that each works on every residency of the shard without a loop of
 * its own. */
#ifndef GP_PIECES_H
#define GP_PIECES_H

#include <stdint.h>

struct gp_job;

/* One piece: n elements of the input's type at dev (backend memory), global input
 * positions [goff, goff + n); dx: their --x coordinates as float64 (backend memory) when the
 * visit asked for them, else NULL. `first` and `last`: whether the piece starts or ends this
 * rank's shard (an empty shard is visited once, with n = 0 and both set). ctx: the caller's.
 * Returns 0 or a GP_EXIT_* code with j->msg set. A visitor makes no collective call (the
 * loop agrees on errors after each piece, on every rank alike). */
typedef int (*gp_piece_fn)(struct gp_job *j, const void *dev, const double *dx, int64_t goff,
                           int64_t n, int first, int last, void *ctx);

/* A visitor of the values alone: one backend call on the piece's n elements at dev (the
 * input's type), 0 or non-zero for the backend's failure (its last_error() says why). */
typedef int (*gp_values_fn)(struct gp_job *j, const void *dev, int64_t n, void *ctx);

/* What gp_values_piece calls: fn with ctx, and the name of the step for its message. */
typedef struct gp_values_visit {
    const char *what;
    gp_values_fn fn;
    void *ctx;
} gp_values_visit;

/* A gp_piece_fn for a gp_values_visit ctx: calls its fn on the piece's values; a failure
 * returns GP_EXIT_DEVICE with j->msg "rank R: WHAT: the backend's error". */
int gp_values_piece(struct gp_job *j, const void *dev, const double *dx, int64_t goff,
                    int64_t n, int first, int last, void *ctx);

/* Visits the shard: out of core (j->ooc), j->ooc->nvisits pieces on every rank, each
 * uploaded from the host's copy of the shard (in input order until the sort phase's merge)
 * and its --x coordinates from the host's copy; with the shard resident (not j->chunked:
 * j->dev holds it, in input order until the sort), one piece, the whole shard; chunked,
 * j->nchunks pieces of at most j->chunk elements, each read and uploaded (gp_read_upload;
 * the same number of reader calls on every rank, empty ones past a short shard's end, as
 * the mpiio driver's collective reads need; visits only of non-empty pieces, but for an
 * empty shard's one; the readers are told the whole shard first, gp_h5_reader_expect, so
 * that the direct chunk path decodes the next pieces' chunks while one is visited, each
 * file chunk once). xdata: the --x coordinates are read and uploaded too (resident: into a
 * buffer of the shard's size, freed at the end). The time of reads and uploads is booked
 * in their rows; the visitor books its own. Collective: the ranks agree on every error
 * after each piece's read and after its visit; the first error stops the loop on every
 * rank. Returns 0 or the agreed GP_EXIT_* code with j->msg set. */
int gp_job_foreach_piece(struct gp_job *j, int xdata, gp_piece_fn fn, void *ctx);

/* Out of core (ooc.h): cnt elements of host memory, global positions from off, visited in
 * `visits` pieces of j->ooc->visit elements, each uploaded into device slot 0 (xdata: the
 * --x coordinates of the host's copy into slot 0's positions) and passed to fn; the same
 * `visits` on every rank (an empty part: one visit of n = 0), agreed after each. The shard
 * before the merge (gp_job_foreach_piece) and the sorted one (sorted.c) alike. */
int gp_job_visit_host(struct gp_job *j, const void *host, int64_t cnt, int64_t off,
                      int64_t visits, int xdata, gp_piece_fn fn, void *ctx);

#endif /* GP_PIECES_H */
