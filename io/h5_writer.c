/* h5_writer.c — a new output file (gpuprim/h5io.h: gp_h5_writer, gp_h5_write*): the request
 * checked, the file created under a temporary name beside the target (h5_target.c) and
 * guarded (h5_guard.c), its datasets allocated and its blocks reserved before any data
 * moves, the parts written (mpiio: the collective transfer of h5_select.c; posix: pwrite,
 * h5_posix.c), then renamed, staged for gp_h5_publish / gp_h5_discard, or removed. */
#define _GNU_SOURCE /* fallocate(FALLOC_FL_KEEP_SIZE): reserving the output's blocks */
#include "h5io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rank 0 reserves the blocks of the file as HDF5 has laid it out so far (every dataset
 * allocated) plus 64 KiB for the metadata written at close, without changing its size
 * (FALLOC_FL_KEEP_SIZE). Where the file system cannot reserve (EOPNOTSUPP), nothing is
 * done. The file size is asked of HDF5 on every rank that has the file open (mpiio: all;
 * posix: rank 0, which alone creates it). */
static void reserve_blocks(hid_t fid, const char *tmp, const char *path, int rank, gp_err *e)
{
    hsize_t size = 0;
    if (H5Fget_filesize(fid, &size) < 0) {
        fail(e, GP_IO_EWRITE, "%s: cannot size %s (%s)", path, tmp, gp_h5io_reason().desc);
        return;
    }
    if (rank != 0) return;
    const off_t want = (off_t)size + ((off_t)1 << 16);
    int fd = open(tmp, O_WRONLY);
    if (fd < 0) {
        fail(e, GP_IO_EWRITE, "%s: cannot open %s (%s)", path, tmp, strerror(errno));
        return;
    }
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, want) != 0 && errno != EOPNOTSUPP &&
        errno != ENOSYS)
        fail(e, GP_IO_EWRITE, "%s: cannot reserve %lld bytes for it (%s)", path,
             (long long)want, strerror(errno));
    close(fd);
}

/* The file gp_h5_write_many_staged finished and left under its temporary name (rank 0;
 * the name is gp_h5io_guarded_path(), still guarded against signals): its target, and
 * whether there is one. */
static char g_staged_path[GP_H5_PATHLEN];
static int g_staged;

/* Whether dataset k has a length and part of its own (gp_h5_writer_open_parts). */
#define OWN(ext, k) ((ext) && (ext)[k].n_total >= 0)

/* The checks of a write request before anything is created (local). */
static void check_request(const char *path, const gp_h5_outds *ds, const gp_h5_extent *ext,
                          int nds, int64_t n_total, int64_t off, int64_t cnt, int need_buf,
                          int stage, gp_err *e)
{
    const char *P = path ? path : "(no path)";
    if (!path || !path[0] || strlen(path) >= GP_H5_PATHLEN)
        fail(e, GP_IO_EWRITE, "%.64s: bad output file name", P);
    else if (!ds || nds < 1)
        fail(e, GP_IO_EWRITE, "%s: no dataset to write", P);
    else if (n_total < 0 || off < 0 || cnt < 0 || off > n_total || cnt > n_total - off)
        fail(e, GP_IO_EWRITE, "%s: part [%lld, +%lld) outside the %lld elements", P,
             (long long)off, (long long)cnt, (long long)n_total);
    for (int k = 0; !e->rc && k < nds; k++) {
        const char *dset = ds[k].dset, *D = dset ? dset : "(no dataset)";
        if (!dset || !dset[0] || strlen(dset) >= GP_H5_PATHLEN)
            fail(e, GP_IO_EWRITE, "%s: bad dataset name", P);
        else if (gp_dtype_size(ds[k].mem) == 0)
            fail(e, GP_IO_EWRITE, "%s: %s: invalid element type %d", P, D, (int)ds[k].mem);
        else if (OWN(ext, k) && (ext[k].off < 0 || ext[k].cnt < 0 || ext[k].off > ext[k].n_total ||
                                 ext[k].cnt > ext[k].n_total - ext[k].off))
            fail(e, GP_IO_EWRITE, "%s: %s: part [%lld, +%lld) outside its %lld elements", P, D,
                 (long long)ext[k].off, (long long)ext[k].cnt, (long long)ext[k].n_total);
        else if (need_buf && (OWN(ext, k) ? ext[k].cnt : cnt) > 0 && !ds[k].buf)
            fail(e, GP_IO_EWRITE, "%s: %s: no buffer", P, D);
        if (!e->rc && ds[k].file_type != H5I_INVALID_HID) {
            hid_t ft = ds[k].file_type;
            H5T_class_t cls = H5Iget_type(ft) == H5I_DATATYPE ? H5Tget_class(ft) : H5T_NO_CLASS;
            if (cls != H5T_INTEGER && cls != H5T_FLOAT)
                fail(e, GP_IO_EWRITE,
                     "%s: %s: the stored type must be an integer or float type", P, D);
        }
    }
    if (!e->rc && stage && g_staged)
        fail(e, GP_IO_EWRITE, "%s: another file is staged already (%s)", P, g_staged_path);
}

static void writer_free(gp_h5_writer *w)
{
    if (!w) return;
    for (int k = 0; w->ds && k < w->nds; k++)
        if (w->ds[k].ftype >= 0 && H5Tclose(w->ds[k].ftype) < 0) { /* nothing more to do */ }
    if (w->dxpl >= 0 && H5Pclose(w->dxpl) < 0) { /* nothing more to do */ }
    free(w->cbuf);
    free(w->ds);
    free(w);
}

/* A writer for a checked request, nothing created yet (local). NULL with e set. */
static gp_h5_writer *writer_new(MPI_Comm comm, int rank, int stage, const char *path,
                                const gp_h5_outds *ds, const gp_h5_extent *ext, int nds,
                                int64_t n_total, int64_t off, int64_t cnt, gp_err *e)
{
    gp_h5_writer *w = calloc(1, sizeof *w);
    wds *d = calloc((size_t)nds, sizeof *d);
    if (!w || !d) {
        fail(e, GP_IO_EWRITE, "%s: out of memory", path);
        free(w);
        free(d);
        return NULL;
    }
    *w = (gp_h5_writer){comm, rank, stage, 0, GP_IO_MPIIO, "", "", nds, d, n_total, off, cnt,
                        H5I_INVALID_HID, -1, H5I_INVALID_HID, 0, NULL, {0, ""}};
    snprintf(w->path, sizeof w->path, "%s", path);
    for (int k = 0; k < nds; k++) {
        snprintf(d[k].name, sizeof d[k].name, "%s", ds[k].dset);
        d[k].mem = ds[k].mem;
        d[k].msz = gp_dtype_size(ds[k].mem);
        d[k].n_total = OWN(ext, k) ? ext[k].n_total : n_total;
        d[k].off = OWN(ext, k) ? ext[k].off : off;
        d[k].cnt = OWN(ext, k) ? ext[k].cnt : cnt;
        d[k].did = H5I_INVALID_HID;
        d[k].ftype = H5Tcopy(ds[k].file_type != H5I_INVALID_HID ? ds[k].file_type
                                                                : gp_h5io_native(ds[k].mem));
        d[k].fsz = d[k].ftype >= 0 ? H5Tget_size(d[k].ftype) : 0;
        const htri_t same = d[k].ftype >= 0 ? H5Tequal(d[k].ftype, gp_h5io_native(ds[k].mem)) : -1;
        d[k].same = same > 0;
        if (d[k].fsz == 0 || same < 0)
            fail(e, GP_IO_EWRITE, "%s: %s: cannot copy the stored type (%s)", path, d[k].name,
                 gp_h5io_reason().desc);
    }
    if (e->rc) {
        writer_free(w);
        return NULL;
    }
    return w;
}

/* Creates the temporary file (mpiio: every rank, collectively; posix: rank 0 alone) and,
 * once every rank knows that it exists, guards it on every rank. */
static void create_file(gp_h5_writer *w, gp_err *e)
{
    if (w->io == GP_IO_MPIIO || w->rank == 0) {
        hid_t fapl = gp_h5io_access(w->comm, w->io);
        if (fapl < 0) {
            fail(e, GP_IO_EWRITE, "%s: cannot set up the %s file access (%s)", w->path,
                 w->io == GP_IO_MPIIO ? "MPI-IO" : "POSIX", gp_h5io_reason().desc);
        } else {
            w->fid = H5Fcreate(w->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
            if (w->fid < 0)
                fail(e, GP_IO_EWRITE, "%s: cannot create %s (%s)", w->path, w->tmp,
                     gp_h5io_reason().desc);
        }
        if (fapl >= 0 && H5Pclose(fapl) < 0) fail(e, GP_IO_EWRITE, "%s: H5Pclose failed", w->path);
    }
    if (w->rank == 0) {
        struct stat st;
        w->created = lstat(w->tmp, &st) == 0; /* ours: it did not exist before */
        if (w->created) gp_h5io_guard(w->tmp, 1);
    }
    if (agree(w->comm, e)) return;
    /* the exclusive create succeeded: the other ranks guard it too */
    if (w->rank != 0) gp_h5io_guard(w->tmp, 1);
    /* test hook (gp_h5_faults.tmpfile): this rank dies of SIGTERM while the temporary file
     * exists */
    if (gp_h5io_faults()->tmpfile) raise(SIGTERM);
}

/* Every dataset first (allocated at creation: contiguous, early, no fill, no timestamps for
 * reproducible bytes), then the file's blocks reserved, so that a full disk or quota fails
 * here on every rank, before any data moves. (Open MPI's collective writes were seen to
 * lose ENOSPC at 3 or more ranks and leave a file of zeros that HDF5 closed without an
 * error.) posix: rank 0 alone, and it notes each dataset's raw offset. */
static void create_datasets(gp_h5_writer *w, gp_err *e)
{
    const int creator = w->io == GP_IO_MPIIO || w->rank == 0;
    hid_t lcpl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
    if (creator) {
        lcpl = H5Pcreate(H5P_LINK_CREATE);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (lcpl < 0 || dcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
            H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
            H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
            H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0)
            fail(e, GP_IO_EWRITE, "%s: cannot set up the datasets (%s)", w->path,
                 gp_h5io_reason().desc);
    }
    for (int k = 0; k < w->nds && !agree(w->comm, e); k++) {
        wds *d = &w->ds[k];
        if (!creator) continue;
        hsize_t dim = (hsize_t)d->n_total;
        hid_t space = H5Screate_simple(1, &dim, NULL);
        hid_t did = space < 0 ? H5I_INVALID_HID
                              : H5Dcreate2(w->fid, d->name, d->ftype, space, lcpl, dcpl,
                                           H5P_DEFAULT);
        if (space >= 0 && H5Sclose(space) < 0)
            fail(e, GP_IO_EWRITE, "%s: H5Sclose failed", w->path);
        if (did < 0) {
            fail(e, GP_IO_EWRITE, "%s: %s: cannot create the dataset (%s)", w->path, d->name,
                 gp_h5io_reason().desc);
            continue;
        }
        const haddr_t a = w->io == GP_IO_POSIX ? H5Dget_offset(did) : HADDR_UNDEF;
        if (w->io == GP_IO_POSIX && (a != HADDR_UNDEF ? a > (haddr_t)INT64_MAX : d->n_total > 0))
            fail(e, GP_IO_EWRITE, "%s: %s: cannot locate the new dataset's data", w->path, d->name);
        d->raw = a != HADDR_UNDEF ? (int64_t)a : 0;
        if (H5Dclose(did) < 0) fail(e, GP_IO_EWRITE, "%s: %s: H5Dclose failed", w->path, d->name);
    }
    if (!e->rc && creator) reserve_blocks(w->fid, w->tmp, w->path, w->rank, e);
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) fail(e, GP_IO_EWRITE, "%s: H5Pclose failed", w->path);
    if (lcpl >= 0 && H5Pclose(lcpl) < 0) fail(e, GP_IO_EWRITE, "%s: H5Pclose failed", w->path);
    agree(w->comm, e);
}

/* mpiio: every rank opens the datasets for the collective writes. */
static void open_datasets(gp_h5_writer *w, gp_err *e)
{
    for (int k = 0; k < w->nds && !e->rc; k++) {
        w->ds[k].did = H5Dopen2(w->fid, w->ds[k].name, H5P_DEFAULT);
        if (w->ds[k].did < 0)
            fail(e, GP_IO_EWRITE, "%s: %s: cannot open the new dataset (%s)", w->path,
                 w->ds[k].name, gp_h5io_reason().desc);
        agree(w->comm, e);
    }
}

/* Ends a writer: closes the file, agrees on e; rank 0 renames it (or stages it, keeping its
 * signal guard for gp_h5_publish), or removes it on an error or with `cancel`; frees w.
 * Collective. */
static int writer_end(gp_h5_writer *w, int cancel, gp_err *e, char *msg, size_t msglen)
{
    const char *P = w->path;
    for (int k = 0; k < w->nds; k++)
        if (w->ds[k].did >= 0 && H5Dclose(w->ds[k].did) < 0)
            fail(e, GP_IO_EWRITE, "%s: %s: H5Dclose failed", P, w->ds[k].name);
    if (w->fid >= 0 && H5Fclose(w->fid) < 0)
        fail(e, GP_IO_EWRITE, "%s: cannot finish %s (%s)", P, w->tmp, gp_h5io_reason().desc);
    if (w->fd >= 0 && close(w->fd) != 0)
        fail(e, GP_IO_EWRITE, "%s: cannot finish %s (%s)", P, w->tmp, strerror(errno));
    agree(w->comm, e);
    if (w->rank == 0 && w->created && !e->rc && !cancel && w->stage) {
        snprintf(g_staged_path, sizeof g_staged_path, "%s", P);
        g_staged = 1;
    } else if (w->rank == 0 && w->created) {
        if (!e->rc && !cancel && rename(w->tmp, P) != 0)
            fail(e, GP_IO_EWRITE, "%s: cannot rename %s to it (%s)", P, w->tmp, strerror(errno));
        if (e->rc || cancel) gp_remove_tmp(w->tmp, e->rc ? e->text : NULL, sizeof e->text);
        gp_h5io_guard(w->tmp, 0);
    }
    agree(w->comm, e);
    /* the other ranks' part ends here: rank 0 renames or removes the file */
    if (w->rank != 0 && gp_h5io_guarding()) gp_h5io_guard(w->tmp, 0);
    writer_free(w);
    return cancel ? 0 : finish(e, msg, msglen);
}

/* gp_h5_writer_open, where need_buf says that every ds[k].buf must be given for a
 * non-empty part (gp_h5_write_many_io writes from them). */
static int writer_open(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                       const gp_h5_outds *ds, const gp_h5_extent *ext, int nds, int64_t n_total,
                       int64_t off, int64_t cnt, int force, int need_buf, gp_h5_writer **out,
                       char *msg, size_t msglen)
{
    gp_err e;
    gp_h5_writer *w = NULL;
    int rank = 0, mode = GP_IO_MPIIO;
    memset(&e, 0, sizeof e);
    quiet_hdf5();
    *out = NULL;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        fail(&e, GP_IO_EWRITE, "%s: MPI_Comm_rank failed", path ? path : "(no path)");
    check_request(path, ds, ext, nds, n_total, off, cnt, need_buf, stage, &e);
    if (!e.rc) w = writer_new(comm, rank, stage, path, ds, ext, nds, n_total, off, cnt, &e);
    if (agree(comm, &e)) goto early;
    gp_h5io_check_tiling(comm, w->path, n_total, off, cnt, &e);
    for (int k = 0; k < nds && !agree(comm, &e); k++)
        if (OWN(ext, k)) gp_h5io_check_tiling(comm, w->path, ext[k].n_total, ext[k].off, ext[k].cnt, &e);
    if (agree(comm, &e)) goto early;
    if (rank == 0) gp_h5io_pick_tmp(w->path, force, io, w->tmp, &mode, &e);
    if (agree(comm, &e)) goto early;
    if (MPI_Bcast(w->tmp, (int)sizeof w->tmp, MPI_CHAR, 0, comm) != MPI_SUCCESS ||
        MPI_Bcast(&mode, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        fail(&e, GP_IO_EWRITE, "%s: MPI_Bcast failed", path);
    if (agree(comm, &e)) goto early;
    w->io = (gp_io_mode)mode;

    create_file(w, &e);
    if (!e.rc) create_datasets(w, &e);
    if (!e.rc && w->io == GP_IO_MPIIO) open_datasets(w, &e);
    else if (!e.rc) gp_h5io_open_pwrite(w, &e);
    if (e.rc) return writer_end(w, 0, &e, msg, msglen);
    *out = w;
    return 0;
early:
    writer_free(w);
    return finish(&e, msg, msglen);
}

int gp_h5_writer_open_parts(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                            const gp_h5_outds *ds, const gp_h5_extent *ext, int nds,
                            int64_t n_total, int64_t off, int64_t cnt, int force,
                            gp_h5_writer **w, char *msg, size_t msglen)
{
    gp_h5_writer *tmp = NULL;
    const int rc = writer_open(comm, io, stage, path, ds, ext, nds, n_total, off, cnt, force, 0,
                               &tmp, msg, msglen);
    if (w) *w = tmp;
    else if (tmp) return writer_end(tmp, 1, &tmp->e, msg, msglen); /* nowhere to keep it */
    return rc;
}

int gp_h5_writer_open(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                      const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off, int64_t cnt,
                      int force, gp_h5_writer **w, char *msg, size_t msglen)
{
    return gp_h5_writer_open_parts(comm, io, stage, path, ds, NULL, nds, n_total, off, cnt, force,
                                   w, msg, msglen);
}

int gp_h5_writer_write(gp_h5_writer *w, int k, int64_t off, int64_t cnt, const void *buf,
                       char *msg, size_t msglen)
{
    gp_err e;
    if (begin_call(&e, w, GP_IO_EWRITE, "gp_h5_writer_write: no writer"))
        return finish(&e, msg, msglen);
    const wds *d = k >= 0 && k < w->nds ? &w->ds[k] : NULL;
    const char *D = d ? d->name : "(no dataset)";
    if (!d)
        fail(&e, GP_IO_EWRITE, "%s: no dataset %d to write", w->path, k);
    else if (cnt < 0 || off < d->off || off > d->off + d->cnt || cnt > d->off + d->cnt - off)
        fail(&e, GP_IO_EWRITE,
             "%s: %s: elements [%lld, +%lld) outside this rank's part [%lld, +%lld)", w->path, D,
             (long long)off, (long long)cnt, (long long)d->off, (long long)d->cnt);
    else if (cnt > 0 && !buf)
        fail(&e, GP_IO_EWRITE, "%s: %s: no buffer", w->path, D);
    if (w->io == GP_IO_MPIIO) {
        hsize_t dim = (hsize_t)(d ? d->n_total : 0);
        if (!agree(w->comm, &e))
            gp_h5io_transfer(w->comm, 1, w->ds[k].did, 1, &dim, gp_h5io_native(w->ds[k].mem),
                             w->ds[k].msz, off, cnt, (void *)buf, w->path, D, &e);
    } else if (w->e.rc) {
        return finish(&w->e, msg, msglen);
    } else if (!e.rc && cnt > 0) {
        gp_h5io_write_posix(w, k, off, cnt, buf, &e);
    }
    if (e.rc && !w->e.rc) w->e = e;
    return finish(&e, msg, msglen);
}

gp_io_mode gp_h5_writer_io(const gp_h5_writer *w) { return w ? w->io : GP_IO_AUTO; }

int gp_h5_writer_close(gp_h5_writer *w, int cancel, char *msg, size_t msglen)
{
    if (!w) {
        if (msg && msglen) msg[0] = '\0';
        return 0;
    }
    quiet_hdf5();
    gp_err e = w->e;
    return writer_end(w, cancel, &e, msg, msglen);
}

int gp_h5_write_many_io(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                        const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off,
                        int64_t cnt, int force, char *msg, size_t msglen)
{
    gp_h5_writer *w = NULL;
    int rc = writer_open(comm, io, stage, path, ds, NULL, nds, n_total, off, cnt, force, 1, &w,
                         msg, msglen);
    for (int k = 0; !rc && k < nds; k++)
        rc = gp_h5_writer_write(w, k, off, cnt, ds[k].buf, msg, msglen);
    return w ? gp_h5_writer_close(w, 0, msg, msglen) : rc;
}

int gp_h5_write(MPI_Comm comm, const char *path, const char *dset, hid_t file_type,
                gp_dtype mem, int64_t n_total, int64_t off, int64_t cnt, const void *buf,
                int force, char *msg, size_t msglen)
{
    gp_h5_outds d = {dset, file_type, mem, buf};
    return gp_h5_write_many(comm, path, &d, 1, n_total, off, cnt, force, msg, msglen);
}

int gp_h5_write_many(MPI_Comm comm, const char *path, const gp_h5_outds *ds, int nds,
                     int64_t n_total, int64_t off, int64_t cnt, int force, char *msg,
                     size_t msglen)
{
    return gp_h5_write_many_io(comm, GP_IO_MPIIO, 0, path, ds, nds, n_total, off, cnt, force,
                               msg, msglen);
}

int gp_h5_write_many_staged(MPI_Comm comm, const char *path, const gp_h5_outds *ds, int nds,
                            int64_t n_total, int64_t off, int64_t cnt, int force, char *msg,
                            size_t msglen)
{
    return gp_h5_write_many_io(comm, GP_IO_MPIIO, 1, path, ds, nds, n_total, off, cnt, force,
                               msg, msglen);
}

int gp_h5_publish(char *msg, size_t msglen)
{
    gp_err e;
    const char *tmp = gp_h5io_guarded_path();
    memset(&e, 0, sizeof e);
    if (!g_staged) return finish(&e, msg, msglen);
    if (rename(tmp, g_staged_path) != 0) {
        fail(&e, GP_IO_EWRITE, "%s: cannot rename %s to it (%s)", g_staged_path, tmp,
             strerror(errno));
        gp_remove_tmp(tmp, e.text, sizeof e.text);
    }
    g_staged = 0;
    gp_h5io_guard(tmp, 0);
    return finish(&e, msg, msglen);
}

void gp_h5_discard(char *msg, size_t msglen)
{
    if (!g_staged) return;
    gp_remove_tmp(gp_h5io_guarded_path(), msg, msglen);
    g_staged = 0;
    gp_h5io_guard(gp_h5io_guarded_path(), 0);
}
