/* fault.c — the GPUPRIM_FAULT test hook (fault.h). */
#define _POSIX_C_SOURCE 200809L
#include "fault.h"
#include "tuning.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprim/h5io.h"
#include "phases.h"

void gp_fault_parse(const char *value, gp_fault *f)
{
    char rank[24] = "", ph[32] = "", kind[16] = "";
    int64_t r = -1;
    memset(f, 0, sizeof *f);
    f->rank = -1;
    const char *colon = value ? strchr(value, ':') : NULL;
    if (!colon || (size_t)(colon - value) >= sizeof rank) return;
    memcpy(rank, value, (size_t)(colon - value));
    if (gp_knob_int(rank, INT_MIN, INT_MAX, &r) != 0) return;
    if (sscanf(colon + 1, "%31[^:]:%15s", ph, kind) < 1) return;
    f->set = 1;
    f->rank = (int)r;
    snprintf(f->phase, sizeof f->phase, "%s", ph);
    f->kill = strcmp(kind, "kill") == 0;
    f->segv = strcmp(kind, "segv") == 0;
}

void gp_fault_from_env(gp_fault *f) { gp_fault_parse(getenv("GPUPRIM_FAULT"), f); }

int gp_fault_hits(const gp_fault *f, int rank, const char *phase)
{
    return f && f->set && phase && f->rank == rank && strcmp(f->phase, phase) == 0;
}

int gp_fault_fire(const gp_fault *f, int rank, const char *phase)
{
    if (!gp_fault_hits(f, rank, phase)) return 0;
    fprintf(stderr, "gpuprim_mpi: rank %d: GPUPRIM_FAULT: injected %s in phase %s\n", rank,
            f->kill ? "SIGKILL" : f->segv ? "segmentation fault" : "failure", phase);
    fflush(stderr);
    if (f->kill) raise(SIGKILL);
    if (f->segv) { /* a real fault: a store to an unmapped address */
        int *volatile bad = (int *)(uintptr_t)8;
        *bad = 1;
    }
    return 1;
}

void gp_fault_set_io(const gp_fault *f, int rank)
{
    const gp_h5_faults io = {gp_fault_hits(f, rank, gp_phase_fault(GP_PH_PREAD)),
                             gp_fault_hits(f, rank, gp_phase_fault(GP_PH_PWRITE)),
                             gp_fault_hits(f, rank, gp_phase_fault(GP_PH_TMPFILE))};
    gp_h5_set_faults(&io);
}
