/* main.c — gpuprim_mpi: GPU data-parallel primitives over an HDF5 dataset on many ranks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "h5io.h"
#include "pipeline.h"
#include "progress.h"

int main(int argc, char **argv)
{
    gp_h5_mpi_io_env(); /* before MPI_Init: no crash on long file paths (h5io.h) */
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpuprim_mpi: error: MPI_Init failed\n");
        return GP_EXIT_FAIL;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    /* errors come back as codes; the job decides what to do with them */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(comm, &rank);

    char msg[2048] = "";
    gp_options o;
    int rc = gp_parse_options(argc, argv, &o, rank == 0, msg, sizeof msg);
    if (rc != 0) {
        if (rc > 0 && rank == 0) fprintf(stderr, "gpuprim_mpi: error: %s\n", msg);
        MPI_Finalize();
        return rc > 0 ? rc : 0;
    }

    const gp_backend *be = NULL;
    gp_binding bind;
    gp_result res;
    memset(&res, 0, sizeof res);
    /* an output that cannot be written is an error before the work, not after it */
    rc = gp_check_outputs(comm, &o, msg, sizeof msg);
    if (rc == 0) rc = gp_select_backend(comm, &o, &be, &bind, &res, msg, sizeof msg);
    if (rc == 0 && o.verbose) gp_report_binding(comm, &bind);
    if (rc == 0) gp_progress_start_job(rank, o.progress, o.quiet);
    if (rc == 0)
        rc = o.function_mode ? gp_run_function(comm, &o, be, &res, msg, sizeof msg)
                             : gp_run_file(comm, &o, be, &res, msg, sizeof msg);
    gp_progress_stop();

    if (rank == 0) {
        if (rc == 0 || rc == GP_EXIT_VERIFY) gp_report_print(&res, &o);
        if (rc == 0 && o.json && gp_report_json(&res, &o, o.json) != 0) {
            snprintf(msg, sizeof msg, "%s: cannot write the JSON report (%s)", o.json,
                     strerror(errno));
            rc = GP_EXIT_WRITE;
        }
        if (rc != 0) fprintf(stderr, "gpuprim_mpi: error: %s\n", msg);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    MPI_Finalize();
    return rc;
}
