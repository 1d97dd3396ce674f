/* progress.h — a progress line on stderr for long phases (rank 0 only).
 *
 * Two forms:
 *   live  (stderr is a terminal): once a phase has run longer than a delay (2 s in
 *         gpuprim_mpi), one line "gpuprim_mpi: local sort... 12.3 s" rewritten in place
 *         with '\r' a few times a second by a helper thread, ended with a newline when the
 *         phase ends;
 *   lines (--progress with stderr not a terminal, e.g. a Slurm log): one line per phase
 *         start, "gpuprim_mpi: [   1.2 s] local sort...", the time counted from
 *         gp_progress_start, and a last "[  14.0 s] finished" line at gp_progress_stop.
 * A phase whose work is known in advance declares it (gp_progress_work: bytes of a read or
 * a write, points of --function, chunks of a chunked statistics pass) and counts it as it
 * goes (gp_progress_add); its line then adds the share done and the time left, "read...
 * 12.3 s, 45 %, about 15 s left" (live), and in the lines form a line "gpuprim_mpi: [  22.3
 * s] read 45 %, about 15 s left" at most every 10 s. The time left is the elapsed time
 * scaled by the work left (gp_progress_eta), shown once the phase has run 1 s. The work is
 * rank 0's own part: the ranks' parts are equal to within one element or piece.
 * The helper thread only writes to the stream; it makes no MPI calls. Every function is a
 * no-op until gp_progress_start has chosen a mode other than GP_PROGRESS_OFF.
 */
#ifndef GP_PROGRESS_H
#define GP_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum gp_progress_mode {
    GP_PROGRESS_OFF = 0,
    GP_PROGRESS_LINES = 1,   /* a line per phase start */
    GP_PROGRESS_LIVE = 2     /* one line updated with '\r' for phases longer than the delay */
} gp_progress_mode;

/* The mode for an option value and a stream: option > 0 (--progress): live on a terminal,
 * lines otherwise; option == 0 (default): live on a terminal unless quiet, else off;
 * option < 0 (--no-progress): off. */
gp_progress_mode gp_progress_mode_for(int option, int quiet, int is_tty);

/* Starts reporting to `out` in `mode` (live: phases show after delay_s seconds, updated
 * every period_s seconds). Returns 0, or -1 when the helper thread could not start (the
 * mode is then off). Call once, from one thread. */
int gp_progress_start(FILE *out, gp_progress_mode mode, double delay_s, double period_s);

/* gp_progress_start for gpuprim_mpi: rank 0 reports to stderr with the mode of
 * gp_progress_mode_for(option, quiet, isatty(stderr)), a 2 s delay and 0.2 s updates;
 * other ranks stay off. */
void gp_progress_start_job(int rank, int option, int quiet);

/* A phase starts; `name` must stay valid until gp_progress_done (a string literal). In the
 * lines form, a phase that follows one of the same name (the distribution's steps, which
 * share their time row's name) writes no new start line. */
void gp_progress_phase(const char *name);

/* The current phase has ended (live mode: its line, if shown, gets its final time). */
void gp_progress_done(void);

/* Ends reporting (joins the helper thread). Safe to call more than once. */
void gp_progress_stop(void);

/* 1 when this process reports progress (a mode other than off), else 0: a phase may then
 * cut its work into pieces whose progress can be counted. */
int gp_progress_on(void);

/* The current phase's work is `total` units (> 0; none counted yet). */
void gp_progress_work(int64_t total);

/* `units` more of the current phase's work are done. Thread-safe. In the lines form it may
 * write a line (at most one per gp_progress_lines_every seconds, after the first of them). */
void gp_progress_add(int64_t units);

/* Seconds between the lines form's progress lines of one phase (default 10). */
void gp_progress_lines_every(double seconds);

/* The seconds left of a phase that has done `done` of `total` units in `elapsed` seconds,
 * at the rate so far: elapsed * (total - done) / done; 0 when done >= total; -1 (unknown)
 * while elapsed < min_elapsed or done <= 0, or for total <= 0. Pure. */
double gp_progress_eta(double elapsed, int64_t done, int64_t total, double min_elapsed);

/* A duration for people into buf: "45 s", "12 min", "3.4 h", "2.1 days", "2.3 years" (one
 * significant step: seconds below 100 s, minutes below 100 min, hours below 48 h, days below
 * 365, years above; "?" for a negative or non-finite s). Returns buf. Pure. */
const char *gp_progress_duration(double s, char *buf, size_t len);

#endif /* GP_PROGRESS_H */
