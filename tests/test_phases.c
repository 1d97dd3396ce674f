/* test_phases.c — the job's phase vocabulary (src/phases.c): the time rows' labels in the
 * report's order (the summary's table, the JSON's times_ms keys; the job's phases and total,
 * then startup and teardown), the progress lines and the GPUPRIM_FAULT names exactly as users and the tests know them, and the table's shape: every
 * word counts towards a labelled row, only rows carry a label, no two words share a fault
 * name, and the look-ups answer NULL out of range. No MPI. Exit 0 when every check passes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "phases.h"
#include "test_check.h"

/* a and b the same string, or both NULL */
static int same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static void test_rows(void)
{
    static const char *const rows[GP_NPHASES] = {
        "alloc", "read", "upload", "reduce", "integrate", "scan", "local sort",
        "rank exchange", "verify", "distribution", "write", "total", "startup", "teardown"};
    for (int i = 0; i < GP_NPHASES; i++) {
        CHECK(same(gp_phase_label(i), rows[i]), "row %d: '%s', want '%s'", i,
              gp_phase_label(i) ? gp_phase_label(i) : "(null)", rows[i]);
        CHECK(gp_phase_words[i].row == (gp_phase_id)i, "row %d counts towards itself", i);
    }
    CHECK(GP_PH_TOTAL == 11, "total is row 11, after the job's phases");
    CHECK(GP_PH_STARTUP == GP_NPHASES - 2 && GP_PH_TEARDOWN == GP_NPHASES - 1,
          "startup and teardown, outside the job, are the last rows");
}

static void test_words(void)
{
    /* word, its row's label, its progress line, its fault name */
    static const struct {
        gp_phase_id id;
        const char *label, *progress, *fault;
    } want[] = {
        {GP_PH_ALLOC, "alloc", NULL, "alloc"},
        {GP_PH_READ, "read", "read", "read"},
        {GP_PH_UPLOAD, "upload", "upload", NULL},
        {GP_PH_REDUCE, "reduce", "reduce", "reduce"},
        {GP_PH_INTEGRATE, "integrate", "integrate", NULL},
        {GP_PH_SCAN, "scan", "scan", "scan"},
        {GP_PH_SORT, "local sort", "local sort", "sort"},
        {GP_PH_EXCHANGE, "rank exchange", "rank exchange", "exchange"},
        {GP_PH_VERIFY, "verify", "verify", NULL},
        {GP_PH_DIST, "distribution", NULL, NULL},
        {GP_PH_WRITE, "write", "write", "write"},
        {GP_PH_TOTAL, "total", NULL, NULL},
        {GP_PH_STARTUP, "startup", NULL, NULL},
        {GP_PH_TEARDOWN, "teardown", NULL, NULL},
        {GP_PH_OPEN, "read", NULL, NULL},
        {GP_PH_PLAN, "read", NULL, NULL},
        {GP_PH_COMBINE, "reduce", NULL, NULL},
        {GP_PH_XSETUP, "alloc", NULL, "xsetup"},
        {GP_PH_XSTEP, "rank exchange", NULL, "xstep"},
        {GP_PH_PREAD, "read", NULL, "pread"},
        {GP_PH_PWRITE, "write", NULL, "pwrite"},
        {GP_PH_TMPFILE, "write", NULL, "tmpfile"},
        {GP_PH_RUNS, "local sort", "local sort (runs)", "runs"},
        {GP_PH_MERGE, "local sort", "merge", "merge"},
        {GP_PH_SPACE, "read", NULL, "space"},
        {GP_PH_HIST, "distribution", "distribution", "hist"},
        {GP_PH_QUANT, "distribution", "distribution", "quantiles"},
        {GP_PH_DISTINCT, "distribution", "distribution", "distinct"},
    };
    const int n = (int)(sizeof want / sizeof want[0]);
    CHECK(n == GP_PH_WORDS, "%d words listed here, %d in phases.h", n, (int)GP_PH_WORDS);
    for (int k = 0; k < n; k++) {
        const int id = (int)want[k].id;
        CHECK(same(gp_phase_label(id), want[k].label), "word %d: row label", id);
        CHECK(same(gp_phase_progress(id), want[k].progress), "word %d: progress line", id);
        CHECK(same(gp_phase_fault(id), want[k].fault), "word %d: fault name", id);
    }
}

static void test_shape(void)
{
    for (int i = 0; i < GP_PH_WORDS; i++) {
        const gp_phase_word *w = &gp_phase_words[i];
        CHECK((int)w->row >= 0 && (int)w->row < GP_NPHASES, "word %d counts towards a row", i);
        CHECK((i < GP_NPHASES) == (w->label != NULL), "word %d: a label exactly on a row", i);
        for (int k = 0; k < i; k++)
            if (w->fault)
                CHECK(!same(w->fault, gp_phase_words[k].fault),
                      "words %d and %d share the fault name %s", k, i, w->fault);
    }
    const int out[] = {-1, GP_PH_WORDS, GP_PH_WORDS + 7};
    for (int k = 0; k < 3; k++)
        CHECK(!gp_phase_label(out[k]) && !gp_phase_progress(out[k]) && !gp_phase_fault(out[k]),
              "id %d out of range: NULL", out[k]);
}

int main(void)
{
    test_rows();
    test_words();
    test_shape();
    return gp_check_done("test_phases");
}
