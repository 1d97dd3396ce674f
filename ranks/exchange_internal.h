/* exchange_internal.h — what the files of ranks/ share (private, not installed): the exchange
 * record, the network's walk and the plan of a step (network.c), the transports' table of
 * operations (transport_shared.c, transport_mpi.c) and the one-line aborts (fail.c). */
#ifndef GP_EXCHANGE_INTERNAL_H
#define GP_EXCHANGE_INTERNAL_H

#include "gpuprim/exchange.h"

#include <stddef.h>
#include <stdint.h>

#define XCH_ALIGN ((size_t)256)        /* the buffers of a block start on this boundary */
#define XCH_PEERS 64                   /* distinct partners of a rank: 2 log2 P' at most */
#define XCH_PIECE ((int64_t)8 << 20)   /* staging piece, bytes (GPUPRIM_EXCHANGE_PIECE_BYTES) */
#define XCH_STREAM_PIECE ((int64_t)1 << 20) /* receive piece of a streamed step, bytes (the
                                     same knob): fresh memory's first touch stays small
                                     (8 MiB pieces took 150 ms more on the test VM) */
enum { TAG_COUNT = 21, TAG_PROBE = 22, TAG_DONE = 23, TAG_PIECE = 24 };

typedef struct xch_ops xch_ops;

/* A partner of this rank, and (shared transport) its buffers mapped into this process. */
typedef struct xpeer {
    int rank;           /* in the exchange's communicator */
    int node_rank;      /* in the node communicator; -1 on another node */
    char *base;         /* its block mapped here (window or IPC); NULL when not mapped */
    int ipc;            /* base is an IPC mapping (ipc_close it) */
    const xch_ops *ops; /* the transport of the steps with it, set by its setup; NULL: mpi */
} xpeer;

struct gp_exchange {
    MPI_Comm comm;                /* the caller's communicator, duplicated (or borrowed) */
    MPI_Comm node;                /* the ranks of this node, MPI_COMM_NULL when not made */
    int own_comm;                 /* comm is a duplicate to free */
    const gp_backend *be;
    int rank, P, width, values;
    int64_t m;
    size_t off[4], block;         /* keys 0, keys 1, values 0, values 1 within a block */
    char *base;                   /* this rank's block (NULL: borrowed buffers) */
    int base_window;              /* base lies in win (else from be->alloc) */
    char *kb[2];                  /* the two key buffers */
    uint64_t *vb[2];              /* the two value buffers (NULL without values) */
    int cur;                      /* which one holds the shard */
    int shared;                   /* the shared transport is set up */
    MPI_Win win;
    int win_locked;
    int npeers;
    xpeer peers[XCH_PEERS];
    int stage;                    /* the mpi transport stages through host pieces */
    int stream;                   /* ... or streams the taken part through pieces 2 and 3,
                                     merging each as it arrives (host memory) */
    double stream_comm_s;         /* seconds of transfer inside the last streamed merge */
    int64_t piece;                /* bytes per piece */
    char *pieces[4];              /* send 0, send 1, receive 0, receive 1 */
    int fault_step;               /* test hook (gp_exchange_config) */
};

/* The plan of one step with a real partner, the same on both partners. */
typedef struct xstep {
    int index, partner, lower;
    const xpeer *peer;                /* the partner's record; NULL for borrowed buffers */
    const xch_ops *ops;               /* the transport of the step */
    int pcur;                         /* the partner's current buffer (0 or 1) */
    int64_t mine, theirs, nlo, nhi, t, split; /* split: lo's elements among merged[0, t) */
    int64_t keep0, ka;                /* this rank's kept range [keep0, keep0 + ka) */
    int64_t give0, ng;                /* its range the partner takes */
    int64_t take0, kc;                /* the partner's range it takes */
    const char *pk;                   /* shared: the partner's current keys, mapped */
    const uint64_t *pv;               /* and values */
} xstep;

/* A transport: how the steps with a partner move data, one file each (transport_*.c), in the
 * manner of HDF5's H5D_layout_ops_t. Its setup marks the partners it serves (xpeer.ops); the
 * steps with the others go through mpi. A new transport is a gp_transport value, a file with
 * its table, and its setup's place in create_buffers (exchange.c). */
struct xch_ops {
    gp_transport id;
    /* Sets this rank's side up once the block's layout and the partners are known (collective
     * over the ranks that set it up; cfg may be NULL for borrowed buffers; off_node: the
     * partners on other nodes). Returns 0, or -1 with what failed in why; the caller agrees
     * the outcome across ranks and undoes a failed setup with teardown. */
    int (*setup)(gp_exchange *x, const gp_exchange_config *cfg, int off_node, char *why,
                 size_t whylen);
    /* Undoes setup, also a failed or partial one (collective where setup was). Returns GP_OK,
     * or GP_EDEVICE when a mapping could not be closed. */
    int (*teardown)(gp_exchange *x);
    /* One step, after the count exchange (gp_xch_plan), both partners alike: sets s->split
     * (and what the transport needs to find the partner's run); moves the ranges that change
     * side (may be NULL; timed as communication); merges them into this rank's result; ends
     * the step (may be NULL; timed as communication). Each aborts the job on a failure. */
    void (*split)(gp_exchange *x, xstep *s, int stable);
    void (*move)(gp_exchange *x, const xstep *s);
    void (*merge)(gp_exchange *x, const xstep *s, int stable);
    void (*done)(gp_exchange *x, const xstep *s);
};

extern const xch_ops gp_xch_shared; /* transport_shared.c */
extern const xch_ops gp_xch_mpi;    /* transport_mpi.c */

/* ---- fail.c: one line on stderr, then MPI_Abort --------------------------------------- */

/* The program the library runs in, for its one-line errors ("gpuprim_mpi", or the caller's
 * own program); "gpuprim" where the C library does not say. */
const char *gp_xch_prog(void);

/* "PROGRAM: error: rank R: merge exchange: WHAT: DETAIL", then MPI_Abort with GP_ERR_DEVICE. */
void gp_xch_die(MPI_Comm comm, int rank, const char *what, const char *detail);

/* gp_xch_die with the text of an MPI error code. */
void gp_xch_mpi_die(MPI_Comm comm, int rank, const char *what, int rc);

/* A count outside [0, m] passed by rank `holder` (this rank, or a partner that sent it). */
void gp_xch_count_die(MPI_Comm comm, int rank, int holder, int64_t count, int64_t m);

/* ---- network.c: the network, the plan of a step, the local merge ----------------------- */

/* A walk over the network's steps in order (log2 P'(log2 P' + 1)/2 of them). */
typedef struct xnet {
    int P2, k, j;
} xnet;

void gp_xch_net_start(xnet *n, int P);

/* Sets *q to the partner of `rank` in the next step (>= P: a virtual all-+inf shard) and
 * returns 1; returns 0 after the last step. */
int gp_xch_net_next(xnet *n, int rank, int *q);

/* The record of partner q, or NULL. */
xpeer *gp_xch_find_peer(gp_exchange *x, int q);

/* Every distinct partner of this rank in the network, with its rank in the node
 * communicator (-1 off the node). Returns the number of partners on other nodes. */
int gp_xch_find_partners(gp_exchange *x);

/* Bytes of one element: its key and, with values, its value. */
static inline size_t gp_xch_elem_bytes(const gp_exchange *x)
{
    return (size_t)x->width + (x->values ? 8u : 0u);
}

/* Plans step s->index with partner s->partner by transport s->ops (the caller sets those and
 * s->peer): the count exchange, the split, and the ranges kept, given and taken. */
void gp_xch_plan(gp_exchange *x, xstep *s, int64_t nkeys, int stable);

/* Merges this rank's kept part (kk / kv, s->ka elements) with the part it took (tk / tv,
 * s->kc) into dk / dv, the lower rank's elements first on ties. */
void gp_xch_merge_parts(gp_exchange *x, const xstep *s, const char *kk, const uint64_t *kv,
                        const char *tk, const uint64_t *tv, char *dk, uint64_t *dv, int stable);

/* Copies n elements (keys, and values when there are) from sk / sv to dk / dv. */
void gp_xch_copy(gp_exchange *x, char *dk, uint64_t *dv, const char *sk, const uint64_t *sv,
                 int64_t n);

/* ---- transport_shared.c: outside its table ------------------------------------------- */

/* Whether the shared transport can be had (GP_TRANSPORT_SHARED: a backend that maps memory,
 * every partner on the node; GP_EINVAL with msg otherwise), and whether any rank wants it
 * (*any: cfg allows it, the backend maps memory and a partner is on the node). Collective;
 * returns 0 or an error code with msg set, the same on every rank. */
int gp_xch_shared_wanted(gp_exchange *x, gp_transport want, int off_node, int *any, char *msg,
                         size_t msglen);

#endif /* GP_EXCHANGE_INTERNAL_H */
