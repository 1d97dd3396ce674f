/* phases.c — the job's phase vocabulary (phases.h): one table, and its three look-ups. */
#include "phases.h"

#include <stddef.h>

const gp_phase_word gp_phase_words[GP_PH_WORDS] = {
    /* word              counts towards    row label        progress         GPUPRIM_FAULT */
    [GP_PH_ALLOC]     = {GP_PH_ALLOC,     "alloc",         NULL,            "alloc"},
    [GP_PH_READ]      = {GP_PH_READ,      "read",          "read",          "read"},
    [GP_PH_UPLOAD]    = {GP_PH_UPLOAD,    "upload",        "upload",        NULL},
    [GP_PH_REDUCE]    = {GP_PH_REDUCE,    "reduce",        "reduce",        "reduce"},
    [GP_PH_INTEGRATE] = {GP_PH_INTEGRATE, "integrate",     "integrate",     NULL},
    [GP_PH_SCAN]      = {GP_PH_SCAN,      "scan",          "scan",          "scan"},
    [GP_PH_SORT]      = {GP_PH_SORT,      "local sort",    "local sort",    "sort"},
    [GP_PH_EXCHANGE]  = {GP_PH_EXCHANGE,  "rank exchange", "rank exchange", "exchange"},
    [GP_PH_VERIFY]    = {GP_PH_VERIFY,    "verify",        "verify",        NULL},
    [GP_PH_DIST]      = {GP_PH_DIST,      "distribution",  NULL,            NULL},
    [GP_PH_WRITE]     = {GP_PH_WRITE,     "write",         "write",         "write"},
    [GP_PH_TOTAL]     = {GP_PH_TOTAL,     "total",         NULL,            NULL},
    [GP_PH_STARTUP]   = {GP_PH_STARTUP,   "startup",       NULL,            NULL},
    [GP_PH_TEARDOWN]  = {GP_PH_TEARDOWN,  "teardown",      NULL,            NULL},
    [GP_PH_OPEN]      = {GP_PH_READ,      NULL,            NULL,            NULL},
    [GP_PH_PLAN]      = {GP_PH_READ,      NULL,            NULL,            NULL},
    [GP_PH_COMBINE]   = {GP_PH_REDUCE,    NULL,            NULL,            NULL},
    [GP_PH_XSETUP]    = {GP_PH_ALLOC,     NULL,            NULL,            "xsetup"},
    [GP_PH_XSTEP]     = {GP_PH_EXCHANGE,  NULL,            NULL,            "xstep"},
    [GP_PH_PREAD]     = {GP_PH_READ,      NULL,            NULL,            "pread"},
    [GP_PH_PWRITE]    = {GP_PH_WRITE,     NULL,            NULL,            "pwrite"},
    [GP_PH_TMPFILE]   = {GP_PH_WRITE,     NULL,            NULL,            "tmpfile"},
    [GP_PH_RUNS]      = {GP_PH_SORT,      NULL,            "local sort (runs)", "runs"},
    [GP_PH_MERGE]     = {GP_PH_SORT,      NULL,            "merge",         "merge"},
    [GP_PH_SPACE]     = {GP_PH_READ,      NULL,            NULL,            "space"},
    [GP_PH_HIST]      = {GP_PH_DIST,      NULL,            "distribution",  "hist"},
    [GP_PH_QUANT]     = {GP_PH_DIST,      NULL,            "distribution",  "quantiles"},
    [GP_PH_DISTINCT]  = {GP_PH_DIST,      NULL,            "distribution",  "distinct"},
};

/* The word of id, or NULL out of range. */
static const gp_phase_word *word(int id)
{
    return id >= 0 && id < GP_PH_WORDS ? &gp_phase_words[id] : NULL;
}

const char *gp_phase_label(int id)
{
    const gp_phase_word *w = word(id);
    return w ? gp_phase_words[w->row].label : NULL;
}

const char *gp_phase_progress(int id)
{
    const gp_phase_word *w = word(id);
    return w ? w->progress : NULL;
}

const char *gp_phase_fault(int id)
{
    const gp_phase_word *w = word(id);
    return w ? w->fault : NULL;
}
