/* h5_posix.c — the posix driver's raw data (gpuprim/h5io.h): a reader's pread of a contiguous
 * dataset at its raw offset, with H5Tconvert where it is stored as another type, and the
 * writer's pwrite at the new datasets' raw offsets, converted in pieces (a value outside the
 * stored type's range an error). The rest of either path is in h5_reader.c / h5_writer.c. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes per system call of pread/pwrite (Linux moves at most 2^31 - 4096 bytes per call). */
#define GP_IO_CALL_BYTES ((size_t)1 << 30)
/* Stored elements per H5Tconvert call of a converting read or write: a piece that stays in
 * the cache between the copy and the conversion. */
#ifndef GP_CONV_PIECE_BYTES
#define GP_CONV_PIECE_BYTES ((size_t)1 << 20)
#endif

/* Elements per converted piece whose wider form (memory or stored) has `wide` bytes: at
 * least one. A piece's buffer holds conv_elems(wide) * wide bytes. */
static int64_t conv_elems(size_t wide)
{
    const size_t k = GP_CONV_PIECE_BYTES / (wide ? wide : 1);
    return k > 0 ? (int64_t)k : 1;
}

int gp_h5io_full_io(int writing, int fd, void *buf, size_t len, int64_t pos, int fault,
                    int64_t *at)
{
    char *p = buf;
    *at = pos;
    if (fault && len > 0) {
        errno = EIO;
        return -1;
    }
    while (len > 0) {
        const size_t want = len < GP_IO_CALL_BYTES ? len : GP_IO_CALL_BYTES;
        const ssize_t got = writing ? pwrite(fd, p, want, (off_t)*at)
                                    : pread(fd, p, want, (off_t)*at);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            if (got == 0) errno = writing ? EIO : 0; /* a write of nothing: never for a file */
            return -1;
        }
        p += got;
        len -= (size_t)got;
        *at += got;
    }
    return 0;
}

/* Plans a posix reader: pread where the raw data lie in one contiguous block of a file
 * (contiguous layout, allocated, no external storage, the whole block inside the file),
 * else H5Dread of the hyperslab (r->how stays RD_HDF5). A contiguous block of another stored
 * type is read with pread + H5Tconvert (RD_CONVERT): measured against H5Dread of the same
 * block through a sec2 open (which reads into its 1 MiB type-conversion buffer and runs the
 * same conversion), 2^25 elements on the 2-core test machine, it took 0.68-0.9x the time
 * for int16, big-endian int32 / float64 and uint8, 0.46x for long double, and the same
 * within the noise for float16 (HDF5's soft conversion, ~0.11 us per element either way).
 * Pieces of 1 MiB: 256 KiB were no faster, 4 MiB up to 1.25x slower (big-endian float64).
 * Local. */
void gp_h5io_plan_posix(gp_h5_reader *r, gp_err *e)
{
    const hid_t memtype = gp_h5io_native(r->as);
    char name[GP_H5_PATHLEN + 1];
    struct stat st;
    r->how = RD_HDF5;
    hid_t dcpl = H5Dget_create_plist(r->did);
    if (dcpl < 0) return; /* H5Dread will say what is wrong */
    const int contiguous =
        H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0;
    if (H5Pclose(dcpl) < 0 || !contiguous) return;
    /* from the start of the file, user block included */
    const haddr_t addr = H5Dget_offset(r->did);
    const hsize_t bytes = H5Dget_storage_size(r->did);
    hid_t ft = H5Dget_type(r->did);
    const size_t fsz = ft >= 0 ? H5Tget_size(ft) : 0;
    const htri_t same = ft >= 0 ? H5Tequal(ft, memtype) : -1;
    const ssize_t nl = H5Fget_name(r->did, name, sizeof name); /* an external link's target */
    int fd = -1;
    if (addr != HADDR_UNDEF && fsz > 0 && same >= 0 && nl > 0 && (size_t)nl < sizeof name &&
        bytes == (hsize_t)r->in->n * fsz && addr <= (haddr_t)INT64_MAX - bytes) {
        fd = open(name, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            fail(e, GP_IO_EREAD, "%s: %s: cannot open %s for reading (%s)", r->in->file,
                 r->dname, name, strerror(errno));
        /* a block past the end of the file (damaged): H5Dread says so */
        if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_size < (uint64_t)(addr + bytes))) {
            close(fd);
            fd = -1;
        }
    }
    if (fd >= 0) {
        r->fd = fd;
        r->raw = (int64_t)addr;
        r->fsz = fsz;
        r->how = same > 0 ? RD_PREAD : RD_CONVERT;
    }
    if (r->how == RD_CONVERT) {
        r->ftype = ft;
        ft = H5I_INVALID_HID;
        if (fsz > r->esz && !(r->stage = malloc((size_t)conv_elems(fsz) * fsz)))
            fail(e, GP_IO_EREAD, "%s: %s: out of memory", r->in->file, r->dname);
    }
    if (ft >= 0 && H5Tclose(ft) < 0) { /* nothing more to do */ }
}

/* RD_PREAD / RD_CONVERT failed at byte `at` of the raw data's file (errno set; 0: the file
 * ended there). */
static void raw_failed(const gp_h5_reader *r, int64_t at, gp_err *e)
{
    if (errno == 0)
        fail(e, GP_IO_EREAD, "%s: %s: read failed: the file ends at byte %lld, inside the "
             "dataset's data", r->in->file, r->dname, (long long)at);
    else
        fail(e, GP_IO_EREAD, "%s: %s: read failed: %s (at byte %lld)", r->in->file, r->dname,
             strerror(errno), (long long)at);
}

/* RD_CONVERT: the stored bytes of [off, off+cnt) in pieces, each converted by H5Tconvert
 * (the conversion H5Dread makes) in place in buf when the memory type is at least as wide,
 * else in r->stage and copied. */
static void read_convert(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, int fault,
                         gp_err *e)
{
    const size_t fs = r->fsz, ms = r->esz, wide = fs > ms ? fs : ms;
    const int64_t per = conv_elems(wide);
    const hid_t memtype = gp_h5io_native(r->as);
    for (int64_t done = 0; done < cnt && !e->rc; done += per) {
        const int64_t c = cnt - done < per ? cnt - done : per;
        char *dst = (char *)buf + (size_t)done * ms;
        void *tmp = fs <= ms ? (void *)dst : (void *)r->stage;
        int64_t at;
        if (gp_h5io_full_io(0, r->fd, tmp, (size_t)c * fs, r->raw + (off + done) * (int64_t)fs,
                            fault, &at) != 0)
            raw_failed(r, at, e);
        else if (H5Tconvert(r->ftype, memtype, (size_t)c, tmp, NULL, H5P_DEFAULT) < 0)
            fail(e, GP_IO_EREAD, "%s: %s: read failed: %s", r->in->file, r->dname,
                 gp_h5io_reason().desc);
        else if (tmp != dst)
            memcpy(dst, tmp, (size_t)c * ms);
    }
}

void gp_h5io_read_raw(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, int fault,
                      gp_err *e)
{
    int64_t at;
    if (r->how == RD_CONVERT)
        read_convert(r, off, cnt, buf, fault, e);
    else if (gp_h5io_full_io(0, r->fd, buf, (size_t)cnt * r->esz,
                             r->raw + off * (int64_t)r->esz, fault, &at) != 0)
        raw_failed(r, at, e);
}

void gp_h5io_open_pwrite(gp_h5_writer *w, gp_err *e)
{
    int64_t *raw = malloc(sizeof *raw * (size_t)w->nds);
    if (w->fid >= 0 && H5Fclose(w->fid) < 0)
        fail(e, GP_IO_EWRITE, "%s: cannot finish %s (%s)", w->path, w->tmp, gp_h5io_reason().desc);
    w->fid = H5I_INVALID_HID;
    if (!raw) fail(e, GP_IO_EWRITE, "%s: out of memory", w->path);
    for (int k = 0; raw && k < w->nds; k++) raw[k] = w->ds[k].raw;
    if (agree(w->comm, e)) goto out;
    if (MPI_Bcast(raw, w->nds, MPI_INT64_T, 0, w->comm) != MPI_SUCCESS)
        fail(e, GP_IO_EWRITE, "%s: MPI_Bcast failed", w->path);
    size_t cbytes = 0; /* a converted piece of the widest dataset that needs one */
    for (int k = 0; k < w->nds; k++) {
        const size_t wide = w->ds[k].msz > w->ds[k].fsz ? w->ds[k].msz : w->ds[k].fsz;
        w->ds[k].raw = raw[k];
        if (!w->ds[k].same && (size_t)conv_elems(wide) * wide > cbytes)
            cbytes = (size_t)conv_elems(wide) * wide;
    }
    w->fd = open(w->tmp, O_WRONLY | O_CLOEXEC);
    if (w->fd < 0)
        fail(e, GP_IO_EWRITE, "%s: cannot open %s for writing (%s)", w->path, w->tmp,
             strerror(errno));
    if (cbytes) {
        w->dxpl = H5Pcreate(H5P_DATASET_XFER);
        w->cbuf = malloc(cbytes);
        if (w->dxpl < 0 || H5Pset_type_conv_cb(w->dxpl, gp_h5io_range_cb, &w->out_of_range) < 0 ||
            !w->cbuf)
            fail(e, GP_IO_EWRITE, "%s: cannot set up the conversion (%s)", w->path,
                 w->cbuf ? gp_h5io_reason().desc : "out of memory");
    }
out:
    free(raw);
    agree(w->comm, e);
}

void gp_h5io_write_posix(gp_h5_writer *w, int k, int64_t off, int64_t cnt, const void *buf,
                         gp_err *e)
{
    const wds *d = &w->ds[k];
    const int fault = gp_h5io_faults()->pwrite;
    const size_t wide = d->msz > d->fsz ? d->msz : d->fsz;
    const int64_t per = d->same ? cnt : conv_elems(wide);
    int64_t at = 0;
    for (int64_t done = 0; done < cnt && !e->rc; done += per) {
        const int64_t c = cnt - done < per ? cnt - done : per;
        const char *src = (const char *)buf + (size_t)done * d->msz;
        void *out = (void *)src;
        if (!d->same) {
            memcpy(w->cbuf, src, (size_t)c * d->msz);
            w->out_of_range = 0;
            out = w->cbuf;
            if (H5Tconvert(gp_h5io_native(d->mem), d->ftype, (size_t)c, w->cbuf, NULL,
                           w->dxpl) < 0) {
                if (w->out_of_range)
                    fail(e, GP_IO_EWRITE, "%s: %s: write failed: a value is outside the range "
                         "of the stored type", w->path, d->name);
                else
                    fail(e, GP_IO_EWRITE, "%s: %s: write failed: %s", w->path, d->name,
                         gp_h5io_reason().desc);
                break;
            }
        }
        if (gp_h5io_full_io(1, w->fd, out, (size_t)c * d->fsz,
                            d->raw + (off + done) * (int64_t)d->fsz, fault, &at) != 0)
            fail(e, GP_IO_EWRITE, "%s: %s: write failed: %s (at byte %lld of %s)", w->path,
                 d->name, strerror(errno), (long long)at, w->tmp);
    }
}
