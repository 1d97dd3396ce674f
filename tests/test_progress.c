/* test_progress.c — the progress line (src/progress.c) written to a temporary file.
 * Checks the mode choice, the line-per-phase form, the live form ('\r' updates after the
 * delay, a final newline, nothing for short phases) and that "off" writes nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"
#include "test_check.h"

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* everything written to f so far */
static char *contents(FILE *f)
{
    static char buf[8192];
    fflush(f);
    long n = ftell(f);
    rewind(f);
    size_t got = fread(buf, 1, n > 0 && n < (long)sizeof buf ? (size_t)n : sizeof buf - 1, f);
    buf[got] = '\0';
    fseek(f, 0, SEEK_END);
    return buf;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

int main(void)
{
    /* mode choice: option > 0 forces, < 0 disables, 0 = terminal and not quiet */
    CHECK(gp_progress_mode_for(0, 0, 1) == GP_PROGRESS_LIVE, "auto on a terminal");
    CHECK(gp_progress_mode_for(0, 1, 1) == GP_PROGRESS_OFF, "auto, quiet");
    CHECK(gp_progress_mode_for(0, 0, 0) == GP_PROGRESS_OFF, "auto, not a terminal");
    CHECK(gp_progress_mode_for(1, 0, 0) == GP_PROGRESS_LINES, "--progress, not a terminal");
    CHECK(gp_progress_mode_for(1, 1, 1) == GP_PROGRESS_LIVE, "--progress --quiet, terminal");
    CHECK(gp_progress_mode_for(-1, 0, 1) == GP_PROGRESS_OFF, "--no-progress");

    /* lines: one per phase start, and the end */
    FILE *f = tmpfile();
    gp_progress_start(f, GP_PROGRESS_LINES, 2.0, 0.2);
    gp_progress_phase("read");
    gp_progress_done();
    gp_progress_phase("local sort");
    gp_progress_phase("rank exchange"); /* a new phase ends the previous one */
    gp_progress_stop();
    gp_progress_stop(); /* twice is fine */
    char *s = contents(f);
    CHECK(count(s, "\n") == 4, "lines: 4 lines, got:\n%s", s);
    CHECK(strstr(s, "gpuprim_mpi: [") && strstr(s, " s] read...\n") &&
              strstr(s, " s] local sort...\n") && strstr(s, " s] rank exchange...\n") &&
              strstr(s, " s] finished\n"),
          "lines: content:\n%s", s);
    CHECK(!strchr(s, '\r'), "lines: no carriage return");
    fclose(f);

    /* live: a long phase shows and ends with a newline, a short one shows nothing */
    f = tmpfile();
    gp_progress_start(f, GP_PROGRESS_LIVE, 0.05, 0.02);
    gp_progress_phase("short");
    gp_progress_done();
    gp_progress_phase("local sort");
    sleep_s(0.3);
    gp_progress_done();
    gp_progress_stop();
    s = contents(f);
    CHECK(!strstr(s, "short"), "live: a short phase was shown:\n%s", s);
    CHECK(count(s, "\rgpuprim_mpi: local sort... ") >= 2, "live: fewer than 2 updates:\n%s", s);
    CHECK(count(s, "\n") == 1 && s[strlen(s) - 1] == '\n', "live: not ended by one newline:\n%s", s);
    double last = -1;
    const char *p = strrchr(s, '\r');
    CHECK(p && sscanf(p, "\rgpuprim_mpi: local sort... %lf s", &last) == 1 && last >= 0.25 &&
              last < 5.0,
          "live: final time %g", last);
    fclose(f);

    /* off: nothing */
    f = tmpfile();
    gp_progress_start(f, GP_PROGRESS_OFF, 0.0, 0.02);
    gp_progress_phase("read");
    sleep_s(0.05);
    gp_progress_done();
    gp_progress_stop();
    s = contents(f);
    CHECK(s[0] == '\0', "off wrote: %s", s);
    fclose(f);

    return gp_check_done(NULL);
}
