/* progress.c — the progress line of long phases (see progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    gp_progress_mode mode;
    FILE *out;
    double delay, period, t_start, t_phase;
    const char *phase;      /* current phase, NULL between phases */
    int64_t total, done;    /* the current phase's work (total 0: not known) */
    double t_line;          /* lines: when the current phase's last line was written */
    double lines_every;     /* lines: seconds between a phase's progress lines */
    const char *started;    /* lines: the name of the last start line written */
    int shown;              /* live: the current phase's line is on screen */
    int width;              /* live: characters of the line on screen (to blank a longer one) */
    int stop;
    int have_thread;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
} g = {.mode = GP_PROGRESS_OFF,
       .lines_every = 10.0,
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

/* The seconds a phase must have run before its time left is shown. */
#define ETA_AFTER_S 1.0

double gp_progress_eta(double elapsed, int64_t done, int64_t total, double min_elapsed)
{
    if (total <= 0) return -1.0;
    if (done >= total) return 0.0;
    if (done <= 0 || !(elapsed >= min_elapsed)) return -1.0;
    return elapsed * ((double)(total - done) / (double)done);
}

const char *gp_progress_duration(double s, char *buf, size_t len)
{
    if (!(s >= 0.0) || isinf(s)) snprintf(buf, len, "?");
    else if (s < 99.5) snprintf(buf, len, "%.0f s", s);
    else if (s < 5970.0) snprintf(buf, len, "%.0f min", s / 60.0);
    else if (s < 48.0 * 3600.0) snprintf(buf, len, "%.1f h", s / 3600.0);
    else if (s < 365.0 * 86400.0) snprintf(buf, len, "%.1f days", s / 86400.0);
    else snprintf(buf, len, "%.1f years", s / (365.25 * 86400.0));
    return buf;
}

/* ", 45 %, about 15 s left" of the current phase at time now into buf ("" without known
 * work; no time left on the final line or while unknown). Lock held. */
static const char *work_text(double now, int final, char *buf, size_t len)
{
    buf[0] = '\0';
    if (g.total <= 0) return buf;
    const int64_t done = g.done < g.total ? g.done : g.total;
    const int pct = (int)((double)done * 100.0 / (double)g.total);
    const double left = gp_progress_eta(now - g.t_phase, done, g.total, ETA_AFTER_S);
    char d[32];
    if (final || left < 0) snprintf(buf, len, ", %d %%", pct);
    else snprintf(buf, len, ", %d %%, about %s left", pct, gp_progress_duration(left, d, sizeof d));
    return buf;
}

/* live mode: rewrites the current line, blanking what a longer one before left (lock held) */
static void show(double now, int final)
{
    char w[96];
    int n = fprintf(g.out, "\rgpuprim_mpi: %s... %.1f s%s", g.phase, now - g.t_phase,
                    work_text(now, final, w, sizeof w));
    n = n > 0 ? n - 1 : 0; /* the '\r' takes no column */
    if (n < g.width) fprintf(g.out, "%*s", g.width - n, "");
    g.width = n > g.width ? n : g.width;
    fputs(final ? "\n" : "", g.out);
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
    g.started = NULL;
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
    g.t_phase = g.t_line = now;
    g.total = g.done = 0;
    g.shown = 0;
    g.width = 0;
    /* a phase right after one of its name (the distribution's steps) writes no new line */
    if (g.mode == GP_PROGRESS_LINES && !(g.started && name && strcmp(g.started, name) == 0)) {
        fprintf(g.out, "gpuprim_mpi: [%8.1f s] %s...\n", now - g.t_start, name);
        fflush(g.out);
    }
    g.started = name;
    pthread_mutex_unlock(&g.lock);
}

void gp_progress_done(void)
{
    if (g.mode == GP_PROGRESS_OFF) return;
    pthread_mutex_lock(&g.lock);
    if (g.mode == GP_PROGRESS_LIVE && g.phase && g.shown) show(mono(), 1);
    g.phase = NULL;
    g.total = g.done = 0;
    g.shown = 0;
    pthread_mutex_unlock(&g.lock);
}

int gp_progress_on(void) { return g.mode != GP_PROGRESS_OFF; }

void gp_progress_work(int64_t total)
{
    if (g.mode == GP_PROGRESS_OFF) return;
    pthread_mutex_lock(&g.lock);
    g.total = total > 0 ? total : 0;
    g.done = 0;
    pthread_mutex_unlock(&g.lock);
}

void gp_progress_add(int64_t units)
{
    if (g.mode == GP_PROGRESS_OFF) return;
    pthread_mutex_lock(&g.lock);
    g.done += units;
    const double now = mono();
    if (g.mode == GP_PROGRESS_LINES && g.phase && g.total > 0 && now - g.t_line >= g.lines_every) {
        char w[96];
        fprintf(g.out, "gpuprim_mpi: [%8.1f s] %s%s\n", now - g.t_start, g.phase,
                work_text(now, 0, w, sizeof w) + 1); /* without the ',' */
        fflush(g.out);
        g.t_line = now;
    }
    pthread_mutex_unlock(&g.lock);
}

void gp_progress_lines_every(double seconds)
{
    pthread_mutex_lock(&g.lock);
    g.lines_every = seconds > 0 ? seconds : 0;
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
