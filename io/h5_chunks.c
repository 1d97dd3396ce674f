/* h5_chunks.c — the direct chunk path of a reader (RD_CHUNKS; gpuprim/h5io.h, "Direct chunk
 * reads"): a chunked dataset whose filters h5_filters.c undoes is read without H5Dread. The
 * reads go through an expected range of the flattened index in increasing order; its
 * chunks, in the chunk grid's row-major order (the order of their first elements, and of
 * their last ones), pass through a window:
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
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "h5io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The decoded chunks of one chunk row of an N-D dataset (held while its rows are read). */
#define GP_CK_SLAB_BYTES ((int64_t)1 << 30)
/* Decoded chunks queued ahead of the reads: twice the threads, within this many bytes. */
#define GP_CK_AHEAD_BYTES ((int64_t)1 << 30)

#if H5_VERSION_GE(1, 12, 3) && !(H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 13)
#define GP_HAVE_CHUNK_ITER 1
#elif H5_VERSION_GE(1, 10, 10) && H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10
#define GP_HAVE_CHUNK_ITER 1
#endif

/* The process's choice (gp_h5_set_chunk_reads). */
static gp_h5_chunk_reads g_reads = {1, 0, 0};

void gp_h5_set_chunk_reads(const gp_h5_chunk_reads *c)
{
    g_reads.direct = c ? c->direct != 0 : 1;
    g_reads.threads = c && c->threads > 0 ? c->threads : 0;
    g_reads.node_ranks = c && c->node_ranks > 0 ? c->node_ranks : 0;
}

const gp_h5_chunk_reads *gp_h5io_chunk_reads(void) { return &g_reads; }

/* One chunk in the window. */
typedef struct ck_slot {
    gp_pool_task task;              /* first: the pool's link and done flag */
    int64_t index;                  /* in the chunk grid, row-major */
    hsize_t lo[GP_H5_MAXDIMS];      /* its elements: [lo, hi) in each dimension, clipped */
    hsize_t hi[GP_H5_MAXDIMS];
    int64_t first, last;            /* the flattened index of its first and last element */
    haddr_t addr;                   /* its stored bytes */
    hsize_t size;
    unsigned mask;                  /* filters skipped when it was written */
    int converted;                  /* buf holds memory-type elements */
    int retained;                   /* an earlier read used it; a later one needs it too */
    unsigned char *buf;             /* the decoded chunk (GP_CK's mbytes) */
    unsigned char *direct;          /* else decoded straight into the caller's buffer here */
    int err;                        /* set by the pool thread: errno (-1: corrupt) */
    int64_t at;                     /* the byte a failed pread stopped at */
    char why[200];
} ck_slot;

struct gp_ck_reader {
    gp_h5_reader *r;
    int nd, same, contiguous;
    hsize_t dims[GP_H5_MAXDIMS], cdim[GP_H5_MAXDIMS], nck[GP_H5_MAXDIMS];
    int64_t dstride[GP_H5_MAXDIMS]; /* elements per index step, dataset */
    int64_t cstride[GP_H5_MAXDIMS]; /* elements per index step, chunk buffer */
    int64_t celems, per_row;        /* elements of a chunk; chunks of a chunk row */
    size_t fsz, msz, mbytes;        /* stored and memory element bytes; a buffer's bytes */
    hid_t ftype, memtype;
    gp_ck_pipe pipe;
    int fd;
    int64_t file_bytes;
    int fault;
    /* the pool */
    int threads, ahead;
    gp_pool *pool;
    gp_ck_scratch **scratch;
    /* the stream through [ea, eb) */
    int valid;
    int64_t ea, eb, pos;
    int64_t cursor, cand_end;       /* the next chunk to consider; the end of the candidates */
    ck_slot **win;                  /* the window, oldest first (a plain array) */
    int nwin, capwin;
    ck_slot **spare;                /* slots to reuse, with their buffers */
    int nspare, capspare;
    /* the read in progress */
    int64_t ra, rb;
    unsigned char *rbuf;
#ifdef GP_HAVE_CHUNK_ITER
    int64_t tab_lo, tab_n;          /* H5Dchunk_iter's table of the candidates */
    haddr_t *tab_addr;
    hsize_t *tab_size;
    unsigned *tab_mask;
#endif
};

/* ---- geometry -------------------------------------------------------------------------- */

/* The flattened index of coordinates x. */
static int64_t flat(const gp_ck_reader *ck, const hsize_t *x)
{
    int64_t f = 0;
    for (int i = 0; i < ck->nd; i++) f += (int64_t)x[i] * ck->dstride[i];
    return f;
}

/* Chunk `index` of the grid into s: its box, first and last element. */
static void chunk_box(const gp_ck_reader *ck, int64_t index, ck_slot *s)
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
static int holds(const gp_ck_reader *ck, const ck_slot *s, int64_t a, int64_t b)
{
    if (s->first >= b || s->last < a) return 0;
    const int64_t x = box_next(ck, s->lo, s->hi, a);
    return x >= 0 && x < b;
}

/* "[x, y, ...]": the chunk's offset (its first element's coordinates), as h5py gives it. */
static void offset_text(const gp_ck_reader *ck, const ck_slot *s, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "[");
    for (int i = 0; i < ck->nd && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%llu", i ? ", " : "",
                               (unsigned long long)s->lo[i]);
    if (at < len) snprintf(out + at, len - at, "]");
}

/* Copies the elements of decoded chunk s (ck->msz bytes each, the chunk's row-major layout)
 * that lie in [a, b) to dst (element 0 of dst: flattened index a). Runs along the last
 * dimensions: the trailing dimensions a chunk spans whole merge into one run. */
static void scatter(const gp_ck_reader *ck, const ck_slot *s, int64_t a, int64_t b,
                    unsigned char *dst)
{
    int k = ck->nd - 1;
    int64_t inner = 1;
    while (k > 0 && s->lo[k] == 0 && s->hi[k] == ck->dims[k] && ck->cdim[k] == ck->dims[k]) {
        inner *= (int64_t)ck->dims[k];
        k--;
    }
    const int64_t run = (int64_t)(s->hi[k] - s->lo[k]) * inner;
    hsize_t t[GP_H5_MAXDIMS]; /* the run's coordinates before dimension k */
    memcpy(t, s->lo, sizeof(hsize_t) * (size_t)ck->nd);
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
    ck_slot *s = (ck_slot *)t;
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
static ck_slot *slot_get(gp_ck_reader *ck)
{
    if (ck->nspare > 0) return ck->spare[--ck->nspare];
    ck_slot *s = calloc(1, sizeof *s);
    if (s && !(s->buf = malloc(ck->mbytes))) {
        free(s);
        s = NULL;
    }
    return s;
}

/* Waits for s (if queued) and keeps it for reuse. */
static void slot_put(gp_ck_reader *ck, ck_slot *s)
{
    if (s->task.done == 0) gp_h5io_pool_wait(ck->pool, &s->task);
    if (ck->nspare == ck->capspare) {
        const int cap = ck->capspare ? 2 * ck->capspare : 16;
        ck_slot **p = realloc(ck->spare, sizeof *p * (size_t)cap);
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

/* Where chunk s's bytes are: H5Dchunk_iter's table, else H5Dget_chunk_info_by_coord. Returns
 * 0, or -1 with e set. */
static int locate(gp_ck_reader *ck, ck_slot *s, gp_err *e)
{
    char off[160];
#ifdef GP_HAVE_CHUNK_ITER
    if (ck->tab_addr && s->index >= ck->tab_lo && s->index < ck->tab_lo + ck->tab_n) {
        const int64_t k = s->index - ck->tab_lo;
        s->addr = ck->tab_addr[k];
        s->size = ck->tab_size[k];
        s->mask = ck->tab_mask[k];
        return 0;
    }
#endif
    s->mask = 0;
    if (H5Dget_chunk_info_by_coord(ck->r->did, s->lo, &s->mask, &s->addr, &s->size) >= 0)
        return 0;
    offset_text(ck, s, off, sizeof off);
    fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: cannot find it (%s)",
         ck->r->in->file, ck->r->dname, off, gp_h5io_reason().desc);
    return -1;
}

/* Chunk s, never written, read with H5Dread into s->buf in the chunk's layout (the fill
 * value as HDF5 gives it, in the memory type). Returns 0, or -1 with e set. */
static int read_fill(gp_ck_reader *ck, ck_slot *s, gp_err *e)
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
        offset_text(ck, s, off, sizeof off);
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
static int size_wrong(const gp_ck_reader *ck, const ck_slot *s, char *why, size_t len)
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
static int next_chunk(gp_ck_reader *ck, ck_slot *s)
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
    ck_slot *s = NULL;
    if (ck->nwin == ck->capwin) {
        const int cap = ck->capwin ? 2 * ck->capwin : 16;
        ck_slot **w = realloc(ck->win, sizeof *w * (size_t)cap);
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
    if (locate(ck, s, e) != 0) {
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

int gp_h5io_thread_share(int threads, int node_ranks, int mine, int online)
{
    if (threads > 0) return threads;
    if (mine < 1) mine = 1;
    if (online < mine) online = mine;
    const int share = online / (node_ranks > 1 ? node_ranks : 1);
    return share < 1 ? 1 : share < mine ? share : mine;
}

/* The cores this process may run on (sched_getaffinity), else the machine's. */
static int cores_mine(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The pool of ck->threads threads with their scratch. Returns 0, or -1 with e set. */
static int start_pool(gp_ck_reader *ck, gp_err *e)
{
    char why[200] = "out of memory";
    ck->scratch = calloc((size_t)ck->threads, sizeof *ck->scratch);
    int ok = ck->scratch != NULL;
    for (int k = 0; ok && k < ck->threads; k++) ok = (ck->scratch[k] = gp_h5io_scratch_new()) != NULL;
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
static void chunk_failed(const gp_ck_reader *ck, const ck_slot *s, gp_err *e)
{
    char off[160];
    offset_text(ck, s, off, sizeof off);
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
static int settle(gp_ck_reader *ck, ck_slot *s, gp_err *e)
{
    if (s->task.done == 0) gp_h5io_pool_wait(ck->pool, &s->task);
    if (s->err) {
        chunk_failed(ck, s, e);
        return -1;
    }
    if (ck->same || s->converted || s->direct) return 0;
    if (H5Tconvert(ck->ftype, ck->memtype, (size_t)ck->celems, s->buf, NULL, H5P_DEFAULT) < 0) {
        char off[160];
        offset_text(ck, s, off, sizeof off);
        fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: %s", ck->r->in->file,
             ck->r->dname, off, gp_h5io_reason().desc);
        return -1;
    }
    s->converted = 1;
    return 0;
}

#ifdef GP_HAVE_CHUNK_ITER
/* H5Dchunk_iter's callback: the chunk at `offset` into the table when it is a candidate. */
static int iter_cb(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *op)
{
    gp_ck_reader *ck = op;
    int64_t index = 0;
    for (int i = 0; i < ck->nd; i++)
        index = index * (int64_t)ck->nck[i] + (int64_t)(offset[i] / ck->cdim[i]);
    if (index >= ck->tab_lo && index < ck->tab_lo + ck->tab_n) {
        ck->tab_addr[index - ck->tab_lo] = addr;
        ck->tab_size[index - ck->tab_lo] = size;
        ck->tab_mask[index - ck->tab_lo] = mask;
    }
    return 0;
}

/* The addresses of the candidates [lo, hi) in one H5Dchunk_iter pass (O(chunks) in all,
 * where H5Dget_chunk_info_by_coord is a search per chunk). Without memory, or if the pass
 * fails, locate() asks per chunk. */
static void build_table(gp_ck_reader *ck, int64_t lo, int64_t hi)
{
    free(ck->tab_addr);
    free(ck->tab_size);
    free(ck->tab_mask);
    ck->tab_n = hi - lo;
    ck->tab_lo = lo;
    ck->tab_addr = malloc(sizeof *ck->tab_addr * (size_t)ck->tab_n);
    ck->tab_size = malloc(sizeof *ck->tab_size * (size_t)ck->tab_n);
    ck->tab_mask = malloc(sizeof *ck->tab_mask * (size_t)ck->tab_n);
    if (ck->tab_addr && ck->tab_size && ck->tab_mask) {
        for (int64_t k = 0; k < ck->tab_n; k++) {
            ck->tab_addr[k] = HADDR_UNDEF;
            ck->tab_size[k] = 0;
            ck->tab_mask[k] = 0;
        }
        if (H5Dchunk_iter(ck->r->did, H5P_DEFAULT, iter_cb, ck) >= 0) return;
    }
    free(ck->tab_addr);
    free(ck->tab_size);
    free(ck->tab_mask);
    ck->tab_addr = NULL;
    ck->tab_size = NULL;
    ck->tab_mask = NULL;
    ck->tab_n = 0;
}
#endif

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
#ifdef GP_HAVE_CHUNK_ITER
    build_table(ck, ck->cursor, ck->cand_end);
#endif
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
        ck_slot *s = ck->win[k];
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


/* ---- plan and close -------------------------------------------------------------------- */

/* The chunk geometry and the pipeline of ck->r's dataset (creation property list dcpl):
 * 0 when the direct path can read it, else -1. */
static int plan_layout(gp_ck_reader *ck, hid_t dcpl)
{
    const gp_h5_reader *r = ck->r;
    char why[200];
    ck->nd = r->nd;
    if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, ck->nd, ck->cdim) != ck->nd)
        return -1;
    ck->ftype = H5Dget_type(r->did);
    const size_t fsz = ck->ftype >= 0 ? H5Tget_size(ck->ftype) : 0;
    const htri_t same = ck->ftype >= 0 ? H5Tequal(ck->ftype, ck->memtype) : -1;
    if (fsz == 0 || same < 0) return -1;
    ck->fsz = fsz;
    ck->msz = r->esz;
    ck->same = same > 0;
    ck->celems = 1;
    ck->per_row = 1;
    for (int i = ck->nd - 1; i >= 0; i--) {
        ck->dims[i] = r->dims[i];
        if (ck->cdim[i] == 0 || ck->dims[i] == 0) return -1;
        ck->nck[i] = (ck->dims[i] + ck->cdim[i] - 1) / ck->cdim[i];
        ck->dstride[i] = i == ck->nd - 1 ? 1 : ck->dstride[i + 1] * (int64_t)ck->dims[i + 1];
        ck->cstride[i] = ck->celems;
        ck->celems *= (int64_t)ck->cdim[i]; /* HDF5 keeps a chunk under 2^32 elements */
        if (i > 0) ck->per_row *= (int64_t)ck->nck[i];
    }
    ck->mbytes = (size_t)ck->celems * (fsz > ck->msz ? fsz : ck->msz);
    if (gp_h5io_pipe_plan(dcpl, (size_t)ck->celems * fsz, &ck->pipe, why, sizeof why) != 0)
        return -1;
    /* one chunk row of an N-D dataset stays decoded while its rows are read */
    if (ck->nd > 1 && (double)ck->per_row * (double)ck->mbytes > (double)GP_CK_SLAB_BYTES)
        return -1;
    /* a whole chunk is one run of the flattening: ones, then one dimension, then the
     * dataset's own extents */
    int k = 0;
    while (k < ck->nd - 1 && ck->cdim[k] == 1) k++;
    ck->contiguous = 1;
    for (int i = k + 1; i < ck->nd; i++)
        if (ck->cdim[i] != ck->dims[i]) ck->contiguous = 0;
    return 0;
}

/* The file that holds ck->r's dataset, opened for pread into ck->fd, and its size: 0, or -1
 * (not opened: H5Dread reads it). A file with a user block goes through H5Dread (its chunk
 * addresses would need the block's size added). */
static int plan_file(gp_ck_reader *ck)
{
    char name[GP_H5_PATHLEN + 1];
    struct stat st;
    hsize_t ub = 1;
    const hid_t fid = H5Iget_file_id(ck->r->did);
    const hid_t fcpl = fid >= 0 ? H5Fget_create_plist(fid) : H5I_INVALID_HID;
    const int bad_ub = fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0 || ub != 0;
    if (fcpl >= 0 && H5Pclose(fcpl) < 0) return -1;
    if (fid >= 0 && H5Fclose(fid) < 0) return -1;
    const ssize_t nl = H5Fget_name(ck->r->did, name, sizeof name);
    if (bad_ub || nl <= 0 || (size_t)nl >= sizeof name) return -1;
    ck->fd = open(name, O_RDONLY | O_CLOEXEC);
    if (ck->fd < 0 || fstat(ck->fd, &st) != 0) return -1;
    ck->file_bytes = (int64_t)st.st_size;
    return 0;
}

void gp_h5io_plan_chunks(gp_h5_reader *r)
{
    const gp_h5_chunk_reads *cr = gp_h5io_chunk_reads();
    if (!cr->direct || r->in->n == 0) return;
    gp_ck_reader *ck = calloc(1, sizeof *ck);
    if (!ck) return; /* H5Dread reads it */
    ck->r = r;
    ck->fd = -1;
    ck->ftype = H5I_INVALID_HID;
    ck->memtype = gp_h5io_native(r->as);
    ck->fault = r->in->io == GP_IO_POSIX && gp_h5io_faults()->pread;
    const hid_t dcpl = H5Dget_create_plist(r->did);
    int ok = dcpl >= 0 && plan_layout(ck, dcpl) == 0 && plan_file(ck) == 0;
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) ok = 0;
    if (!ok) {
        gp_h5io_chunks_close(ck);
        return;
    }
    int64_t chunks = 1;
    for (int i = 0; i < ck->nd; i++)
        chunks = chunks > INT64_MAX / (int64_t)ck->nck[i] ? INT64_MAX : chunks * (int64_t)ck->nck[i];
    ck->threads = gp_h5io_thread_share(cr->threads, cr->node_ranks, cores_mine(),
                                       (int)sysconf(_SC_NPROCESSORS_ONLN));
    if (ck->threads > chunks) ck->threads = (int)chunks;
    if (ck->threads > 1024) ck->threads = 1024;
    ck->ahead = 2 * ck->threads;
    while (ck->ahead > ck->threads && (int64_t)ck->ahead * (int64_t)ck->mbytes > GP_CK_AHEAD_BYTES)
        ck->ahead--;
    r->ck = ck;
    r->how = RD_CHUNKS;
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
#ifdef GP_HAVE_CHUNK_ITER
    free(ck->tab_addr);
    free(ck->tab_size);
    free(ck->tab_mask);
#endif
    if (ck->fd >= 0) close(ck->fd);
    if (ck->ftype >= 0 && H5Tclose(ck->ftype) < 0) { /* nothing more to do */ }
    free(ck);
}
