/* main.c — gpuprim_mpi: GPU data-parallel primitives over an HDF5 dataset on many ranks. The
 * process from main's entry to its exit: the environment set before MPI_Init and the CUDA
 * context made while it runs (startup.h), the options, the outputs' checks, the backend, the
 * job, the outputs published with the report, MPI_Finalize, and an exit that leaves the
 * device memory and the context to the kernel. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"   /* GPUPRIM_FAULT=R:finalize:segv */
#include "gp_path.h" /* gp_remove_tmp */
#include "gpuprim/h5io.h"
#include "job.h"
#include "progress.h"
#include "startup.h"

/* Rank 0, after a successful run: the --out file (left under its temporary name by
 * gp_run_file) and the --json report appear both or neither. The report is written to its
 * temporary name first, then --out is renamed to its name, then the report; a failure at
 * any step removes both temporary files, and a failed rename of the report also the --out
 * file renamed just before. Returns 0 or GP_EXIT_WRITE with msg set. */
static int publish_outputs(const gp_result *res, const gp_options *o, char *msg, size_t msglen)
{
    char jtmp[1100] = "";
    if (o->json && gp_report_json_stage(res, o, o->json, jtmp, sizeof jtmp) != 0) {
        snprintf(msg, msglen, "%s: cannot write the JSON report (%s)", o->json, strerror(errno));
        gp_h5_discard(msg, msglen);
        return GP_EXIT_WRITE;
    }
    if (gp_h5_publish(msg, msglen) != 0) {
        if (jtmp[0]) gp_remove_tmp(jtmp, msg, msglen);
        return GP_EXIT_WRITE;
    }
    if (jtmp[0] && rename(jtmp, o->json) != 0) {
        snprintf(msg, msglen, "%s: cannot write the JSON report (%s)", o->json, strerror(errno));
        gp_remove_tmp(jtmp, msg, msglen);
        /* a successful run with --out has just published it: undo that */
        if (o->out) {
            size_t l = strlen(msg);
            if (unlink(o->out) == 0)
                snprintf(msg + l, msglen - l, "; removed %s", o->out);
            else
                snprintf(msg + l, msglen - l, "; %s is left (cannot remove it: %s)", o->out,
                         strerror(errno));
        }
        return GP_EXIT_WRITE;
    }
    return 0;
}

/* Before MPI_Init, from the options parsed silently (after MPI_Init they are parsed again,
 * and rank 0 reports what is wrong with them): the file job has the CUDA driver load every
 * kernel with the context (gp_cuda_load_eagerly), the function job only the one it launches,
 * at its launch (CUDA's default); Open MPI's start on one node (gp_mpi_fast_init); and when
 * the job may use CUDA, the early CUDA context (startup.h). */
static void before_mpi_init(int argc, char **argv)
{
    gp_options o;
    char msg[256];
    const int ok = gp_parse_options(argc, argv, &o, 0, msg, sizeof msg) == 0;
    if (!ok || !o.function_mode) gp_cuda_load_eagerly(); /* no loads inside a phase (kernels.h) */
    gp_mpi_fast_init();
    if (ok && o.backend != GP_BACKEND_CPU) gp_early_cuda_start();
}

int main(int argc, char **argv)
{
    gp_proc_start(); /* main's entry: the zero of the startup row and of the trace */
    gp_h5_mpi_io_env(); /* before MPI_Init: no crash on long file paths (h5io.h) */
    gp_h5_malloc_tune(); /* chunk buffers of HDF5's filters reused, not mapped afresh */
    before_mpi_init(argc, argv);
    /* funneled: the early thread (and the CUDA runtime's own) never call MPI */
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "gpuprim_mpi: error: MPI_Init failed\n");
        return gp_proc_exit(0, 1, NULL, gp_exit_status(GP_EXIT_FAIL));
    }
    gp_proc_mark(GP_STEP_MPI_INIT);
    MPI_Comm comm = MPI_COMM_WORLD;
    /* errors come back as codes; the job decides what to do with them */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    gp_proc_fatal_install(rank); /* after MPI_Init: its handler runs after our line */

    char msg[2048] = "";
    gp_fault fault;
    gp_options o;
    int rc = gp_parse_options(argc, argv, &o, rank == 0, msg, sizeof msg);
    if (rc != 0) {
        if (rc > 0 && rank == 0) fprintf(stderr, "gpuprim_mpi: error: %s\n", msg);
        gp_mpi_fast_finalize();
        fflush(NULL);
        gp_proc_finalizing(rc > 0 ? gp_exit_status(rc) : 0);
        MPI_Finalize();
        return gp_proc_exit(rank, size, NULL, rc > 0 ? gp_exit_status(rc) : 0);
    }

    const gp_backend *be = NULL;
    gp_binding bind;
    gp_result res;
    memset(&res, 0, sizeof res);
    /* an output that cannot be written is an error before the work, not after it */
    rc = gp_check_outputs(comm, &o, msg, sizeof msg);
    if (rc == 0) rc = gp_select_backend(comm, &o, &be, &bind, &res.run, msg, sizeof msg);
    if (rc == 0 && o.verbose && !o.quiet) gp_report_binding(comm, &bind); /* -q: no stdout */
    if (rc == 0) gp_progress_start_job(rank, o.progress, o.quiet);
    if (rc == 0)
        rc = o.function_mode ? gp_run_function(comm, &o, be, &res, msg, sizeof msg)
                             : gp_run_file(comm, &o, be, &res, msg, sizeof msg);
    gp_progress_stop();

    if (rank == 0) {
        const int ran = rc;
        /* teardown: from the last phase's end to the report (startup.h, docs/output.md) */
        const double last = gp_proc_step(GP_STEP_LAST_PHASE);
        res.run.t[GP_PH_TEARDOWN] = last >= 0 ? gp_proc_since_main() - last : 0.0;
        gp_proc_mark(GP_STEP_REPORT);
        if (rc == 0) rc = publish_outputs(&res, &o, msg, sizeof msg);
        else gp_h5_discard(msg, sizeof msg); /* nothing is staged after a failed run */
        /* the summary after the outputs are in place: it never says "written to X" for an
         * --out that a failed publish removed */
        if (rc == 0 || ran == GP_EXIT_VERIFY) gp_report_print(&res, &o);
        if (rc != 0) fprintf(stderr, "gpuprim_mpi: error: %s\n", msg);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    gp_mpi_fast_finalize(); /* GPUPRIM_FAST_MPI_FINALIZE=1 only (startup.h) */
    fflush(NULL);           /* the report is out before MPI_Finalize, whatever happens there */
    gp_proc_finalizing(gp_exit_status(rc));
    MPI_Finalize();
    gp_proc_mark(GP_STEP_MPI_FINALIZE);
    gp_fault_from_env(&fault); /* the test of a fault at the end of MPI_Finalize */
    gp_fault_fire(&fault, rank, "finalize");
    /* the memory the job left, and the CUDA context, go with the process (startup.h) */
    return gp_proc_exit(rank, size, be, gp_exit_status(rc));
}
