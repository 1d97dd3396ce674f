/* fail.c — the one-line aborts of ranks/: a failing call inside a collective exchange cannot be
 * returned (the partners would wait forever), so it ends the job with one line naming the
 * program, the rank and the call. */
#define _GNU_SOURCE /* program_invocation_short_name: error lines name the calling program */
#include "exchange_internal.h"

#include <errno.h>
#include <stdio.h>

const char *gp_xch_prog(void)
{
#if defined(__GLIBC__)
    return program_invocation_short_name;
#else
    return "gpuprim";
#endif
}

void gp_xch_die(MPI_Comm comm, int rank, const char *what, const char *detail)
{
    fprintf(stderr, "%s: error: rank %d: merge exchange: %s: %s\n", gp_xch_prog(), rank, what,
            detail ? detail : "");
    fflush(stderr);
    MPI_Abort(comm, GP_ERR_DEVICE);
}

void gp_xch_mpi_die(MPI_Comm comm, int rank, const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    gp_xch_die(comm, rank, what, s);
}

void gp_xch_count_die(MPI_Comm comm, int rank, int holder, int64_t count, int64_t m)
{
    char who[32], why[256];
    if (holder == rank) snprintf(who, sizeof who, "this rank");
    else snprintf(who, sizeof who, "rank %d", holder);
    snprintf(why, sizeof why,
             "%s holds %lld keys, outside [0, m = %lld] (m must be the same on every rank and "
             "at least every rank's count)",
             who, (long long)count, (long long)m);
    gp_xch_die(comm, rank, "arguments", why);
}
