/* test_startup.c — the process's start and end (src/startup.c) and the space --out takes
 * (src/setup.c), without MPI: the steps' names and clock, the /proc/self/stat parser (command
 * names with blanks and parentheses), which memory the job leaves to the exit, the bytes
 * --out needs against exact arithmetic, and the free-space check on a real folder. Exit 0
 * when every check passes. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "startup.h"
#include "test_check.h"

static void test_steps(void)
{
    static const char *const names[GP_NSTEPS] = {
        "mpi_init", "local_rank", "device", "context", "first_alloc", "first_phase",
        "last_phase", "frees", "report", "mpi_finalize", "context_gone", "exit"};
    for (int s = 0; s < GP_NSTEPS; s++)
        CHECK(gp_step_name(s) && strcmp(gp_step_name(s), names[s]) == 0, "step %d: '%s'", s,
              gp_step_name(s) ? gp_step_name(s) : "(null)");
    CHECK(!gp_step_name(-1) && !gp_step_name(GP_NSTEPS), "names out of range: NULL");

    gp_proc_start();
    for (int s = 0; s < GP_NSTEPS; s++)
        CHECK(gp_proc_step((gp_step)s) < 0, "step %d recorded before it was reached", s);
    const double a = gp_proc_since_main();
    gp_proc_mark(GP_STEP_MPI_INIT);
    gp_proc_mark(GP_STEP_FIRST_PHASE);
    const double b = gp_proc_since_main();
    const double m = gp_proc_step(GP_STEP_MPI_INIT), f = gp_proc_step(GP_STEP_FIRST_PHASE);
    CHECK(a >= 0 && a <= m && m <= f && f <= b && b < 60.0,
          "the clock: %g <= %g <= %g <= %g seconds since main", a, m, f, b);
    CHECK(gp_proc_step(GP_STEP_EXIT) < 0, "a step not marked stays unrecorded");
    CHECK(gp_proc_step((gp_step)GP_NSTEPS) < 0, "a step out of range: -1");
}

static void test_procstat(void)
{
    unsigned long long t = 0;
    /* fields 1-2, then 3 (state) .. 21, then 22 (starttime) = 987654 */
    const char *plain = "4242 (gpuprim_mpi) S 1 4242 4242 0 -1 4194560 300 0 0 0 1 2 0 0 20 0 "
                        "1 0 987654 12345678 400 18446744073709551615\n";
    CHECK(gp_procstat_starttime(plain, &t) == 0 && t == 987654, "plain: %llu", t);
    t = 0;
    const char *odd = "7 (a) b (c) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 31 99 1";
    CHECK(gp_procstat_starttime(odd, &t) == 0 && t == 31, "a name with ') (' and blanks: %llu",
          t);
    CHECK(gp_procstat_starttime("7 (x) S 1 7 7 0", &t) == -1, "a short line");
    CHECK(gp_procstat_starttime("7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3q1 9", &t) == -1,
          "a starttime that is not a number");
    CHECK(gp_procstat_starttime("no parenthesis", &t) == -1 && gp_procstat_starttime(NULL, &t) == -1,
          "no command name");
}

/* A backend table with only what gp_proc_leave_memory reads. */
static gp_backend fake(unsigned caps)
{
    gp_backend b;
    memset(&b, 0, sizeof b);
    b.name = "fake";
    b.caps = caps;
    return b;
}

static void test_leave_memory(void)
{
    unsetenv("GPUPRIM_FREE_AT_EXIT");
    gp_proc_start();
    const gp_backend dev = fake(GP_CAP_IPC), host = fake(GP_CAP_HOST_MEMORY);
    CHECK(gp_proc_leave_memory(&dev), "device memory is left to the exit");
    CHECK(!gp_proc_leave_memory(&host), "host memory (the CPU backend) is freed");
    CHECK(!gp_proc_leave_memory(gp_backend_cpu()), "the CPU backend's memory is freed");
    CHECK(!gp_proc_leave_memory(NULL), "no backend: nothing to leave");
    setenv("GPUPRIM_FREE_AT_EXIT", "1", 1);
    gp_proc_start();
    CHECK(!gp_proc_leave_memory(&dev), "GPUPRIM_FREE_AT_EXIT=1: device memory is freed");
    unsetenv("GPUPRIM_FREE_AT_EXIT");
    gp_proc_start();
}

static void test_out_need(void)
{
    const uint64_t M = GP_OUT_META_MARGIN;
    CHECK(gp_out_bytes_need(0, 4, 0, 0) == M, "no element: the margin");
    CHECK(gp_out_bytes_need(-5, 4, 1, 8) == M, "a negative count counts as none");
    CHECK(gp_out_bytes_need(1000, 4, 0, 0) == 4000 + M, "1000 float32");
    CHECK(gp_out_bytes_need(1000, 2, 1, 0) == 10000 + M, "1000 float16 with --argsort");
    CHECK(gp_out_bytes_need(999, 8, 1, 1) == 999 * 17 + M, "float64, argsort, int8 payload");
    /* the case: 2^32 float32 with --stable --argsort: 48 GiB of data */
    const int64_t n = (int64_t)1 << 32;
    CHECK(gp_out_bytes_need(n, 4, 1, 0) == ((uint64_t)12 << 32) + M, "2^32 float32 + argsort");
    CHECK(gp_out_bytes_need(INT64_MAX, 16, 1, 16) == UINT64_MAX, "saturates");
    CHECK(gp_out_bytes_need(INT64_MAX, 1, 0, 0) == (uint64_t)INT64_MAX + M,
          "the largest count of bytes that fits");
}

static void test_out_space(void)
{
    char msg[512] = "";
    CHECK(gp_check_out_space("/tmp/test_startup_out.h5", 1, msg, sizeof msg) == 0,
          "one byte fits in /tmp: %s", msg);
    const uint64_t huge = (uint64_t)1 << 62;
    const int rc = gp_check_out_space("/tmp/test_startup_out.h5", huge, msg, sizeof msg);
    CHECK(rc == GP_EXIT_WRITE, "4 EiB do not fit: rc %d", rc);
    CHECK(strstr(msg, "--out /tmp/test_startup_out.h5 needs 4611686018427387904 bytes") &&
              strstr(msg, "and its file system has ") && strstr(msg, " free"),
          "the message names both figures: '%s'", msg);
    msg[0] = '\0';
    CHECK(gp_check_out_space("/nonexistent-folder/x.h5", huge, msg, sizeof msg) == 0 && !msg[0],
          "a folder that cannot be asked passes (the write's reservation checks)");
}

int main(void)
{
    test_steps();
    test_procstat();
    test_leave_memory();
    test_out_need();
    test_out_space();
    return gp_check_done("test_startup");
}
