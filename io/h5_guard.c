/* h5_guard.c — the guard of a temporary output file (gpuprim/h5io.h: gp_h5_write): while it
 * exists, the signals that would end the process and exit() remove it first. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

/* While a temporary output file exists, every rank of the job guards it: SIGINT, SIGTERM,
 * SIGHUP (mpirun passes them on to some or all ranks; Slurm's scancel and time limit send
 * SIGTERM), SIGABRT, and SIGPIPE where it would kill the process (a rank left writing to the
 * closed pipe of an mpirun that died) remove it before the process dies of the signal as it
 * would have, and an exit() on the way out (a lost mpirun daemon) removes it too. The rank
 * whose unlink succeeds says so on stderr. */
static char g_tmp_path[GP_H5_TMPLEN];
static volatile sig_atomic_t g_tmp_armed;
static const int g_tmp_signals[5] = {SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGPIPE};
static struct sigaction g_tmp_old[5];
static int g_tmp_set[5]; /* whether gp_h5io_guard replaced the action of g_tmp_signals[i] */

static void tmp_unlink_now(void)
{
    static const char said[] = "gpuprim_mpi: error: stopped during the write; the temporary "
                               "output file was removed\n";
    if (g_tmp_armed && unlink(g_tmp_path) == 0) {
        ssize_t w = write(STDERR_FILENO, said, sizeof said - 1);
        (void)w; /* nothing more to do in a dying process */
    }
    g_tmp_armed = 0;
}

static void tmp_signal(int sig)
{
    tmp_unlink_now();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void tmp_atexit(void) { tmp_unlink_now(); }

void gp_h5io_guard(const char *tmp, int on)
{
    static int atexit_done;
    if (on) {
        snprintf(g_tmp_path, sizeof g_tmp_path, "%s", tmp);
        if (!atexit_done) atexit_done = atexit(tmp_atexit) == 0;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tmp_signal;
        sigemptyset(&sa.sa_mask);
        g_tmp_armed = 1;
        for (int i = 0; i < 5; i++) {
            struct sigaction cur;
            g_tmp_set[i] = 0;
            /* SIGPIPE only where it kills (MPI libraries may ignore or handle it) */
            if (g_tmp_signals[i] == SIGPIPE &&
                (sigaction(SIGPIPE, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL ||
                 (cur.sa_flags & SA_SIGINFO)))
                continue;
            g_tmp_set[i] = sigaction(g_tmp_signals[i], &sa, &g_tmp_old[i]) == 0;
        }
    } else {
        g_tmp_armed = 0;
        for (int i = 0; i < 5; i++)
            if (g_tmp_set[i]) sigaction(g_tmp_signals[i], &g_tmp_old[i], NULL);
        memset(g_tmp_set, 0, sizeof g_tmp_set);
    }
}

int gp_h5io_guarding(void) { return g_tmp_armed; }

const char *gp_h5io_guarded_path(void) { return g_tmp_path; }
