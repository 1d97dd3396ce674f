/* bigmsg.c — messages past MPI's int counts: a point-to-point exchange in pieces of 1 GiB,
 * and the all-to-all with 64-bit counts and displacements (exchange.h). */
#include "exchange_internal.h" /* gp_xch_prog */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    fprintf(stderr, "%s: error: rank %d: all-to-all: %s\n", gp_xch_prog(), rank, what);
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
