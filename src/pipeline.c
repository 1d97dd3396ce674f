/* pipeline.c — the file job's piece pipelines (pipeline.h): the size of the pieces, the read
 * with its uploads overlapped, the write with its downloads overlapped. */
#define _POSIX_C_SOURCE 200809L
#include "pipeline.h"
#include "tuning.h"

#include <stdlib.h>
#include <string.h>

#include "jobstate.h"
#include "progress.h"
#include "tuning.h"

/* ---- the pieces ------------------------------------------------------------------------ */

/* Bytes per piece of a read or a write through host memory: with the posix driver on the
 * CUDA backend (two pinned pieces, each read or written while the other travels to or from
 * the device), and for the collective calls of the mpiio driver (each piece one collective
 * call per rank, large enough for efficient MPI-IO). posix: 4 MiB pieces, which stay in
 * the CPU's cache between the copy from the page cache and the DMA; on the H200 host (4 GiB
 * float32, 4 ranks) they read in 0.19-0.22 s where 32 MiB pieces took 0.32-0.34 s, and
 * their pinned allocation took 8 ms instead of 48 ms. */
#define GP_PIECE_BYTES_POSIX ((int64_t)4 << 20)
#define GP_PIECE_BYTES_MPIIO ((int64_t)256 << 20)

/* Bytes per piece of a read or write that would be one call (the CPU backend's own memory
 * with the posix driver) when this rank shows progress: pieces it can count. Only the
 * posix driver's calls may be cut so, as each rank makes its own; 32 MiB pieces take
 * 10-200 ms on a page cache or a disk and cost nothing measurable over one call, and a
 * shard of 128 MiB that reads in 2 s still shows its share and time left (with 256 MiB
 * pieces a fresh user saw "read... 2.0 s, 0 %" until it was done). */
#define GP_PIECE_BYTES_PROGRESS ((int64_t)32 << 20)

int64_t gp_job_piece_bytes(int64_t knob, gp_io_mode io, int unified, int64_t most)
{
    int64_t b = io == GP_IO_MPIIO ? GP_PIECE_BYTES_MPIIO : unified ? 0 : GP_PIECE_BYTES_POSIX;
    if (knob > 0) b = knob;
    if (b == 0) return 0;
    if (b > most) b = most;
    return b < 8 ? 8 : b;
}

int gp_pieces_alloc(gp_job *j, int64_t span)
{
    const gp_backend *be = j->be;
    /* test knob GPUPRIM_READ_PIECE_BYTES (the tuning record): small pieces in CI; on the CPU
     * backend the data then go through two host pieces as on the CUDA backend, so that CI
     * runs that path */
    const int64_t knob = gp_tuning_get()->read_piece_bytes;
    j->x.unified = device_is_host(be) && knob == 0;
    j->x.bytes = gp_job_piece_bytes(knob, j->in.io, j->x.unified, 8 * (span > 1 ? span : 1));
    if (j->x.unified) return 0;
    j->x.buf[0] = be->host_alloc((size_t)j->x.bytes);
    j->x.buf[1] = be->host_alloc((size_t)j->x.bytes);
    if (!j->x.buf[0] || !j->x.buf[1]) {
        snprintf(j->msg, j->msglen, "rank %d: cannot allocate 2 pieces of %lld bytes of pinned host memory: %s",
                 j->rank, (long long)j->x.bytes, be->last_error());
        return GP_EXIT_DEVICE;
    }
    return 0;
}

/* Elements per piece of sz bytes, and how many pieces cover m elements (m: the largest
 * shard or chunk, the same on every rank, so that every rank makes the same number of
 * calls, as the mpiio driver's collective ones need). */
static int64_t piece_elems(const gp_xfer *x, size_t sz, int64_t m, int64_t *npieces)
{
    int64_t pe = x->bytes > 0 ? x->bytes / (int64_t)sz : m;
    if (pe < 1) pe = 1;
    *npieces = m > 0 ? (m + pe - 1) / pe : 0;
    return pe;
}

/* The pieces of GP_PIECE_BYTES_PROGRESS for a transfer of m elements of sz bytes that
 * would be one call: elements per piece, and their count in *npieces. */
static int64_t progress_piece(size_t sz, int64_t m, int64_t *npieces)
{
    int64_t pe = GP_PIECE_BYTES_PROGRESS / (int64_t)sz;
    *npieces = m > 0 ? (m + pe - 1) / pe : 0;
    return pe;
}

/* ---- the read -------------------------------------------------------------------------- */

void gp_set_chunk_reads(int node_ranks)
{
    const gp_tuning *t = gp_tuning_get();
    const gp_h5_chunk_reads c = {t->direct_chunks, t->inflate_threads, node_ranks};
    gp_h5_set_chunk_reads(&c);
}

int gp_open_reader(gp_job *j, const char *dataset, gp_dtype as, gp_h5_reader **r)
{
    const double tp = now();
    const int err = gp_h5_reader_open(j->comm, &j->in, dataset, as, r, j->msg, j->msglen);
    j->t[GP_PH_READ] += now() - tp;
    return err;
}

int gp_read_upload(gp_job *j, gp_h5_reader *r, size_t sz, int64_t off, int64_t cnt, int64_t m,
                   void *dev, int progress)
{
    const gp_backend *be = j->be;
    const gp_xfer *x = &j->x;
    int err = 0, uerr = 0;
    int64_t np;
    char umsg[256] = "";
    int64_t pe = piece_elems(x, sz, m, &np);
    if (progress) {
        gp_progress_work((int64_t)cnt * (int64_t)sz);
        if (x->bytes == 0 && j->in.io == GP_IO_POSIX && gp_progress_on())
            pe = progress_piece(sz, m, &np);
    }
    double tp = now();
    gp_h5_reader_expect(r, off, cnt);
    for (int64_t p = 0; p < np; p++) {
        const int64_t lo = p * pe < cnt ? p * pe : cnt;
        const int64_t c = cnt - lo < pe ? cnt - lo : pe;
        void *h = x->unified ? (char *)dev + (size_t)lo * sz : x->buf[p & 1];
        err = gp_h5_reader_read(r, off + lo, c, h, j->msg, j->msglen);
        if (err) break; /* mpiio: on every rank alike; posix: this rank's (it stops here) */
        if (progress) gp_progress_add(c * (int64_t)sz);
        if (x->unified || c == 0 || uerr) continue;
        /* the upload of the piece before, which ran during this read, must be done before
         * its buffer is read into next */
        if (be->upload_wait() || be->upload_async((char *)dev + (size_t)lo * sz, h, (size_t)c * sz)) {
            uerr = GP_EXIT_DEVICE;
            snprintf(umsg, sizeof umsg, "rank %d: upload: %s", j->rank, be->last_error());
        }
    }
    j->t[GP_PH_READ] += now() - tp;
    tp = now();
    if (progress) gp_progress_phase(gp_phase_progress(GP_PH_UPLOAD));
    if (be->upload_wait() && !uerr) {
        uerr = GP_EXIT_DEVICE;
        snprintf(umsg, sizeof umsg, "rank %d: upload: %s", j->rank, be->last_error());
    }
    j->t[GP_PH_UPLOAD] += now() - tp;
    if (!err && uerr) snprintf(j->msg, j->msglen, "%s", umsg);
    return err ? err : uerr;
}

/* ---- the write ------------------------------------------------------------------------- */

int gp_write_from(gp_job *j, gp_h5_writer *w, int k, const void *src, size_t sz, int64_t woff,
                  int64_t nk)
{
    const gp_backend *be = j->be;
    const gp_xfer *x = &j->x;
    if (x->unified) {
        if (gp_h5_writer_io(w) != GP_IO_POSIX || !gp_progress_on()) {
            const int err = gp_h5_writer_write(w, k, woff, nk, src, j->msg, j->msglen);
            gp_progress_add(nk * (int64_t)sz);
            return err;
        }
        int64_t np;
        int err = 0; /* this rank's own posix writes: in pieces it can count */
        const int64_t pe = progress_piece(sz, nk, &np);
        for (int64_t p = 0; p < np && !err; p++) {
            const int64_t lo = p * pe, c = nk - lo < pe ? nk - lo : pe;
            err = gp_h5_writer_write(w, k, woff + lo, c, (const char *)src + (size_t)lo * sz,
                                     j->msg, j->msglen);
            gp_progress_add(c * (int64_t)sz);
        }
        return err;
    }
    int64_t np;
    int err = 0, derr = 0;
    char dmsg[256] = "";
    const int64_t pe = piece_elems(x, sz, j->m, &np);
    /* download_async does not order itself after the kernels (from_keys, the exchange's
     * merges): the caller's fence */
    if (be->synchronize()) {
        derr = 1;
        snprintf(dmsg, sizeof dmsg, "rank %d: synchronize: %s", j->rank, be->last_error());
    }
    for (int64_t p = 0; p < np && !err; p++) {
        const int64_t lo = p * pe < nk ? p * pe : nk, c = nk - lo < pe ? nk - lo : pe;
        const int64_t lo1 = lo + c, c1 = nk - lo1 < pe ? nk - lo1 : pe;
        if (!derr && p == 0 && c > 0 && be->download_async(x->buf[0], src, (size_t)c * sz)) derr = 1;
        /* piece p is in; the next one travels while this one is written */
        if (!derr && be->download_wait()) derr = 1;
        if (!derr && c1 > 0 &&
            be->download_async(x->buf[(p + 1) & 1], (const char *)src + (size_t)lo1 * sz, (size_t)c1 * sz))
            derr = 1;
        if (derr && !dmsg[0])
            snprintf(dmsg, sizeof dmsg, "rank %d: download: %s", j->rank, be->last_error());
        err = gp_h5_writer_write(w, k, woff + lo, derr ? 0 : c, x->buf[p & 1], j->msg, j->msglen);
        gp_progress_add(c * (int64_t)sz);
    }
    if (be->download_wait() && !derr) { /* drains what a failed write left in flight */
        derr = 1;
        snprintf(dmsg, sizeof dmsg, "rank %d: download: %s", j->rank, be->last_error());
    }
    if (!err && derr) snprintf(j->msg, j->msglen, "%s", dmsg);
    return err ? err : derr ? GP_EXIT_DEVICE : 0;
}
