/* test_iodriver.c — the choice of the I/O driver (io/iodriver.c): gp_io_choose on plain
 * values of the requested mode and the file system, the names and the parser, and once
 * gp_io_env_of on a real path; and the file job's piece size per driver and backend
 * (gp_job_piece_bytes, src/pipeline.c) with faked knob values. No MPI. Exit 0 when every check
 * passes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "gpuprim/iodriver.h"
#include "job.h"
#include "pipeline.h"
#include "test_check.h"

static gp_io_env fs(unsigned long magic)
{
    gp_io_env e = {1, magic};
    return e;
}

static void test_choose(void)
{
    /* the parallel file systems by their statfs magic: auto takes MPI-IO there */
    const unsigned long par[] = {0x0bd00bd0ul, 0x47504653ul, 0x19830326ul, 0x20030528ul,
                                 0xaad7aaeaul};
    const char *names[] = {"lustre", "gpfs", "beegfs", "orangefs", "panfs"};
    for (int i = 0; i < 5; i++) {
        gp_io_env e = fs(par[i]);
        CHECK(gp_io_parallel_fs(par[i]) && strcmp(gp_io_parallel_fs(par[i]), names[i]) == 0,
              "magic 0x%lx is %s", par[i], names[i]);
        CHECK(gp_io_choose(GP_IO_AUTO, &e) == GP_IO_MPIIO, "auto on %s: mpiio", names[i]);
        CHECK(gp_io_choose(GP_IO_POSIX, &e) == GP_IO_POSIX, "posix on %s: posix", names[i]);
        CHECK(gp_io_choose(GP_IO_MPIIO, &e) == GP_IO_MPIIO, "mpiio on %s: mpiio", names[i]);
        /* a signed 64-bit f_type of a magic with the top bit set, as some ABIs give it */
        gp_io_env s = fs(par[i] | (par[i] & 0x80000000ul ? ~0xfffffffful : 0));
        CHECK(gp_io_choose(GP_IO_AUTO, &s) == GP_IO_MPIIO, "auto on sign-extended %s", names[i]);
    }
    /* local disks, memory, network file systems, FUSE, unknown: posix */
    const unsigned long other[] = {0xef53ul /* ext2/3/4 */, 0x58465342ul /* xfs */,
                                   0x9123683eul /* btrfs */, 0x01021994ul /* tmpfs */,
                                   0x6969ul /* nfs */, 0xff534d42ul /* cifs */,
                                   0x65735546ul /* fuse */, 0x794c7630ul /* overlayfs */,
                                   0x00c36400ul /* ceph */, 0ul, 0xfffffffful};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        gp_io_env e = fs(other[i]);
        CHECK(gp_io_parallel_fs(other[i]) == NULL, "magic 0x%lx is no parallel file system", other[i]);
        CHECK(gp_io_choose(GP_IO_AUTO, &e) == GP_IO_POSIX, "auto on 0x%lx: posix", other[i]);
        CHECK(gp_io_choose(GP_IO_MPIIO, &e) == GP_IO_MPIIO, "mpiio on 0x%lx: mpiio", other[i]);
    }
    /* statfs failed, or no environment: posix; an explicit request stands */
    gp_io_env none = {0, 0x0bd00bd0ul};
    CHECK(gp_io_choose(GP_IO_AUTO, &none) == GP_IO_POSIX, "auto without statfs: posix");
    CHECK(gp_io_choose(GP_IO_AUTO, NULL) == GP_IO_POSIX, "auto, NULL env: posix");
    CHECK(gp_io_choose(GP_IO_MPIIO, NULL) == GP_IO_MPIIO, "mpiio, NULL env: mpiio");
    CHECK(gp_io_choose(GP_IO_POSIX, NULL) == GP_IO_POSIX, "posix, NULL env: posix");
    CHECK(gp_io_choose((gp_io_mode)7, NULL) == GP_IO_POSIX, "an unknown request is auto");
}

static void test_names(void)
{
    const gp_io_mode all[3] = {GP_IO_AUTO, GP_IO_POSIX, GP_IO_MPIIO};
    const char *names[3] = {"auto", "posix", "mpiio"};
    for (int i = 0; i < 3; i++) {
        gp_io_mode m = (gp_io_mode)9;
        CHECK(strcmp(gp_io_mode_name(all[i]), names[i]) == 0, "name of %d", (int)all[i]);
        CHECK(gp_io_mode_parse(names[i], &m) == 0 && m == all[i], "parse %s", names[i]);
    }
    const char *bad[] = {"", "POSIX", "mpi", "mpiio ", "sec2", "autos"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gp_io_mode m = GP_IO_MPIIO;
        CHECK(gp_io_mode_parse(bad[i], &m) == -1 && m == GP_IO_MPIIO, "parse '%s' refused", bad[i]);
    }
    gp_io_mode m = GP_IO_POSIX;
    CHECK(gp_io_mode_parse(NULL, &m) == -1 && m == GP_IO_POSIX, "parse NULL refused");
    CHECK(strcmp(gp_io_mode_name((gp_io_mode)5), "?") == 0, "name of an unknown mode");
}

static void test_env(void)
{
    gp_io_env e;
    gp_io_env_of(".", &e);
    CHECK(e.have_fs == 1, "statfs of . succeeds");
    gp_io_env_of("/no/such/path/at/all", &e);
    CHECK(e.have_fs == 0 && e.fs_magic == 0, "statfs of a missing path: no file system");
    gp_io_env_of(NULL, &e);
    CHECK(e.have_fs == 0, "NULL path: no file system");
}

static void test_transport(void)
{
    /* auto: mpi on the CPU backend (host memory), the exchange's own auto on CUDA */
    CHECK(gp_job_transport(GP_TRANSPORT_OPT_AUTO, 1) == GP_TRANSPORT_MPI, "auto, CPU: mpi");
    CHECK(gp_job_transport(GP_TRANSPORT_OPT_AUTO, 0) == GP_TRANSPORT_AUTO, "auto, CUDA: auto");
    /* an explicit choice is kept on both */
    for (int host = 0; host <= 1; host++) {
        CHECK(gp_job_transport(GP_TRANSPORT_OPT_SHARED, host) == GP_TRANSPORT_SHARED, "shared (host %d)", host);
        CHECK(gp_job_transport(GP_TRANSPORT_OPT_MPI, host) == GP_TRANSPORT_MPI, "mpi (host %d)", host);
    }
}

static void test_pieces(void)
{
    const int64_t MiB = 1 << 20, big = (int64_t)1 << 40;
    /* the defaults: mpiio 256 MiB (both backends), posix 4 MiB on CUDA, whole on the CPU */
    CHECK(gp_job_piece_bytes(0, GP_IO_MPIIO, 0, big) == 256 * MiB, "mpiio, CUDA: 256 MiB");
    CHECK(gp_job_piece_bytes(0, GP_IO_MPIIO, 1, big) == 256 * MiB, "mpiio, CPU: 256 MiB");
    CHECK(gp_job_piece_bytes(0, GP_IO_POSIX, 0, big) == 4 * MiB, "posix, CUDA: 4 MiB");
    CHECK(gp_job_piece_bytes(0, GP_IO_POSIX, 1, big) == 0, "posix, CPU: whole shards");
    /* capped by the largest read, at least 8 bytes */
    CHECK(gp_job_piece_bytes(0, GP_IO_POSIX, 0, 4000) == 4000, "capped at the read");
    CHECK(gp_job_piece_bytes(0, GP_IO_MPIIO, 1, 3) == 8, "never under 8 bytes");
    /* the knob, when set, for every driver and backend */
    CHECK(gp_job_piece_bytes(1000, GP_IO_POSIX, 1, big) == 1000, "knob 1000 on the CPU");
    CHECK(gp_job_piece_bytes(1000, GP_IO_MPIIO, 0, big) == 1000, "knob 1000, mpiio");
    CHECK(gp_job_piece_bytes(1, GP_IO_POSIX, 0, big) == 8, "knob 1: 8 bytes");
}

int main(void)
{
    test_choose();
    test_names();
    test_env();
    test_pieces();
    test_transport();
    return gp_check_done(NULL);
}
