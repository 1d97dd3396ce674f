/* progress.c — the progress line of long phases (see progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    gp_progress_mode mode;
    FILE *out;
    double delay, period, t_start, t_phase;
    const char *phase;      /* current phase, NULL between phases */
    int shown;              /* live: the current phase's line is on screen */
    int stop;
    int have_thread;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
} g = {.mode = GP_PROGRESS_OFF,
       .lock = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

gp_progress_mode gp_progress_mode_for(int option, int quiet, int is_tty)
{
    if (option < 0) return GP_PROGRESS_OFF;
    if (option > 0) return is_tty ? GP_PROGRESS_LIVE : GP_PROGRESS_LINES;
    return is_tty && !quiet ? GP_PROGRESS_LIVE : GP_PROGRESS_OFF;
}

/* live mode: rewrites the current line (lock held) */
static void show(double now, int final)
{
    fprintf(g.out, "\rgpuprim_mpi: %s... %.1f s%s", g.phase, now - g.t_phase, final ? "\n" : "");
    fflush(g.out);
}

static void *ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g.lock);
    while (!g.stop) {
        double now = mono();
        if (g.phase && now - g.t_phase >= g.delay) {
            show(now, 0);
            g.shown = 1;
        }
        double next = now + g.period;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double wall = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + (next - now);
        ts.tv_sec = (time_t)wall;
        ts.tv_nsec = (long)((wall - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&g.wake, &g.lock, &ts);
    }
    pthread_mutex_unlock(&g.lock);
    return NULL;
}

int gp_progress_start(FILE *out, gp_progress_mode mode, double delay_s, double period_s)
{
    gp_progress_stop();
    pthread_mutex_lock(&g.lock);
    g.mode = mode;
    g.out = out;
    g.delay = delay_s > 0 ? delay_s : 0;
    g.period = period_s > 0.01 ? period_s : 0.01;
    g.t_start = mono();
    g.phase = NULL;
    g.shown = 0;
    g.stop = 0;
    int rc = 0;
    if (mode == GP_PROGRESS_LIVE) {
        if (pthread_create(&g.thread, NULL, ticker, NULL) == 0) {
            g.have_thread = 1;
        } else {
            g.mode = GP_PROGRESS_OFF;
            rc = -1;
        }
    }
    pthread_mutex_unlock(&g.lock);
    return rc;
}

void gp_progress_start_job(int rank, int option, int quiet)
{
    gp_progress_mode m = GP_PROGRESS_OFF;
    if (rank == 0) m = gp_progress_mode_for(option, quiet, isatty(fileno(stderr)));
    if (m != GP_PROGRESS_OFF) gp_progress_start(stderr, m, 2.0, 0.2);
}

void gp_progress_phase(const char *name)
{
    if (g.mode == GP_PROGRESS_OFF) return;
    pthread_mutex_lock(&g.lock);
    double now = mono();
    if (g.mode == GP_PROGRESS_LIVE && g.phase && g.shown) show(now, 1);
    g.phase = name;
    g.t_phase = now;
    g.shown = 0;
    if (g.mode == GP_PROGRESS_LINES) {
        fprintf(g.out, "gpuprim_mpi: [%8.1f s] %s...\n", now - g.t_start, name);
        fflush(g.out);
    }
    pthread_mutex_unlock(&g.lock);
}

void gp_progress_done(void)
{
    if (g.mode == GP_PROGRESS_OFF) return;
    pthread_mutex_lock(&g.lock);
    if (g.mode == GP_PROGRESS_LIVE && g.phase && g.shown) show(mono(), 1);
    g.phase = NULL;
    g.shown = 0;
    pthread_mutex_unlock(&g.lock);
}

void gp_progress_stop(void)
{
    if (g.mode == GP_PROGRESS_OFF) return;
    gp_progress_done();
    pthread_mutex_lock(&g.lock);
    g.stop = 1;
    pthread_cond_signal(&g.wake);
    const int join = g.have_thread;
    g.have_thread = 0;
    if (g.mode == GP_PROGRESS_LINES) {
        fprintf(g.out, "gpuprim_mpi: [%8.1f s] finished\n", mono() - g.t_start);
        fflush(g.out);
    }
    g.mode = GP_PROGRESS_OFF;
    pthread_mutex_unlock(&g.lock);
    if (join) pthread_join(g.thread, NULL);
}
