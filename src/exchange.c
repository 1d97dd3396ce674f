/* exchange.c — MPI combination: statistics reduction, rank-level bitonic merge exchange. */
#include "exchange.h"

#include <stdio.h>
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

static int stats_type(MPI_Datatype *t, MPI_Op *op)
{
    int rc = MPI_Type_contiguous((int)sizeof(gp_stats), MPI_BYTE, t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(t);
    if (rc == MPI_SUCCESS) rc = MPI_Op_create(stats_op, 0 /* not commutative */, op);
    return rc;
}

int gp_stats_reduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total, int root)
{
    MPI_Datatype t;
    MPI_Op op;
    int rc = stats_type(&t, &op);
    if (rc != MPI_SUCCESS) return rc;
    gp_stats in = *mine, out = *mine;
    rc = MPI_Reduce(&in, &out, 1, t, op, root, comm);
    *total = out;
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    return rc;
}

int gp_stats_allreduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total)
{
    MPI_Datatype t;
    MPI_Op op;
    int rc = stats_type(&t, &op);
    if (rc != MPI_SUCCESS) return rc;
    gp_stats in = *mine, out;
    rc = MPI_Allreduce(&in, &out, 1, t, op, comm);
    *total = out;
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    return rc;
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

/* ---- rank-level bitonic merge exchange ----------------------------------------------- */

static void die(MPI_Comm comm, int rank, const char *what, const char *detail)
{
    fprintf(stderr, "gpuprim_mpi: error: rank %d: merge exchange: %s: %s\n", rank, what,
            detail ? detail : "");
    fflush(stderr);
    MPI_Abort(comm, 7);
}

int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void **spare, void *recv,
                        void *host_send, void *host_recv, gp_exchange_info *info)
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
            const void *sendp = *keys;
            void *recvp = host_resident ? host_recv : host_send;
            if (!host_resident) {
                if (be->download(host_send, *keys, (size_t)mine * width))
                    die(comm, rank, "download", be->last_error());
                sendp = host_send;
                recvp = host_recv;
            }
            rc = gp_sendrecv_bytes(comm, partner, sendp, mine * width, recvp, theirs * width);
            if (rc != MPI_SUCCESS) die(comm, rank, "MPI_Sendrecv", "shard exchange failed");
            const void *other = host_recv;
            if (!host_resident) {
                if (be->upload(recv, host_recv, (size_t)theirs * width))
                    die(comm, rank, "upload", be->last_error());
                other = recv;
            }
            double t1 = MPI_Wtime();
            const void *lo = lower ? *keys : other, *hi = lower ? other : *keys;
            int64_t nlo = lower ? mine : theirs, nhi = lower ? theirs : mine, nout = 0;
            if (be->merge_split_keys(width, lo, nlo, hi, nhi, m, !lower, *spare, &nout))
                die(comm, rank, "merge-split", be->last_error());
            void *tmp = *keys;
            *keys = *spare;
            *spare = tmp;
            *nkeys = nout;
            info->merges++;
            info->bytes_sent += mine * width;
            double t2 = MPI_Wtime();
            info->t_comm += t1 - t0;
            info->t_merge += t2 - t1;
            if (info->stages <= GP_XSTEPS_MAX) {
                info->step_comm[info->stages - 1] = t1 - t0;
                info->step_merge[info->stages - 1] = t2 - t1;
                info->step_bytes[info->stages - 1] = mine * width;
            }
        }
    }
    return 0;
}
