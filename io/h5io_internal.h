/* h5io_internal.h — what the files of io/'s HDF5 layer (gpuprim/h5io.h) share: the error state
 * that travels between ranks, the inspected dataset, the reader's and the writer's records,
 * and the functions one file lends the others (named gp_h5io_*). Private: not installed. A
 * file that includes it defines _POSIX_C_SOURCE 200809L or more first.
 *
 * One file per concept, as HDF5's H5D package has one per layout:
 *   h5_error.c   HDF5's error text, the test hooks that make reads and writes fail
 *   h5_types.c   native types, the stored type's description and element type, range checks
 *   h5_open.c    the input's open, the dataset's choice and inspection, gp_h5_close
 *   h5_select.c  the ranks' ranges, hyperslab selections, the collective transfer (mpiio)
 *   h5_reader.c  the reader object, H5Dread of a rank's own hyperslab
 *   h5_posix.c   the posix driver's raw-offset pread and pwrite, with their conversions
 *   h5_chunks.c  the direct chunk path: a chunked dataset's chunks read with pread, decoded
 *                by a pool of threads, scattered into the shard
 *   h5_filters.c the filters undone by gpuprim itself (deflate, shuffle, fletcher32, LZF), a
 *                table
 *   h5_pool.c    the pool of decoding threads
 *   h5_lzf.c     HDF5's LZF filter (h5py's) on liblzf, registered with HDF5, and its decoder,
 *                which h5_filters.c's LZF row shares
 *   h5_target.c  the checks of an output path, the temporary name beside it
 *   h5_writer.c  the writer: create, write, finish, stage, publish, discard
 *   h5_guard.c   the temporary output file's guard against signals and exit()
 */
#ifndef GP_H5IO_INTERNAL_H
#define GP_H5IO_INTERNAL_H

#include "gpuprim/h5io.h"
#include "gp_path.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Largest memory transfer of one H5Dread/H5Dwrite call per rank (tests may lower it). */
#ifndef GP_H5_PIECE_BYTES
#define GP_H5_PIECE_BYTES ((int64_t)1 << 30)
#endif

#define EMSG 2048

/* Bytes of a temporary output name: the target's folder and "/.gpuprim.PID.tmp". */
#define GP_H5_TMPLEN (GP_H5_PATHLEN + 32)

/* ---- errors (the state here, HDF5's text in h5_error.c) -------------------------------- */

/* An error state that travels between ranks as plain bytes. */
typedef struct gp_err {
    int rc;
    char text[EMSG];
} gp_err;

/* Records the error rc with a printf-style message in e, unless e holds one already (the
 * first error wins). Local. */
static inline void fail(gp_err *e, int rc, const char *fmt, ...)
{
    if (e->rc) return; /* the first error wins */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
    gp_one_line(e->text); /* a newline in a file or dataset name shows as '?' */
    e->rc = rc;
}

/* Makes every rank agree on the outcome (gp_agree's rule: the lowest failing rank's code
 * and message). Returns the agreed code (0 when no rank failed). */
static inline int agree(MPI_Comm comm, gp_err *e)
{
    e->rc = gp_agree(comm, e->rc, e->text, sizeof e->text);
    return e->rc;
}

/* Hands e to the caller: its message into msg ("" on success), its code returned. */
static inline int finish(const gp_err *e, char *msg, size_t msglen)
{
    if (msg && msglen) snprintf(msg, msglen, "%s", e->rc ? e->text : "");
    return e->rc;
}

/* Stops HDF5 printing its error stack: io/ words every error itself. */
static inline void quiet_hdf5(void)
{
    /* failure only means HDF5 keeps printing its stack; nothing to agree on */
    if (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0) return;
}

/* The start of a call on the handle h (a reader, a writer): an empty error state in *e and
 * HDF5's stack quiet. Returns 0 to go on, or -1 with the error rc "WHAT" in e when h is NULL
 * (the caller returns finish(e, ...)). Local. */
static inline int begin_call(gp_err *e, const void *h, int rc, const char *what)
{
    memset(e, 0, sizeof *e);
    quiet_hdf5();
    if (h) return 0;
    fail(e, rc, "%s", what);
    return -1;
}

typedef struct h5why {
    char desc[512];
    int have;      /* desc holds a non-plugin entry */
    int notfound;  /* some entry has minor H5E_NOTFOUND */
    int writing;   /* the stack looks like a file another program is still writing: a
                      truncated file, an object header not on disk yet (bad version
                      number), the superblock's "already open for write" flags */
} h5why;

/* The most useful description on the current error stack (innermost first). Call right
 * after the failing HDF5 call: the next API call clears the stack. */
h5why gp_h5io_reason(void);

/* "; another program may still be writing or copying it: ..." when w->writing, else "":
 * the likely cause, for the messages of a file that cannot be opened or listed. */
const char *gp_h5io_writing_hint(const h5why *w);

/* This process's test hooks (gp_h5_set_faults): the program decides them, io/ only obeys. */
const gp_h5_faults *gp_h5io_faults(void);

/* ---- types (h5_types.c) ---------------------------------------------------------------- */

/* The native HDF5 type of element type t (H5I_INVALID_HID for an invalid t). */
hid_t gp_h5io_native(gp_dtype t);

/* Maps a stored numeric type to the element type it is read as, and describes it. */
int gp_h5io_map_type(hid_t type, gp_dtype *dt, char *desc, size_t desclen, char *why,
                     size_t whylen);

/* Writing: a value outside the stored type's range fails the write instead of being
 * clipped silently (HDF5's default). */
H5T_conv_ret_t gp_h5io_range_cb(H5T_conv_except_t ex, hid_t src, hid_t dst, void *s, void *d,
                                void *op);

/* ---- open (h5_open.c) ------------------------------------------------------------------ */

/* A numeric array dataset, opened and inspected. */
typedef struct dsinfo {
    hid_t did;
    hid_t type;
    gp_dtype dtype;
    char desc[64];
    int ndims;
    hsize_t dims[GP_H5_MAXDIMS];
    int64_t n;
} dsinfo;

/* "/" + p unless p is absolute already. */
int gp_h5io_abs_path(const char *p, char *out, size_t outlen);

/* Opens dataset `path` (absolute) of fid and checks that it is a numeric array. Local. */
void gp_h5io_ds_open(hid_t fid, const char *file, const char *path, dsinfo *d, gp_err *e);

/* Closes what gp_h5io_ds_open opened (nothing when it holds nothing). */
void gp_h5io_ds_close(dsinfo *d);

/* A file access list: the MPI-IO driver over comm, or (posix) sec2 read/write without a file
 * lock (the ranks' opens of one file must not lock each other out; none of them writes
 * what another reads). NULL-safe: returns H5I_INVALID_HID on failure. */
hid_t gp_h5io_access(MPI_Comm comm, gp_io_mode io);

/* ---- selection and transfer (h5_select.c) ---------------------------------------------- */

/* Checks that the ranks' [off, off+cnt) tile [0, n) exactly. Collective. */
void gp_h5io_check_tiling(MPI_Comm comm, const char *path, int64_t n, int64_t off,
                          int64_t cnt, gp_err *e);

/* Selects the flattened elements [s, s+c) of fspace (nothing when c = 0) and returns a
 * memory space of c elements (1 when c = 0, nothing selected), or H5I_INVALID_HID with e
 * set. */
hid_t gp_h5io_select_piece(hid_t fspace, int nd, const hsize_t *dims, int64_t s, int64_t c,
                           int code, const char *file, const char *dname, gp_err *e);

/* H5Dread / H5Dwrite of the selected piece; a failed write whose conversion found a value
 * out of range (*out_of_range, set by gp_h5io_range_cb) says so. */
void gp_h5io_move_piece(int writing, hid_t did, hid_t memtype, hid_t mspace, hid_t fspace,
                        hid_t dxpl, void *p, const int *out_of_range, const char *file,
                        const char *dname, gp_err *e);

/* Collective transfer of the flattened elements [off, off+cnt) of dataset did (nd dims)
 * to or from buf (memory type memtype, esz bytes each), in pieces of <= GP_H5_PIECE_BYTES
 * with the same number of H5Dread/H5Dwrite calls on every rank. */
void gp_h5io_transfer(MPI_Comm comm, int writing, hid_t did, int nd, const hsize_t *dims,
                      hid_t memtype, size_t esz, int64_t off, int64_t cnt, void *buf,
                      const char *file, const char *dname, gp_err *e);

/* ---- the reader (h5_reader.c, its posix reads in h5_posix.c) --------------------------- */

enum { RD_MPIIO, RD_HDF5, RD_PREAD, RD_CONVERT, RD_CHUNKS };

typedef struct gp_ck_reader gp_ck_reader; /* h5_chunks.c */

struct gp_h5_reader {
    MPI_Comm comm;
    int rank;
    const gp_h5_input *in;
    dsinfo x;             /* a dataset of its own (not in->dataset); x.did < 0 otherwise */
    hid_t did;            /* the dataset read: x.did or in->did */
    int nd;
    const hsize_t *dims;
    char dname[GP_H5_PATHLEN];
    gp_dtype as;
    size_t esz;           /* bytes of an element in memory */
    int how;              /* RD_* */
    int fd;               /* RD_PREAD / RD_CONVERT: the file that holds the raw data */
    int64_t raw;          /* its byte offset of element 0 */
    hid_t ftype;          /* RD_CONVERT: the stored type */
    size_t fsz;           /* bytes of a stored element */
    unsigned char *stage; /* RD_CONVERT to a narrower type: one piece of stored elements */
    gp_ck_reader *ck;     /* RD_CHUNKS: the chunks' reader */
};

/* ---- the writer (h5_writer.c, its posix writes in h5_posix.c) -------------------------- */

/* One dataset of a writer. */
typedef struct wds {
    char name[GP_H5_PATHLEN];
    hid_t ftype;  /* the stored type (a copy) */
    gp_dtype mem; /* the element type in memory */
    size_t msz, fsz;
    int same;     /* stored as the memory type: no conversion */
    int64_t n_total, off, cnt; /* its length and this rank's part (the writer's, or its own) */
    int64_t raw;  /* posix: the byte offset of element 0 in the file */
    hid_t did;    /* mpiio: the open dataset */
} wds;

struct gp_h5_writer {
    MPI_Comm comm;
    int rank, stage, created;
    gp_io_mode io;
    char path[GP_H5_PATHLEN];
    char tmp[GP_H5_TMPLEN];
    int nds;
    wds *ds;
    int64_t n_total, off, cnt;
    hid_t fid;           /* mpiio: every rank; posix: rank 0 while it creates the file */
    int fd;              /* posix: the file opened for pwrite */
    hid_t dxpl;          /* posix conversions: gp_h5io_range_cb reports into out_of_range */
    int out_of_range;
    unsigned char *cbuf; /* posix conversions: one piece */
    gp_err e;            /* this rank's first write error */
};

/* ---- the posix driver (h5_posix.c) ----------------------------------------------------- */

/* Plans a posix reader: r->how becomes RD_PREAD or RD_CONVERT where the raw data can be
 * read with pread (r->fd, r->raw, r->ftype, r->stage set), else stays RD_HDF5. Local. */
void gp_h5io_plan_posix(gp_h5_reader *r, gp_err *e);

/* RD_PREAD / RD_CONVERT: the elements [off, off+cnt) (checked by the caller) into buf, from
 * the raw data's file. `fault`: fail as an I/O error would (the test hook). Local. */
void gp_h5io_read_raw(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, int fault,
                      gp_err *e);

/* posix: rank 0 closes the new file (its metadata complete, the data's blocks allocated and
 * reserved), every rank learns the raw offsets and opens the file for pwrite. */
void gp_h5io_open_pwrite(gp_h5_writer *w, gp_err *e);

/* posix: dataset k's elements [off, off+cnt) from buf: pwrite at its raw offset, in
 * converted pieces where it is stored as another type. */
void gp_h5io_write_posix(gp_h5_writer *w, int k, int64_t off, int64_t cnt, const void *buf,
                         gp_err *e);

/* pread (writing = 0) or pwrite of len bytes at byte pos of fd, looping over partial
 * transfers and EINTR. Returns 0, or -1 with errno set (errno 0: the file ends before len
 * bytes could be read); *at is the byte where it stopped. `fault`: fail with EIO at once (the
 * test hook). Thread-safe. */
int gp_h5io_full_io(int writing, int fd, void *buf, size_t len, int64_t pos, int fault,
                    int64_t *at);

/* ---- the direct chunk path (h5_chunks.c, h5_filters.c, h5_pool.c) --------------------- */

/* The process's choice of chunk reads (gp_h5_set_chunk_reads; the defaults until then). */
const gp_h5_chunk_reads *gp_h5io_chunk_reads(void);

/* Plans a reader's direct chunk path: r->how becomes RD_CHUNKS (r->ck set) where the dataset
 * is chunked, every filter of its pipeline is one of h5_filters.c's, its file can be opened
 * for pread and it has no user block; else r->how stays as it was (the caller's H5Dread or
 * collective path). Never an error: what it cannot serve goes the old way. Local. */
void gp_h5io_plan_chunks(gp_h5_reader *r);

/* RD_CHUNKS: the elements [off, off+cnt) (checked by the caller) into buf: the chunks that
 * hold them read and decoded by the pool, in order, ahead of the reads to come within the
 * expected range (gp_h5io_chunks_expect), each scattered and converted into buf. A corrupt,
 * truncated or checksum-failing chunk fails with its offset named. Local. */
void gp_h5io_read_chunks(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, gp_err *e);

/* RD_CHUNKS: the reads to come go through [off, off+cnt) in increasing order (a no-op when
 * the current expectation already covers them from where the reads have got to). */
void gp_h5io_chunks_expect(gp_h5_reader *r, int64_t off, int64_t cnt);

/* The threads of one reader: `threads` when > 0, else the cores this process may run on
 * (`mine`), but no more than its share of the machine's `online` cores among `node_ranks`
 * ranks (at least 1). Pure. */
int gp_h5io_thread_share(int threads, int node_ranks, int mine, int online);

/* Frees r->ck (the threads stopped first). NULL-safe. */
void gp_h5io_chunks_close(gp_ck_reader *ck);

/* The pool: a task is a gp_pool_task at the start of the caller's record. */
typedef struct gp_pool_task {
    struct gp_pool_task *next;
    int done; /* 1 once run (-1: dropped by gp_h5io_pool_drain); read it through the pool */
} gp_pool_task;
typedef struct gp_pool gp_pool;
/* Runs task t on thread `worker` (0 .. threads-1); arg is the pool's. */
typedef void (*gp_pool_fn)(gp_pool_task *t, int worker, void *arg);

/* Starts nthreads (>= 1) threads that run fn on the submitted tasks. NULL on failure (no
 * thread left running) with the reason in why. */
gp_pool *gp_h5io_pool_create(int nthreads, gp_pool_fn fn, void *arg, char *why, size_t whylen);
/* The number of threads of p (0 for NULL). */
int gp_h5io_pool_threads(const gp_pool *p);
/* Queues t (first in, first out). Never fails. */
void gp_h5io_pool_submit(gp_pool *p, gp_pool_task *t);
/* Waits until t has run (or was dropped); at once when t->done was set before t was ever
 * submitted. NULL-safe. */
void gp_h5io_pool_wait(gp_pool *p, gp_pool_task *t);
/* Drops the queued tasks (done = -1) and waits for the running ones. NULL-safe. */
void gp_h5io_pool_drain(gp_pool *p);
/* gp_h5io_pool_drain, then stops the threads and frees p. NULL-safe. */
void gp_h5io_pool_destroy(gp_pool *p);

/* The filters (h5_filters.c). HDF5 allows 32 filters in a pipeline. */
#define GP_CK_MAXFILTERS 32
typedef struct gp_ck_decoder gp_ck_decoder;
typedef struct gp_ck_filter {
    const gp_ck_decoder *dec;
    unsigned cd[8]; /* the filter's client data (shuffle: the element size) */
} gp_ck_filter;
typedef struct gp_ck_pipe {
    int n;
    gp_ck_filter f[GP_CK_MAXFILTERS]; /* in the write path's order */
    size_t chunk_bytes;               /* a whole chunk of stored elements */
} gp_ck_pipe;
typedef struct gp_ck_scratch gp_ck_scratch; /* one decoding thread's state */

/* The pipeline of creation property list dcpl for chunks of chunk_bytes into *p: 0, or -1
 * with why when a filter is not in the table or the sizes cannot be followed. */
int gp_h5io_pipe_plan(hid_t dcpl, size_t chunk_bytes, gp_ck_pipe *p, char *why, size_t whylen);
/* 1 when some filter of p is applied to a chunk with filter mask `mask`, else 0. */
int gp_h5io_pipe_active(const gp_ck_pipe *p, unsigned mask);
/* Undoes the filters of p not skipped by `mask` on the n stored bytes raw, the restored chunk
 * (p->chunk_bytes) into out: 0, or -1 with why (corrupt, truncated, checksum, memory).
 * Thread-safe with one scratch per thread. */
int gp_h5io_pipe_undo(const gp_ck_pipe *p, gp_ck_scratch *s, unsigned mask,
                      const unsigned char *raw, size_t n, unsigned char *out, char *why,
                      size_t whylen);
/* A thread's scratch (NULL: out of memory), its raw buffer grown to n bytes (NULL: out of
 * memory), and its release. */
gp_ck_scratch *gp_h5io_scratch_new(void);
unsigned char *gp_h5io_scratch_raw(gp_ck_scratch *s, size_t n);
void gp_h5io_scratch_free(gp_ck_scratch *s);
/* HDF5's Fletcher-32 checksum of n bytes. */
uint32_t gp_h5io_fletcher32(const void *data, size_t n);
/* The inflate library built in: "libdeflate", "zlib" or "none". */
const char *gp_h5io_inflater(void);
/* LZF (h5_lzf.c; built with liblzf only, GPUPRIM_HAVE_LZF): decodes the LZF stream of the n
 * bytes at in into out, which has room for cap bytes. want > 0: the stream must decode to
 * exactly want bytes (cap >= want). Returns 0 with *got the decoded count; 1 (want == 0
 * only) when the stream holds more than cap bytes, so that the caller may grow out; -1 with
 * why ("LZF chunk is corrupt: ...") for a stream that is invalid or decodes to another
 * size, a stored size n of 0 or over 4 GiB (refused before out is touched), or want over
 * 4 GiB. No HDF5 call: safe on any thread (h5_filters.c's LZF row, HDF5's filter). */
int gp_h5io_lzf_decode(const void *in, size_t n, void *out, size_t cap, size_t want,
                       size_t *got, char *why, size_t whylen);
/* 1 when the filter 32000 HDF5 applies is gpuprim's own, built on liblzf (registered by
 * gp_h5_register_filters, which this calls first), else 0: an LZF filter of the application
 * or a plugin (HDF5_PLUGIN_PATH) stays the one that reads, through H5Dread. */
int gp_h5io_lzf_ours(void);

/* ---- the output's target and guard (h5_target.c, h5_guard.c) --------------------------- */

/* Rank 0: checks the target `path` (gp_h5_check_target's checks), picks the temporary name
 * beside it into tmp (GP_H5_TMPLEN bytes) and the driver for its folder (gp_io_choose of io)
 * into *mode. Local. */
void gp_h5io_pick_tmp(const char *path, int force, gp_io_mode io, char *tmp, int *mode,
                      gp_err *e);

/* Guards the temporary file tmp against signals and exit() (on = 1), or stops guarding it
 * (on = 0; tmp is not used). One file at a time. Not collective. */
void gp_h5io_guard(const char *tmp, int on);

/* 1 while a file is guarded, else 0. */
int gp_h5io_guarding(void);

/* The name of the file guarded last (still guarded while gp_h5io_guarding()). */
const char *gp_h5io_guarded_path(void);

#endif /* GP_H5IO_INTERNAL_H */
