/* startup.h — gpuprim_mpi's process from main's entry to its exit: the steps' clock, the
 * start-up trace (GPUPRIM_TRACE_STARTUP=1), a faster MPI_Init on one node, the CUDA context
 * made on a thread while MPI_Init runs, and what the program leaves to the process's exit.
 *
 * The steps, each a time in seconds since main's entry on the monotonic clock, recorded by
 * whoever reaches it (main.c, setup.c, job.c), printed by gp_proc_exit on every rank when the
 * trace is on:
 *
 *   pre_main      the process's start (/proc/self/stat) to main: exec, the loader, the
 *                 libraries' constructors (10 ms resolution; shown as a positive figure)
 *   mpi_init      MPI_Init returned
 *   local_rank    the node-local rank known from MPI (MPI_COMM_TYPE_SHARED)
 *   device        the GPU chosen (before MPI_Init on the early path)
 *   context       its CUDA context made (with CUDA_MODULE_LOADING=EAGER, gpuprim's default,
 *                 every kernel loaded in it too)
 *   first_alloc   the job's buffers allocated (the end of the alloc phase)
 *   first_phase   the job's first phase starts (the end of the `startup` row)
 *   last_phase    the job's last phase ends (the start of the `teardown` row)
 *   frees         the job's buffers released (the memory left to the exit is not freed)
 *   report        rank 0: the report composed (the end of the `teardown` row)
 *   mpi_finalize  MPI_Finalize returned
 *   context_gone  the CUDA context destroyed (GPUPRIM_FREE_AT_EXIT=1 only)
 *   exit          just before the process exits
 *
 * The early CUDA context (GPUPRIM_EARLY_CUDA, on by default): where the launcher's
 * environment gives the node-local rank (gp_bind_launcher_local_rank), the main thread counts
 * the devices (cuInit, which reads the environment) and picks the device with the rule of
 * binding.h, then a thread creates its context while the main thread runs MPI_Init (which
 * sets environment variables: no thread of ours reads them meanwhile). gp_select_backend
 * takes it when MPI's node-local rank picks the same device; otherwise it destroys it and
 * goes the usual way. */
#ifndef GP_STARTUP_H
#define GP_STARTUP_H

#include "gpuprim/kernels.h"

typedef enum gp_step {
    GP_STEP_MPI_INIT = 0,
    GP_STEP_LOCAL_RANK,
    GP_STEP_DEVICE,
    GP_STEP_CONTEXT,
    GP_STEP_FIRST_ALLOC,
    GP_STEP_FIRST_PHASE,
    GP_STEP_LAST_PHASE,
    GP_STEP_FREES,
    GP_STEP_REPORT,
    GP_STEP_MPI_FINALIZE,
    GP_STEP_CONTEXT_GONE,
    GP_STEP_EXIT,
    GP_NSTEPS
} gp_step;

/* The trace's name of step s ("mpi_init"); NULL out of range. Pure. */
const char *gp_step_name(int s);

/* Main's first call: the clock's zero, the knobs (binding.h: gp_bind_start_knobs). */
void gp_proc_start(void);

/* Seconds since main's entry (monotonic clock). */
double gp_proc_since_main(void);

/* Records step s now (a later mark of the same step replaces it). Safe from the early
 * thread for the steps it owns (device, context) until gp_early_cuda_join. */
void gp_proc_mark(gp_step s);

/* Seconds since main's entry at which step s was recorded; -1 when it was not. */
double gp_proc_step(gp_step s);

/* Before MPI_Init: where the launcher says that every rank runs on this node
 * (gp_bind_one_node), asks Open MPI for no cm PML (OMPI_MCA_pml=^cm, unless the environment
 * already chooses a PML; other MPIs ignore it), unless GPUPRIM_FAST_MPI_INIT=0. The cm PML
 * drives the network MTLs (PSM, PSM2, OFI), which a job on one node does not need: ob1 or UCX
 * carry its messages. Probing them took about 200 ms of MPI_Init's 230 on the 2-core test
 * machine (Debian's Open MPI 4.1.4, no such network), 20-50 ms without. */
void gp_mpi_fast_init(void);

/* Just before MPI_Finalize, with GPUPRIM_FAST_MPI_FINALIZE=1 only: TCP_NODELAY on every TCP
 * socket of the process (it changes when small writes leave, never what arrives). The one
 * that matters is the PMIx client's connection to the launcher (Open MPI's mpirun or orted):
 * MPI_Finalize's last request to it leaves in two writes, and with Nagle's algorithm on the
 * second waits for the launcher's delayed acknowledgement of the first, 40 ms on Linux.
 * Measured on the 2-core test machine (Debian's Open MPI 4.1.4, PMIx 2), MPI_Init then
 * MPI_Finalize of an empty program: MPI_Finalize took 43-53 ms at np 1 and 4; with this, 2.4-2.7
 * ms at np 1 and 5.7-12.4 ms at np 4. Off by default: the faster end made a race inside Open
 * MPI's MPI_Finalize far more frequent on that machine (its progress thread calls into the
 * PMIx component after it was unloaded: 3 faults in 10 runs of the e2e test at np 3 and 4,
 * none in 24 without; gp_proc_finalizing ends such a fault cleanly). Returns how many
 * sockets it set (the trace shows it). */
int gp_mpi_fast_finalize(void);

/* Before MPI_Init, when the job may use CUDA (--backend auto or cuda): the early CUDA
 * context as above, unless GPUPRIM_EARLY_CUDA=0, no launcher variable gives the node-local
 * rank, or no device is visible. Any thread it starts is joined by gp_early_cuda_join. */
void gp_early_cuda_start(void);

/* Waits for the early thread (at once when none ran; any number of calls). Returns the
 * device whose context it made, with *local_rank (may be NULL) the node-local rank it chose
 * it for, or -1 when it made none. */
int gp_early_cuda_join(int *local_rank);

/* After MPI's node-local rank chose `device` for `local_rank` (gp_select_backend): joins the
 * early thread; 1 when it made the context of that device for that rank (gp_backend_cuda
 * then finds it made); a context made for another device or rank is destroyed
 * (gp_cuda_release; the trace says "released") and 0 returned, as when none was made. Call
 * it on the thread that will use the backend. */
int gp_early_cuda_take(int device, int local_rank);

/* 1 when the job leaves its device memory and pinned host memory to the process's exit
 * instead of freeing them: a backend whose memory is not host memory (CUDA), unless
 * GPUPRIM_FREE_AT_EXIT=1. The CPU backend's memory is always freed (its frees cost what the
 * exit's would, and leak checkers stay quiet). */
int gp_proc_leave_memory(const gp_backend *be);

/* The process's end, after MPI_Finalize, with its exit status: joins the early thread;
 * with GPUPRIM_FREE_AT_EXIT=1 and a CUDA backend (be) destroys the context; prints the trace
 * line of this rank (rank of size) when the trace is on; then, where the CUDA runtime was
 * used and the memory is left to the exit, flushes stdio and ends the process at once
 * (_exit: the runtime's exit handlers, which unload every module and destroy the context
 * one by one, are skipped; the kernel frees it all). Otherwise returns status for main to
 * return. */
int gp_proc_exit(int rank, int size, const gp_backend *be, int status);

/* After MPI_Init: a fault of this process (SIGSEGV, SIGBUS, SIGILL, SIGFPE) first writes one
 * line, "gpuprim_mpi: rank R: fatal signal N (NAME) in PHASE", with the phase named by the
 * last gp_proc_phase ("startup" before the first), then the handler that was there before
 * (Open MPI's, which prints a backtrace, or the default, which dumps core) takes the signal:
 * the faulting instruction runs again under it; a signal sent by another process is raised
 * again. */
void gp_proc_fatal_install(int rank);

/* Just before MPI_Finalize, the job's outputs in place and its exit status agreed: from now
 * on such a fault, in any thread, ends this process at once with `status` (_exit), after the
 * line "gpuprim_mpi: notice: rank R: signal N (NAME) inside MPI_Finalize, after the job
 * ended; exit status S". Open MPI 4.1's MPI_Finalize has a race of this kind: its progress
 * thread may run an event handler of its PMIx component after the component was unloaded
 * (seen on the 2-core test machine with Debian's Open MPI 4.1.4: the progress thread in
 * event_base_loop jumping into the unmapped mca_pmix_ext3x.so while the main thread joined it
 * in orte_finalize); nothing of the job is lost by then. */
void gp_proc_finalizing(int status);

/* The phase named by the fatal-signal line from now on (a string that lives as long as the
 * process; NULL keeps the last one). */
void gp_proc_phase(const char *name);

/* Process start time from the text of /proc/self/stat: field 22 (starttime, clock ticks
 * since boot), read after the last ')' so that a command name with spaces or parentheses
 * does not shift the fields. Returns 0 with *ticks set, or -1. Pure. */
int gp_procstat_starttime(const char *stat, unsigned long long *ticks);

#endif /* GP_STARTUP_H */
