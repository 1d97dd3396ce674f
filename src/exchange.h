/* exchange.h — MPI combination of results: the statistics reduction and the rank-level
 * bitonic merge exchange. */
#ifndef GP_EXCHANGE_H
#define GP_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "gp_kernels.h"

/* The rank that holds global element g (0 <= g < n) when n elements are sharded over P
 * ranks by gp_shard_range (h5io.h). Not collective. */
int gp_shard_owner(int64_t g, int64_t n, int P);

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
    double t_comm;         /* seconds in transfers: the count exchange, device->host, MPI and
                            * the host->device upload of the kept runs */
    double t_merge;        /* seconds in merging: the host merge-path split and the backend
                            * merge of the kept runs */
    /* per step s < min(stages, GP_XSTEPS_MAX): seconds in transfers and in merging (as in
     * t_comm / t_merge), and the bytes this rank sent (0 when its partner was virtual) */
    double step_comm[GP_XSTEPS_MAX];
    double step_merge[GP_XSTEPS_MAX];
    int64_t step_bytes[GP_XSTEPS_MAX];
} gp_exchange_info;

/* Rank-level bitonic merge exchange (the mirror form of the bitonic network over ranks,
 * shards as elements, merge-split as compare-exchange; Baudet & Stevenson's block
 * generalisation of Batcher's network). On entry every rank holds in *keys its *nkeys
 * (0 <= *nkeys <= m) keys of `width` bytes (4 or 8; unsigned integers in native byte order,
 * e.g. from be->to_keys), sorted ascending, where m, the slot count per rank, is the same
 * on every rank and at least every rank's *nkeys (N keys in all, N <= P*m): ceil(N/P) for
 * shards from gp_shard_range, else the largest shard (MPI_Allreduce with MPI_MAX) or more;
 * missing slots are virtual +inf. On return rank r holds the global slots
 * [r*m, r*m + *nkeys) of the sorted whole in *keys: the result does not depend on how the
 * keys were distributed, and ranks r with r*m >= N hold none (a larger m leaves more of the
 * last ranks empty).
 *
 * One step with partner q (a partner rank >= P is a virtual all-+inf shard: no message,
 * nothing changes): the two ranks swap counts and their sorted runs (device -> host_send,
 * MPI_Sendrecv into host_recv, in pieces of at most 1 GiB; the CPU backend sends *keys
 * itself); each computes on the host the merge-path split of merge(lo, hi) (lo: the lower
 * rank's run) at t = min(m, nlo + nhi), uploads the parts it keeps (lower rank: merged
 * [0, t), upper rank: merged[t, nlo + nhi)) side by side into recv, lo's part first, and
 * merges them with be->merge_split_keys straight into *keys. Ties keep the lower rank's
 * keys first, so the result is that of a merge-split of the whole runs, bit for bit.
 *
 * Buffers: *keys and recv: backend memory, m keys each (device memory needed: 2 m keys);
 * recv is overwritten (scratch). *keys is not reassigned (the pointer is the same on
 * return). host_send (unused by the CPU backend) and host_recv: host memory, m keys each
 * (pinned for CUDA), overwritten.
 * Collective. A failing MPI or backend call, or this rank's or a partner's count outside
 * [0, m], aborts the job (MPI_Abort, code 7) with a one-line message "PROGRAM: error: rank
 * R: merge exchange: ..." (the partner would otherwise wait forever). Returns 0. */
int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void *recv, void *host_send,
                        void *host_recv, gp_exchange_info *info);

/* gp_bitonic_exchange with one uint64 value per key (argsort positions or a payload):
 * *vals (m values, backend memory) moves with *keys (neither pointer is reassigned);
 * vrecv (m values, backend memory) is its receive buffer, overwritten; hv_send (unused by
 * the CPU backend) / hv_recv its host staging buffers (m values each). Device memory
 * needed: 2 m keys + 2 m values. With stable = 1 the order is (key, value) lexicographic
 * (the values are then global input positions, which makes the sort stable), exact ties
 * lower rank first; else by key, ties lower rank first. The host split uses the same order;
 * merges are the backend's merge_split_pairs. Collective; aborts the job on a failing MPI
 * or backend call. Returns 0. */
int gp_bitonic_exchange_pairs(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                              void **keys, uint64_t **vals, int64_t *nkeys, void *recv,
                              uint64_t *vrecv, void *host_send, void *host_recv,
                              uint64_t *hv_send, uint64_t *hv_recv, int stable,
                              gp_exchange_info *info);

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

/* out[i] = the element at global position idx[i] (i < nk) of a distributed array of n
 * elements of esz bytes sharded by gp_shard_range (h5io.h), of which this rank holds its
 * shard in `local`. Counts and displacements are 64-bit and the all-to-alls go through
 * gp_alltoallv_big, since MPI_Alltoallv's int counts and displacements would cap what moves
 * between two ranks at 2^31 bytes and overflow past byte 2^31 of a buffer. Collective.
 * Returns MPI_SUCCESS, or on every rank alike an error (out of host memory, or an MPI
 * error). */
int gp_gather_by_index(MPI_Comm comm, int64_t n, const uint64_t *idx, int64_t nk,
                       const void *local, size_t esz, void *out);

/* Makes every rank agree on an error: returns the largest `err` over the ranks and copies
 * the message of the lowest failing rank into msg on every rank. Collective. */
int gp_agree(MPI_Comm comm, int err, char *msg, size_t msglen);

#endif /* GP_EXCHANGE_H */
