/* h5io.h — HDF5 input and output for gpuprim: parallel HDF5 over MPI-IO, or each rank's own
 * POSIX access with plain pread/pwrite of the raw data where the layout allows.
 *
 * io/ knows HDF5 and MPI-IO and nothing of GPUs. A dataset of any integer or float class
 * (any size, any byte order) is read as one of the six gp_dtype element types, converted
 * by HDF5 itself: integers of <= 4 bytes -> i32 / u32 (by signedness), 8-byte integers ->
 * i64 / u64, floats of <= 4 bytes (float16 included) -> f32, larger floats (long double
 * included) -> f64. An N-D dataset is its row-major flattening; a shard is a contiguous
 * range of that flattened index, selected as a union of hyperslabs.
 *
 * Two I/O drivers (gp_io_mode) move the data; both give the same bits:
 *   - mpiio: the file opened with HDF5's MPI-IO driver by every rank together, collective
 *     transfers (H5Dread / H5Dwrite in pieces of at most 1 GiB per rank);
 *   - posix: every rank opens the file on its own, read-only, with HDF5's sec2 driver and no
 *     file lock; a contiguous, allocated dataset stored as the memory type is read with
 *     pread at its raw offset (H5Dget_offset), a contiguous one of another stored type with
 *     pread + H5Tconvert, anything else (chunked, filtered, compact, virtual, external,
 *     never written) with H5Dread of the rank's own hyperslab; outputs are created by rank 0
 *     (metadata, allocation) and every rank pwrites its part at the dataset's raw offset.
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

#include "error.h"
#include "iodriver.h"
#include "kernels.h"
#include "shard.h" /* gp_shard_range: the ranges io/ reads and writes */

/* The failures of io/, as the kinds of error.h (the names stay for the callers):
 * GP_IO_EOPEN: the file is missing, unreadable, or not an HDF5 file; GP_IO_EDATASET: the
 * dataset is missing, ambiguous, behind a dangling link, or of an unsupported class/shape;
 * GP_IO_EREAD: the read itself failed (corrupt data, missing filter, ...); GP_IO_EWRITE:
 * the output could not be written (or exists, see force). A failed MPI call is
 * GP_ERR_INTERNAL. */
#define GP_IO_EOPEN GP_ERR_OPEN
#define GP_IO_EDATASET GP_ERR_DATASET
#define GP_IO_EREAD GP_ERR_READ
#define GP_IO_EWRITE GP_ERR_WRITE

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
    hid_t fid;                    /* open file (parallel access; posix: this rank's own) */
    hid_t did;                    /* open dataset */
    hid_t ftype;                  /* copy of the stored datatype (for writing the same type) */
    gp_io_mode io;                /* the driver it was opened with: GP_IO_POSIX or GP_IO_MPIIO */
} gp_h5_input;

/* Call before MPI_Init. Open MPI's MPI_File_open selects a shared-file-pointer component
 * for every file although HDF5 never uses a shared file pointer, and two of them do harm
 * (Open MPI 4.1.4, Debian 12): sharedfp/lockedfile overflows a buffer (the process aborts)
 * on file paths of about 240 bytes or more, and sharedfp/individual, which it takes when
 * the ranks are on several nodes, creates FILE.data.R and FILE.metadata.R beside the file
 * for every rank and leaves them behind when the job is killed during a write. Unless
 * OMPI_MCA_sharedfp is set already, this sets it to "^lockedfile,individual" in the
 * environment (on one node Open MPI then takes sharedfp/sm; across nodes it opens the file
 * with no shared file pointer, which nothing here uses). gpuprim_mpi and gpuprim_gen call
 * it; other MPI implementations ignore the variable. */
void gp_h5_mpi_io_env(void);

/* Call once at the start of a program that reads chunked, filtered datasets (before any
 * large allocation; not collective). HDF5's filter pipeline (gzip, shuffle, ...) allocates
 * and frees a buffer of a chunk's size for every chunk it reads; glibc maps blocks above its
 * mmap threshold afresh each time and unmaps them when freed, so every chunk's pages are
 * faulted in and zeroed again, which slows the reads of large chunks. This keeps blocks of
 * up to 32 MiB (glibc's largest threshold) on the heap and freed heap memory in the process
 * up to 1 GiB (mallopt M_MMAP_THRESHOLD, M_TRIM_THRESHOLD); other C libraries ignore it.
 * gpuprim_mpi calls it. */
void gp_h5_malloc_tune(void);

/* Makes HDF5 read the compression filters it lacks that gpuprim builds in: LZF (filter id
 * 32000, h5py's compression="lzf", on liblzf; io/h5_lzf.c), which h5py writes with its own
 * copy of the filter. Call it before opening a file (gp_h5_open_io does, first thing; a
 * program that opens files with HDF5 itself calls it before). Not collective; idempotent
 * and thread-safe (the work is done once per process; later calls return the first call's
 * result). A filter 32000 that HDF5 already has (registered by the application, or a
 * plugin found through HDF5_PLUGIN_PATH) is kept, never registered twice. Returns 0 when
 * HDF5 reads LZF afterwards, -1 when it cannot: H5Zregister failed, or gpuprim was built
 * without liblzf, and then a placeholder filter is registered whose reads fail with one
 * line saying how to get LZF (install liblzf-dev and rebuild, or set HDF5_PLUGIN_PATH). */
int gp_h5_register_filters(void);

/* The checks gp_h5_write makes of `path` before it writes anything, for a program to make
 * before its work: a name of 1 to GP_H5_PATHLEN-1 bytes; not a directory, symbolic link,
 * device, FIFO or socket; no existing file unless force; a writable folder. Not
 * collective (call it on one rank and agree). Returns 0 or GP_IO_EWRITE with msg set. */
int gp_h5_check_target(const char *path, int force, char *msg, size_t msglen);

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

/* gp_h5_open with the driver `io`: GP_IO_AUTO is resolved by gp_io_choose on rank 0 (statfs
 * of the file; every rank gets its answer), GP_IO_POSIX opens the file on every rank on its
 * own (sec2, read-only, no file lock), GP_IO_MPIIO is gp_h5_open. in->io says which. The
 * same checks, messages and codes. */
int gp_h5_open_io(MPI_Comm comm, const char *file, const char *dataset, gp_io_mode io,
                  gp_h5_input *in, char *msg, size_t msglen);

/* Reads the flattened elements [off, off+cnt) of dataset `dataset` of the open file (NULL:
 * in->dataset) converted to element type `as` into buf (cnt * gp_dtype_size(as) bytes),
 * with in->io's driver: mpiio, a collective transfer (independent MPI-IO underneath when
 * the ranks' ranges overlap or some chunks of the dataset were never written; those read as
 * the fill value); posix, a gp_h5_reader of its own (opened, one read, closed), the ranks
 * then agreeing on the outcome. A dataset other than in->dataset (the --x coordinates) must
 * be numeric with exactly in->n elements. Returns 0 or GP_IO_EDATASET / GP_IO_EREAD. */
int gp_h5_read(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
               int64_t off, int64_t cnt, void *buf, char *msg, size_t msglen);

/* A reader of one dataset of an open input: opened once, many reads, closed. */
typedef struct gp_h5_reader gp_h5_reader;

/* Opens a reader of dataset `dataset` (NULL: in->dataset; another one must be numeric with
 * exactly in->n elements, as for gp_h5_read) as element type `as`. With the posix driver it
 * plans how this rank reads (see the top of this file) and opens the raw data's file for
 * pread. Collective; *r is NULL on failure. Returns 0 or GP_IO_EDATASET / GP_IO_EREAD.
 * The input must stay open until gp_h5_reader_close. */
int gp_h5_reader_open(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
                      gp_h5_reader **r, char *msg, size_t msglen);

/* Reads the flattened elements [off, off+cnt) into buf (cnt elements of the reader's type).
 * posix driver: local (not collective); the error, if any, is this rank's own (GP_IO_EREAD
 * with msg set), and the caller makes the ranks agree on it (e.g. gp_agree) before its next
 * collective step. mpiio driver: collective, as gp_h5_read (every rank calls it the same
 * number of times, cnt = 0 allowed; the error is agreed). Reads of any size, also past 2 GiB.
 * Test hook: gp_h5_faults.pread makes this rank's posix reads fail (EIO). */
int gp_h5_reader_read(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, char *msg,
                      size_t msglen);

/* How a reader moves the data (gp_h5_reader_how): "pread" (raw bytes straight into the
 * buffer), "pread+convert" (raw bytes, then H5Tconvert), "hdf5" (H5Dread of the rank's
 * hyperslab through its own open), "mpiio" (collective MPI-IO). Not collective. */
const char *gp_h5_reader_how(const gp_h5_reader *r);

/* Closes a reader (NULL: nothing). Not collective. */
void gp_h5_reader_close(gp_h5_reader *r);

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

/* The length of one dataset of a writer and this rank's part of it [off, off + cnt), where
 * it differs from the writer's (gp_h5_writer_open_parts): e.g. a short dataset that rank 0
 * writes whole, or a dataset in input order beside one in sorted order. n_total < 0: the
 * writer's length and part. n_total is the same on every rank, and the ranks' parts tile
 * [0, n_total) exactly. */
typedef struct gp_h5_extent {
    int64_t n_total, off, cnt;
} gp_h5_extent;

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

/* gp_h5_write_many (stage = 0) or gp_h5_write_many_staged (stage = 1) with the driver `io`
 * (GP_IO_AUTO: gp_io_choose on rank 0 for the output's folder). The same checks, rules,
 * messages and codes with either driver, and the same data. Collective. */
int gp_h5_write_many_io(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                        const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off,
                        int64_t cnt, int force, char *msg, size_t msglen);

/* A new output file being written: gp_h5_write_many_io cut in three, so that a program can
 * write its part in pieces (e.g. through a few reused host buffers) instead of from one
 * buffer. */
typedef struct gp_h5_writer gp_h5_writer;

/* Makes every check of gp_h5_write_many_io, creates the file under its temporary name with
 * its datasets (ds[k].buf is not used; the ranks' parts [off, off+cnt) must tile
 * [0, n_total)), reserves its blocks and guards it against signals (as gp_h5_write). With
 * the posix driver rank 0 creates it and closes it again, and every rank opens it for
 * pwrite at the datasets' raw offsets; with mpiio it stays open on every rank. `stage`: the
 * finished file will be staged (gp_h5_publish) instead of renamed. Collective; *w is NULL on
 * failure (nothing left behind). Returns 0 or GP_IO_EWRITE. */
int gp_h5_writer_open(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                      const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off, int64_t cnt,
                      int force, gp_h5_writer **w, char *msg, size_t msglen);

/* gp_h5_writer_open where dataset k has the length and part ext[k] (ext: nds entries, or
 * NULL for none; an entry with n_total < 0 takes the writer's n_total, off and cnt). The
 * same checks, rules, messages and codes. Collective. */
int gp_h5_writer_open_parts(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                            const gp_h5_outds *ds, const gp_h5_extent *ext, int nds,
                            int64_t n_total, int64_t off, int64_t cnt, int force,
                            gp_h5_writer **w, char *msg, size_t msglen);

/* Writes the elements [off, off+cnt) of dataset k (the order of ds at the open) from buf
 * (cnt elements of ds[k].mem), converted to the stored type (a value outside its range is
 * an error). The range must lie in this rank's part of dataset k. posix driver: local; the error, if
 * any, is this rank's own (gp_h5_writer_close agrees on it; after an error further writes
 * do nothing and return it again). mpiio driver: collective (every rank calls it the same
 * number of times, cnt = 0 allowed; the error is agreed). Writes of any size. Test hook:
 * gp_h5_faults.pwrite makes this rank's posix writes fail (EIO). Returns 0 or GP_IO_EWRITE. */
int gp_h5_writer_write(gp_h5_writer *w, int k, int64_t off, int64_t cnt, const void *buf,
                       char *msg, size_t msglen);

/* The driver a writer writes with (GP_IO_POSIX or GP_IO_MPIIO; auto resolved). Local. */
gp_io_mode gp_h5_writer_io(const gp_h5_writer *w);

/* Finishes the file: the ranks agree on their write errors (the lowest failing rank's
 * message wins); with none and !cancel rank 0 renames it to its path (or stages it), else
 * removes it. `cancel` (the same on every rank): the caller failed in between (its own
 * error, agreed already); the file is removed and 0 returned. Frees w. Collective. Returns
 * 0 or GP_IO_EWRITE. */
int gp_h5_writer_close(gp_h5_writer *w, int cancel, char *msg, size_t msglen);

/* Test hooks of the I/O, for this process's rank. io/ reads no environment for them: the
 * program decides (gpuprim_mpi and gpuprim_gen from GPUPRIM_FAULT, src/fault.h) and hands
 * the decision over here. pread: the posix driver's reads fail as an I/O error (EIO) would;
 * pwrite: its writes do; tmpfile: the writer raises SIGTERM in this rank once the temporary
 * output file exists. The mpiio driver ignores pread and pwrite. */
typedef struct gp_h5_faults {
    int pread, pwrite, tmpfile;
} gp_h5_faults;

/* Sets the test hooks of this process (NULL: none, the start state). Not collective; call
 * it before the opens it is for. */
void gp_h5_set_faults(const gp_h5_faults *f);

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
