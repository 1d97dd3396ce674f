/* rd.c — reads a whole dataset with gp_h5_read (posix) and prints wall and CPU seconds */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <mpi.h>
#include "gpuprim/h5io.h"
static double cpu(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6; }
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    gp_h5_malloc_tune();
    gp_h5_chunk_reads c = {atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 0, 1};
    gp_h5_set_chunk_reads(&c);
    gp_h5_input in; char msg[2048];
    if (gp_h5_open_io(MPI_COMM_WORLD, argv[1], NULL, GP_IO_POSIX, &in, msg, sizeof msg)) { puts(msg); return 1; }
    void *buf = malloc((size_t)in.n * 4);
    double c0 = cpu(), t0 = MPI_Wtime();
    int rc = gp_h5_read(MPI_COMM_WORLD, &in, NULL, in.dtype, 0, in.n, buf, msg, sizeof msg);
    double t1 = MPI_Wtime(), c1 = cpu();
    printf("direct=%s threads=%s rc=%d wall=%.3f cpu=%.3f\n", argv[2], argc > 3 ? argv[3] : "auto", rc, t1 - t0, c1 - c0);
    gp_h5_close(&in);
    MPI_Finalize();
    return 0;
}
