/* h5_reader.c — the reader of one dataset of an open input (gpuprim/h5io.h): opened once (with
 * the posix driver planned by h5_posix.c), read many times by the mpiio transfer, the raw
 * pread of h5_posix.c or H5Dread of this rank's own hyperslab, closed; and gp_h5_read, a
 * reader for one read. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* gp_h5_reader_how's names of RD_*. */
static const char *const g_rd_how[] = {"mpiio", "hdf5", "pread", "pread+convert", "chunks"};

/* mpiio: the ranks read a dataset the same way (each rank's own chunk reads, or the
 * collective transfer) or all go back to the collective one. Collective. */
static void chunks_everywhere(gp_h5_reader *r, gp_err *e)
{
    int mine = r->how == RD_CHUNKS, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, r->comm) != MPI_SUCCESS)
        fail(e, GP_IO_EREAD, "%s: %s: MPI_Allreduce failed", r->in->file, r->dname);
    if (mine && !all) {
        gp_h5io_chunks_close(r->ck);
        r->ck = NULL;
        r->how = RD_MPIIO;
    }
}

int gp_h5_reader_open(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
                      gp_h5_reader **out, char *msg, size_t msglen)
{
    gp_err e;
    char path[GP_H5_PATHLEN];
    gp_h5_reader *r = calloc(1, sizeof *r);
    memset(&e, 0, sizeof e);
    quiet_hdf5();
    if (out) *out = NULL;
    if (!in || in->fid < 0 || in->did < 0 || !out)
        fail(&e, GP_IO_EREAD, "gp_h5_read: the input is not open");
    else if (!r)
        fail(&e, GP_IO_EREAD, "%s: out of memory", in->file);
    if (agree(comm, &e)) goto bad;
    r->comm = comm;
    r->in = in;
    r->x.did = r->x.type = r->ftype = H5I_INVALID_HID;
    r->fd = -1;
    r->did = in->did;
    r->nd = in->ndims;
    r->dims = in->dims;
    snprintf(r->dname, sizeof r->dname, "%s", in->dataset);
    if (MPI_Comm_rank(comm, &r->rank) != MPI_SUCCESS)
        fail(&e, GP_IO_EREAD, "%s: MPI_Comm_rank failed", in->file);
    if (dataset) {
        if (!dataset[0] || gp_h5io_abs_path(dataset, path, sizeof path) < 0) {
            fail(&e, GP_IO_EDATASET, "%s: bad dataset name '%.64s'", in->file, dataset);
        } else if (strcmp(path, in->dataset) != 0) {
            gp_h5io_ds_open(in->fid, in->file, path, &r->x, &e);
            if (!e.rc && r->x.n != in->n)
                fail(&e, GP_IO_EDATASET, "%s: %s has %lld elements, %s has %lld", in->file,
                     path, (long long)r->x.n, in->dataset, (long long)in->n);
            r->did = r->x.did;
            r->nd = r->x.ndims;
            r->dims = r->x.dims;
            snprintf(r->dname, sizeof r->dname, "%s", path);
        }
    }
    if (agree(comm, &e)) goto bad;
    r->as = as;
    r->esz = gp_dtype_size(as);
    r->how = RD_MPIIO;
    if (r->esz == 0)
        fail(&e, GP_IO_EREAD, "%s: %s: invalid element type %d", in->file, r->dname, (int)as);
    else if (in->io != GP_IO_MPIIO)
        gp_h5io_plan_posix(r, &e);
    if (!e.rc && (r->how == RD_HDF5 || r->how == RD_MPIIO)) gp_h5io_plan_chunks(r);
    if (agree(comm, &e)) goto bad;
    if (in->io == GP_IO_MPIIO) chunks_everywhere(r, &e);
    if (agree(comm, &e)) goto bad;
    *out = r;
    return 0;
bad:
    gp_h5_reader_close(r);
    return finish(&e, msg, msglen);
}

const char *gp_h5_reader_how(const gp_h5_reader *r)
{
    return r && r->how >= 0 && r->how <= RD_CHUNKS ? g_rd_how[r->how] : "?";
}

void gp_h5_reader_expect(gp_h5_reader *r, int64_t off, int64_t cnt)
{
    if (r && r->how == RD_CHUNKS) gp_h5io_chunks_expect(r, off, cnt);
}

void gp_h5_reader_close(gp_h5_reader *r)
{
    if (!r) return;
    quiet_hdf5();
    gp_h5io_chunks_close(r->ck);
    if (r->fd >= 0) close(r->fd);
    if (r->ftype >= 0 && H5Tclose(r->ftype) < 0) { /* nothing more to do */ }
    gp_h5io_ds_close(&r->x);
    free(r->stage);
    free(r);
}

/* RD_HDF5: H5Dread of the hyperslab of [off, off+cnt) through this rank's own open, in
 * pieces of at most GP_H5_PIECE_BYTES. */
static void read_hdf5(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, gp_err *e)
{
    const int64_t per =
        GP_H5_PIECE_BYTES / (int64_t)r->esz > 0 ? GP_H5_PIECE_BYTES / (int64_t)r->esz : 1;
    hid_t fspace = H5Dget_space(r->did);
    if (fspace < 0) {
        fail(e, GP_IO_EREAD, "%s: %s: cannot get the dataspace (%s)", r->in->file, r->dname,
             gp_h5io_reason().desc);
        return;
    }
    for (int64_t done = 0; done < cnt && !e->rc; done += per) {
        const int64_t c = cnt - done < per ? cnt - done : per;
        hid_t mspace = gp_h5io_select_piece(fspace, r->nd, r->dims, off + done, c, GP_IO_EREAD,
                                            r->in->file, r->dname, e);
        if (mspace >= 0) {
            gp_h5io_move_piece(0, r->did, gp_h5io_native(r->as), mspace, fspace, H5P_DEFAULT,
                               (char *)buf + (size_t)done * r->esz, NULL, r->in->file, r->dname,
                               e);
            if (H5Sclose(mspace) < 0)
                fail(e, GP_IO_EREAD, "%s: %s: H5Sclose failed", r->in->file, r->dname);
        }
    }
    if (H5Sclose(fspace) < 0)
        fail(e, GP_IO_EREAD, "%s: %s: H5Sclose failed", r->in->file, r->dname);
}

int gp_h5_reader_read(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, char *msg,
                      size_t msglen)
{
    gp_err e;
    if (begin_call(&e, r, GP_IO_EREAD, "gp_h5_reader_read: no reader"))
        return finish(&e, msg, msglen);
    const char *file = r->in->file;
    const int64_t n = r->in->n;
    if (off < 0 || cnt < 0 || off > n || cnt > n - off)
        fail(&e, GP_IO_EREAD, "%s: %s: range [%lld, +%lld) outside the %lld elements", file,
             r->dname, (long long)off, (long long)cnt, (long long)n);
    else if (cnt > 0 && !buf)
        fail(&e, GP_IO_EREAD, "%s: %s: no buffer", file, r->dname);
    if (r->how == RD_MPIIO) {
        if (!agree(r->comm, &e))
            gp_h5io_transfer(r->comm, 0, r->did, r->nd, r->dims, gp_h5io_native(r->as), r->esz,
                             off, cnt, buf, file, r->dname, &e);
        return finish(&e, msg, msglen);
    }
    if (r->how == RD_CHUNKS) { /* with mpiio still collective: every rank calls, and agrees */
        if (!e.rc && cnt > 0) gp_h5io_read_chunks(r, off, cnt, buf, &e);
        if (r->in->io == GP_IO_MPIIO) agree(r->comm, &e);
        return finish(&e, msg, msglen);
    }
    if (e.rc || cnt == 0) return finish(&e, msg, msglen);
    const int fault = gp_h5io_faults()->pread;
    if (r->how == RD_PREAD || r->how == RD_CONVERT) {
        gp_h5io_read_raw(r, off, cnt, buf, fault, &e);
    } else if (fault) {
        fail(&e, GP_IO_EREAD, "%s: %s: read failed: %s", file, r->dname, strerror(EIO));
    } else {
        read_hdf5(r, off, cnt, buf, &e);
    }
    return finish(&e, msg, msglen);
}

int gp_h5_read(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
               int64_t off, int64_t cnt, void *buf, char *msg, size_t msglen)
{
    gp_h5_reader *r = NULL;
    int rc = gp_h5_reader_open(comm, in, dataset, as, &r, msg, msglen);
    if (rc) return rc;
    if (r->in->io == GP_IO_MPIIO) {
        rc = gp_h5_reader_read(r, off, cnt, buf, msg, msglen); /* agreed */
    } else {
        gp_err e;
        memset(&e, 0, sizeof e);
        e.rc = gp_h5_reader_read(r, off, cnt, buf, e.text, sizeof e.text);
        agree(comm, &e);
        rc = finish(&e, msg, msglen);
    }
    gp_h5_reader_close(r);
    return rc;
}
