/* h5_open.c — the input side's open (gpuprim/h5io.h): the file with the chosen driver, the
 * dataset named or the one numeric dataset found, its inspection (element type, dataspace,
 * dangling links named), gp_h5_close, and the process settings a reading program makes once
 * (Open MPI's shared-file-pointer component, glibc's thresholds for HDF5's filter buffers). */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"
#include "gp_suggest.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a dataset, opened and inspected --------------------------------------------------- */

int gp_h5io_abs_path(const char *p, char *out, size_t outlen)
{
    int k = snprintf(out, outlen, "%s%s", p[0] == '/' ? "" : "/", p);
    return (k < 0 || (size_t)k >= outlen) ? -1 : 0;
}

void gp_h5io_ds_close(dsinfo *d)
{
    if (d->type >= 0 && H5Tclose(d->type) < 0) { /* nothing more to do */ }
    if (d->did >= 0 && H5Dclose(d->did) < 0) { /* nothing more to do */ }
    d->type = d->did = H5I_INVALID_HID;
}

/* After opening `path` (absolute) failed: finds the first soft or external link on the way
 * (a group above it or the path itself) whose target does not resolve, and if there is one
 * records "link target missing" in e and returns 1; else 0 (the caller says why). Follows
 * the same links as the failed open, in the same order on every rank, so an external file
 * it opens with the parent's MPI-IO access is opened collectively. */
static int dangling_link(hid_t fid, const char *file, const char *path, gp_err *e)
{
    char pre[GP_H5_PATHLEN];
    size_t len = strlen(path);
    if (len >= sizeof pre) return 0;
    for (size_t i = 1; i <= len; i++) {
        if ((i < len && path[i] != '/') || path[i - 1] == '/') continue;
        memcpy(pre, path, i);
        pre[i] = '\0';
        H5L_info_t li;
        htri_t have = H5Lexists(fid, pre, H5P_DEFAULT);
        if (have <= 0 || H5Lget_info(fid, pre, &li, H5P_DEFAULT) < 0) return 0;
        if (li.type != H5L_TYPE_SOFT && li.type != H5L_TYPE_EXTERNAL) continue;
        if (H5Oexists_by_name(fid, pre, H5P_DEFAULT) > 0) continue;
        /* dangling (0; for an external link also a file that is missing or not HDF5) or
         * not to be inspected (< 0): name the target */
        char target[GP_H5_PATHLEN + 64] = "?";
        char *val = li.u.val_size > 0 ? malloc(li.u.val_size) : NULL;
        if (val && H5Lget_val(fid, pre, val, li.u.val_size, H5P_DEFAULT) >= 0) {
            const char *ef = NULL, *eo = NULL;
            if (li.type == H5L_TYPE_SOFT)
                snprintf(target, sizeof target, "%.*s", (int)li.u.val_size, val);
            else if (H5Lunpack_elink_val(val, li.u.val_size, NULL, &ef, &eo) >= 0 && ef && eo)
                snprintf(target, sizeof target, "%.512s:%.512s", ef, eo);
        }
        free(val);
        fail(e, GP_IO_EDATASET, "%s: %s: link target missing (%s link %s%s-> %s)", file, path,
             li.type == H5L_TYPE_SOFT ? "soft" : "external", i < len ? pre : "",
             i < len ? " " : "", target);
        return 1;
    }
    return 0;
}

static void near_datasets(hid_t fid, const char *path, char *hint, size_t len);

/* After H5Oopen of `path` failed (HDF5's error stack as it left it): why, into e: a link
 * on the way whose target is missing, no such object (with the nearest datasets), or
 * HDF5's reason (with the likely cause of a file still being written). */
static void not_opened(hid_t fid, const char *file, const char *path, gp_err *e)
{
    const h5why w = gp_h5io_reason();
    if (dangling_link(fid, file, path, e)) return;
    if (w.notfound) {
        char hint[600];
        near_datasets(fid, path, hint, sizeof hint);
        fail(e, GP_IO_EDATASET, "%s: %s: no such dataset%s", file, path, hint);
    } else {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot open (%s)%s", file, path, w.desc,
             gp_h5io_writing_hint(&w));
    }
}

void gp_h5io_ds_open(hid_t fid, const char *file, const char *path, dsinfo *d, gp_err *e)
{
    char why[256];
    hid_t space = H5I_INVALID_HID;
    memset(d, 0, sizeof *d);
    d->did = d->type = H5I_INVALID_HID;

    hid_t obj = H5Oopen(fid, path, H5P_DEFAULT);
    if (obj < 0) {
        not_opened(fid, file, path, e);
        return;
    }
    H5I_type_t it = H5Iget_type(obj);
    if (it != H5I_DATASET) {
        fail(e, GP_IO_EDATASET, "%s: %s: not a dataset (a %s)", file, path,
             it == H5I_GROUP ? "group"
                             : it == H5I_DATATYPE ? "named datatype" : "non-dataset object");
        if (H5Oclose(obj) < 0) { /* already failing */ }
        return;
    }
    d->did = obj;
    d->type = H5Dget_type(d->did);
    if (d->type < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot get the element type (%s)", file, path,
             gp_h5io_reason().desc);
        goto bad;
    }
    if (gp_h5io_map_type(d->type, &d->dtype, d->desc, sizeof d->desc, why, sizeof why) < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: %s", file, path, why);
        goto bad;
    }
    space = H5Dget_space(d->did);
    if (space < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot get the dataspace (%s)", file, path,
             gp_h5io_reason().desc);
        goto bad;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    if (sc == H5S_SCALAR) {
        fail(e, GP_IO_EDATASET, "%s: %s: scalar dataspace (need an array)", file, path);
        goto bad;
    }
    if (sc == H5S_NULL) {
        fail(e, GP_IO_EDATASET, "%s: %s: null dataspace (need an array)", file, path);
        goto bad;
    }
    int nd = H5Sget_simple_extent_ndims(space);
    if (sc != H5S_SIMPLE || nd < 1 || nd > GP_H5_MAXDIMS ||
        H5Sget_simple_extent_dims(space, d->dims, NULL) < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot read the dataspace extent", file, path);
        goto bad;
    }
    d->ndims = nd;
    d->n = 1;
    for (int i = 0; i < nd; i++) {
        if (d->dims[i] == 0) {
            d->n = 0;
        } else if (d->n > 0) {
            if (d->dims[i] > (hsize_t)(INT64_MAX / d->n)) {
                fail(e, GP_IO_EDATASET, "%s: %s: more than 2^63-1 elements", file, path);
                goto bad;
            }
            d->n *= (int64_t)d->dims[i];
        }
    }
    if (H5Sclose(space) < 0) {
        space = H5I_INVALID_HID;
        fail(e, GP_IO_EDATASET, "%s: %s: H5Sclose failed", file, path);
        goto bad;
    }
    return;
bad:
    if (space >= 0 && H5Sclose(space) < 0) { /* already failing */ }
    gp_h5io_ds_close(d);
}

/* ---- the default dataset --------------------------------------------------------------- */

typedef struct cands {
    int count;
    int truncated;
    int err;
    size_t first_too_long; /* the first's path length when it is GP_H5_PATHLEN or more, else 0 */
    char first[GP_H5_PATHLEN];
    char list[1400];
    size_t len;
    gp_suggest *near;      /* when set, every candidate is offered to it too */
} cands;

/* H5Ovisit2's callback: counts the numeric array datasets of the file in op (a cands), the
 * first one's path and a list for the message; -1 stops the visit when HDF5 fails. */
static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *op)
{
    cands *c = op;
    if (info->type != H5O_TYPE_DATASET) return 0;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    if (d < 0) {
        c->err = 1;
        return -1;
    }
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    H5S_class_t sc = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    int bad = t < 0 || cls == H5T_NO_CLASS || sp < 0 || sc == H5S_NO_CLASS;
    if (t >= 0 && H5Tclose(t) < 0) bad = 1;
    if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    if (H5Dclose(d) < 0) bad = 1;
    if (bad) {
        c->err = 1;
        return -1;
    }
    /* candidates: numeric arrays (a scalar or null dataspace holds no array to read) */
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || sc != H5S_SIMPLE) return 0;
    char p[GP_H5_PATHLEN];
    if (gp_h5io_abs_path(name, p, sizeof p) < 0) {
        /* counted, so that it is never silently passed over for another dataset */
        const size_t plen = strlen(name) + (name[0] != '/');
        snprintf(p, sizeof p, "(a path of %zu bytes)", plen);
        if (c->count == 0) c->first_too_long = plen;
    }
    if (c->near) gp_suggest_add(c->near, p);
    if (c->count++ == 0) snprintf(c->first, sizeof c->first, "%s", p);
    size_t need = strlen(p) + 2;
    if (c->truncated || c->len + need + 8 >= sizeof c->list) {
        c->truncated = 1;
        return 0;
    }
    c->len += (size_t)snprintf(c->list + c->len, sizeof c->list - c->len, "%s%s",
                               c->len ? ", " : "", p);
    return 0;
}

/* After `path` was not found in fid: " (did you mean /grid/temp?)" with the file's numeric
 * datasets nearest to it (gp_suggest.h), else " (numeric datasets in the file: /a, /b)"
 * when there are at most 4, " (the file has no numeric dataset)" when there are none, or
 * "" (more, none near, or the listing failed) into hint. Local: every rank visits the same
 * metadata, as find_numeric does. */
static void near_datasets(hid_t fid, const char *path, char *hint, size_t len)
{
    cands *c = calloc(1, sizeof *c);
    gp_suggest *sg = malloc(sizeof *sg);
    hint[0] = '\0';
    if (c && sg) {
        gp_suggest_start(sg, path, GP_SUGGEST_PATH);
        c->near = sg;
        char text[560];
        const herr_t st = H5Ovisit2(fid, H5_INDEX_NAME, H5_ITER_INC, visit_cb, c, H5O_INFO_BASIC);
        if (st < 0 || c->err) { /* no hint */
        } else if (gp_suggest_text(sg, "", text, sizeof text)[0]) {
            snprintf(hint, len, " (%s)", text);
        } else if (c->count == 0) {
            snprintf(hint, len, " (the file has no numeric dataset)");
        } else if (c->count <= 4 && !c->truncated) {
            snprintf(hint, len, " (numeric datasets in the file: %.500s)", c->list);
        }
    }
    free(sg);
    free(c);
}

/* ---- the file -------------------------------------------------------------------------- */

/* Closes what in holds open, if anything (collective under MPI-IO, as H5Fclose is). */
static void close_input(gp_h5_input *in)
{
    if (in->ftype >= 0 && H5Tclose(in->ftype) < 0) { /* nothing more to do */ }
    if (in->did >= 0 && H5Dclose(in->did) < 0) { /* nothing more to do */ }
    if (in->fid >= 0 && H5Fclose(in->fid) < 0) { /* nothing more to do */ }
    in->ftype = in->did = in->fid = H5I_INVALID_HID;
}

void gp_h5_close(gp_h5_input *in)
{
    if (!in) return;
    quiet_hdf5();
    close_input(in);
}

hid_t gp_h5io_access(MPI_Comm comm, gp_io_mode io)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return H5I_INVALID_HID;
    herr_t st = io == GP_IO_MPIIO ? H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL)
                                  : H5Pset_fapl_sec2(fapl);
    if (st >= 0 && io != GP_IO_MPIIO) st = H5Pset_file_locking(fapl, 0, 1);
    if (st < 0) {
        if (H5Pclose(fapl) < 0) { /* failing already */ }
        return H5I_INVALID_HID;
    }
    return fapl;
}

int gp_h5_open(MPI_Comm comm, const char *file, const char *dataset, gp_h5_input *in,
               char *msg, size_t msglen)
{
    return gp_h5_open_io(comm, file, dataset, GP_IO_MPIIO, in, msg, msglen);
}

/* ---- gp_h5_open_io, step by step ------------------------------------------------------- */

/* Starts the input record: in reset (nothing open), the file name copied, this rank's
 * number in *rank. Local: the next step agrees. */
static void start_input(MPI_Comm comm, const char *file, gp_h5_input *in, int *rank,
                        gp_err *e)
{
    memset(in, 0, sizeof *in);
    in->fid = in->did = in->ftype = H5I_INVALID_HID;
    if (!file || !file[0])
        fail(e, GP_IO_EOPEN, "(no file): cannot open: no file name given");
    else if (strlen(file) >= sizeof in->file)
        fail(e, GP_IO_EOPEN, "%.64s...: cannot open: file name too long", file);
    else
        snprintf(in->file, sizeof in->file, "%s", file);
    if (MPI_Comm_rank(comm, rank) != MPI_SUCCESS)
        fail(e, GP_IO_EOPEN, "%s: cannot open: MPI_Comm_rank failed", in->file);
}

/* Rank 0 looks at the file first, so that errno's reason reaches every rank, and chooses
 * the driver for `io` (gp_io_choose); every rank gets its answer in in->io. Collective.
 * Returns the agreed code of the checks; a failed broadcast stays this rank's own error in
 * e, which open_file agrees on. */
static int choose_driver(MPI_Comm comm, int rank, const char *file, gp_io_mode io,
                         gp_h5_input *in, gp_err *e)
{
    int mode = GP_IO_MPIIO;
    if (rank == 0 && !e->rc) {
        struct stat st;
        gp_io_env env;
        /* the file system's own reason where it has one (a missing file is not "not
         * HDF5"); HDF5's verdict on the bytes comes with the open itself */
        if (stat(file, &st) != 0)
            fail(e, GP_IO_EOPEN, "%s: cannot open: %s", file, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            fail(e, GP_IO_EOPEN, "%s: cannot open: %s, not an HDF5 file", file,
                 strerror(EISDIR));
        else if (access(file, R_OK) != 0)
            fail(e, GP_IO_EOPEN, "%s: cannot open: %s", file, strerror(errno));
        gp_io_env_of(file, &env);
        mode = (int)gp_io_choose(io, &env);
    }
    if (agree(comm, e)) return e->rc;
    if (MPI_Bcast(&mode, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        fail(e, GP_IO_EOPEN, "%s: cannot open: MPI_Bcast failed", file);
    in->io = (gp_io_mode)mode;
    return 0;
}

/* Opens the file read-only with in->io's driver into in->fid (mpiio: every rank together).
 * Returns the agreed code. */
static int open_file(MPI_Comm comm, const char *file, gp_h5_input *in, gp_err *e)
{
    const hid_t fapl = gp_h5io_access(comm, in->io);
    if (fapl < 0) {
        fail(e, GP_IO_EOPEN, "%s: cannot open: cannot set up the %s file access (%s)", file,
             in->io == GP_IO_MPIIO ? "MPI-IO" : "POSIX", gp_h5io_reason().desc);
    } else {
        in->fid = H5Fopen(file, H5F_ACC_RDONLY, fapl);
        if (in->fid < 0) {
            const h5why w = gp_h5io_reason();
            fail(e, GP_IO_EOPEN, "%s: cannot open: not an HDF5 file or unreadable (%s)%s",
                 file, w.desc, gp_h5io_writing_hint(&w));
        }
    }
    if (fapl >= 0 && H5Pclose(fapl) < 0)
        fail(e, GP_IO_EOPEN, "%s: cannot open: H5Pclose failed", file);
    return agree(comm, e);
}

/* The path of the one numeric dataset of fid into path (GP_H5_PATHLEN bytes), else an
 * error that says why: none, several (listed, for --dataset), or a path too long. Local:
 * every rank visits the same metadata. */
static void find_numeric(hid_t fid, const char *file, char *path, gp_err *e)
{
    cands *c = calloc(1, sizeof *c);
    if (!c) {
        fail(e, GP_IO_EDATASET, "%s: out of memory", file);
        return;
    }
    herr_t st = H5Ovisit2(fid, H5_INDEX_NAME, H5_ITER_INC, visit_cb, c, H5O_INFO_BASIC);
    if (st < 0 || c->err) {
        const h5why w = gp_h5io_reason();
        fail(e, GP_IO_EDATASET, "%s: cannot list the datasets (%s)%s", file, w.desc,
             gp_h5io_writing_hint(&w));
    }
    else if (c->count == 0)
        fail(e, GP_IO_EDATASET, "%s: no numeric dataset in the file", file);
    else if (c->count > 1)
        fail(e, GP_IO_EDATASET, "%s: %d numeric datasets, choose one with --dataset: %s%s",
             file, c->count, c->list, c->truncated ? ", ..." : "");
    else if (c->first_too_long)
        fail(e, GP_IO_EDATASET,
             "%s: the numeric dataset's path has %zu bytes, more than the %d supported",
             file, c->first_too_long, GP_H5_PATHLEN - 1);
    else
        snprintf(path, GP_H5_PATHLEN, "%s", c->first);
    free(c);
}

/* The dataset to open as an absolute path into path (GP_H5_PATHLEN bytes): `dataset` when
 * given, else the one numeric dataset of the file. Returns the agreed code. */
static int choose_dataset(MPI_Comm comm, hid_t fid, const char *file, const char *dataset,
                          char *path, gp_err *e)
{
    if (!dataset)
        find_numeric(fid, file, path, e);
    else if (!dataset[0])
        fail(e, GP_IO_EDATASET, "%s: empty dataset name", file);
    else if (gp_h5io_abs_path(dataset, path, GP_H5_PATHLEN) < 0)
        fail(e, GP_IO_EDATASET, "%s: %.64s...: dataset name too long", file, dataset);
    return agree(comm, e);
}

/* Opens and inspects dataset `path` of in->fid and fills in the rest of *in: the dataset,
 * the element type it is read as and its stored type (a copy). Returns the agreed code. */
static int open_dataset(MPI_Comm comm, const char *file, const char *path, gp_h5_input *in,
                        gp_err *e)
{
    dsinfo d;
    gp_h5io_ds_open(in->fid, file, path, &d, e);
    if (!e->rc) {
        snprintf(in->dataset, sizeof in->dataset, "%s", path);
        in->dtype = d.dtype;
        snprintf(in->type_desc, sizeof in->type_desc, "%s", d.desc);
        in->ndims = d.ndims;
        memcpy(in->dims, d.dims, sizeof d.dims);
        in->n = d.n;
        in->ftype = H5Tcopy(d.type);
        if (in->ftype < 0)
            fail(e, GP_IO_EDATASET, "%s: %s: H5Tcopy failed (%s)", file, path,
                 gp_h5io_reason().desc);
        in->did = d.did;
        d.did = H5I_INVALID_HID;
    }
    gp_h5io_ds_close(&d);
    return agree(comm, e);
}

/* The steps above in order, each agreed before the next (but for choose_driver's broadcast,
 * which open_file agrees on); on any error everything opened is closed again. */
int gp_h5_open_io(MPI_Comm comm, const char *file, const char *dataset, gp_io_mode io,
                  gp_h5_input *in, char *msg, size_t msglen)
{
    gp_err e;
    int rank = 0;
    char path[GP_H5_PATHLEN];
    gp_h5_register_filters(); /* LZF (h5_lzf.c); a failure shows at the read */
    if (begin_call(&e, in, GP_IO_EOPEN, "gp_h5_open: no input record")) {
        agree(comm, &e);
        return finish(&e, msg, msglen);
    }
    start_input(comm, file, in, &rank, &e);
    if (!choose_driver(comm, rank, file, io, in, &e) && !open_file(comm, file, in, &e) &&
        !choose_dataset(comm, in->fid, file, dataset, path, &e))
        open_dataset(comm, file, path, in, &e);
    if (e.rc) close_input(in);
    return finish(&e, msg, msglen);
}

void gp_h5_mpi_io_env(void) { setenv("OMPI_MCA_sharedfp", "^lockedfile,individual", 0); }

void gp_h5_malloc_tune(void)
{
#ifdef __GLIBC__
    /* failure leaves glibc's defaults, which work, only slower */
    if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 1 << 30) != 1)
        return;
#endif
}
