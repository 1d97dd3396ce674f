/* exchange.h — MPI combination of results: the statistics reduction and the rank-level
 * bitonic merge exchange. */
#ifndef GP_EXCHANGE_H
#define GP_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "error.h" /* gp_agree, the failure kinds */
#include "kernels.h"

/* The rank that holds global element g (0 <= g < n) when n elements are sharded over P
 * ranks by gp_shard_range (shard.h). Not collective. */
int gp_shard_owner(int64_t g, int64_t n, int P);

/* Combines every rank's gp_stats (each describing its shard, shards in rank order) into
 * the record of the whole array on `root`, with MPI_Reduce and a user-defined,
 * non-commutative operation (gp_stats_combine), so ranks are combined in rank order and the
 * result is the same on every run for a given rank count. Collective. Returns an MPI
 * error code (MPI_SUCCESS on success). */
int gp_stats_reduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total, int root);

/* Adds every rank's exact accumulator (exact_sum.h) into *total on every rank: MPI_Allreduce
 * with a user-defined operation doing gp_superacc_add (exact integer limb additions, so
 * the result is the same bits whatever the reduction order). Returns an MPI error code. */
struct gp_superacc;
int gp_superacc_allreduce(MPI_Comm comm, const struct gp_superacc *mine,
                          struct gp_superacc *total);

/* Same, but every rank receives the total (MPI_Allreduce with the same operation). */
int gp_stats_allreduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total);

/* Most network steps recorded per step (P up to 2^21 ranks). */
#define GP_XSTEPS_MAX 231

/* ---- the rank-level bitonic merge exchange ---------------------------------------------
 *
 * The mirror form of the bitonic network over ranks, shards as elements and merge-split as
 * compare-exchange (Baudet & Stevenson's block generalisation of Batcher's network):
 * log2 P'(log2 P' + 1)/2 steps, P' = P rounded up to a power of two. On entry every rank
 * holds n (0 <= n <= m) keys of `width` bytes (4 or 8; unsigned integers in native byte
 * order, e.g. from be->to_keys), sorted ascending, where m, the slot count per rank, is the
 * same on every rank and at least every rank's n (N keys in all, N <= P m): ceil(N/P) for
 * shards from gp_shard_range, else the largest shard or more; missing slots are virtual
 * +inf. On return rank r holds the global slots [r m, r m + n) of the sorted whole: the
 * result does not depend on how the keys were distributed, and ranks with r m >= N hold
 * none.
 *
 * One step with partner q (a partner rank >= P is a virtual all-+inf shard: nothing
 * happens). The lower rank's run is lo, the upper rank's hi; t = min(m, nlo + nhi). The two
 * ranks swap their counts and agree on the merge-path split of merge(lo, hi) at t (ties:
 * the lower rank's element first; with values and `stable`, the order is (key, value)):
 * the lower rank keeps merged[0, t) = lo[0, i) + hi[0, t - i), the upper one the rest. Only
 * the elements that change side move: the lower rank takes hi[0, t - i), the upper one
 * lo[i, nlo) — nothing on sorted input, about half of each run on random input, all on
 * reversed input. Each rank then merges its kept part with what it took (when it took
 * nothing, it keeps a part of its own run: no merge; when it keeps nothing, it copies). The
 * result is bit for bit that of a merge-split of the whole runs.
 *
 * Transports of a step (gp_transport), the same for both partners:
 *   shared  the partners are on one node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED) and read
 *           each other's memory. CUDA backend (GP_CAP_IPC): every rank's buffers are one
 *           cudaMalloc block, whose IPC handle is exchanged over MPI and opened once by each
 *           partner on the node (cudaIpcOpenMemHandle, peer access over NVLink / PCIe, or
 *           the same device's memory when ranks share a GPU); the split is be->merge_path on
 *           the own run and the partner's mapped run, and be->merge_split_* reads the
 *           partner's crossing range in place and writes the rank's receive buffer, which
 *           then becomes its shard buffer (the two swap; the count exchange says which one
 *           is current). CPU backend (GP_CAP_HOST_MEMORY): the buffers are an MPI-3
 *           shared-memory window (MPI_Win_allocate_shared on the node communicator,
 *           MPI_Win_shared_query for a partner's base, a passive-target epoch with
 *           MPI_Win_sync around the signals), the merge reads the partner's run in place.
 *           Ordering: a rank's counts go out only after its last step's device work has
 *           finished, and each step ends with a point-to-point signal, sent after the
 *           rank's merge has finished reading the partner's memory, so no rank writes a
 *           buffer its last partner may still read.
 *   mpi     the split by a binary search that exchanges O(log m) probe elements (one
 *           MPI_Sendrecv per step of the search; each rank reads its own element, both
 *           evaluate the same order), then the crossing ranges through MPI: device
 *           pointers straight to MPI where the MPI is CUDA-aware (MPIX_Query_cuda_support
 *           at run time, where <mpi-ext.h> has it) or the memory is host memory; otherwise
 *           staged through four reused pinned host pieces (GPUPRIM_EXCHANGE_PIECE_BYTES,
 *           default 8 MiB), pipelined: piece k+1 downloads while piece k is in MPI and
 *           piece k-1 uploads. The receive buffer then holds the kept part beside the
 *           received one (the lower rank's first) and be->merge_split_* merges them into
 *           the shard buffer.
 * GP_TRANSPORT_AUTO takes shared for partners on one node and mpi otherwise; a shared setup
 * that fails then falls back to mpi (gp_exchange_create says why).
 *
 * Memory: the shard buffer and one receive buffer of m keys (+ m values), backend memory
 * (a window on the CPU backend with the shared transport); the staging pieces (pinned
 * host memory) only where the mpi transport stages. No whole-shard host buffer.
 *
 * Failures: a failing MPI, window, IPC or backend call in a step, or a count outside
 * [0, m] (this rank's or a partner's), aborts the job (MPI_Abort with GP_ERR_DEVICE, 7,
 * error.h) with one line,
 * "PROGRAM: error: rank R: merge exchange: ..." — the partner would otherwise wait
 * forever, or read memory that is gone. A partner that dies ends the job through the
 * launcher. */

/* How the steps move data: flags of gp_exchange_info.step_transport too. */
typedef enum gp_transport {
    GP_TRANSPORT_AUTO = 0,   /* shared for partners on one node, mpi otherwise */
    GP_TRANSPORT_SHARED = 1, /* partners map each other's memory (an error off the node) */
    GP_TRANSPORT_MPI = 2     /* the crossing ranges through MPI */
} gp_transport;

/* "auto", "shared", "mpi"; "?" for another value. */
const char *gp_transport_name(gp_transport t);

/* What the exchange did on this rank. */
typedef struct gp_exchange_info {
    int stages;            /* network steps (log2 P'(log2 P'+1)/2) */
    int merges;            /* steps with a real partner */
    int64_t bytes_moved;   /* bytes copied from partners' memory into this rank's: the ranges
                            * it took (keys, and values with them), read in place (shared) or
                            * received (mpi) */
    int64_t bytes_whole;   /* for comparison: what the former whole-shard exchange sent, its
                            * count times the element bytes in every step with a partner */
    double t_comm;         /* seconds in the count exchange, the split, the MPI transfers
                            * (with their staging) and the end-of-step signals */
    double t_merge;        /* seconds in local copies and merges (shared: the merge reads the
                            * partner's range, so its transfer is in here) */
    /* per step s < min(stages, GP_XSTEPS_MAX): as t_comm / t_merge / bytes_moved, and the
     * transport (GP_TRANSPORT_SHARED or GP_TRANSPORT_MPI; 0 when the partner was virtual) */
    double step_comm[GP_XSTEPS_MAX];
    double step_merge[GP_XSTEPS_MAX];
    int64_t step_bytes[GP_XSTEPS_MAX];
    int step_transport[GP_XSTEPS_MAX];
} gp_exchange_info;

/* An exchange: its buffers, its communicators and the partners' mappings (opaque). */
typedef struct gp_exchange gp_exchange;

typedef struct gp_exchange_config {
    gp_transport transport; /* the transport asked for */
    int width;              /* bytes per key: 4 or 8 */
    int values;             /* nonzero: one uint64 value moves with every key */
    int64_t m;              /* slots per rank (>= 0), the same on every rank */
    /* test hooks (0: off): fault_setup != 0 makes this rank's shared-transport setup fail
     * as a failed window or IPC call would; fault_step = 1 makes this rank fail (one line,
     * MPI_Abort), 2 die of SIGKILL, in its first step with a real partner, after the split,
     * while (shared) the partner reads its memory */
    int fault_setup, fault_step;
} gp_exchange_config;

/* Creates an exchange on comm with backend be (collective over comm): duplicates comm, makes
 * the node communicator, allocates this rank's shard and receive buffers (m keys each, and
 * m values each with cfg->values) and, for the shared transport, maps every partner on the
 * node (a window, or IPC handles opened once). GP_TRANSPORT_SHARED with a partner on another
 * node, or with a backend that has neither GP_CAP_HOST_MEMORY nor GP_CAP_IPC, or a failing
 * setup, is an error; with GP_TRANSPORT_AUTO a failing setup falls back to mpi: the function
 * then returns GP_OK with msg = "the shared-memory transport is not available (rank R:
 * REASON); the rank exchange goes through MPI", which the caller shows as a notice; msg is
 * "" otherwise. Returns GP_OK with *out set, or, the same on every rank, GP_EINVAL (bad or
 * differing cfg, an impossible transport), GP_ENOMEM (an allocation) or GP_EDEVICE (a failed
 * setup with GP_TRANSPORT_SHARED) with *out = NULL and one line in msg (the lowest failing
 * rank's: "rank R: ..."). */
int gp_exchange_create(MPI_Comm comm, const gp_backend *be, const gp_exchange_config *cfg,
                       gp_exchange **out, char *msg, size_t msglen);

/* The current shard buffer (m keys of backend memory; the caller uploads its keys there,
 * sorts them, and reads the result there after gp_exchange_run, which may switch it to the
 * other buffer) and its values (m, or NULL without values). Not collective. */
void *gp_exchange_keys(const gp_exchange *x);
uint64_t *gp_exchange_values(const gp_exchange *x);

/* The other buffer (m keys, and m values or NULL): the exchange's receive buffer, free
 * scratch for the caller outside gp_exchange_run (which overwrites it, and may make it the
 * current one). With a host-memory backend (GP_CAP_HOST_MEMORY) a caller can use it as its
 * host buffer for reading the shard and writing the result, so that no third buffer of a
 * shard's size is needed and the exchange writes pages that are already mapped. */
void *gp_exchange_spare_keys(const gp_exchange *x);
uint64_t *gp_exchange_spare_values(const gp_exchange *x);

/* The spare becomes the current buffer and the current one the spare: for a caller whose
 * data ended in the spare (gp_backend.sort_spare). Not collective; outside gp_exchange_run
 * only. */
void gp_exchange_use_spare(gp_exchange *x);

/* Gives the spare's memory pages back to the system where they are this process's private
 * host memory (a backend with GP_CAP_HOST_MEMORY and the mpi transport's buffers):
 * madvise(MADV_DONTNEED) on the whole pages inside the buffers, which stay valid, their
 * contents lost (they read as zeros). For a caller done with the spare, so that what comes
 * next (the page cache of a write) takes pages just freed rather than fresh ones, which makes
 * that write several times faster (see bench/RESULTS.md). Not done in a shared window
 * (giving its pages back with MADV_REMOVE did not help the write there, and the call itself
 * was slow; see bench/RESULTS.md). Advice only: returns 1 when some pages were released,
 * else 0 (device memory, a window, borrowed buffers, or a refused call). Not collective. */
int gp_exchange_release_spare(gp_exchange *x);

/* The transport the setup achieved: GP_TRANSPORT_SHARED (partners on the node map each
 * other; with AUTO, partners on other nodes still use mpi) or GP_TRANSPORT_MPI. */
gp_transport gp_exchange_transport(const gp_exchange *x);

/* Runs the exchange (collective over the exchange's ranks) on the *nkeys (0 <= *nkeys <= m)
 * ascending keys (and values: ascending by (key, value) when stable != 0) in the current
 * shard buffer; on return *nkeys and the current buffer hold this rank's slots of the
 * sorted whole (see above). stable != 0 orders by (key, value) (with global input positions
 * as values: a stable sort); else by key, ties lower rank first. info (may be NULL) gets what
 * the steps did. Aborts the job on any failure (see above). Returns 0. */
int gp_exchange_run(gp_exchange *x, int64_t *nkeys, int stable, gp_exchange_info *info);

/* Closes every mapping of a partner's memory, waits for the node's ranks to have closed
 * theirs, then frees the buffers, the window and the communicators (collective; x may be
 * NULL on every rank). Returns GP_OK, or GP_EDEVICE when closing a mapping failed (the rest
 * is freed all the same). */
int gp_exchange_destroy(gp_exchange *x);

/* The merge-path split of two sorted runs on two ranks, by the probe search of the mpi
 * transport: this rank holds `mine` keys (and values when stable) in backend memory, its
 * partner `theirs`; the lower rank's run is lo. Sets *split = the number of lo's elements
 * among the first t (0 <= t <= mine + theirs) of merge(lo, hi) (ties: lo first; stable: by
 * (key, value)), the same on both ranks, after O(log(min(mine, theirs))) MPI_Sendrecv on
 * comm. Both ranks pass the same t and matching counts. Aborts the job on a failing call.
 * Returns 0. */
int gp_exchange_split(MPI_Comm comm, int partner, const gp_backend *be, int width,
                      const void *keys, const uint64_t *vals, int64_t mine, int64_t theirs,
                      int64_t t, int stable, int64_t *split);

/* The exchange on buffers the caller owns (the form before gp_exchange_create; the mpi
 * transport). *keys and recv: backend memory, m keys each (recv is scratch); *keys is not
 * reassigned (the result is copied back into it when it ended in recv). host_send and
 * host_recv are not used any more (staging, where needed, uses pieces of its own); pass
 * NULL or anything. Collective; aborts the job on a failing call. Returns 0. */
int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void *recv, void *host_send,
                        void *host_recv, gp_exchange_info *info);

/* gp_bitonic_exchange with one uint64 value per key: *vals (m values, backend memory)
 * moves with *keys (neither pointer is reassigned), vrecv (m values) is its scratch;
 * hv_send / hv_recv are not used. With stable = 1 the order is (key, value). */
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
 * one-line message and GP_ERR_INTERNAL (1; the partners would otherwise wait forever). */
int gp_alltoallv_big(MPI_Comm comm, const void *sbuf, const int64_t *scount,
                     const int64_t *sdispl, void *rbuf, const int64_t *rcount,
                     const int64_t *rdispl, size_t esz, int64_t piece);

/* out[i] = the element at global position idx[i] (i < nk) of a distributed array of n
 * elements of esz bytes sharded by gp_shard_range (shard.h), of which this rank holds its
 * shard in `local`. Counts and displacements are 64-bit and the all-to-alls go through
 * gp_alltoallv_big, since MPI_Alltoallv's int counts and displacements would cap what moves
 * between two ranks at 2^31 bytes and overflow past byte 2^31 of a buffer. Collective.
 * Returns MPI_SUCCESS, or on every rank alike an error (out of host memory, or an MPI
 * error). */
int gp_gather_by_index(MPI_Comm comm, int64_t n, const uint64_t *idx, int64_t nk,
                       const void *local, size_t esz, void *out);

#endif /* GP_EXCHANGE_H */
