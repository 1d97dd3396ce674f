/* test_agree.c — gp_agree (include/gpuprim/error.h), the ranks' one rule for agreeing on an error:
 * every rank returns the code of the lowest failing rank and holds that rank's message, also
 * when other ranks failed with other codes and longer messages; nothing failed leaves msg
 * alone; a full buffer without a NUL arrives as its first msglen - 1 bytes. Every failing set of
 * ranks up to 4 ranks, at any rank count. Run under mpirun. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "gpuprim/error.h"
#include "test_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const int nsets = P < 4 ? 1 << P : 16; /* which of the first 4 ranks fail */
    for (int set = 0; set < nsets; set++) {
        const int fails = rank < 4 && (set >> rank & 1);
        /* codes differ by rank, and a higher rank's code is larger: the lowest rank decides,
         * not the largest code */
        const int code = fails ? GP_ERR_OPEN + rank : 0;
        char msg[64];
        memset(msg, 'u', sizeof msg); /* untouched, and not NUL-terminated */
        if (fails) snprintf(msg, sizeof msg, "rank %d failed", rank);
        if (fails && rank == 2) msg[strlen(msg)] = 'x'; /* its buffer full, no NUL in it */
        char before[64];
        memcpy(before, msg, sizeof msg);
        const int rc = gp_agree(MPI_COMM_WORLD, code, msg, sizeof msg);
        int low = -1;
        for (int r = 0; r < 4 && r < P && low < 0; r++)
            if (set >> r & 1) low = r;
        if (low < 0) {
            CHECK(rc == 0, "set %d: nothing failed, rc %d", set, rc);
            CHECK(memcmp(msg, before, sizeof msg) == 0, "set %d: msg touched though nothing failed",
                  set);
            continue;
        }
        char want[64];
        snprintf(want, sizeof want, "rank %d failed", low);
        if (low == 2) { /* the first 63 bytes of its full buffer */
            const size_t l = strlen(want);
            want[l] = 'x';
            memset(want + l + 1, 'u', sizeof want - l - 2);
            want[sizeof want - 1] = '\0';
        }
        CHECK(rc == GP_ERR_OPEN + low, "rank %d set %d: rc %d, want %d (rank %d's)", rank, set, rc,
              GP_ERR_OPEN + low, low);
        CHECK(memchr(msg, '\0', sizeof msg) && strcmp(msg, want) == 0,
              "rank %d set %d: message '%.64s', want '%s'", rank, set, msg, want);
    }
    /* a code of the caller's own (the exchange's GP_E* codes): passed through as it is */
    char msg[32] = "";
    if (rank == P - 1) snprintf(msg, sizeof msg, "last");
    const int rc = gp_agree(MPI_COMM_WORLD, rank == P - 1 ? 12345 : 0, msg, sizeof msg);
    CHECK(rc == 12345 && strcmp(msg, "last") == 0, "rank %d: own code: rc %d msg '%s'", rank, rc,
          msg);
    int bad = g_fail, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_agree: %d ranks, %ld passed on rank 0, %d failed in all\n", P, g_pass, any);
    MPI_Finalize();
    return any ? 1 : 0;
}
