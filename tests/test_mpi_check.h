/* test_mpi_check.h — the checks of the MPI tests of io/ (test_h5io.c, test_h5chunks.c), one
 * translation unit each: the communicator W with this process's rank and the rank count
 * (the test sets them after MPI_Init), and
 *   - check(ok, printf-args...): collective; passes when ok on every rank (counted in npass,
 *     else nfail); rank 0 prints "ok - what" or "FAIL - what";
 *   - why(printf-args...): a local detail of a failing check, "  rank R: ..." on stderr;
 *   - same_everywhere(rc, msg): collective; 1 when every rank holds the same rc and message.
 */
#ifndef GP_TEST_MPI_CHECK_H
#define GP_TEST_MPI_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

static MPI_Comm W;
static int rank, nranks, npass, nfail;

static int check(int ok, const char *fmt, ...)
{
    int all = 0;
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, W);
    if (rank == 0) {
        printf("%s - %s\n", all ? "ok" : "FAIL", what);
        fflush(stdout);
    }
    if (all) npass++;
    else nfail++;
    return all;
}

static void why(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static int same_everywhere(int rc, const char *msg)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = msg; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h ^= (uint64_t)(unsigned)rc << 1;
    uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, W);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, W);
    return lo == hi;
}

#endif /* GP_TEST_MPI_CHECK_H */
