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

enum { RD_MPIIO, RD_HDF5, RD_PREAD, RD_CONVERT };

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
