/* exchange.c — MPI combination: statistics reduction, rank-level bitonic merge exchange. */
#include "exchange.h"

#include "gp_ext.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- agreement on errors ------------------------------------------------------------- */

int gp_agree(MPI_Comm comm, int err, char *msg, size_t msglen)
{
    int rank, size, worst = 0, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&err, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst == 0) return 0;
    int cand = err ? rank : size;
    MPI_Allreduce(&cand, &first, 1, MPI_INT, MPI_MIN, comm);
    if (msglen > 0) msg[msglen - 1] = '\0';
    MPI_Bcast(msg, (int)msglen, MPI_CHAR, first, comm);
    return worst;
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

/* A failing point-to-point call of the all-to-all: the job cannot continue (partners would
 * wait forever), so abort it with one line. */
static void a2a_die(MPI_Comm comm, int rank, const char *what)
{
    fprintf(stderr, "gpuprim_mpi: error: rank %d: all-to-all: %s\n", rank, what);
    fflush(stderr);
    MPI_Abort(comm, 1);
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

/* ---- rank-level bitonic merge exchange ----------------------------------------------- */

static void die(MPI_Comm comm, int rank, const char *what, const char *detail)
{
    fprintf(stderr, "gpuprim_mpi: error: rank %d: merge exchange: %s: %s\n", rank, what,
            detail ? detail : "");
    fflush(stderr);
    MPI_Abort(comm, 7);
}

/* The exchange of gp_bitonic_exchange / gp_bitonic_exchange_pairs: with v == NULL keys
 * only; else every key carries one uint64 value (v->vals etc.). */
typedef struct pair_bufs {
    uint64_t **vals, **vspare, *vrecv;
    uint64_t *hv_send, *hv_recv;
    int stable;
} pair_bufs;

static int exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m, void **keys,
                    int64_t *nkeys, void **spare, void *recv, void *host_send, void *host_recv,
                    const pair_bufs *v, gp_exchange_info *info)
{
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    memset(info, 0, sizeof *info);
    /* the CPU backend's "device" memory is host memory: send and merge in place */
    const int host_resident = strcmp(be->name, "cpu") == 0;
    int P2 = 1;
    while (P2 < P) P2 <<= 1;

    for (int k = 2; k <= P2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            info->stages++;
            /* first step of each merge: the mirror partner inside the k-block; then
             * half-cleaners. Every comparator keeps the minimum at the lower rank. */
            int partner = (j == (k >> 1)) ? (rank ^ (k - 1)) : (rank ^ j);
            if (partner >= P) continue; /* virtual all-+inf shard: keep mine */
            const int lower = rank < partner;
            double t0 = MPI_Wtime();
            int64_t mine = *nkeys, theirs = 0;
            int rc = MPI_Sendrecv(&mine, 1, MPI_INT64_T, partner, 6, &theirs, 1, MPI_INT64_T,
                                  partner, 6, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) die(comm, rank, "MPI_Sendrecv", "count exchange failed");
            /* keys, then values: device -> host, MPI, host -> device (in place on the CPU) */
            const void *other = NULL;
            const uint64_t *vother = NULL;
            for (int part = 0; part < (v ? 2 : 1); part++) {
                const int w = part ? 8 : width;
                void *dsrc = part ? (void *)*v->vals : *keys;
                void *hs = part ? (void *)v->hv_send : host_send;
                void *hr = part ? (void *)v->hv_recv : host_recv;
                void *drecv = part ? (void *)v->vrecv : recv;
                const void *sendp = dsrc;
                if (!host_resident) {
                    if (be->download(hs, dsrc, (size_t)mine * w))
                        die(comm, rank, "download", be->last_error());
                    sendp = hs;
                }
                rc = gp_sendrecv_bytes(comm, partner, sendp, mine * w, hr, theirs * w);
                if (rc != MPI_SUCCESS) die(comm, rank, "MPI_Sendrecv", "shard exchange failed");
                const void *got = hr;
                if (!host_resident) {
                    if (be->upload(drecv, hr, (size_t)theirs * w))
                        die(comm, rank, "upload", be->last_error());
                    got = drecv;
                }
                if (part) vother = (const uint64_t *)got;
                else other = got;
                info->bytes_sent += mine * w;
            }
            double t1 = MPI_Wtime();
            const void *lo = lower ? *keys : other, *hi = lower ? other : *keys;
            int64_t nlo = lower ? mine : theirs, nhi = lower ? theirs : mine, nout = 0;
            if (!v) {
                if (be->merge_split_keys(width, lo, nlo, hi, nhi, m, !lower, *spare, &nout))
                    die(comm, rank, "merge-split", be->last_error());
            } else {
                const uint64_t *vlo = lower ? *v->vals : vother, *vhi = lower ? vother : *v->vals;
                if (be->merge_split_pairs(width, lo, vlo, nlo, hi, vhi, nhi, m, !lower, v->stable,
                                          *spare, *v->vspare, &nout))
                    die(comm, rank, "merge-split", be->last_error());
                uint64_t *tv = *v->vals;
                *v->vals = *v->vspare;
                *v->vspare = tv;
            }
            void *tmp = *keys;
            *keys = *spare;
            *spare = tmp;
            *nkeys = nout;
            info->merges++;
            double t2 = MPI_Wtime();
            info->t_comm += t1 - t0;
            info->t_merge += t2 - t1;
            if (info->stages <= GP_XSTEPS_MAX) {
                info->step_comm[info->stages - 1] = t1 - t0;
                info->step_merge[info->stages - 1] = t2 - t1;
                info->step_bytes[info->stages - 1] = mine * (width + (v ? 8 : 0));
            }
        }
    }
    return 0;
}

int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void **spare, void *recv,
                        void *host_send, void *host_recv, gp_exchange_info *info)
{
    return exchange(comm, be, width, m, keys, nkeys, spare, recv, host_send, host_recv, NULL,
                    info);
}

int gp_bitonic_exchange_pairs(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                              void **keys, uint64_t **vals, int64_t *nkeys, void **spare,
                              uint64_t **vspare, void *recv, uint64_t *vrecv, void *host_send,
                              void *host_recv, uint64_t *hv_send, uint64_t *hv_recv,
                              int stable, gp_exchange_info *info)
{
    pair_bufs v = {vals, vspare, vrecv, hv_send, hv_recv, stable};
    return exchange(comm, be, width, m, keys, nkeys, spare, recv, host_send, host_recv, &v,
                    info);
}
