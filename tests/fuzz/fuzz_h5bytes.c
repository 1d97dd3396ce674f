/* fuzz_h5bytes.c — libFuzzer target, byte level: the input is an HDF5 file (the seeds in
 * tests/fuzz/corpus_h5bytes/ are small valid ones; libFuzzer mutates their bytes). It goes
 * through gpuprim_mpi's input path — gp_h5_open with the default dataset search, then
 * gp_h5_read of the whole dataset, gp_h5_close — in a singleton MPI process, checking:
 *   - an error is clean: code 3, 4 or 5, a non-empty one-line message naming the file;
 *   - an opened dataset is consistent: rank 1..32, element count = product of dims, one of
 *     the six element types, a non-empty type description;
 *   - no HDF5 object stays open after gp_h5_close or a failed gp_h5_open.
 * Most of what a corrupt file can break is inside libhdf5 (many known CVEs), outside our
 * control: run_fuzz.sh runs this target with ASan's allocator_may_return_null=1 (libhdf5
 * trusts sizes read from the file: without it the first seconds end in an oversized
 * malloc in H5C_protect) and without leak detection (libhdf5 leaks on some corrupt-file
 * error paths). It is not in CI's target list: within minutes it finds files on which
 * libhdf5 1.10.8 itself never returns (H5Ovisit, under the default dataset search, walking
 * a group B-tree that loops back on itself). Run it by hand: FUZZ_TARGETS=h5bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>
#include <mpi.h>

#include "gpuprim/h5io.h"

#include "fuzz_lsan.h"

#define MSGLEN 2048
#define MAXREAD 20000 /* elements (the fuzz build reads in pieces of 200 bytes) */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char F[512];

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_h5bytes: invariant failed: %s: ", #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n  (the file: %s)\n", F);                                  \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static void check_msg(int rc, const char *msg, const char *what)
{
    CHECK(rc >= GP_IO_EOPEN && rc <= GP_IO_EREAD, "%s: rc %d (%s)", what, rc, msg);
    CHECK(msg[0] != '\0' && strlen(msg) < MSGLEN && !strchr(msg, '\n'), "%s: message: %s", what, msg);
    CHECK(strstr(msg, F) != NULL, "%s: the message does not name the file: %s", what, msg);
}

static int open_objects(void) { return (int)H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL); }

static void at_exit(void) { unlink(F); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("OMPI_MCA_opal_signal", "", 0); /* crashes go to the sanitizers, not Open MPI */
    LSAN_DISABLE();
    int ok = MPI_Init(NULL, NULL) == MPI_SUCCESS;
    LSAN_ENABLE();
    if (!ok) {
        fprintf(stderr, "fuzz_h5bytes: MPI_Init failed\n");
        exit(1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const char *dir = getenv("GP_FUZZ_TMP");
    struct stat st;
    if (!dir || !dir[0]) dir = stat("/dev/shm", &st) == 0 && access("/dev/shm", W_OK) == 0
                                   ? "/dev/shm" : getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    snprintf(F, sizeof F, "%s/gp_fuzz_bytes.%ld.h5", dir, (long)getpid());
    atexit(at_exit);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(F, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    char *msg = malloc(MSGLEN);
    if (!msg) abort();
    gp_h5_input in;
    int rc = gp_h5_open(MPI_COMM_WORLD, F, NULL, &in, msg, MSGLEN);
    if (rc) {
        check_msg(rc, msg, "gp_h5_open");
        CHECK(rc == GP_IO_EOPEN || rc == GP_IO_EDATASET, "gp_h5_open: rc %d", rc);
    } else {
        CHECK(in.ndims >= 1 && in.ndims <= GP_H5_MAXDIMS, "ndims %d", in.ndims);
        int64_t prod = 1;
        for (int k = 0; k < in.ndims && prod; k++)
            prod = in.dims[k] > (hsize_t)(INT64_MAX / (prod ? prod : 1)) ? -1 : prod * (int64_t)in.dims[k];
        CHECK(prod == in.n, "product of dims %lld, n %lld", (long long)prod, (long long)in.n);
        CHECK(gp_dtype_size(in.dtype) > 0, "dtype %d", (int)in.dtype);
        CHECK(in.type_desc[0] && strlen(in.type_desc) < sizeof in.type_desc, "type_desc");
        if (in.n <= MAXREAD) {
            void *buf = in.n ? malloc((size_t)in.n * gp_dtype_size(in.dtype)) : NULL;
            rc = gp_h5_read(MPI_COMM_WORLD, &in, NULL, in.dtype, 0, in.n, buf, msg, MSGLEN);
            if (rc) check_msg(rc, msg, "gp_h5_read");
            free(buf);
        }
        gp_h5_close(&in);
    }
    CHECK(open_objects() == 0, "%d HDF5 objects open after gp_h5_open/gp_h5_close", open_objects());
    free(msg);
    return 0;
}
