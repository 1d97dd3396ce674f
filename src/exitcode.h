/* exitcode.h — the exit statuses of gpuprim_mpi and gpuprim_gen: one table (exitcode.c)
 * from the failure kinds of gpuprim/error.h to the status and its meaning. gpuprim_mpi --help,
 * gpuprim_gen --help and the EXIT STATUS table of docs/gpuprim_mpi.md say what it says
 * (tests/test_count_exit.c checks the table, tests/cli_output.py the texts). */
#ifndef GP_EXITCODE_H
#define GP_EXITCODE_H

#include <stdio.h>

#include "gpuprim/error.h"

/* The program's names of the failure kinds: what its functions return (0 or one of
 * these, the same on every rank); main() returns gp_exit_status() of it. */
enum {
    GP_EXIT_OK = GP_ERR_NONE,
    GP_EXIT_FAIL = GP_ERR_INTERNAL,  /* internal error, MPI failure */
    GP_EXIT_USAGE = GP_ERR_USAGE,    /* bad command line */
    GP_EXIT_OPEN = GP_ERR_OPEN,      /* input file missing / unreadable / not HDF5 */
    GP_EXIT_DATASET = GP_ERR_DATASET, /* dataset missing / ambiguous / unsupported */
    GP_EXIT_READ = GP_ERR_READ,      /* reading the data failed */
    GP_EXIT_WRITE = GP_ERR_WRITE,    /* the output could not be written */
    GP_EXIT_DEVICE = GP_ERR_DEVICE,  /* the requested backend is unavailable or a device
                                        call failed */
    GP_EXIT_VERIFY = GP_ERR_VERIFY   /* the self-check of the sorted result failed */
};

/* Which program a text is for. */
typedef enum gp_prog { GP_PROG_MPI = 0, GP_PROG_GEN = 1 } gp_prog;

/* The exit status of failure kind `kind` (0 for GP_ERR_NONE). A value that is no kind is
 * an internal error. Every kind maps to its own number: the library's MPI_Abort and
 * gpuprim_mpi's phases pass kinds on as statuses (gpuprim/error.h). Pure. */
int gp_exit_status(int kind);

/* What exit status `status` means for program p, in one line without a trailing period
 * (gpuprim_mpi's starts its row of the EXIT STATUS table in docs/gpuprim_mpi.md); NULL
 * for a status that p never exits with. Pure. */
const char *gp_exit_meaning(gp_prog p, int status);

/* Prints p's exit statuses for --help: "  S  MEANING" a line each, the meaning wrapped
 * below `width` columns with continuation lines indented by five spaces (gpuprim_mpi), or
 * one line "Exit status: 0 MEANING, 1 MEANING, ..." wrapped the same way (gpuprim_gen). */
void gp_exit_print(FILE *f, gp_prog p, int width);

#endif /* GP_EXITCODE_H */
