/* exchange.c — MPI combination: statistics reduction, all-to-all, and the rank-level bitonic
 * merge exchange with its shared-memory and MPI transports (exchange.h says how). */
#define _GNU_SOURCE /* program_invocation_short_name: error lines name the calling program */
#include "gpuprim/exchange.h"

#include "gpuprim/exact_sum.h"
#include "merge_path.h"
#include "gpuprim/shard.h"
#include "tuning.h"           /* the exchange's knobs */

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* madvise */
#include <unistd.h>   /* sysconf */

/* Open MPI's extensions: MPIX_Query_cuda_support (is the MPI CUDA-aware at run time?) */
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* ---- statistics reduction ------------------------------------------------------------ */

/* MPI user function: inout[i] = in[i] (+) inout[i], where `in` comes from the lower ranks
 * (MPI keeps operand order for non-commutative operations). */
static void stats_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    gp_stats *a = (gp_stats *)in, *b = (gp_stats *)inout;
    for (int i = 0; i < *len; i++) b[i] = gp_stats_combine(&a[i], &b[i]);
}

/* MPI_Reduce to `root` (root >= 0) or MPI_Allreduce (root < 0) of one record of `bytes`
 * bytes with the user operation fn (commute: MPI_Op_create's flag). The datatype and the
 * operation are created and freed here. Returns an MPI error code. */
static int reduce_record(MPI_Comm comm, const void *in, void *out, size_t bytes,
                         MPI_User_function *fn, int commute, int root)
{
    MPI_Datatype t;
    MPI_Op op;
    int rc = MPI_Type_contiguous((int)bytes, MPI_BYTE, &t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Op_create(fn, commute, &op);
    if (rc == MPI_SUCCESS) {
        rc = root >= 0 ? MPI_Reduce(in, out, 1, t, op, root, comm)
                       : MPI_Allreduce(in, out, 1, t, op, comm);
        MPI_Op_free(&op);
    }
    MPI_Type_free(&t);
    return rc;
}

int gp_stats_reduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total, int root)
{
    gp_stats out = *mine; /* what ranks other than root get back */
    int rc = reduce_record(comm, mine, &out, sizeof out, stats_op, 0 /* rank order */, root);
    *total = out;
    return rc;
}

int gp_stats_allreduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total)
{
    return reduce_record(comm, mine, total, sizeof *total, stats_op, 0 /* rank order */, -1);
}

/* ---- exact accumulators ---------------------------------------------------------------- */

static void superacc_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    gp_superacc *a = (gp_superacc *)in, *b = (gp_superacc *)inout;
    for (int i = 0; i < *len; i++) gp_superacc_add(&b[i], &a[i]);
}

int gp_superacc_allreduce(MPI_Comm comm, const gp_superacc *mine, gp_superacc *total)
{
    return reduce_record(comm, mine, total, sizeof *total, superacc_op, 1 /* exact */, -1);
}

/* ---- point-to-point in pieces -------------------------------------------------------- */

#define GP_MPI_PIECE ((int64_t)1 << 30)

int gp_sendrecv_bytes(MPI_Comm comm, int partner, const void *sbuf, int64_t sbytes, void *rbuf,
                      int64_t rbytes)
{
    int64_t most = sbytes > rbytes ? sbytes : rbytes;
    int64_t pieces = most == 0 ? 1 : (most + GP_MPI_PIECE - 1) / GP_MPI_PIECE;
    for (int64_t p = 0; p < pieces; p++) {
        int64_t so = p * GP_MPI_PIECE, ro = so;
        int64_t sn = sbytes - so, rn = rbytes - ro;
        sn = sn < 0 ? 0 : (sn > GP_MPI_PIECE ? GP_MPI_PIECE : sn);
        rn = rn < 0 ? 0 : (rn > GP_MPI_PIECE ? GP_MPI_PIECE : rn);
        int rc = MPI_Sendrecv(sn ? (const char *)sbuf + so : sbuf, (int)sn, MPI_BYTE, partner, 7,
                              rn ? (char *)rbuf + ro : rbuf, (int)rn, MPI_BYTE, partner, 7,
                              comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* ---- all-to-all with 64-bit counts ------------------------------------------------------ */

/* The program the library runs in, for its one-line errors ("gpuprim_mpi", or the
 * caller's own program); "gpuprim" where the C library does not say. */
static const char *prog_name(void)
{
#if defined(__GLIBC__)
    return program_invocation_short_name;
#else
    return "gpuprim";
#endif
}

/* A failing point-to-point call of the all-to-all: the job cannot continue (partners would
 * wait forever), so abort it with one line. */
static void a2a_die(MPI_Comm comm, int rank, const char *what)
{
    fprintf(stderr, "%s: error: rank %d: all-to-all: %s\n", prog_name(), rank, what);
    fflush(stderr);
    MPI_Abort(comm, GP_ERR_INTERNAL);
}

/* MPI_Alltoallv takes int counts and int displacements (in elements), so one call cannot
 * move 2^31 elements to one rank nor address past element 2^31 of a buffer. Here every
 * pair's block goes as point-to-point messages of at most `piece` bytes each (the pointers
 * are offset in C, so no displacement reaches MPI), all posted at once and completed with
 * one MPI_Waitall; MPI's non-overtaking rule keeps the pieces of a pair in order. */
int gp_alltoallv_big(MPI_Comm comm, const void *sbuf, const int64_t *scount,
                     const int64_t *sdispl, void *rbuf, const int64_t *rcount,
                     const int64_t *rdispl, size_t esz, int64_t piece)
{
    int rank, P;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &P) != MPI_SUCCESS)
        return MPI_ERR_COMM;
    if (piece <= 0) piece = GP_MPI_PIECE;
    if (piece > INT_MAX) piece = INT_MAX;
    const int64_t E = (int64_t)esz;
    /* messages this rank takes part in (local arguments only; nothing posted yet) */
    int64_t nreq = 0;
    int bad = esz == 0 || !scount || !sdispl || !rcount || !rdispl;
    for (int p = 0; !bad && p < P; p++) {
        if (scount[p] < 0 || rcount[p] < 0 || sdispl[p] < 0 || rdispl[p] < 0 ||
            scount[p] > INT64_MAX / E || rcount[p] > INT64_MAX / E) {
            bad = 1;
            break;
        }
        if (p == rank) {
            bad = scount[p] != rcount[p];
            continue;
        }
        nreq += (scount[p] * E + piece - 1) / piece + (rcount[p] * E + piece - 1) / piece;
    }
    if (nreq > INT_MAX) bad = 1; /* MPI_Waitall's count is an int */
    MPI_Request *req = bad ? NULL : malloc((size_t)(nreq > 0 ? nreq : 1) * sizeof *req);
    /* every rank must agree to go on: a rank that returned here alone would leave its
     * partners waiting for messages that never come */
    int why = bad ? 2 : req ? 0 : 1, worst = 0; /* 2: bad arguments, 1: no memory */
    int rc = MPI_Allreduce(&why, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS || worst) {
        free(req);
        return rc != MPI_SUCCESS ? rc : worst == 2 ? MPI_ERR_ARG : MPI_ERR_NO_MEM;
    }
    int64_t k = 0;
    /* receives first, then sends, pieces of each pair in order */
    for (int side = 0; side < 2; side++) {
        for (int q = 1; q < P; q++) {
            /* send to rank+q, receive from rank-q: the same pairing on every rank */
            const int p = side ? (rank + q) % P : (rank - q + P) % P;
            const int64_t bytes = (side ? scount[p] : rcount[p]) * E;
            if (bytes == 0) continue; /* the partner expects nothing either */
            char *base = side ? (char *)sbuf + (size_t)(sdispl[p] * E)
                              : (char *)rbuf + (size_t)(rdispl[p] * E);
            for (int64_t o = 0; o < bytes; o += piece) {
                const int len = (int)(bytes - o < piece ? bytes - o : piece);
                rc = side ? MPI_Isend(base + o, len, MPI_BYTE, p, 8, comm, &req[k])
                          : MPI_Irecv(base + o, len, MPI_BYTE, p, 8, comm, &req[k]);
                if (rc != MPI_SUCCESS) a2a_die(comm, rank, "posting a message failed");
                k++;
            }
        }
    }
    if (scount[rank] > 0)
        memmove((char *)rbuf + (size_t)(rdispl[rank] * E),
                (const char *)sbuf + (size_t)(sdispl[rank] * E), (size_t)(scount[rank] * E));
    rc = k > 0 ? MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    free(req);
    if (rc != MPI_SUCCESS) a2a_die(comm, rank, "MPI_Waitall failed");
    return MPI_SUCCESS;
}

/* ---- elements by global position ------------------------------------------------------ */

int gp_shard_owner(int64_t g, int64_t n, int P)
{
    const int64_t q = n / P, r = n % P;
    return g < r * (q + 1) ? (int)(g / (q + 1)) : (int)(r + (g - r * (q + 1)) / q);
}

/* gp_gather_by_index (exchange.h): requests grouped by owner, two all-to-alls with
 * 64-bit counts (gp_alltoallv_big). */
int gp_gather_by_index(MPI_Comm comm, int64_t n, const uint64_t *idx, int64_t nk,
                       const void *local, size_t esz, void *out)
{
    int P, rank, err = 0;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    int64_t off, cnt;
    gp_shard_range(n, P, rank, &off, &cnt);
    int64_t *sc = calloc((size_t)P, sizeof *sc), *sd = calloc((size_t)P, sizeof *sd);
    int64_t *rc = calloc((size_t)P, sizeof *rc), *rd = calloc((size_t)P, sizeof *rd);
    int64_t *cur = calloc((size_t)P, sizeof *cur);
    int64_t *req = malloc((size_t)(nk ? nk : 1) * sizeof *req);
    int64_t *pos = malloc((size_t)(nk ? nk : 1) * sizeof *pos);
    int64_t *rreq = NULL;
    char *ans = NULL, *back = NULL;
    if (!sc || !sd || !rc || !rd || !cur || !req || !pos) err = 1;
    int64_t at = 0, tot_recv = 0;
    if (!err) {
        for (int64_t i = 0; i < nk; i++) sc[gp_shard_owner((int64_t)idx[i], n, P)]++;
        for (int p = 0; p < P; p++) {
            sd[p] = cur[p] = at;
            at += sc[p];
        }
        for (int64_t i = 0; i < nk; i++) {
            int64_t j = cur[gp_shard_owner((int64_t)idx[i], n, P)]++;
            req[j] = (int64_t)idx[i];
            pos[j] = i;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    if (!err) {
        if (MPI_Alltoall(sc, 1, MPI_INT64_T, rc, 1, MPI_INT64_T, comm) != MPI_SUCCESS) err = 1;
        for (int p = 0; !err && p < P; p++) {
            rd[p] = tot_recv;
            tot_recv += rc[p];
        }
        rreq = malloc((size_t)(tot_recv ? tot_recv : 1) * sizeof *rreq);
        ans = malloc((size_t)(tot_recv ? tot_recv : 1) * esz);
        back = malloc((size_t)(nk ? nk : 1) * esz);
        if (!rreq || !ans || !back) err = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    /* gp_alltoallv_big fails on every rank alike, or aborts the job */
    if (!err && gp_alltoallv_big(comm, req, sc, sd, rreq, rc, rd, sizeof *req, 0) != MPI_SUCCESS)
        err = 1;
    if (!err) {
        for (int64_t j = 0; j < tot_recv; j++)
            memcpy(ans + (size_t)j * esz, (const char *)local + (size_t)(rreq[j] - off) * esz, esz);
        if (gp_alltoallv_big(comm, ans, rc, rd, back, sc, sd, esz, 0) != MPI_SUCCESS) err = 1;
    }
    if (!err)
        for (int64_t j = 0; j < nk; j++)
            memcpy((char *)out + (size_t)pos[j] * esz, back + (size_t)j * esz, esz);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    free(sc), free(sd), free(rc), free(rd), free(cur), free(req), free(pos);
    free(rreq), free(ans), free(back);
    return err ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* ---- rank-level bitonic merge exchange (exchange.h) ------------------------------------- */

#define XCH_ALIGN ((size_t)256)        /* the buffers of a block start on this boundary */
#define XCH_PEERS 64                   /* distinct partners of a rank: 2 log2 P' at most */
#define XCH_PIECE ((int64_t)8 << 20)   /* staging piece, bytes (GPUPRIM_EXCHANGE_PIECE_BYTES) */
enum { TAG_COUNT = 21, TAG_PROBE = 22, TAG_DONE = 23, TAG_PIECE = 24 };

const char *gp_transport_name(gp_transport t)
{
    switch (t) {
    case GP_TRANSPORT_AUTO: return "auto";
    case GP_TRANSPORT_SHARED: return "shared";
    case GP_TRANSPORT_MPI: return "mpi";
    default: return "?";
    }
}

/* A partner of this rank, and (shared transport) its buffers mapped into this process. */
typedef struct xpeer {
    int rank;          /* in the exchange's communicator */
    int node_rank;     /* in the node communicator; -1 on another node */
    char *base;        /* its block mapped here (window or IPC); NULL when not mapped */
    int ipc;           /* base is an IPC mapping (ipc_close it) */
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
    int64_t piece;                /* bytes per piece */
    char *pieces[4];              /* send 0, send 1, receive 0, receive 1 */
    int fault_step;               /* test hook (gp_exchange_config) */
};

/* The plan of one step with a real partner, the same on both partners. */
typedef struct xstep {
    int index, partner, lower, shared;
    int64_t mine, theirs, t, split;   /* split: lo's elements among merged[0, t) */
    int64_t keep0, ka;                /* this rank's kept range [keep0, keep0 + ka) */
    int64_t give0, ng;                /* its range the partner takes */
    int64_t take0, kc;                /* the partner's range it takes */
    const char *pk;                   /* shared: the partner's current keys, mapped */
    const uint64_t *pv;               /* and values */
} xstep;

static void die(MPI_Comm comm, int rank, const char *what, const char *detail)
{
    fprintf(stderr, "%s: error: rank %d: merge exchange: %s: %s\n", prog_name(), rank, what,
            detail ? detail : "");
    fflush(stderr);
    MPI_Abort(comm, GP_ERR_DEVICE);
}

/* die() with the text of an MPI error code. */
static void mpi_die(MPI_Comm comm, int rank, const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    die(comm, rank, what, s);
}

/* A count outside [0, m] passed by rank `holder` (this rank, or a partner that sent it). */
static void count_die(MPI_Comm comm, int rank, int holder, int64_t count, int64_t m)
{
    char who[32], why[256];
    if (holder == rank) snprintf(who, sizeof who, "this rank");
    else snprintf(who, sizeof who, "rank %d", holder);
    snprintf(why, sizeof why,
             "%s holds %lld keys, outside [0, m = %lld] (m must be the same on every rank and "
             "at least every rank's count)",
             who, (long long)count, (long long)m);
    die(comm, rank, "arguments", why);
}

/* Bytes of one element: its key and, with values, its value. */
static size_t elem_bytes(const gp_exchange *x) { return (size_t)x->width + (x->values ? 8u : 0u); }

/* The partner of `rank` in step j of merge k (the mirror partner inside the k-block first,
 * then half-cleaners: every comparator keeps the minimum at the lower rank). */
static int partner_of(int rank, int k, int j) { return j == (k >> 1) ? rank ^ (k - 1) : rank ^ j; }

/* ---- the split ------------------------------------------------------------------------ */

/* What the probe search needs: this rank's run and its partner. */
typedef struct probe_ctx {
    MPI_Comm comm;
    int rank, partner, lower, width, stable;
    const gp_backend *be;
    const char *keys;
    const uint64_t *vals;
} probe_ctx;

/* One evaluation of the order for the probe search: does lo's element i go before hi's
 * element j? The lower rank reads lo[i], the upper one hi[j] (each its own run, through
 * be->download), they swap them with one MPI_Sendrecv, and both answer alike. */
static int probe_lo_first(const probe_ctx *c, int64_t i, int64_t j)
{
    const int64_t at = c->lower ? i : j;
    uint64_t mine[2] = {0, 0}, theirs[2] = {0, 0};
    uint32_t k32 = 0;
    int rc = c->width == 4 ? c->be->download(&k32, c->keys + (size_t)at * 4, 4)
                           : c->be->download(&mine[0], c->keys + (size_t)at * 8, 8);
    if (c->width == 4) mine[0] = k32;
    if (!rc && c->stable) rc = c->be->download(&mine[1], c->vals + at, 8);
    if (rc) die(c->comm, c->rank, "split probe", c->be->last_error());
    rc = MPI_Sendrecv(mine, 2, MPI_UINT64_T, c->partner, TAG_PROBE, theirs, 2, MPI_UINT64_T,
                      c->partner, TAG_PROBE, c->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) mpi_die(c->comm, c->rank, "split probe: MPI_Sendrecv", rc);
    const uint64_t *lo = c->lower ? mine : theirs, *hi = c->lower ? theirs : mine;
    return gp_lo_first(lo[0], lo[1], hi[0], hi[1], c->stable);
}

/* The probe search: GP_MERGE_PATH with each evaluation a probe (both ranks make the same
 * calls in the same order, so their searches stay in step). */
static int64_t probe_split(const probe_ctx *c, int64_t nlo, int64_t nhi, int64_t t)
{
    int64_t split = 0;
#define PROBE_LO_FIRST(i, j) probe_lo_first(c, i, j)
    GP_MERGE_PATH(split, nlo, nhi, t, PROBE_LO_FIRST);
#undef PROBE_LO_FIRST
    return split;
}

int gp_exchange_split(MPI_Comm comm, int partner, const gp_backend *be, int width,
                      const void *keys, const uint64_t *vals, int64_t mine, int64_t theirs,
                      int64_t t, int stable, int64_t *split)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if ((width != 4 && width != 8) || mine < 0 || theirs < 0 || t < 0 || t > mine + theirs ||
        !split || partner == rank)
        die(comm, rank, "split", "bad arguments");
    const probe_ctx c = {comm, rank, partner, rank < partner, width, stable != 0, be,
                         (const char *)keys, vals};
    *split = c.lower ? probe_split(&c, mine, theirs, t) : probe_split(&c, theirs, mine, t);
    return 0;
}

/* ---- one step ------------------------------------------------------------------------- */

static xpeer *find_peer(gp_exchange *x, int q)
{
    for (int i = 0; i < x->npeers; i++)
        if (x->peers[i].rank == q) return &x->peers[i];
    return NULL;
}

/* Starts step `index` with partner q: the two ranks swap their counts (and which buffer is
 * current: the shared transport reads it in place), agree on the merge-path split of
 * merge(lo, hi) at t = min(m, nlo + nhi) and work out the ranges each keeps, gives and
 * takes. The count goes out only after this rank's last step is complete, so it also says
 * "my run is ready". */
static void step_plan(gp_exchange *x, int index, int q, int64_t nkeys, int stable, xstep *s)
{
    memset(s, 0, sizeof *s);
    s->index = index;
    s->partner = q;
    s->lower = x->rank < q;
    const xpeer *p = find_peer(x, q);
    s->shared = x->shared && p && p->base;
    int64_t mine[2] = {nkeys, x->cur}, theirs[2] = {0, 0};
    if (x->win != MPI_WIN_NULL) MPI_Win_sync(x->win); /* this rank's stores before the signal */
    int rc = MPI_Sendrecv(mine, 2, MPI_INT64_T, q, TAG_COUNT, theirs, 2, MPI_INT64_T, q,
                          TAG_COUNT, x->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) mpi_die(x->comm, x->rank, "count exchange: MPI_Sendrecv", rc);
    if (x->win != MPI_WIN_NULL) MPI_Win_sync(x->win); /* the partner's stores after it */
    if (theirs[0] < 0 || theirs[0] > x->m) count_die(x->comm, x->rank, q, theirs[0], x->m);
    if (theirs[1] != 0 && theirs[1] != 1) die(x->comm, x->rank, "count exchange", "bad buffer index");
    s->mine = nkeys;
    s->theirs = theirs[0];
    const int64_t nlo = s->lower ? s->mine : s->theirs, nhi = s->lower ? s->theirs : s->mine;
    s->t = nlo + nhi < x->m ? nlo + nhi : x->m;
    const char *own = x->kb[x->cur];
    const uint64_t *ownv = x->vb[x->cur];
    if (s->shared) {
        const int pc = (int)theirs[1];
        s->pk = p->base + x->off[pc];
        s->pv = x->values ? (const uint64_t *)(p->base + x->off[2 + pc]) : NULL;
        const char *lk = s->lower ? own : s->pk, *hk = s->lower ? s->pk : own;
        const uint64_t *lv = s->lower ? ownv : s->pv, *hv = s->lower ? s->pv : ownv;
        if (x->be->merge_path(x->width, lk, stable ? lv : NULL, nlo, hk, stable ? hv : NULL, nhi,
                              s->t, stable, &s->split))
            die(x->comm, x->rank, "split (merge_path)", x->be->last_error());
    } else {
        const probe_ctx c = {x->comm, x->rank, q, s->lower, x->width, stable, x->be, own, ownv};
        s->split = probe_split(&c, nlo, nhi, s->t);
    }
    const int64_t si = s->split, sj = s->t - si;
    if (s->lower) { /* keeps lo[0, si) and takes hi[0, sj) */
        s->keep0 = 0, s->ka = si, s->give0 = si, s->ng = s->mine - si, s->take0 = 0, s->kc = sj;
    } else {        /* keeps hi[sj, nhi) and takes lo[si, nlo) */
        s->keep0 = sj, s->ka = s->mine - sj, s->give0 = 0, s->ng = sj, s->take0 = si;
        s->kc = s->theirs - si;
    }
}

/* Merges this rank's kept part (kk / kv, s->ka elements) with the part it took (tk / tv,
 * s->kc) into dk / dv, the lower rank's elements first on ties. */
static void merge_parts(gp_exchange *x, const xstep *s, const char *kk, const uint64_t *kv,
                        const char *tk, const uint64_t *tv, char *dk, uint64_t *dv, int stable)
{
    const char *lk = s->lower ? kk : tk, *hk = s->lower ? tk : kk;
    /* keys only: no value pointers at all (merge_split's keys-only form) */
    const uint64_t *lv = !x->values ? NULL : s->lower ? kv : tv;
    const uint64_t *hv = !x->values ? NULL : s->lower ? tv : kv;
    const int64_t nl = s->lower ? s->ka : s->kc, nh = s->lower ? s->kc : s->ka, n = nl + nh;
    int64_t nout = -1;
    const int rc = x->be->merge_split(x->width, lk, lv, nl, hk, hv, nh, n, 0, stable, dk,
                                      x->values ? dv : NULL, &nout);
    if (rc) die(x->comm, x->rank, "merge-split", x->be->last_error());
    if (nout != n) die(x->comm, x->rank, "merge-split", "unexpected output count");
}

/* Copies n elements (keys, and values when there are) from sk / sv to dk / dv. */
static void copy_elems(gp_exchange *x, char *dk, uint64_t *dv, const char *sk, const uint64_t *sv,
                       int64_t n)
{
    if (x->be->copy(dk, sk, (size_t)n * (size_t)x->width) ||
        (x->values && x->be->copy(dv, sv, (size_t)n * 8)))
        die(x->comm, x->rank, "copy", x->be->last_error());
}

/* The shared transport's step, after the plan: the merge of the kept part with the taken
 * part, read in place from the partner's memory, into this rank's other buffer, which then
 * becomes its shard buffer. A rank that takes nothing and keeps a prefix of its run does
 * nothing; one that takes or keeps nothing copies the other part. */
static void shared_merge(gp_exchange *x, const xstep *s, int stable)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    const char *kk = x->kb[c] + (size_t)s->keep0 * w;
    const uint64_t *kv = x->values ? x->vb[c] + s->keep0 : NULL;
    const char *tk = s->pk + (size_t)s->take0 * w;
    const uint64_t *tv = x->values ? s->pv + s->take0 : NULL;
    if (s->kc == 0 && (s->keep0 == 0 || s->ka == 0)) return; /* its run's first ka: in place */
    if (s->kc == 0 || s->ka == 0)
        copy_elems(x, x->kb[c ^ 1], x->vb[c ^ 1], s->kc ? tk : kk, s->kc ? tv : kv,
                   s->kc ? s->kc : s->ka);
    else
        merge_parts(x, s, kk, kv, tk, tv, x->kb[c ^ 1], x->vb[c ^ 1], stable);
    x->cur = c ^ 1;
}

/* The end of a shared step: this rank's device work is complete and its reads of the
 * partner's memory are over; one message each way says so, after which either may write
 * the buffer the other read. */
static void shared_done(gp_exchange *x, const xstep *s)
{
    if (x->be->synchronize()) die(x->comm, x->rank, "synchronize", x->be->last_error());
    if (x->win != MPI_WIN_NULL) MPI_Win_sync(x->win);
    char a = 1, b = 0;
    int rc = MPI_Sendrecv(&a, 1, MPI_CHAR, s->partner, TAG_DONE, &b, 1, MPI_CHAR, s->partner,
                          TAG_DONE, x->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) mpi_die(x->comm, x->rank, "end-of-step signal: MPI_Sendrecv", rc);
}

/* sbytes from src to `partner` and rbytes from it into dst, staged through the four host
 * pieces: piece k+1 downloads (download_async) while piece k is in MPI_Sendrecv and piece
 * k-1 uploads (upload_async); the two sides agree on the piece count from their sizes. */
static void staged_sendrecv(gp_exchange *x, int partner, const char *src, int64_t sbytes,
                            char *dst, int64_t rbytes)
{
    const gp_backend *be = x->be;
    const int64_t pb = x->piece, ns = (sbytes + pb - 1) / pb, nr = (rbytes + pb - 1) / pb;
    const int64_t n = ns > nr ? ns : nr;
#define PIECE_LEN(total, k) ((total) - (k) * pb < pb ? (total) - (k) * pb : pb)
    if (ns > 0 && be->download_async(x->pieces[0], src, (size_t)PIECE_LEN(sbytes, 0)))
        die(x->comm, x->rank, "staging: download", be->last_error());
    for (int64_t k = 0; k < n; k++) {
        const int64_t sl = k < ns ? PIECE_LEN(sbytes, k) : 0, rl = k < nr ? PIECE_LEN(rbytes, k) : 0;
        char *hs = x->pieces[k & 1], *hr = x->pieces[2 + (k & 1)];
        if (sl > 0 && be->download_wait()) die(x->comm, x->rank, "staging: download", be->last_error());
        if (k + 1 < ns && be->download_async(x->pieces[(k + 1) & 1], src + (k + 1) * pb,
                                             (size_t)PIECE_LEN(sbytes, k + 1)))
            die(x->comm, x->rank, "staging: download", be->last_error());
        int rc = MPI_Sendrecv(hs, (int)sl, MPI_BYTE, partner, TAG_PIECE, hr, (int)rl, MPI_BYTE,
                              partner, TAG_PIECE, x->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) mpi_die(x->comm, x->rank, "staging: MPI_Sendrecv", rc);
        /* piece k-1's upload is done before its buffer (this one's twin) takes piece k+1 */
        if (be->upload_wait() || (rl > 0 && be->upload_async(dst + k * pb, hr, (size_t)rl)))
            die(x->comm, x->rank, "staging: upload", be->last_error());
    }
#undef PIECE_LEN
    if (be->upload_wait()) die(x->comm, x->rank, "staging: upload", be->last_error());
}

/* The mpi transport's transfer: this rank's given range goes to the partner and the range
 * it takes lands in its receive buffer, after the kept part's place (the lower rank keeps
 * the first ka slots for its kept part, the upper one puts the taken part first). */
static void mpi_transfer(gp_exchange *x, const xstep *s)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    const int64_t roff = s->lower ? s->ka : 0;
    for (int part = 0; part < (x->values ? 2 : 1); part++) {
        const size_t e = part ? 8 : w;
        const char *src = part ? (const char *)(x->vb[c] + s->give0) : x->kb[c] + s->give0 * w;
        char *dst = part ? (char *)(x->vb[c ^ 1] + roff) : x->kb[c ^ 1] + roff * w;
        if (x->stage) {
            staged_sendrecv(x, s->partner, src, s->ng * (int64_t)e, dst, s->kc * (int64_t)e);
        } else {
            int rc = gp_sendrecv_bytes(x->comm, s->partner, src, s->ng * (int64_t)e, dst,
                                       s->kc * (int64_t)e);
            if (rc != MPI_SUCCESS) mpi_die(x->comm, x->rank, "transfer: MPI_Sendrecv", rc);
        }
    }
}

/* The mpi transport's merge: the kept part is copied beside the received one in the
 * receive buffer and the two are merged into the shard buffer; a rank that received nothing
 * keeps a prefix in place or copies its kept suffix over, and one that keeps nothing has
 * its result in the receive buffer already. */
static void mpi_merge(gp_exchange *x, const xstep *s, int stable)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    char *rk = x->kb[c ^ 1];
    uint64_t *rv = x->vb[c ^ 1];
    const char *kk = x->kb[c] + (size_t)s->keep0 * w;
    const uint64_t *kv = x->values ? x->vb[c] + s->keep0 : NULL;
    if (s->kc == 0) {
        if (s->keep0 == 0 || s->ka == 0) return;
        copy_elems(x, rk, rv, kk, kv, s->ka);
        x->cur = c ^ 1;
        return;
    }
    if (s->ka == 0) {
        x->cur = c ^ 1; /* all of it was received, at the start of the receive buffer */
        return;
    }
    const int64_t kdst = s->lower ? 0 : s->kc, tsrc = s->lower ? s->ka : 0;
    copy_elems(x, rk + (size_t)kdst * w, rv ? rv + kdst : NULL, kk, kv, s->ka);
    merge_parts(x, s, rk + (size_t)kdst * w, rv ? rv + kdst : NULL, rk + (size_t)tsrc * w,
                rv ? rv + tsrc : NULL, x->kb[c], x->vb[c], stable);
}

/* GPUPRIM_FAULT's exchange-step hook: this rank fails (one line, MPI_Abort) or dies of
 * SIGKILL in its first step with a real partner, after the split, while (shared) the
 * partner merges from its memory. */
static void inject_fault(gp_exchange *x, const xstep *s)
{
    const char *how = s->shared ? "shared" : "mpi";
    if (x->fault_step == 2) {
        fprintf(stderr, "%s: rank %d: GPUPRIM_FAULT: injected SIGKILL in exchange step %d (%s)\n",
                prog_name(), x->rank, s->index + 1, how);
        fflush(stderr);
        raise(SIGKILL);
    }
    char why[96];
    snprintf(why, sizeof why, "injected failure in step %d (%s transport; GPUPRIM_FAULT)",
             s->index + 1, how);
    die(x->comm, x->rank, "fault", why);
}

int gp_exchange_run(gp_exchange *x, int64_t *nkeys, int stable, gp_exchange_info *info)
{
    gp_exchange_info scratch;
    if (!info) info = &scratch;
    memset(info, 0, sizeof *info);
    if (x->m < 0 || *nkeys < 0 || *nkeys > x->m) count_die(x->comm, x->rank, x->rank, *nkeys, x->m);
    stable = x->values && stable;
    /* the shard is complete in device memory before a partner reads it (mapped, or through
     * a copy stream of the staging), whatever stream or process wrote it */
    if (x->P > 1 && x->be->synchronize()) die(x->comm, x->rank, "synchronize", x->be->last_error());
    int P2 = 1;
    while (P2 < x->P) P2 <<= 1;
    for (int k = 2; k <= P2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            const int step = info->stages++;
            const int q = partner_of(x->rank, k, j);
            if (q >= x->P) continue; /* virtual all-+inf shard: keep mine */
            xstep s;
            const double t0 = MPI_Wtime();
            step_plan(x, step, q, *nkeys, stable, &s);
            if (x->fault_step && info->merges == 0) inject_fault(x, &s);
            const double t1 = MPI_Wtime();
            double tc, tm;
            if (s.shared) {
                shared_merge(x, &s, stable);
                const double t2 = MPI_Wtime();
                shared_done(x, &s);
                tc = (t1 - t0) + (MPI_Wtime() - t2), tm = t2 - t1;
            } else {
                mpi_transfer(x, &s);
                const double t2 = MPI_Wtime();
                mpi_merge(x, &s, stable);
                tc = t2 - t0, tm = MPI_Wtime() - t2;
            }
            *nkeys = s.ka + s.kc;
            const int64_t moved = s.kc * (int64_t)elem_bytes(x);
            info->merges++;
            info->bytes_moved += moved;
            info->bytes_whole += s.mine * (int64_t)elem_bytes(x);
            info->t_comm += tc;
            info->t_merge += tm;
            if (step < GP_XSTEPS_MAX) {
                info->step_comm[step] = tc;
                info->step_merge[step] = tm;
                info->step_bytes[step] = moved;
                info->step_transport[step] = s.shared ? GP_TRANSPORT_SHARED : GP_TRANSPORT_MPI;
            }
        }
    }
    return 0;
}

/* ---- setup and teardown ------------------------------------------------------------- */

/* Test knob GPUPRIM_EXCHANGE_NODE_RANKS=k (a positive integer; other values are ignored):
 * the ranks of a node count as nodes of k consecutive node-local ranks each, so that the
 * transports between nodes (auto's mixed steps, --transport shared's error) run on one
 * machine. Collective over the node (every rank sees the same environment). */
static void node_knob(gp_exchange *x)
{
    const int k = gp_tuning_get()->xchg_node_ranks;
    if (k <= 0) return;
    int nr = 0;
    MPI_Comm sub;
    MPI_Comm_rank(x->node, &nr);
    if (MPI_Comm_split(x->node, (int)(nr / k), nr, &sub) != MPI_SUCCESS) return;
    MPI_Comm_free(&x->node);
    x->node = sub;
    MPI_Comm_set_errhandler(x->node, MPI_ERRORS_RETURN);
}

/* 1 when MPI can take device pointers of a non-host-memory backend (a CUDA-aware MPI, asked
 * at run time where <mpi-ext.h> offers MPIX_Query_cuda_support). */
static int mpi_takes_device_memory(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

/* Whether the mpi transport stages through host pieces (memory MPI cannot take, or the
 * test knob GPUPRIM_EXCHANGE_STAGE=1), and the piece size (GPUPRIM_EXCHANGE_PIECE_BYTES,
 * a positive integer up to 1 GiB; default XCH_PIECE). */
static int needs_staging(const gp_backend *be, int64_t *piece)
{
    const gp_tuning *t = gp_tuning_get(); /* the knobs, read once (kernels/tuning.h) */
    *piece = t->xchg_piece > 0 ? t->xchg_piece : XCH_PIECE;
    if (t->xchg_stage) return 1;
    return !(be->caps & GP_CAP_HOST_MEMORY) && !mpi_takes_device_memory();
}

/* The four staging pieces (pinned host memory). Returns 0, or -1 (host_alloc failed). */
static int alloc_pieces(gp_exchange *x)
{
    for (int i = 0; i < 4; i++)
        if (!(x->pieces[i] = x->be->host_alloc((size_t)x->piece))) return -1;
    return 0;
}

static void free_pieces(gp_exchange *x)
{
    for (int i = 0; i < 4; i++) {
        if (x->pieces[i]) x->be->host_free(x->pieces[i]);
        x->pieces[i] = NULL;
    }
}

/* The buffers of a block: keys 0 | keys 1 | values 0 | values 1, each on XCH_ALIGN. */
static void layout(gp_exchange *x)
{
    const size_t um = (size_t)x->m;
    const size_t kb = (um * (size_t)x->width + XCH_ALIGN - 1) / XCH_ALIGN * XCH_ALIGN;
    const size_t vb = x->values ? (um * 8 + XCH_ALIGN - 1) / XCH_ALIGN * XCH_ALIGN : 0;
    x->off[0] = 0, x->off[1] = kb, x->off[2] = 2 * kb, x->off[3] = 2 * kb + vb;
    x->block = 2 * kb + 2 * vb;
    if (x->block == 0) x->block = XCH_ALIGN;
}

static void point_buffers(gp_exchange *x)
{
    for (int b = 0; b < 2; b++) {
        x->kb[b] = x->base + x->off[b];
        x->vb[b] = x->values ? (uint64_t *)(x->base + x->off[2 + b]) : NULL;
    }
}

/* Every distinct partner of this rank in the network, with its rank in the node
 * communicator (-1 off the node). Returns the number of partners on other nodes. */
static int find_partners(gp_exchange *x)
{
    MPI_Group g, gn;
    MPI_Comm_group(x->comm, &g);
    MPI_Comm_group(x->node, &gn);
    int P2 = 1, off_node = 0;
    while (P2 < x->P) P2 <<= 1;
    for (int k = 2; k <= P2; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            int q = partner_of(x->rank, k, j), nr = MPI_UNDEFINED;
            if (q >= x->P || find_peer(x, q) || x->npeers >= XCH_PEERS) continue;
            MPI_Group_translate_ranks(g, 1, &q, gn, &nr);
            x->peers[x->npeers++] = (xpeer){q, nr == MPI_UNDEFINED ? -1 : nr, NULL, 0};
            off_node += nr == MPI_UNDEFINED;
        }
    MPI_Group_free(&g);
    MPI_Group_free(&gn);
    return off_node;
}

/* The shared transport on host memory: the block is this rank's part of an MPI-3
 * shared-memory window on the node, and every partner's part is mapped here
 * (MPI_Win_shared_query); a passive-target epoch on all ranks stays open for MPI_Win_sync.
 * Collective over the node. Returns 0, or -1 with the reason in why. */
static int setup_window(gp_exchange *x, int fault, char *why, size_t whylen)
{
    MPI_Info info;
    void *base = NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each rank's part on its own */
    int rc = MPI_Win_allocate_shared((MPI_Aint)x->block, 1, info, x->node, &base, &x->win);
    MPI_Info_free(&info);
    char es[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) {
        x->win = MPI_WIN_NULL;
        MPI_Error_string(rc, es, &len);
        snprintf(why, whylen, "MPI_Win_allocate_shared of %zu bytes: %s", x->block, es);
        return -1;
    }
    MPI_Win_set_errhandler(x->win, MPI_ERRORS_RETURN);
    x->base = base;
    x->base_window = 1;
    for (int i = 0; i < x->npeers; i++) {
        xpeer *p = &x->peers[i];
        MPI_Aint size = 0;
        int du = 0;
        void *pb = NULL;
        if (p->node_rank < 0) continue;
        rc = MPI_Win_shared_query(x->win, p->node_rank, &size, &du, &pb);
        if (rc != MPI_SUCCESS || (size_t)size < x->block || !pb) {
            snprintf(why, whylen, "MPI_Win_shared_query of rank %d's part failed", p->rank);
            return -1;
        }
        p->base = pb;
    }
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, x->win);
    if (rc != MPI_SUCCESS) {
        snprintf(why, whylen, "MPI_Win_lock_all failed");
        return -1;
    }
    x->win_locked = 1;
    if (fault) snprintf(why, whylen, "injected failure of the window setup (GPUPRIM_FAULT)");
    return fault ? -1 : 0;
}

/* The shared transport on a backend with IPC: the handle of every rank's block (from
 * be->alloc) goes to the node's ranks (MPI_Allgather of a valid flag and the handle), and
 * each rank opens its partners' handles once. Collective over the node (a rank without a
 * block takes part, flagging its handle invalid). Returns 0, or -1 with the reason in why. */
static int setup_ipc(gp_exchange *x, int fault, char *why, size_t whylen)
{
    enum { H = 1 + GP_IPC_HANDLE_BYTES };
    unsigned char mine[H];
    int nn = 0, err = 0;
    memset(mine, 0, sizeof mine);
    if (x->base && x->be->ipc_get(x->base, mine + 1) == GP_OK) mine[0] = 1;
    else if (x->base) err = -1, snprintf(why, whylen, "ipc_get: %s", x->be->last_error());
    MPI_Comm_size(x->node, &nn);
    unsigned char *all = malloc((size_t)nn * H);
    int rc = MPI_Allgather(mine, H, MPI_BYTE, all ? all : mine, all ? H : 0, MPI_BYTE, x->node);
    if (!all || rc != MPI_SUCCESS) {
        free(all);
        snprintf(why, whylen, "%s", !all ? "out of host memory" : "MPI_Allgather of the IPC handles failed");
        return -1;
    }
    for (int i = 0; i < x->npeers && !err; i++) {
        xpeer *p = &x->peers[i];
        const unsigned char *h = all + (size_t)p->node_rank * H;
        if (p->node_rank < 0) continue;
        void *pb = NULL;
        if (!h[0]) {
            err = -1;
            snprintf(why, whylen, "rank %d has no buffer handle to map", p->rank);
        } else if (x->be->ipc_open(h + 1, &pb) != GP_OK) {
            err = -1;
            snprintf(why, whylen, "ipc_open of rank %d's buffers: %s", p->rank, x->be->last_error());
        } else {
            p->base = pb;
            p->ipc = 1;
        }
    }
    free(all);
    if (!err && fault) err = -1, snprintf(why, whylen, "injected failure of the IPC setup (GPUPRIM_FAULT)");
    return err;
}

/* Undoes the shared transport (collective over the node): closes this rank's mappings of its
 * partners' memory, waits until every rank of the node has closed its own (so no block is
 * freed while mapped), then frees the window (and with it a window block). Returns GP_OK,
 * or GP_EDEVICE when a mapping could not be closed. */
static int unmap_shared(gp_exchange *x)
{
    int err = GP_OK;
    for (int i = 0; i < x->npeers; i++) {
        xpeer *p = &x->peers[i];
        if (p->ipc && p->base && x->be->ipc_close(p->base) != GP_OK) err = GP_EDEVICE;
        p->base = NULL;
        p->ipc = 0;
    }
    if (x->node != MPI_COMM_NULL) MPI_Barrier(x->node);
    if (x->win != MPI_WIN_NULL) {
        if (x->win_locked) MPI_Win_unlock_all(x->win);
        MPI_Win_free(&x->win);
        x->win = MPI_WIN_NULL;
        x->win_locked = 0;
        if (x->base_window) x->base = NULL, x->base_window = 0;
    }
    x->shared = 0;
    return err;
}

int gp_exchange_destroy(gp_exchange *x)
{
    if (!x) return GP_OK;
    int err = unmap_shared(x);
    if (x->base && !x->base_window) x->be->free(x->base);
    free_pieces(x);
    if (x->node != MPI_COMM_NULL) MPI_Comm_free(&x->node);
    if (x->own_comm) MPI_Comm_free(&x->comm);
    free(x);
    return err;
}

/* cfg is usable and the same on every rank (one MPI_Allreduce). Returns 0, or GP_EINVAL with
 * "rank R: ..." in msg (agreed by the caller). */
static int check_config(MPI_Comm comm, int rank, const gp_backend *be,
                        const gp_exchange_config *cfg, char *msg, size_t msglen)
{
    int bad = !be || !cfg || (cfg->width != 4 && cfg->width != 8) || cfg->m < 0 ||
              (unsigned)cfg->transport > (unsigned)GP_TRANSPORT_MPI;
    int64_t v[6] = {0, 0, 0, 0, 0, 0}, mx[6];
    if (bad) {
        snprintf(msg, msglen, "rank %d: bad exchange configuration (need a backend, a width of 4 "
                 "or 8, m >= 0 and a transport)", rank);
    } else {
        const int64_t val = cfg->values != 0;
        v[0] = cfg->m, v[1] = -cfg->m, v[2] = cfg->width, v[3] = -cfg->width, v[4] = val;
        v[5] = -val;
    }
    if (MPI_Allreduce(v, mx, 6, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS && !bad) {
        bad = 1;
        snprintf(msg, msglen, "rank %d: MPI_Allreduce of the exchange configuration failed", rank);
    }
    if (!bad && (mx[0] != -mx[1] || mx[2] != -mx[3] || mx[4] != -mx[5])) {
        bad = 1;
        snprintf(msg, msglen, "rank %d: m, the key width and whether values move must be the "
                 "same on every rank", rank);
    }
    return bad ? GP_EINVAL : 0;
}

/* Whether the shared transport can be asked for at all (GP_TRANSPORT_SHARED: a backend that
 * maps memory, every partner on the node). Returns 0 or GP_EINVAL with msg set (agreed). */
static int check_shared(gp_exchange *x, gp_transport want, int off_node, char *msg, size_t msglen)
{
    int err = 0;
    if (want == GP_TRANSPORT_SHARED && !(x->be->caps & (GP_CAP_HOST_MEMORY | GP_CAP_IPC))) {
        err = GP_EINVAL;
        snprintf(msg, msglen, "rank %d: the %s backend cannot map memory between processes",
                 x->rank, x->be->name);
    } else if (want == GP_TRANSPORT_SHARED && off_node) {
        for (int i = 0; i < x->npeers; i++)
            if (x->peers[i].node_rank < 0) {
                err = GP_EINVAL;
                snprintf(msg, msglen, "rank %d: its partner rank %d is on another node (the "
                         "shared transport needs every partner on the node)", x->rank,
                         x->peers[i].rank);
                break;
            }
    }
    return gp_agree(x->comm, err, msg, msglen);
}

/* This rank's block, and the shared transport when it is wanted: a window (host memory) or
 * the block from be->alloc with its IPC handle opened by the node's partners; a failed
 * shared setup on any rank undoes it everywhere and falls back to mpi (auto, with the
 * notice in msg) or is an error (shared). Then the staging pieces where this rank may
 * stage. Collective. Returns 0 or a GP_E* code with msg set, the same on every rank. */
static int create_buffers(gp_exchange *x, const gp_exchange_config *cfg, int off_node,
                          char *msg, size_t msglen)
{
    const gp_backend *be = x->be;
    const int host = (be->caps & GP_CAP_HOST_MEMORY) != 0, ipc = !host && (be->caps & GP_CAP_IPC);
    int want = cfg->transport != GP_TRANSPORT_MPI && (host || ipc) && x->npeers > off_node, any = 0;
    if (MPI_Allreduce(&want, &any, 1, MPI_INT, MPI_MAX, x->comm) != MPI_SUCCESS) {
        snprintf(msg, msglen, "rank %d: MPI_Allreduce failed", x->rank);
        return gp_agree(x->comm, GP_EINVAL, msg, msglen);
    }
    char why[400] = "", smsg[480] = "";
    int sfail = 0, err = 0;
    if (any && host) sfail = setup_window(x, cfg->fault_setup, why, sizeof why) != 0;
    else x->base = be->alloc(x->block);
    if (any && ipc) sfail = setup_ipc(x, cfg->fault_setup, why, sizeof why) != 0;
    if (any) {
        snprintf(smsg, sizeof smsg, "rank %d: %s", x->rank, why);
        if (gp_agree(x->comm, sfail, smsg, sizeof smsg)) {
            unmap_shared(x);
            if (cfg->transport == GP_TRANSPORT_SHARED) {
                snprintf(msg, msglen, "the shared-memory transport cannot be set up: %s", smsg);
                err = GP_EDEVICE;
            } else {
                snprintf(msg, msglen, "the shared-memory transport is not available (%s); the "
                         "rank exchange goes through MPI", smsg);
            }
        } else {
            x->shared = 1;
        }
    }
    if (!err && !x->base) x->base = be->alloc(x->block);
    int64_t piece = 0;
    x->stage = needs_staging(be, &piece);
    x->piece = piece;
    const int may_stage = x->stage && x->npeers > 0 && (!x->shared || off_node > 0);
    int aerr = 0;
    char amsg[400] = "";
    if (!err && (!x->base || (may_stage && alloc_pieces(x)))) {
        aerr = GP_ENOMEM;
        snprintf(amsg, sizeof amsg, "rank %d: cannot allocate %s (%.1f MiB) of %s memory: %s",
                 x->rank, x->base ? "the exchange's staging pieces" : "the shard and receive buffers",
                 (double)(x->base ? 4 * x->piece : (int64_t)x->block) / 1048576.0,
                 x->base ? "pinned host" : be->name, be->last_error());
    }
    if (!err && gp_agree(x->comm, aerr, amsg, sizeof amsg)) {
        snprintf(msg, msglen, "%s", amsg);
        err = GP_ENOMEM;
    }
    if (!err) point_buffers(x);
    return err;
}

int gp_exchange_create(MPI_Comm comm, const gp_backend *be, const gp_exchange_config *cfg,
                       gp_exchange **out, char *msg, size_t msglen)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (msglen > 0) msg[0] = '\0';
    if (out) *out = NULL;
    int err = check_config(comm, rank, be, cfg, msg, msglen);
    gp_exchange *x = err || !out ? NULL : calloc(1, sizeof *x);
    if (!err && !out) err = GP_EINVAL, snprintf(msg, msglen, "rank %d: out is NULL", rank);
    if (!err && !x) err = GP_ENOMEM, snprintf(msg, msglen, "rank %d: out of host memory", rank);
    if ((err = gp_agree(comm, err, msg, msglen))) {
        free(x);
        return err;
    }
    x->be = be;
    x->width = cfg->width;
    x->values = cfg->values != 0;
    x->m = cfg->m;
    x->fault_step = cfg->fault_step;
    x->node = MPI_COMM_NULL;
    x->win = MPI_WIN_NULL;
    MPI_Comm_dup(comm, &x->comm);
    x->own_comm = 1;
    MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(x->comm, &x->rank);
    MPI_Comm_size(x->comm, &x->P);
    layout(x);
    MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL, &x->node);
    MPI_Comm_set_errhandler(x->node, MPI_ERRORS_RETURN);
    node_knob(x);
    const int off_node = find_partners(x);
    err = check_shared(x, cfg->transport, off_node, msg, msglen);
    if (!err) err = create_buffers(x, cfg, off_node, msg, msglen);
    if (err) {
        gp_exchange_destroy(x);
        return err;
    }
    *out = x;
    return GP_OK;
}

void *gp_exchange_keys(const gp_exchange *x) { return x->kb[x->cur]; }
uint64_t *gp_exchange_values(const gp_exchange *x) { return x->vb[x->cur]; }
void *gp_exchange_spare_keys(const gp_exchange *x) { return x->kb[x->cur ^ 1]; }
uint64_t *gp_exchange_spare_values(const gp_exchange *x) { return x->vb[x->cur ^ 1]; }
void gp_exchange_use_spare(gp_exchange *x) { x->cur ^= 1; }

int gp_exchange_release_spare(gp_exchange *x)
{
    if (!x->base || x->base_window || !(x->be->caps & GP_CAP_HOST_MEMORY)) return 0;
    const long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return 0;
    const int s = x->cur ^ 1;
    const size_t bytes[2] = {(size_t)x->m * (size_t)x->width, x->values ? (size_t)x->m * 8 : 0};
    char *const at[2] = {x->kb[s], (char *)x->vb[s]};
    size_t released = 0;
    for (int i = 0; i < 2; i++) {
        if (!at[i] || bytes[i] == 0) continue;
        /* the whole pages inside the buffer */
        const uintptr_t a = ((uintptr_t)at[i] + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
        const uintptr_t e = ((uintptr_t)at[i] + bytes[i]) & ~((uintptr_t)pg - 1);
        if (e <= a) continue;
        if (madvise((void *)a, e - a, MADV_DONTNEED) == 0) released += e - a;
    }
    return released > 0;
}

gp_transport gp_exchange_transport(const gp_exchange *x)
{
    return x->shared ? GP_TRANSPORT_SHARED : GP_TRANSPORT_MPI;
}

/* ---- the form on the caller's buffers ------------------------------------------------ */

/* gp_bitonic_exchange(_pairs): an exchange on the caller's communicator and buffers (the
 * mpi transport), whose result is copied back into keys / vals when it ended in recv. */
static int borrowed_run(MPI_Comm comm, const gp_backend *be, int width, int64_t m, void *keys,
                        uint64_t *vals, void *recv, uint64_t *vrecv, int64_t *nkeys, int stable,
                        gp_exchange_info *info)
{
    gp_exchange x;
    memset(&x, 0, sizeof x);
    x.comm = comm;
    x.node = MPI_COMM_NULL;
    x.win = MPI_WIN_NULL;
    x.be = be;
    MPI_Comm_rank(comm, &x.rank);
    MPI_Comm_size(comm, &x.P);
    if (width != 4 && width != 8) die(comm, x.rank, "arguments", "width is not 4 or 8");
    x.width = width;
    x.values = vals != NULL;
    x.m = m;
    x.kb[0] = keys, x.kb[1] = recv, x.vb[0] = vals, x.vb[1] = vrecv;
    x.stage = needs_staging(be, &x.piece);
    if (x.stage && x.P > 1 && alloc_pieces(&x))
        die(comm, x.rank, "staging pieces", be->last_error());
    gp_exchange_run(&x, nkeys, stable, info);
    if (x.cur) copy_elems(&x, x.kb[0], x.vb[0], x.kb[1], x.vb[1], *nkeys);
    free_pieces(&x);
    return 0;
}

int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void *recv, void *host_send,
                        void *host_recv, gp_exchange_info *info)
{
    (void)host_send, (void)host_recv;
    return borrowed_run(comm, be, width, m, *keys, NULL, recv, NULL, nkeys, 0, info);
}

int gp_bitonic_exchange_pairs(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                              void **keys, uint64_t **vals, int64_t *nkeys, void *recv,
                              uint64_t *vrecv, void *host_send, void *host_recv,
                              uint64_t *hv_send, uint64_t *hv_recv, int stable,
                              gp_exchange_info *info)
{
    (void)host_send, (void)host_recv, (void)hv_send, (void)hv_recv;
    return borrowed_run(comm, be, width, m, *keys, *vals, recv, vrecv, nkeys, stable, info);
}
