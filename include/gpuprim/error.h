/* error.h — the kinds of failure of gpuprim above the kernels, and how the ranks agree
 * on one (io/agree.c).
 *
 * One enum for the layers that speak MPI: io/ returns its failures as these kinds (h5io.h's
 * GP_IO_E* are names of them), the rank combination (exchange.h) agrees on them and aborts
 * with them, and a program passes them on. The kernels keep their own backend codes
 * (GP_EINVAL, GP_ENOMEM, GP_EDEVICE of kernels.h); the caller of a backend decides what
 * kind a failing call is. Which exit status a kind gives is the program's decision, made in
 * one table (gpuprim_mpi and gpuprim_gen: src/exitcode.c). Two cases bypass a program's
 * table, so there the kind's own number is the exit status: the library's MPI_Abort
 * (GP_ERR_INTERNAL for a failed MPI call of the all-to-all, GP_ERR_DEVICE for a failed
 * exchange step), and a program that returns a kind unmapped; a program whose table maps
 * those kinds elsewhere must say so (gpuprim_mpi's maps every kind to its own number).
 */
#ifndef GP_ERROR_H
#define GP_ERROR_H

#include <mpi.h>
#include <stddef.h>

typedef enum gp_error {
    GP_ERR_NONE = 0,     /* success */
    GP_ERR_INTERNAL = 1, /* an internal error, or a failed MPI call */
    GP_ERR_USAGE = 2,    /* a bad command line or a bad argument of the caller */
    GP_ERR_OPEN = 3,     /* the input file is missing, unreadable, or not HDF5 */
    GP_ERR_DATASET = 4,  /* a dataset is missing, ambiguous, behind a dangling link, or of an
                            unsupported class or shape */
    GP_ERR_READ = 5,     /* reading the data failed */
    GP_ERR_WRITE = 6,    /* an output could not be written */
    GP_ERR_DEVICE = 7,   /* the backend is unavailable, or a device call failed */
    GP_ERR_VERIFY = 8,   /* a self-check of a result failed */
    GP_NERRORS = 9
} gp_error;

/* The kind's name in lower case ("none", "internal", "usage", "open", "dataset", "read",
 * "write", "device", "verify"; "?" for another value). Not collective. */
const char *gp_error_name(int kind);

/* Makes the ranks of comm agree on an outcome. Each rank passes its own err (0: it
 * succeeded; else a gp_error kind, or another code of the caller's, such as the exchange's
 * GP_E* codes) and, when err != 0, its one-line message in msg. When no rank failed, every
 * rank returns 0 and msg is untouched. Otherwise the lowest-numbered failing rank decides:
 * every rank returns that rank's err and holds that rank's message in msg (the first
 * msglen - 1 bytes of it, NUL-terminated; msglen must be the same on every rank). So the
 * code and the message always belong together, whatever other ranks failed with. Costs one
 * MPI_Allreduce, and one MPI_Bcast when some rank failed. When the agreement's own MPI
 * calls fail, the rank returns GP_ERR_INTERNAL with a message naming the call (the ranks
 * may then differ: MPI itself is failing). Collective. */
int gp_agree(MPI_Comm comm, int err, char *msg, size_t msglen);

#endif /* GP_ERROR_H */
