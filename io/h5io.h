/* h5io.h — HDF5 input and output for gpuprim (parallel HDF5 over MPI-IO).
 *
 * io/ knows HDF5 and MPI-IO and nothing of GPUs. A dataset of any integer or float class
 * (any size, any byte order) is read as one of the six gp_dtype element types, converted
 * by HDF5 itself: integers of <= 4 bytes -> i32 / u32 (by signedness), 8-byte integers ->
 * i64 / u64, floats of <= 4 bytes (float16 included) -> f32, larger floats (long double
 * included) -> f64. An N-D dataset is its row-major flattening; a shard is a contiguous
 * range of that flattened index, selected as a union of hyperslabs.
 *
 * Every function here is collective over `comm` unless it says otherwise: each rank calls
 * it, also a rank whose shard is empty. On failure every rank returns the same non-zero
 * code and the same one-line message naming the file, the dataset and the reason.
 */
#ifndef GP_H5IO_H
#define GP_H5IO_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "gp_kernels.h"

/* error codes (also used as the program's exit codes, see src/cli.h) */
#define GP_IO_EOPEN 3     /* file missing, unreadable, or not an HDF5 file */
#define GP_IO_EDATASET 4  /* dataset missing, ambiguous, behind a dangling link, or of an
                             unsupported class/shape */
#define GP_IO_EREAD 5     /* the read itself failed (corrupt data, missing filter, ...) */
#define GP_IO_EWRITE 6    /* the output could not be written (or exists, see force) */

#define GP_H5_MAXDIMS 32
#define GP_H5_PATHLEN 1024

/* An open input dataset. */
typedef struct gp_h5_input {
    char file[GP_H5_PATHLEN];     /* the file name as given */
    char dataset[GP_H5_PATHLEN];  /* the dataset's absolute path in the file, e.g. "/data" */
    gp_dtype dtype;               /* the element type it is read as */
    char type_desc[64];           /* the stored type, e.g. "int16 big-endian" */
    int ndims;                    /* rank of the dataspace (>= 1) */
    hsize_t dims[GP_H5_MAXDIMS];  /* current extent of each dimension */
    int64_t n;                    /* elements: product of dims (0 allowed) */
    hid_t fid;                    /* open file (parallel access) */
    hid_t did;                    /* open dataset */
    hid_t ftype;                  /* copy of the stored datatype (for writing the same type) */
} gp_h5_input;

/* Call before MPI_Init. Open MPI's sharedfp/lockedfile component, which MPI_File_open
 * queries for every file although HDF5 never uses a shared file pointer, overflows a
 * buffer (the process aborts) on file paths of about 240 bytes or more (Open MPI 4.1.4,
 * Debian 12). Unless OMPI_MCA_sharedfp is set already, this sets it to "^lockedfile" in
 * the environment. gpuprim_mpi and gpuprim_gen call it; other MPI implementations ignore
 * the variable. */
void gp_h5_mpi_io_env(void);

/* The checks gp_h5_write makes of `path` before it writes anything, for a program to make
 * before its work: a name of 1 to GP_H5_PATHLEN-1 bytes; not a directory, symbolic link,
 * device, FIFO or socket; no existing file unless force; a writable folder. Not
 * collective (call it on one rank and agree). Returns 0 or GP_IO_EWRITE with msg set. */
int gp_h5_check_target(const char *path, int force, char *msg, size_t msglen);

/* Shard of rank r of P over n elements: contiguous, sizes differ by at most one, the first
 * n % P ranks get the larger size. Not collective. */
void gp_shard_range(int64_t n, int P, int r, int64_t *off, int64_t *cnt);

/* Opens `file` read-only with the MPI-IO driver and the dataset `dataset` (an absolute or
 * relative path; NULL picks the one numeric dataset in the file, else fails listing the
 * candidates). Soft and external links on the path are followed; one whose target is
 * missing fails with "link target missing". The dataset must be of integer or float class
 * (the message names any other class with a detail: string, variable-length, compound
 * fields, enum members, reference kind, opaque, array) and have a simple dataspace (not
 * scalar, not null); 0 elements is valid. An extendible dataset is read at its current
 * extent. Fills *in. Returns 0 or GP_IO_EOPEN / GP_IO_EDATASET with msg set. */
int gp_h5_open(MPI_Comm comm, const char *file, const char *dataset, gp_h5_input *in,
               char *msg, size_t msglen);

/* Reads the flattened elements [off, off+cnt) of dataset `dataset` of the open file (NULL:
 * in->dataset) converted to element type `as` into buf (cnt * gp_dtype_size(as) bytes),
 * with a collective transfer (independent MPI-IO underneath when the ranks' ranges overlap
 * or some chunks of the dataset were never written; those read as the fill value). A
 * dataset other than in->dataset (the --x coordinates) must be numeric with exactly in->n
 * elements. Returns 0 or GP_IO_EDATASET / GP_IO_EREAD. */
int gp_h5_read(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
               int64_t off, int64_t cnt, void *buf, char *msg, size_t msglen);

/* Closes what gp_h5_open opened (collective: H5Fclose is, under the MPI-IO driver) and frees
 * in->ftype, so a gp_h5_write that uses in->ftype must come before it. */
void gp_h5_close(gp_h5_input *in);

/* Writes a distributed 1-D array of n_total elements to dataset `dset` of a new file
 * `path`: this rank's part is elements [off, off+cnt) held in buf as element type `mem`;
 * the dataset's stored type is `file_type` (H5I_INVALID_HID: the native type of `mem`).
 * The file is written under a temporary name in the same folder and renamed to `path` by
 * rank 0 only after every rank has succeeded; on any failure nothing is left behind.
 * While that file exists every rank guards it: SIGINT, SIGTERM, SIGHUP, SIGABRT (and
 * SIGPIPE where it would kill) and exit() remove it first, and the process then ends as
 * the signal would have ended it (a SIGKILL, or an _exit by the MPI runtime, cannot be
 * caught). An existing `path` is an error unless `force`. The ranks' parts must tile [0, n_total)
 * exactly, and a value outside the range of the stored type is an error (HDF5 would clip
 * it silently). Returns 0 or GP_IO_EWRITE. */
int gp_h5_write(MPI_Comm comm, const char *path, const char *dset, hid_t file_type,
                gp_dtype mem, int64_t n_total, int64_t off, int64_t cnt, const void *buf,
                int force, char *msg, size_t msglen);

/* One dataset of gp_h5_write_many: its path in the file, stored type (H5I_INVALID_HID: the
 * native type of mem), element type in memory, and this rank's part. */
typedef struct gp_h5_outds {
    const char *dset;
    hid_t file_type;
    gp_dtype mem;
    const void *buf;
} gp_h5_outds;

/* gp_h5_write for several 1-D datasets of the same length and distribution in one new file
 * (e.g. the sorted values and their argsort): same checks, same temporary-name-then-rename
 * rule, same error codes. Collective. */
int gp_h5_write_many(MPI_Comm comm, const char *path, const gp_h5_outds *ds, int nds,
                     int64_t n_total, int64_t off, int64_t cnt, int force, char *msg,
                     size_t msglen);

/* gp_h5_write_many, except that rank 0 does not rename the finished file: it stays under
 * its temporary name (rank 0 still guards it against signals, as above) until rank 0
 * calls gp_h5_publish or gp_h5_discard. So a program that writes another output too (a
 * report) can finish that first and publish both or neither. One file at a time may be
 * staged. Collective; the same checks and error codes; on failure nothing is staged and
 * nothing is left behind. */
int gp_h5_write_many_staged(MPI_Comm comm, const char *path, const gp_h5_outds *ds, int nds,
                            int64_t n_total, int64_t off, int64_t cnt, int force, char *msg,
                            size_t msglen);

/* Renames the file staged by gp_h5_write_many_staged to its path (rank 0; not collective:
 * the caller shares the outcome). Returns 0, also when nothing is staged (other ranks), or
 * GP_IO_EWRITE with "PATH: cannot rename TMP to it (reason)" in msg, the temporary file
 * then removed. Either way nothing is staged afterwards. */
int gp_h5_publish(char *msg, size_t msglen);

/* Removes the file staged by gp_h5_write_many_staged, if any (not collective; a no-op
 * where nothing is staged). Called on a failing path, it appends "; could not remove TMP
 * (reason)" to the error in msg (msglen bytes; msg may be NULL) when the removal fails. */
void gp_h5_discard(char *msg, size_t msglen);

#endif /* GP_H5IO_H */
