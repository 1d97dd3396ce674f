/* test_fault.c — the GPUPRIM_FAULT test hook's decision (src/fault.c): parsed once from a
 * value, then a pure function says whether a rank fails in a phase. No MPI. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "test_check.h"

static void expect(const char *value, int rank, const char *phase, int hits, int kill)
{
    gp_fault f;
    gp_fault_parse(value, &f);
    CHECK(gp_fault_hits(&f, rank, phase) == hits, "'%s': rank %d phase %s: hits %d, want %d",
          value ? value : "(unset)", rank, phase, gp_fault_hits(&f, rank, phase), hits);
    if (hits) CHECK(f.kill == kill, "'%s': kill %d, want %d", value, f.kill, kill);
}

int main(void)
{
    expect(NULL, 0, "read", 0, 0);
    expect("", 0, "read", 0, 0);
    expect("garbage", 0, "read", 0, 0);
    expect("1", 1, "read", 0, 0);              /* a rank without a phase */
    expect("1:read", 1, "read", 1, 0);
    expect("1:read", 0, "read", 0, 0);         /* another rank */
    expect("1:read", 1, "reduce", 0, 0);       /* another phase */
    expect("1:rea", 1, "read", 0, 0);          /* a prefix is not the phase */
    expect("2:sort:kill", 2, "sort", 1, 1);
    expect("2:sort:other", 2, "sort", 1, 0);   /* an unknown kind is a plain failure */
    expect("0:exchange", 0, "exchange", 1, 0);
    expect("-1:read", -1, "read", 1, 0);       /* as parsed; no rank is -1 */
    gp_fault f;
    gp_fault_parse("3:write", &f);
    CHECK(f.set && f.rank == 3 && strcmp(f.phase, "write") == 0 && !f.kill && !f.segv,
          "3:write parsed");
    gp_fault_parse("1:exchange:segv", &f);
    CHECK(gp_fault_hits(&f, 1, "exchange") && f.segv && !f.kill, "1:exchange:segv parsed");
    gp_fault_parse("1:exchange:kill", &f);
    CHECK(f.kill && !f.segv, "1:exchange:kill is no segv");
    CHECK(!gp_fault_hits(NULL, 3, "write") && !gp_fault_hits(&f, 3, NULL), "NULL arguments");
    setenv("GPUPRIM_FAULT", "4:alloc", 1);
    gp_fault_from_env(&f);
    CHECK(gp_fault_hits(&f, 4, "alloc"), "from the environment");
    unsetenv("GPUPRIM_FAULT");
    gp_fault_from_env(&f);
    CHECK(!f.set, "unset environment: no fault");
    return gp_check_done("test_fault");
}
