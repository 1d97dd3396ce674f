/* test_progress.c — the progress line (src/progress.c) written to a temporary file.
 * Checks the mode choice, the line-per-phase form, the live form ('\r' updates after the
 * delay, a final newline, nothing for short phases), that "off" writes nothing, and for a
 * phase whose work is known the share done and the time left: the estimate's arithmetic
 * (gp_progress_eta, gp_progress_duration) against hand-worked values, the lines form's
 * periodic lines and the live line's percentage, time left and blanking. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
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

/* gp_progress_eta and gp_progress_duration against values worked by hand. */
static void eta_arithmetic(void)
{
    /* elapsed * (total - done) / done, once min_elapsed has passed */
    CHECK(gp_progress_eta(10.0, 25, 100, 1.0) == 30.0, "a quarter in 10 s: 30 s left");
    CHECK(gp_progress_eta(3.0, 3, 4, 1.0) == 1.0, "3 of 4 in 3 s: 1 s left");
    CHECK(gp_progress_eta(2.0, 1, (int64_t)1 << 53, 1.0) == 2.0 * (double)(((int64_t)1 << 53) - 1),
          "one point of 2^53 in 2 s");
    CHECK(gp_progress_eta(0.5, 50, 100, 1.0) == -1.0, "before min_elapsed: unknown");
    CHECK(gp_progress_eta(5.0, 0, 100, 1.0) == -1.0, "nothing done: unknown");
    CHECK(gp_progress_eta(5.0, 100, 100, 1.0) == 0.0 && gp_progress_eta(0.0, 120, 100, 1.0) == 0.0,
          "all done (or more): 0 left, also at once");
    CHECK(gp_progress_eta(5.0, 10, 0, 1.0) == -1.0 && gp_progress_eta(5.0, 10, -3, 1.0) == -1.0,
          "no work known: unknown");
    /* durations: one step, rounded */
    static const struct { double s; const char *want; } d[] = {
        {0.0, "0 s"}, {15.4, "15 s"}, {99.4, "99 s"}, {99.6, "2 min"}, {720.0, "12 min"},
        {5969.0, "99 min"}, {5970.0, "1.7 h"}, {3.4 * 3600, "3.4 h"}, {47.9 * 3600, "47.9 h"},
        {48.0 * 3600, "2.0 days"}, {364.0 * 86400, "364.0 days"}, {365.0 * 86400, "1.0 years"},
        {2.3 * 365.25 * 86400, "2.3 years"}, {-1.0, "?"}, {INFINITY, "?"}, {NAN, "?"}};
    for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
        char buf[32];
        gp_progress_duration(d[k].s, buf, sizeof buf);
        CHECK(strcmp(buf, d[k].want) == 0, "duration %g: '%s', want '%s'", d[k].s, buf, d[k].want);
    }
}

/* lines: a phase with known work writes "PHASE NN %, about T left" lines, at most one per
 * gp_progress_lines_every seconds; a phase without known work writes none */
static void work_lines(void)
{
    FILE *f = tmpfile();
    gp_progress_start(f, GP_PROGRESS_LINES, 2.0, 0.2);
    gp_progress_lines_every(0.15);
    gp_progress_phase("read");
    gp_progress_work(1000);
    for (int k = 0; k < 10; k++) {
        sleep_s(0.11);
        gp_progress_add(100);
    }
    gp_progress_phase("local sort"); /* no work known: no progress lines */
    sleep_s(0.2);
    gp_progress_add(5);
    gp_progress_stop();
    gp_progress_lines_every(10.0);
    char *s = contents(f);
    int lines = 0, last = -1, ordered = 1;
    for (const char *p = strstr(s, "] read "); p; p = strstr(p + 1, "] read ")) {
        int pct = -1;
        if (sscanf(p, "] read %d %%", &pct) == 1) {
            lines++;
            ordered &= pct > last && pct >= 10 && pct <= 100;
            last = pct;
        }
    }
    /* 10 adds 0.11 s apart (more under load), a line at most every 0.15 s: 2 to 6, or up
     * to one per add when the machine is slow */
    CHECK(lines >= 2 && lines <= 10 && ordered, "lines: %d percentage lines, rising:\n%s", lines,
          s);
    CHECK(strstr(s, " left\n") != NULL, "lines: a time left once 1 s has passed:\n%s", s);
    CHECK(!strstr(s, "local sort %") && !strstr(s, "] local sort ") && count(s, "local sort") == 1,
          "lines: nothing but the start of a phase without known work:\n%s", s);
    CHECK(count(s, "gpuprim_mpi: [") == count(s, "\n"), "lines: every line has the prefix:\n%s", s);
    fclose(f);
}

/* live: the line of a phase with known work shows the share and, after 1 s, the time left;
 * the final line has the share without a time left, and blanks the longer line before */
static void work_live(void)
{
    FILE *f = tmpfile();
    gp_progress_start(f, GP_PROGRESS_LIVE, 0.05, 0.05);
    gp_progress_phase("write");
    gp_progress_work(4000);
    gp_progress_add(1000);
    sleep_s(1.3);
    gp_progress_add(1000);
    sleep_s(0.4);
    gp_progress_done();
    gp_progress_stop();
    char *s = contents(f);
    CHECK(strstr(s, "\rgpuprim_mpi: write... ") && strstr(s, " s, 25 %"), "live: 25 %%:\n%s", s);
    CHECK(strstr(s, ", 50 %, about ") != NULL && strstr(s, " s left") != NULL,
          "live: 50 %% with a time left:\n%s", s);
    const char *fin = strrchr(s, '\r');
    double t = -1;
    int pct = -1;
    CHECK(fin && sscanf(fin, "\rgpuprim_mpi: write... %lf s, %d %%", &t, &pct) == 2 && pct == 50 &&
              !strstr(fin, "left") && s[strlen(s) - 1] == '\n',
          "live: the final line, 50 %% and no time left: %s", fin ? fin + 1 : "(none)");
    /* the final line is shorter than the one with the time left: blanked with spaces */
    const char *prev = fin;
    while (prev > s && *--prev != '\r') {}
    CHECK(fin && prev < fin && strlen(fin) - 1 >= (size_t)(fin - prev),
          "live: the final line covers the longer one before it");
    fclose(f);
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
    gp_progress_done();
    gp_progress_phase("distribution");
    gp_progress_done();
    gp_progress_phase("distribution"); /* the same name right after: no new line */
    gp_progress_stop();
    gp_progress_stop(); /* twice is fine */
    char *s = contents(f);
    CHECK(count(s, "\n") == 5 && count(s, "distribution...") == 1, "lines: 5 lines, got:\n%s",
          s);
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

    eta_arithmetic();
    work_lines();
    work_live();
    return gp_check_done(NULL);
}
