/* exchange.h — MPI combination of results: the statistics reduction and the rank-level
 * bitonic merge exchange. */
#ifndef GP_EXCHANGE_H
#define GP_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "gp_kernels.h"

/* Combines every rank's gp_stats (each describing its shard, shards in rank order) into
 * the record of the whole array on `root`, with MPI_Reduce and a user-defined,
 * non-commutative operation (gp_stats_combine), so ranks are combined in rank order and the
 * result is the same on every run for a given rank count. Collective. Returns an MPI
 * error code (MPI_SUCCESS on success). */
int gp_stats_reduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total, int root);

/* Adds every rank's exact accumulator (gp_ext.h) into *total on every rank: MPI_Allreduce
 * with a user-defined operation doing gp_superacc_add (exact integer limb additions, so
 * the result is the same bits whatever the reduction order). Returns an MPI error code. */
struct gp_superacc;
int gp_superacc_allreduce(MPI_Comm comm, const struct gp_superacc *mine,
                          struct gp_superacc *total);

/* Same, but every rank receives the total (MPI_Allreduce with the same operation). */
int gp_stats_allreduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total);

/* Most network steps recorded per step (P up to 2^21 ranks). */
#define GP_XSTEPS_MAX 231

/* What the exchange did on this rank. */
typedef struct gp_exchange_info {
    int stages;            /* network steps (P' = P rounded up to 2^k: log2 P'(log2 P'+1)/2) */
    int merges;            /* steps in which this rank merged with a real partner */
    int64_t bytes_sent;    /* payload bytes this rank sent */
    double t_comm;         /* seconds in transfers (device->host, MPI, host->device) */
    double t_merge;        /* seconds in merge-splits */
    /* per step s < min(stages, GP_XSTEPS_MAX): seconds in transfers and in the merge-split,
     * and the bytes this rank sent (0 when its partner was virtual) */
    double step_comm[GP_XSTEPS_MAX];
    double step_merge[GP_XSTEPS_MAX];
    int64_t step_bytes[GP_XSTEPS_MAX];
} gp_exchange_info;

/* Rank-level bitonic merge exchange (the mirror form of the bitonic network over ranks,
 * shards as elements, merge-split as compare-exchange; Baudet & Stevenson's block
 * generalisation of Batcher's network). On entry every rank holds in *keys its *nkeys
 * (<= m) keys of `width` bytes (4 or 8), sorted ascending, where m = ceil(N/P) slots per
 * rank; missing slots are virtual +inf. On return rank r holds the global slots
 * [r*m, r*m + *nkeys) of the sorted whole: the result does not depend on how the keys were
 * distributed, and ranks r with r*m >= N hold none.
 * Buffers (backend memory, each of m keys): *keys, *spare (swapped with *keys as the
 * merges go), recv; host staging buffers host_send and host_recv of m keys each (pinned
 * for CUDA; unused for the CPU backend). A partner rank >= P is a virtual all-+inf shard:
 * no message. Transfers go through MPI_Sendrecv in pieces of at most 1 GiB.
 * Collective. A failing backend call aborts the job with a one-line message (the partner
 * would otherwise wait forever). Returns 0. */
int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void **spare, void *recv,
                        void *host_send, void *host_recv, gp_exchange_info *info);

/* gp_bitonic_exchange with one uint64 value per key (argsort positions or a payload):
 * *vals (m values, backend memory) moves with *keys, *vspare and vrecv are its spare and
 * receive buffers (m each), hv_send / hv_recv its host staging buffers (m each). With
 * stable = 1 the order is (key, value) lexicographic (the values are then global input
 * positions, which makes the sort stable); else by key, ties lower rank first. Merge-splits
 * are the backend's merge_split_pairs. Collective; aborts the job on a failing backend
 * call. Returns 0. */
int gp_bitonic_exchange_pairs(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                              void **keys, uint64_t **vals, int64_t *nkeys, void **spare,
                              uint64_t **vspare, void *recv, uint64_t *vrecv, void *host_send,
                              void *host_recv, uint64_t *hv_send, uint64_t *hv_recv,
                              int stable, gp_exchange_info *info);

/* Sends `sbytes` bytes from sbuf to `partner` and receives `rbytes` bytes from it into rbuf,
 * in pieces of at most 1 GiB (both sides must pass the same pair of sizes, swapped).
 * Returns an MPI error code. */
int gp_sendrecv_bytes(MPI_Comm comm, int partner, const void *sbuf, int64_t sbytes, void *rbuf,
                      int64_t rbytes);

/* MPI_Alltoallv with 64-bit counts and displacements: this rank sends scount[p] elements of
 * esz bytes from sbuf + sdispl[p] elements to rank p and receives rcount[p] elements from
 * rank p into rbuf + rdispl[p] elements (counts and displacements in elements, P entries
 * each; rcount[p] must equal what rank p passes as its scount[this rank], and scount and
 * rcount must agree for this rank itself, which is a memmove). Each pair's block travels as
 * point-to-point messages of at most `piece` bytes (<= 0: 1 GiB; capped at INT_MAX), so
 * no count or displacement reaches MPI's int arguments: blocks and buffers may exceed 2^31
 * elements or bytes. Collective (every rank calls it, also with nothing to send). Returns
 * MPI_SUCCESS; or, on every rank alike, before any message: MPI_ERR_ARG (a negative count
 * or displacement, esz == 0, NULL arrays, own counts that differ, more than INT_MAX
 * messages on a rank) or MPI_ERR_NO_MEM (request array); or the error of the agreeing
 * MPI_Allreduce. A failing MPI_Isend / MPI_Irecv / MPI_Waitall aborts the job with a
 * one-line message (the partners would otherwise wait forever). */
int gp_alltoallv_big(MPI_Comm comm, const void *sbuf, const int64_t *scount,
                     const int64_t *sdispl, void *rbuf, const int64_t *rcount,
                     const int64_t *rdispl, size_t esz, int64_t piece);

/* Makes every rank agree on an error: returns the largest `err` over the ranks and copies
 * the message of the lowest failing rank into msg on every rank. Collective. */
int gp_agree(MPI_Comm comm, int err, char *msg, size_t msglen);

#endif /* GP_EXCHANGE_H */
