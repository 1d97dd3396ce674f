/* gather.c — elements of a sharded array by global position: the owner of a position, and
 * the gather of any positions from every rank (exchange.h). */
#include "gpuprim/exchange.h"

#include "gpuprim/shard.h"

#include <stdlib.h>
#include <string.h>

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
