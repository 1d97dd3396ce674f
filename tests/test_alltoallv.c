/* test_alltoallv.c — gp_alltoallv_big (ranks/bigmsg.c) against the definition.
 *
 * Every rank sends to every rank (itself included) a block whose length and contents are a
 * function of (sender, receiver, round), with element sizes 1, 3, 8 and 24 bytes and piece
 * sizes from 1 byte (every byte its own message) to the default (0: 1 GiB), gaps between
 * the blocks in both buffers (displacements are not prefix sums), empty blocks, and a rank
 * that sends nothing at all; then the argument checks (negative count, own counts that
 * differ, esz 0), which must fail on every rank alike before any message. Prints one line
 * per failure (test_check.h); exit 0 when everything passes. Run under mpirun with any rank
 * count. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprim/exchange.h"
#include "test_check.h" /* CHECK, CTX (the rank), g_fail */


/* elements sent from rank s to rank r in round k (0 for some pairs, rank 1 sends none) */
static int64_t count_of(int s, int r, int k)
{
    if (s == 1 && k % 2 == 0) return 0;
    return (int64_t)((s * 7 + r * 13 + k * 5) % 11);
}

static unsigned char byte_of(int s, int r, int64_t i, int b)
{
    return (unsigned char)(s * 31 + r * 17 + i * 7 + b * 3 + 1);
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    CTX("rank %d", rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    const size_t eszs[] = {1, 3, 8, 24};
    const int64_t pieces[] = {1, 2, 5, 64, 0};
    int round = 0;
    for (size_t ei = 0; ei < sizeof eszs / sizeof *eszs; ei++) {
        for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++, round++) {
            const size_t esz = eszs[ei];
            int64_t *sc = calloc((size_t)P, 8), *sd = calloc((size_t)P, 8);
            int64_t *rc = calloc((size_t)P, 8), *rd = calloc((size_t)P, 8);
            if (!sc || !sd || !rc || !rd) {
                fprintf(stderr, "out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            int64_t sat = 2, rat = 1; /* leading gaps, and a gap of one element after each */
            for (int p = 0; p < P; p++) {
                sc[p] = count_of(rank, p, round);
                rc[p] = count_of(p, rank, round);
                sd[p] = sat;
                rd[p] = rat;
                sat += sc[p] + 1;
                rat += rc[p] + 1;
            }
            unsigned char *sb = malloc((size_t)sat * esz), *rb = malloc((size_t)rat * esz);
            if (!sb || !rb) {
                fprintf(stderr, "out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            memset(sb, 0xEE, (size_t)sat * esz);
            memset(rb, 0xA5, (size_t)rat * esz);
            for (int p = 0; p < P; p++)
                for (int64_t i = 0; i < sc[p]; i++)
                    for (size_t b = 0; b < esz; b++)
                        sb[(size_t)(sd[p] + i) * esz + b] = byte_of(rank, p, i, (int)b);
            int rcode = gp_alltoallv_big(MPI_COMM_WORLD, sb, sc, sd, rb, rc, rd, esz, pieces[pi]);
            CHECK(rcode == MPI_SUCCESS, "esz %zu piece %lld: returned %d", esz,
                  (long long)pieces[pi], rcode);
            int64_t bad = 0, gaps = 0;
            for (int p = 0; p < P; p++)
                for (int64_t i = 0; i < rc[p]; i++)
                    for (size_t b = 0; b < esz; b++)
                        bad += rb[(size_t)(rd[p] + i) * esz + b] != byte_of(p, rank, i, (int)b);
            /* the gaps of the receive buffer are untouched */
            for (int64_t e = 0, p = 0; e < rat; e++) {
                while (p < P && e >= rd[p] + rc[p]) p++;
                const int inside = p < P && e >= rd[p];
                for (size_t b = 0; !inside && b < esz; b++) gaps += rb[(size_t)e * esz + b] != 0xA5;
            }
            CHECK(bad == 0, "esz %zu piece %lld: %lld wrong bytes received", esz,
                  (long long)pieces[pi], (long long)bad);
            CHECK(gaps == 0, "esz %zu piece %lld: %lld bytes written outside the blocks", esz,
                  (long long)pieces[pi], (long long)gaps);
            free(sb), free(rb), free(sc), free(sd), free(rc), free(rd);
        }
    }

    /* argument errors: every rank gets the same error, nobody hangs */
    {
        int64_t *c = calloc((size_t)P, 8), *d = calloc((size_t)P, 8), *c2 = calloc((size_t)P, 8);
        char buf[8] = {0}, rbuf[8] = {0};
        if (!c || !d || !c2) MPI_Abort(MPI_COMM_WORLD, 1);
        if (rank == P - 1) c2[0] = -1; /* one rank passes a negative count */
        int r1 = gp_alltoallv_big(MPI_COMM_WORLD, buf, c2, d, rbuf, c, d, 1, 0);
        CHECK(r1 == MPI_ERR_ARG, "negative count: returned %d, want MPI_ERR_ARG", r1);
        c2[0] = 0;
        c2[rank] = 1; /* own send count 1, own receive count 0 */
        int r2 = gp_alltoallv_big(MPI_COMM_WORLD, buf, c2, d, rbuf, c, d, 1, 0);
        CHECK(r2 == MPI_ERR_ARG, "own counts differ: returned %d, want MPI_ERR_ARG", r2);
        int r3 = gp_alltoallv_big(MPI_COMM_WORLD, buf, c, d, rbuf, c, d, 0, 0);
        CHECK(r3 == MPI_ERR_ARG, "esz 0: returned %d, want MPI_ERR_ARG", r3);
        int r4 = gp_alltoallv_big(MPI_COMM_WORLD, buf, c, d, rbuf, c, d, 1, 0);
        CHECK(r4 == MPI_SUCCESS, "all counts 0: returned %d", r4);
        free(c), free(d), free(c2);
    }

    int fails = (int)g_fail, total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_alltoallv: %d ranks, %d rounds, %d failures\n", P, round, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
