/* agree.c — the failure kinds' names and the ranks' agreement on an outcome (gpuprim/error.h). */
#include "gpuprim/error.h"

#include <stdio.h>
#include <string.h>

const char *gp_error_name(int kind)
{
    static const char *const names[GP_NERRORS] = {"none",  "internal", "usage",  "open",  "dataset",
                                                  "read",  "write",    "device", "verify"};
    return kind >= 0 && kind < GP_NERRORS ? names[kind] : "?";
}

/* This rank's agreement failed in an MPI call: GP_ERR_INTERNAL, with the call named. */
static int agree_failed(const char *call, int rank, char *msg, size_t msglen)
{
    if (msglen > 0)
        snprintf(msg, msglen, "rank %d: %s failed while the ranks agreed on an error", rank, call);
    return GP_ERR_INTERNAL;
}

int gp_agree(MPI_Comm comm, int err, char *msg, size_t msglen)
{
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return agree_failed("MPI_Comm_rank", rank, msg, msglen);
    int size = 0;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return agree_failed("MPI_Comm_size", rank, msg, msglen);
    /* MINLOC over (this rank if it failed, else size; err): the lowest failing rank and its
     * code in one reduction (the failing ranks' keys differ, so the code is that rank's) */
    struct { int key, code; } mine = {err ? rank : size, err}, low = {size, 0};
    if (MPI_Allreduce(&mine, &low, 1, MPI_2INT, MPI_MINLOC, comm) != MPI_SUCCESS)
        return agree_failed("MPI_Allreduce", rank, msg, msglen);
    if (low.key >= size) return 0;
    if (msglen > 0) msg[msglen - 1] = '\0';
    if (msglen > 0 && MPI_Bcast(msg, (int)msglen, MPI_CHAR, low.key, comm) != MPI_SUCCESS)
        return agree_failed("MPI_Bcast", rank, msg, msglen);
    return low.code;
}
