/* h5_chunks.c — the direct chunk path of a reader as it reads (RD_CHUNKS; gpuprim/h5io.h,
 * "Direct chunk reads"; its plan and chunk index: h5_chunk_plan.c): a chunked dataset whose
 * filters h5_filters.c undoes is read without H5Dread. The reads go through an expected
 * range of the flattened index in increasing order; its chunks, in the chunk grid's
 * row-major order (the order of their first elements, and of their last ones), pass through
 * a window:
 *   - the reader's thread finds each chunk's address (H5Dget_chunk_info_by_coord, or one
 *     H5Dchunk_iter pass where the HDF5 has it) and queues it on the pool (h5_pool.c), up to
 *     `ahead` chunks before the reads; a chunk never written is read with H5Dread there
 *     (the fill value, already in the memory type);
 *   - a pool thread preads its stored bytes on the reader's own descriptor and undoes the
 *     filters (h5_filters.c), into a buffer of the window or, when the whole chunk is one
 *     run of the read in progress and needs no conversion, straight into the caller's buffer;
 *   - the reader's thread waits for the chunks of a read in order, converts them with
 *     H5Tconvert when the stored type is not the memory type (HDF5 is not thread-safe: only
 *     this thread calls it), copies out the runs of the chunk's elements inside the read
 *     (an N-D chunk: each run along its last dimensions; a partial edge chunk decoded whole
 *     and clipped), and drops the chunk once no later read of the range needs it.
 * A chunk of an N-D dataset is needed by the reads of every row it spans, so a window may
 * hold a slab of chunks (one chunk row): datasets whose slab would take more than
 * GP_CK_SLAB_BYTES go through H5Dread instead. */
#define _POSIX_C_SOURCE 200809L
#include "h5_chunk_plan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- geometry -------------------------------------------------------------------------- */

/* The flattened index of coordinates x. */
static int64_t flat(const gp_ck_reader *ck, const hsize_t *x)
{
    int64_t f = 0;
    for (int i = 0; i < ck->nd; i++) f += (int64_t)x[i] * ck->dstride[i];
    return f;
}

/* Chunk `index` of the grid into s: its box, first and last element. */
static void chunk_box(const gp_ck_reader *ck, int64_t index, gp_ck_slot *s)
{
    hsize_t top[GP_H5_MAXDIMS];
    s->index = index;
    for (int i = ck->nd - 1; i >= 0; i--) {
        const hsize_t k = (hsize_t)index % ck->nck[i];
        index /= (int64_t)ck->nck[i];
        s->lo[i] = k * ck->cdim[i];
        s->hi[i] = s->lo[i] + ck->cdim[i] < ck->dims[i] ? s->lo[i] + ck->cdim[i] : ck->dims[i];
        top[i] = s->hi[i] - 1;
    }
    s->first = flat(ck, s->lo);
    s->last = flat(ck, top);
}

/* The smallest flattened index >= a of an element of the box [lo, hi), or -1. */
static int64_t box_next(const gp_ck_reader *ck, const hsize_t *lo, const hsize_t *hi, int64_t a)
{
    hsize_t t[GP_H5_MAXDIMS];
    if (a >= ck->r->in->n) return -1;
    for (int i = 0; i < ck->nd; i++) t[i] = (hsize_t)(a / ck->dstride[i]) % ck->dims[i];
    for (int i = 0; i < ck->nd; i++) {
        if (t[i] >= lo[i] && t[i] < hi[i]) continue;
        if (t[i] < lo[i]) { /* the prefix, then the box's lowest corner */
            for (int j = i; j < ck->nd; j++) t[j] = lo[j];
            return flat(ck, t);
        }
        for (int j = i - 1; j >= 0; j--) { /* past the box here: step an earlier index */
            if (t[j] + 1 < hi[j]) {
                t[j]++;
                for (int k = j + 1; k < ck->nd; k++) t[k] = lo[k];
                return flat(ck, t);
            }
        }
        return -1;
    }
    return a;
}

/* 1 when chunk s holds an element of [a, b). */
static int holds(const gp_ck_reader *ck, const gp_ck_slot *s, int64_t a, int64_t b)
{
    if (s->first >= b || s->last < a) return 0;
    const int64_t x = box_next(ck, s->lo, s->hi, a);
    return x >= 0 && x < b;
}

/* Copies the elements of decoded chunk s (ck->msz bytes each, the chunk's row-major layout)
 * that lie in [a, b) to dst (element 0 of dst: flattened index a). Runs along the last
 * dimensions (the trailing dimensions a chunk spans whole merge into one run), from the run
 * that holds the chunk's first element at or after a to the last one before b. */
static void scatter(const gp_ck_reader *ck, const gp_ck_slot *s, int64_t a, int64_t b,
                    unsigned char *dst)
{
    int k = ck->nd - 1;
    int64_t inner = 1;
    while (k > 0 && s->lo[k] == 0 && s->hi[k] == ck->dims[k] && ck->cdim[k] == ck->dims[k]) {
        inner *= (int64_t)ck->dims[k];
        k--;
    }
    const int64_t run = (int64_t)(s->hi[k] - s->lo[k]) * inner;
    const int64_t x = box_next(ck, s->lo, s->hi, a); /* the first run: the one holding x */
    if (x < 0 || x >= b) return;
    hsize_t t[GP_H5_MAXDIMS]; /* the run's coordinates before dimension k */
    for (int i = 0; i < k; i++) t[i] = (hsize_t)(x / ck->dstride[i]) % ck->dims[i];
    t[k] = s->lo[k];
    for (;;) {
        int64_t f = 0, src = 0;
        for (int i = 0; i <= k; i++) {
            f += (int64_t)t[i] * ck->dstride[i];
            src += (int64_t)(t[i] - s->lo[i]) * ck->cstride[i];
        }
        if (f >= b) return;
        const int64_t lo = f > a ? f : a, hi = f + run < b ? f + run : b;
        if (lo < hi)
            memcpy(dst + (size_t)(lo - a) * ck->msz, s->buf + (size_t)(src + lo - f) * ck->msz,
                   (size_t)(hi - lo) * ck->msz);
        int i = k - 1; /* the next run: an odometer over dimensions 0 .. k-1 */
        while (i >= 0 && ++t[i] == s->hi[i]) {
            t[i] = s->lo[i];
            i--;
        }
        if (i < 0) return;
    }
}

/* ---- the pool's work ------------------------------------------------------------------- */

/* A pool thread: the stored bytes of chunk s, its filters undone, into s->direct or s->buf;
 * on failure s->err (errno of the pread, or -1) and s->why. No HDF5 call. */
static void decode_task(gp_pool_task *t, int worker, void *arg)
{
    gp_ck_slot *s = (gp_ck_slot *)t;
    gp_ck_reader *ck = arg;
    unsigned char *out = s->direct ? s->direct : s->buf;
    const int active = gp_h5io_pipe_active(&ck->pipe, s->mask);
    unsigned char *raw = active ? gp_h5io_scratch_raw(ck->scratch[worker], (size_t)s->size) : out;
    s->err = 0;
    if (!raw) {
        s->err = -1;
        snprintf(s->why, sizeof s->why, "out of memory for its %llu stored bytes",
                 (unsigned long long)s->size);
    } else if (!active && s->size != ck->pipe.chunk_bytes) {
        s->err = -1;
        snprintf(s->why, sizeof s->why, "%llu bytes stored without a filter, the chunk holds %zu",
                 (unsigned long long)s->size, ck->pipe.chunk_bytes);
    } else if (gp_h5io_full_io(0, ck->fd, raw, (size_t)s->size, (int64_t)s->addr, ck->fault,
                               &s->at) != 0) {
        s->err = errno ? errno : -2; /* errno 0: the file ended */
    } else if (active && gp_h5io_pipe_undo(&ck->pipe, ck->scratch[worker], s->mask, raw,
                                           (size_t)s->size, out, s->why, sizeof s->why) != 0) {
        s->err = -1;
    }
}

/* ---- the window ------------------------------------------------------------------------ */

/* A slot from the spares or new (with its buffer), or NULL (out of memory). */
static gp_ck_slot *slot_get(gp_ck_reader *ck)
{
    if (ck->nspare > 0) return ck->spare[--ck->nspare];
    gp_ck_slot *s = calloc(1, sizeof *s);
    if (s && !(s->buf = malloc(ck->mbytes))) {
        free(s);
        s = NULL;
    }
    return s;
}

/* Waits for s (if queued) and keeps it for reuse. */
static void slot_put(gp_ck_reader *ck, gp_ck_slot *s)
{
    gp_h5io_pool_wait(ck->pool, &s->task); /* (done at once for a chunk never queued) */
    if (ck->nspare == ck->capspare) {
        const int cap = ck->capspare ? 2 * ck->capspare : 16;
        gp_ck_slot **p = realloc(ck->spare, sizeof *p * (size_t)cap);
        if (!p) { /* cannot keep it: free it */
            free(s->buf);
            free(s);
            return;
        }
        ck->spare = p;
        ck->capspare = cap;
    }
    ck->spare[ck->nspare++] = s;
}

/* Drops window entry k (waiting for its thread first). */
static void win_drop(gp_ck_reader *ck, int k)
{
    slot_put(ck, ck->win[k]);
    memmove(ck->win + k, ck->win + k + 1, sizeof *ck->win * (size_t)(ck->nwin - k - 1));
    ck->nwin--;
}

/* Ends the stream: queued chunks dropped, running ones waited for, the window emptied. */
static void stream_end(gp_ck_reader *ck)
{
    gp_h5io_pool_drain(ck->pool);
    while (ck->nwin > 0) win_drop(ck, ck->nwin - 1);
    ck->valid = 0;
}

/* Chunk s, never written, read with H5Dread into s->buf in the chunk's layout (the fill
 * value as HDF5 gives it, in the memory type). Returns 0, or -1 with e set. */
static int read_fill(gp_ck_reader *ck, gp_ck_slot *s, gp_err *e)
{
    hsize_t zero[GP_H5_MAXDIMS], cnt[GP_H5_MAXDIMS];
    for (int i = 0; i < ck->nd; i++) {
        zero[i] = 0;
        cnt[i] = s->hi[i] - s->lo[i];
    }
    hid_t fs = H5Dget_space(ck->r->did), ms = H5Screate_simple(ck->nd, ck->cdim, NULL);
    int bad = fs < 0 || ms < 0 ||
              H5Sselect_hyperslab(fs, H5S_SELECT_SET, s->lo, NULL, cnt, NULL) < 0 ||
              H5Sselect_hyperslab(ms, H5S_SELECT_SET, zero, NULL, cnt, NULL) < 0 ||
              H5Dread(ck->r->did, ck->memtype, ms, fs, H5P_DEFAULT, s->buf) < 0;
    if (bad) {
        char off[160];
        gp_ck_offset_text(ck, s, off, sizeof off);
        fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s (never written): %s",
             ck->r->in->file, ck->r->dname, off, gp_h5io_reason().desc);
    }
    if (fs >= 0 && H5Sclose(fs) < 0) bad = 1;
    if (ms >= 0 && H5Sclose(ms) < 0) bad = 1;
    s->converted = 1;
    s->task.done = 1;
    return bad ? -1 : 0;
}

/* A stored size no chunk of this pipeline can have (a damaged index): more than the chunk
 * plus a sixteenth (deflate's worst growth is far less), or a pread past the file's end. */
static int size_wrong(const gp_ck_reader *ck, const gp_ck_slot *s, char *why, size_t len)
{
    const uint64_t most = ck->pipe.chunk_bytes + ck->pipe.chunk_bytes / 16 + 4096;
    if (s->size > most) {
        snprintf(why, len, "%llu bytes stored for a chunk of %zu (a damaged chunk index)",
                 (unsigned long long)s->size, ck->pipe.chunk_bytes);
        return 1;
    }
    if (s->addr > (haddr_t)ck->file_bytes || s->size > (hsize_t)ck->file_bytes - s->addr) {
        snprintf(why, len, "its %llu bytes at byte %llu lie past the end of the file (%lld "
                 "bytes: truncated?)", (unsigned long long)s->size,
                 (unsigned long long)s->addr, (long long)ck->file_bytes);
        return 1;
    }
    return 0;
}

/* The next chunk of the stream, one with an element in [pos, eb), into *s (its box): 1, or
 * 0 when there is none. */
static int next_chunk(gp_ck_reader *ck, gp_ck_slot *s)
{
    while (ck->cursor < ck->cand_end) {
        chunk_box(ck, ck->cursor++, s);
        if (holds(ck, s, ck->pos, ck->eb)) return 1;
    }
    return 0;
}

/* Appends the next chunk of the stream to the window and starts it: queued on the pool, or
 * read with H5Dread when never written. Returns 1 when one was added, 0 when the stream has
 * no more, -1 on error (e set). */
static int add_next(gp_ck_reader *ck, gp_err *e)
{
    gp_ck_slot *s = NULL;
    if (ck->nwin == ck->capwin) {
        const int cap = ck->capwin ? 2 * ck->capwin : 16;
        gp_ck_slot **w = realloc(ck->win, sizeof *w * (size_t)cap);
        if (!w) goto nomem;
        ck->win = w;
        ck->capwin = cap;
    }
    if (!(s = slot_get(ck))) goto nomem;
    unsigned char *buf = s->buf;
    memset(s, 0, sizeof *s);
    s->buf = buf;
    if (!next_chunk(ck, s)) {
        s->task.done = 1;
        slot_put(ck, s);
        return 0;
    }
    ck->win[ck->nwin++] = s;
    if (gp_ck_locate(ck, s, e) != 0) {
        s->task.done = 1;
        return -1;
    }
    if (s->addr == HADDR_UNDEF || s->size == 0) return read_fill(ck, s, e) ? -1 : 1;
    if (size_wrong(ck, s, s->why, sizeof s->why)) {
        s->err = -1;
        s->task.done = 1;
        return 1;
    }
    /* the whole chunk is one run of the read in progress, in the memory type: decode it
     * straight into the caller's buffer */
    if (ck->rbuf && ck->same && ck->contiguous && s->last - s->first + 1 == ck->celems &&
        s->first >= ck->ra && s->last < ck->rb)
        s->direct = ck->rbuf + (size_t)(s->first - ck->ra) * ck->msz;
    gp_h5io_pool_submit(ck->pool, &s->task);
    return 1;
nomem:
    fail(e, GP_IO_EREAD, "%s: %s: read failed: out of memory for the chunks' window",
         ck->r->in->file, ck->r->dname);
    return -1;
}

/* Keeps up to `ahead` chunks beyond the first `done` entries of the window in flight. */
static int fill(gp_ck_reader *ck, int done, gp_err *e)
{
    while (ck->nwin - done < ck->ahead) {
        const int rc = add_next(ck, e);
        if (rc <= 0) return rc;
    }
    return 0;
}

/* ---- the pool ------------------------------------------------------------------------ */

/* The pool of ck->threads threads with their scratch. Returns 0, or -1 with e set. */
static int start_pool(gp_ck_reader *ck, gp_err *e)
{
    char why[200] = "out of memory";
    ck->scratch = calloc((size_t)ck->threads, sizeof *ck->scratch);
    int ok = ck->scratch != NULL;
    for (int k = 0; ok && k < ck->threads; k++)
        ok = (ck->scratch[k] = gp_h5io_scratch_new()) != NULL;
    if (ok) ck->pool = gp_h5io_pool_create(ck->threads, decode_task, ck, why, sizeof why);
    if (ck->pool) return 0;
    for (int k = 0; ck->scratch && k < ck->threads; k++) gp_h5io_scratch_free(ck->scratch[k]);
    free(ck->scratch);
    ck->scratch = NULL;
    fail(e, GP_IO_EREAD, "%s: %s: read failed: %s", ck->r->in->file, ck->r->dname, why);
    return -1;
}

/* ---- the reads ------------------------------------------------------------------------- */

/* Chunk s failed on its pool thread: the error naming its offset. */
static void chunk_failed(const gp_ck_reader *ck, const gp_ck_slot *s, gp_err *e)
{
    char off[160];
    gp_ck_offset_text(ck, s, off, sizeof off);
    const char *file = ck->r->in->file, *ds = ck->r->dname;
    if (s->err == -1)
        fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: %s", file, ds, off, s->why);
    else if (s->err == -2)
        fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: the file ends at byte "
             "%lld, inside the chunk's bytes", file, ds, off, (long long)s->at);
    else
        fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: %s (at byte %lld)", file,
             ds, off, strerror(s->err), (long long)s->at);
}

/* Waits for window chunk s and makes it ready to copy from: checked, and converted to the
 * memory type where it is stored as another (H5Tconvert, on this thread). Returns 0, or -1
 * with e set. */
static int settle(gp_ck_reader *ck, gp_ck_slot *s, gp_err *e)
{
    gp_h5io_pool_wait(ck->pool, &s->task);
    if (s->err) {
        chunk_failed(ck, s, e);
        return -1;
    }
    if (ck->same || s->converted || s->direct) return 0;
    if (H5Tconvert(ck->ftype, ck->memtype, (size_t)ck->celems, s->buf, NULL, H5P_DEFAULT) < 0) {
        char off[160];
        gp_ck_offset_text(ck, s, off, sizeof off);
        fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: %s", ck->r->in->file,
             ck->r->dname, off, gp_h5io_reason().desc);
        return -1;
    }
    s->converted = 1;
    return 0;
}

/* Starts a stream through [a, b): the window emptied, the candidates the chunk rows that
 * [a, b) touches. */
static void stream_start(gp_ck_reader *ck, int64_t a, int64_t b)
{
    stream_end(ck);
    const int64_t row0 = a / ck->dstride[0], row1 = (b - 1) / ck->dstride[0];
    ck->ea = a;
    ck->eb = b;
    ck->pos = a;
    ck->cursor = row0 / (int64_t)ck->cdim[0] * ck->per_row;
    ck->cand_end = (row1 / (int64_t)ck->cdim[0] + 1) * ck->per_row;
    gp_ck_index(ck, ck->cursor, ck->cand_end);
    ck->valid = 1;
}

/* 1 when the stream covers the reads [a, b) from where they have got to. */
static int covers(const gp_ck_reader *ck, int64_t a, int64_t b)
{
    return ck->valid && a >= ck->pos && a >= ck->ea && b <= ck->eb;
}

void gp_h5io_chunks_expect(gp_h5_reader *r, int64_t off, int64_t cnt)
{
    gp_ck_reader *ck = r->ck;
    gp_err e;
    memset(&e, 0, sizeof e);
    if (!ck || cnt <= 0 || off < 0 || off > r->in->n - cnt || covers(ck, off, off + cnt)) return;
    if (!ck->pool && start_pool(ck, &e) != 0) return; /* the read says why */
    stream_start(ck, off, off + cnt);
    if (fill(ck, 0, &e) < 0) stream_end(ck);         /* the read meets the error again */
}

void gp_h5io_read_chunks(gp_h5_reader *r, int64_t a, int64_t cnt, void *buf, gp_err *e)
{
    gp_ck_reader *ck = r->ck;
    const int64_t b = a + cnt;
    if (!ck->pool && start_pool(ck, e) != 0) return;
    if (!covers(ck, a, b)) stream_start(ck, a, b);
    ck->ra = a;
    ck->rb = b;
    ck->rbuf = buf;
    while (ck->nwin > 0 && ck->win[0]->last < a) win_drop(ck, 0);
    int k = 0; /* window entries before k: used by this read, needed by a later one */
    while (!e->rc && fill(ck, k, e) == 0 && k < ck->nwin) {
        gp_ck_slot *s = ck->win[k];
        if (s->first >= b || settle(ck, s, e) != 0) break;
        if (!s->direct && holds(ck, s, a, b)) scatter(ck, s, a, b, buf);
        s->direct = NULL;
        if (s->last < b || b >= ck->eb) win_drop(ck, k);
        else k++;
    }
    ck->rbuf = NULL;
    if (!e->rc) {
        ck->pos = b;
        fill(ck, k, e); /* the next chunks decode while the caller works */
    }
    if (e->rc) stream_end(ck);
}


void gp_h5io_chunks_close(gp_ck_reader *ck)
{
    if (!ck) return;
    if (ck->pool) stream_end(ck);
    gp_h5io_pool_destroy(ck->pool);
    for (int k = 0; ck->scratch && k < ck->threads; k++) gp_h5io_scratch_free(ck->scratch[k]);
    free(ck->scratch);
    for (int k = 0; k < ck->nspare; k++) {
        free(ck->spare[k]->buf);
        free(ck->spare[k]);
    }
    free(ck->spare);
    free(ck->win);
    gp_ck_plan_free(ck);
}
