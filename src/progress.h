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
 * The helper thread only writes to the stream; it makes no MPI calls. Every function is a
 * no-op until gp_progress_start has chosen a mode other than GP_PROGRESS_OFF.
 */
#ifndef GP_PROGRESS_H
#define GP_PROGRESS_H

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

/* A phase starts; `name` must stay valid until gp_progress_done (a string literal). */
void gp_progress_phase(const char *name);

/* The current phase has ended (live mode: its line, if shown, gets its final time). */
void gp_progress_done(void);

/* Ends reporting (joins the helper thread). Safe to call more than once. */
void gp_progress_stop(void);

#endif /* GP_PROGRESS_H */
