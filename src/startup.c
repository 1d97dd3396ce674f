/* startup.c — the process from main's entry to its exit (startup.h): the steps' clock and
 * trace, the early CUDA context, the fatal-signal line, the exit. */
#define _GNU_SOURCE /* CLOCK_BOOTTIME */
#include "startup.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "binding.h"
#include "cuda_init.h"

static const char *const g_step_names[GP_NSTEPS] = {
    "mpi_init", "local_rank", "device", "context", "first_alloc", "first_phase", "last_phase",
    "frees", "report", "mpi_finalize", "context_gone", "exit"};

const char *gp_step_name(int s) { return s >= 0 && s < GP_NSTEPS ? g_step_names[s] : NULL; }

/* The process's record: main's entry on two clocks, the knobs, the steps, the early thread. */
static struct {
    struct timespec t0;  /* main's entry, CLOCK_MONOTONIC */
    double boot0;        /* main's entry, CLOCK_BOOTTIME, seconds */
    gp_start_knobs knobs;
    double step[GP_NSTEPS]; /* seconds since main; < 0: not reached */
    /* the early CUDA context */
    pthread_t thread;
    int started, joined;
    int local_rank, device; /* its choice */
    int made;               /* 1: the thread made the context */
    int released;           /* 1: ... for a device or rank MPI did not confirm: destroyed */
    int cuda_used;          /* 1: some CUDA context was made in this process */
    int pml_hint;           /* 1: gp_mpi_fast_init asked for no cm PML (unless set before) */
    int nodelay;            /* sockets gp_mpi_fast_finalize set TCP_NODELAY on; -1: not run */
} g_proc;

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

void gp_proc_start(void)
{
    clock_gettime(CLOCK_MONOTONIC, &g_proc.t0);
    struct timespec b;
    g_proc.boot0 = clock_gettime(CLOCK_BOOTTIME, &b) == 0 ? (double)b.tv_sec + 1e-9 * b.tv_nsec
                                                           : -1.0;
    for (int s = 0; s < GP_NSTEPS; s++) g_proc.step[s] = -1.0;
    gp_bind_env env;
    gp_bind_env_from_process(&env);
    gp_bind_start_knobs(&env, &g_proc.knobs);
    g_proc.device = g_proc.local_rank = -1;
    g_proc.nodelay = -1;
}

double gp_proc_since_main(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return since(&g_proc.t0, &now);
}

void gp_proc_mark(gp_step s)
{
    if ((int)s >= 0 && s < GP_NSTEPS) g_proc.step[s] = gp_proc_since_main();
}

double gp_proc_step(gp_step s) { return (int)s >= 0 && s < GP_NSTEPS ? g_proc.step[s] : -1.0; }

/* ---- MPI_Init ---------------------------------------------------------------------------- */

void gp_mpi_fast_init(void)
{
    gp_bind_env env;
    gp_bind_env_from_process(&env);
    if (!g_proc.knobs.fast_mpi_init || !gp_bind_one_node(&env)) return;
    g_proc.pml_hint = setenv("OMPI_MCA_pml", "^cm", 0) == 0;
}

/* ---- MPI_Finalize ----------------------------------------------------------------------- */

/* 1 when fd is a TCP stream socket (IPv4 or IPv6). */
static int tcp_socket(int fd)
{
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return 0;
    struct sockaddr_storage a;
    len = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) return 0;
    return a.ss_family == AF_INET || a.ss_family == AF_INET6;
}

int gp_mpi_fast_finalize(void)
{
    if (!g_proc.knobs.fast_mpi_finalize) return 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int n = 0;
    const int own = dirfd(d);
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        char *end;
        const long fd = strtol(e->d_name, &end, 10);
        const int one = 1;
        if (end == e->d_name || *end || fd < 0 || fd == own || !tcp_socket((int)fd)) continue;
        if (setsockopt((int)fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0) n++;
    }
    closedir(d);
    g_proc.nodelay = n;
    return n;
}

/* ---- the early CUDA context ------------------------------------------------------------ */

/* The thread: the context of the chosen device (marks `context` when made). */
static void *early_context(void *arg)
{
    (void)arg;
    g_proc.made = gp_cuda_prepare(g_proc.device, NULL, 0) == 0;
    if (g_proc.made) gp_proc_mark(GP_STEP_CONTEXT);
    return NULL;
}

void gp_early_cuda_start(void)
{
    if (!g_proc.knobs.early_cuda || g_proc.started) return;
    gp_bind_env env;
    gp_bind_env_from_process(&env);
    const int lr = gp_bind_launcher_local_rank(&env);
    if (lr < 0) return;
    /* cuInit here, on the main thread: it reads the environment, which MPI_Init changes */
    const int visible = gp_cuda_device_count();
    gp_bind_choice choice;
    if (visible <= 0 || gp_bind_choose(lr, lr + 1, visible, &env, &choice) != 0 ||
        choice.device < 0)
        return;
    g_proc.local_rank = lr;
    g_proc.device = choice.device;
    gp_proc_mark(GP_STEP_DEVICE);
    g_proc.started = pthread_create(&g_proc.thread, NULL, early_context, NULL) == 0;
}

int gp_early_cuda_join(int *local_rank)
{
    if (g_proc.started && !g_proc.joined) {
        pthread_join(g_proc.thread, NULL);
        g_proc.joined = 1;
        if (g_proc.made) g_proc.cuda_used = 1; /* a context was made, even if released */
    }
    if (local_rank) *local_rank = g_proc.made ? g_proc.local_rank : -1;
    return g_proc.made ? g_proc.device : -1;
}

int gp_early_cuda_take(int device, int local_rank)
{
    int early_rank = -1;
    const int early_dev = gp_early_cuda_join(&early_rank);
    if (early_dev < 0) return 0;
    if (early_dev == device && early_rank == local_rank) return 1;
    gp_cuda_release(early_dev);
    g_proc.made = 0;
    g_proc.released = 1;
    return 0;
}

/* ---- the fatal-signal line ---------------------------------------------------------------- */

static const int g_fatal_sig[4] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
static const char *const g_fatal_name[4] = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"};
static struct sigaction g_fatal_old[4];
static int g_fatal_rank = -1;
static const char *volatile g_fatal_phase = "startup";
static volatile int g_final_status = -1; /* >= 0: in MPI_Finalize, the job's exit status */

void gp_proc_finalizing(int status) { g_final_status = status < 0 ? 1 : status; }

void gp_proc_phase(const char *name)
{
    if (name) g_fatal_phase = name;
}

/* Appends text, or the decimal digits of v, to line[*l, cap) (async-signal-safe). */
static void put_text(char *line, size_t *l, size_t cap, const char *text)
{
    while (*text && *l + 1 < cap) line[(*l)++] = *text++;
}

static void put_int(char *line, size_t *l, size_t cap, int v)
{
    char d[12];
    int k = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do d[k++] = (char)('0' + u % 10u); while ((u /= 10u) && k < 11);
    if (v < 0 && *l + 1 < cap) line[(*l)++] = '-';
    while (k > 0 && *l + 1 < cap) line[(*l)++] = d[--k];
}

/* Writes one line to stderr: "gpuprim_mpi: KINDrank R: WHAT N (NAME) TAIL MORE" (kind "" or
 * "notice: "), then num when it is >= 0 (async-signal-safe). */
static void signal_line(const char *kind, const char *what, int sig, int k, const char *tail,
                        const char *more, int num)
{
    char line[256];
    size_t l = 0;
    put_text(line, &l, sizeof line, "gpuprim_mpi: ");
    put_text(line, &l, sizeof line, kind);
    put_text(line, &l, sizeof line, "rank ");
    put_int(line, &l, sizeof line, g_fatal_rank);
    put_text(line, &l, sizeof line, what);
    put_int(line, &l, sizeof line, sig);
    put_text(line, &l, sizeof line, " (");
    put_text(line, &l, sizeof line, g_fatal_name[k]);
    put_text(line, &l, sizeof line, ") ");
    put_text(line, &l, sizeof line, tail);
    put_text(line, &l, sizeof line, more);
    if (num >= 0) put_int(line, &l, sizeof line, num);
    line[l++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, l);
    (void)w;
}

static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    int k = 0;
    while (k < 3 && g_fatal_sig[k] != sig) k++;
    if (g_final_status >= 0) { /* inside MPI_Finalize, the job over (gp_proc_finalizing) */
        signal_line("notice: ", ": signal ", sig, k, "inside MPI_Finalize, after the job ended; ",
                    "exit status ", g_final_status);
        _exit(g_final_status);
    }
    signal_line("", ": fatal signal ", sig, k, "in ", g_fatal_phase, -1);
    sigaction(sig, &g_fatal_old[k], NULL);
    if (info && info->si_code <= 0) raise(sig); /* sent, not a fault: deliver it again */
}

void gp_proc_fatal_install(int rank)
{
    g_fatal_rank = rank;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 4; k++) sigaction(g_fatal_sig[k], &sa, &g_fatal_old[k]);
}

/* ---- the end --------------------------------------------------------------------------- */

int gp_proc_leave_memory(const gp_backend *be)
{
    return be && !(be->caps & GP_CAP_HOST_MEMORY) && !g_proc.knobs.free_at_exit;
}

int gp_procstat_starttime(const char *stat, unsigned long long *ticks)
{
    const char *p = stat ? strrchr(stat, ')') : NULL;
    if (!p) return -1;
    p++;
    /* fields 3 (state) to 21 come before starttime, field 22 */
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ') p++;
        if (!*p) return -1;
        if (field == 22) {
            char *end;
            const unsigned long long v = strtoull(p, &end, 10);
            if (end == p || (*end && *end != ' ' && *end != '\n')) return -1;
            *ticks = v;
            return 0;
        }
        while (*p && *p != ' ') p++;
    }
    return -1;
}

/* Seconds from the process's start to main's entry, or -1 when unknown. */
static double pre_main(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1.0;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    unsigned long long ticks;
    const long hz = sysconf(_SC_CLK_TCK);
    if (g_proc.boot0 < 0 || hz <= 0 || gp_procstat_starttime(buf, &ticks) != 0) return -1.0;
    return g_proc.boot0 - (double)ticks / (double)hz;
}

/* This rank's trace line, written at once: "gpuprim_mpi: trace: rank R/P: pre_main=MS
 * mpi_init=MS ... exit=MS early_cuda=WORD one_node_pml=^cm|- nodelay=N" (milliseconds since
 * main's entry; "-" for a step not reached; early_cuda: off, none (not started), made,
 * released (made, then destroyed: MPI chose another device or rank) or failed; nodelay: the
 * sockets gp_mpi_fast_finalize set, -1 when it did not run). */
static void print_trace(int rank, int size)
{
    char line[1024];
    size_t l = (size_t)snprintf(line, sizeof line, "gpuprim_mpi: trace: rank %d/%d:", rank, size);
    const double pm = pre_main();
    if (pm >= 0) l += (size_t)snprintf(line + l, sizeof line - l, " pre_main=%.1f", pm * 1e3);
    else l += (size_t)snprintf(line + l, sizeof line - l, " pre_main=-");
    for (int s = 0; s < GP_NSTEPS && l < sizeof line; s++) {
        if (g_proc.step[s] >= 0)
            l += (size_t)snprintf(line + l, sizeof line - l, " %s=%.3f", g_step_names[s],
                                  g_proc.step[s] * 1e3);
        else
            l += (size_t)snprintf(line + l, sizeof line - l, " %s=-", g_step_names[s]);
    }
    const char *early = !g_proc.knobs.early_cuda ? "off" : !g_proc.started ? "none"
                        : g_proc.released ? "released" : g_proc.made ? "made" : "failed";
    if (l < sizeof line)
        snprintf(line + l, sizeof line - l, " early_cuda=%s one_node_pml=%s nodelay=%d\n",
                 early, g_proc.pml_hint ? "^cm" : "-", g_proc.nodelay);
    fputs(line, stderr);
    fflush(stderr);
}

int gp_proc_exit(int rank, int size, const gp_backend *be, int status)
{
    gp_early_cuda_join(NULL);
    const int cuda = be && !(be->caps & GP_CAP_HOST_MEMORY);
    if (cuda) g_proc.cuda_used = 1;
    if (g_proc.knobs.free_at_exit && cuda && gp_cuda_teardown() == 0)
        gp_proc_mark(GP_STEP_CONTEXT_GONE);
    gp_proc_mark(GP_STEP_EXIT);
    if (g_proc.knobs.trace) print_trace(rank, size);
    if (g_proc.cuda_used && !g_proc.knobs.free_at_exit) {
        fflush(NULL);
        _exit(status);
    }
    return status;
}
