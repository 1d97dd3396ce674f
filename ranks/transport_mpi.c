/* transport_mpi.c — the mpi transport (exchange.h): the split by a probe search over MPI,
 * the crossing ranges through MPI (device pointers where the MPI is CUDA-aware, else staged
 * through four pinned host pieces; host memory streamed through two pieces), and the merge
 * of the kept part with the received one (on host memory, piece by piece as they arrive).
 * Every pair of ranks can use it; it is the fallback. */
#include "exchange_internal.h"

#include "merge_path.h"
#include "tuning.h" /* the exchange's knobs */

#include <stdio.h>

/* Open MPI's extensions: MPIX_Query_cuda_support (is the MPI CUDA-aware at run time?) */
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* ---- the split ------------------------------------------------------------------------ */

/* What the probe search needs: this rank's run and its partner. */
typedef struct probe_ctx {
    MPI_Comm comm;
    int rank, partner, lower, width, stable;
    const gp_backend *be;
    const char *keys;
    const uint64_t *vals;
} probe_ctx;

/* One evaluation of the order for the probe search: does lo's element i go before hi's
 * element j? The lower rank reads lo[i], the upper one hi[j] (each its own run, through
 * be->download), they swap them with one MPI_Sendrecv, and both answer alike. */
static int probe_lo_first(const probe_ctx *c, int64_t i, int64_t j)
{
    const int64_t at = c->lower ? i : j;
    uint64_t mine[2] = {0, 0}, theirs[2] = {0, 0};
    uint32_t k32 = 0;
    int rc = c->width == 4 ? c->be->download(&k32, c->keys + (size_t)at * 4, 4)
                           : c->be->download(&mine[0], c->keys + (size_t)at * 8, 8);
    if (c->width == 4) mine[0] = k32;
    if (!rc && c->stable) rc = c->be->download(&mine[1], c->vals + at, 8);
    if (rc) gp_xch_die(c->comm, c->rank, "split probe", c->be->last_error());
    rc = MPI_Sendrecv(mine, 2, MPI_UINT64_T, c->partner, TAG_PROBE, theirs, 2, MPI_UINT64_T,
                      c->partner, TAG_PROBE, c->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) gp_xch_mpi_die(c->comm, c->rank, "split probe: MPI_Sendrecv", rc);
    const uint64_t *lo = c->lower ? mine : theirs, *hi = c->lower ? theirs : mine;
    return gp_lo_first(lo[0], lo[1], hi[0], hi[1], c->stable);
}

/* The probe search: GP_MERGE_PATH with each evaluation a probe (both ranks make the same
 * calls in the same order, so their searches stay in step). */
static int64_t probe_split(const probe_ctx *c, int64_t nlo, int64_t nhi, int64_t t)
{
    int64_t split = 0;
#define PROBE_LO_FIRST(i, j) probe_lo_first(c, i, j)
    GP_MERGE_PATH(split, nlo, nhi, t, PROBE_LO_FIRST);
#undef PROBE_LO_FIRST
    return split;
}

int gp_exchange_split(MPI_Comm comm, int partner, const gp_backend *be, int width,
                      const void *keys, const uint64_t *vals, int64_t mine, int64_t theirs,
                      int64_t t, int stable, int64_t *split)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if ((width != 4 && width != 8) || mine < 0 || theirs < 0 || t < 0 || t > mine + theirs ||
        !split || partner == rank)
        gp_xch_die(comm, rank, "split", "bad arguments");
    const probe_ctx c = {comm, rank, partner, rank < partner, width, stable != 0, be,
                         (const char *)keys, vals};
    *split = c.lower ? probe_split(&c, mine, theirs, t) : probe_split(&c, theirs, mine, t);
    return 0;
}

/* The split of a step: the probe search on this rank's current run. */
static void mpi_split(gp_exchange *x, xstep *s, int stable)
{
    const probe_ctx c = {x->comm, x->rank, s->partner, s->lower, x->width, stable, x->be,
                         x->kb[x->cur], x->vb[x->cur]};
    s->split = probe_split(&c, s->nlo, s->nhi, s->t);
}

/* ---- the transfer and the merge ------------------------------------------------------- */

/* sbytes from src to `partner` and rbytes from it into dst, staged through the four host
 * pieces: piece k+1 downloads (download_async) while piece k is in MPI_Sendrecv and piece
 * k-1 uploads (upload_async); the two sides agree on the piece count from their sizes. */
static void staged_sendrecv(gp_exchange *x, int partner, const char *src, int64_t sbytes,
                            char *dst, int64_t rbytes)
{
    const gp_backend *be = x->be;
    const int64_t pb = x->piece, ns = (sbytes + pb - 1) / pb, nr = (rbytes + pb - 1) / pb;
    const int64_t n = ns > nr ? ns : nr;
#define PIECE_LEN(total, k) ((total) - (k) * pb < pb ? (total) - (k) * pb : pb)
    if (ns > 0 && be->download_async(x->pieces[0], src, (size_t)PIECE_LEN(sbytes, 0)))
        gp_xch_die(x->comm, x->rank, "staging: download", be->last_error());
    for (int64_t k = 0; k < n; k++) {
        const int64_t sl = k < ns ? PIECE_LEN(sbytes, k) : 0;
        const int64_t rl = k < nr ? PIECE_LEN(rbytes, k) : 0;
        char *hs = x->pieces[k & 1], *hr = x->pieces[2 + (k & 1)];
        if (sl > 0 && be->download_wait())
            gp_xch_die(x->comm, x->rank, "staging: download", be->last_error());
        if (k + 1 < ns && be->download_async(x->pieces[(k + 1) & 1], src + (k + 1) * pb,
                                             (size_t)PIECE_LEN(sbytes, k + 1)))
            gp_xch_die(x->comm, x->rank, "staging: download", be->last_error());
        int rc = MPI_Sendrecv(hs, (int)sl, MPI_BYTE, partner, TAG_PIECE, hr, (int)rl, MPI_BYTE,
                              partner, TAG_PIECE, x->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) gp_xch_mpi_die(x->comm, x->rank, "staging: MPI_Sendrecv", rc);
        /* piece k-1's upload is done before its buffer (this one's twin) takes piece k+1 */
        if (be->upload_wait() || (rl > 0 && be->upload_async(dst + k * pb, hr, (size_t)rl)))
            gp_xch_die(x->comm, x->rank, "staging: upload", be->last_error());
    }
#undef PIECE_LEN
    if (be->upload_wait()) gp_xch_die(x->comm, x->rank, "staging: upload", be->last_error());
}

/* The mpi transport's transfer: this rank's given range goes to the partner and the range
 * it takes lands in its receive buffer, after the kept part's place (the lower rank keeps
 * the first ka slots for its kept part, the upper one puts the taken part first). */
static void mpi_transfer(gp_exchange *x, const xstep *s)
{
    if (x->stream) return; /* the streamed merge moves the ranges itself */
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    const int64_t roff = s->lower ? s->ka : 0;
    for (int part = 0; part < (x->values ? 2 : 1); part++) {
        const size_t e = part ? 8 : w;
        const char *src = part ? (const char *)(x->vb[c] + s->give0) : x->kb[c] + s->give0 * w;
        char *dst = part ? (char *)(x->vb[c ^ 1] + roff) : x->kb[c ^ 1] + roff * w;
        if (x->stage) {
            staged_sendrecv(x, s->partner, src, s->ng * (int64_t)e, dst, s->kc * (int64_t)e);
        } else {
            int rc = gp_sendrecv_bytes(x->comm, s->partner, src, s->ng * (int64_t)e, dst,
                                       s->kc * (int64_t)e);
            if (rc != MPI_SUCCESS)
                gp_xch_mpi_die(x->comm, x->rank, "transfer: MPI_Sendrecv", rc);
        }
    }
}

/* ---- the streamed step (host memory) ---------------------------------------------------- */

/* How many of the kept elements kk / kv [0, n) go before the taken element (tk, tv) in the
 * merge (the lower rank's elements first on ties; stable: by (key, value)): a prefix of the
 * kept run, found by bisection. */
static int64_t kept_before(const gp_exchange *x, const xstep *s, const char *kk,
                           const uint64_t *kv, int64_t n, uint64_t tk, uint64_t tv, int stable)
{
    int64_t a = 0, b = n;
    while (a < b) {
        const int64_t i = a + (b - a) / 2;
        const uint64_t k = gp_key_load(kk, x->width, i), v = stable ? kv[i] : 0;
        const int before = s->lower ? gp_lo_first(k, v, tk, tv, stable)
                                    : !gp_lo_first(tk, tv, k, v, stable);
        if (before) a = i + 1;
        else b = i;
    }
    return a;
}

/* One piece of the streamed step: pieces[2] / [3] hold taken elements [j, j + len) (keys,
 * values), the last of the taken part when `last`; merged with the kept elements [*i, i1)
 * that go before its last element (all the rest when last) into the other buffer at
 * *i + j, the lower rank's elements first on ties. Advances *i to i1. */
static void stream_piece(gp_exchange *x, const xstep *s, int64_t *i, int64_t j, int64_t len,
                         int last, int stable)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    const char *kk = x->kb[c] + (size_t)(s->keep0 + *i) * w;
    const uint64_t *kv = x->values ? x->vb[c] + s->keep0 + *i : NULL;
    const char *pk = x->pieces[2];
    const uint64_t *pv = x->values ? (const uint64_t *)x->pieces[3] : NULL;
    const int64_t rest = s->ka - *i;
    const int64_t nk = last ? rest
                            : kept_before(x, s, kk, kv, rest, gp_key_load(pk, x->width, len - 1),
                                          pv && stable ? pv[len - 1] : 0, stable);
    char *dk = x->kb[c ^ 1] + (size_t)(*i + j) * w;
    uint64_t *dv = x->values ? x->vb[c ^ 1] + *i + j : NULL;
    if (nk == 0) {
        gp_xch_copy(x, dk, dv, pk, pv, len);
    } else {
        const char *lk = s->lower ? kk : pk, *hk = s->lower ? pk : kk;
        const uint64_t *lv = s->lower ? kv : pv, *hv = s->lower ? pv : kv;
        const int64_t nl = s->lower ? nk : len, nh = s->lower ? len : nk;
        int64_t nout = -1;
        if (x->be->merge_split(x->width, lk, lv, nl, hk, hv, nh, nl + nh, 0, stable, dk, dv,
                               &nout))
            gp_xch_die(x->comm, x->rank, "merge-split", x->be->last_error());
        if (nout != nl + nh) gp_xch_die(x->comm, x->rank, "merge-split", "unexpected output count");
    }
    *i += nk;
}

/* The mpi transport's step on host memory, streamed: the given range goes to the partner and
 * the taken one arrives in pieces of x->piece / 8 elements (keys into pieces[2], values into
 * pieces[3]); each piece is merged with the kept elements before its last one into the other
 * buffer as it arrives, so the kept part is never copied and the taken part never lands in
 * the big buffers first. Both partners send and receive the same number of pieces (the larger
 * of the two ranges' counts, empty ones past a range's end). The result is the same as the
 * merge of the whole parts. Returns the seconds spent in MPI. */
static double stream_step(gp_exchange *x, const xstep *s, int stable)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    const int64_t per = x->piece / 8;
    const int64_t ns = (s->ng + per - 1) / per, nr = (s->kc + per - 1) / per;
    double comm = 0.0;
    int64_t i = 0;
    for (int64_t k = 0; k < (ns > nr ? ns : nr); k++) {
        const int64_t so = k * per, ro = k * per;
        const int64_t sl = so < s->ng ? (s->ng - so < per ? s->ng - so : per) : 0;
        const int64_t rl = ro < s->kc ? (s->kc - ro < per ? s->kc - ro : per) : 0;
        const double t0 = MPI_Wtime();
        int rc = MPI_Sendrecv(x->kb[c] + (size_t)(s->give0 + so) * w, (int)(sl * (int64_t)w),
                              MPI_BYTE, s->partner, TAG_PIECE, x->pieces[2],
                              (int)(rl * (int64_t)w), MPI_BYTE, s->partner, TAG_PIECE, x->comm,
                              MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && x->values)
            rc = MPI_Sendrecv(x->vb[c] + s->give0 + so, (int)(sl * 8), MPI_BYTE, s->partner,
                              TAG_PIECE, x->pieces[3], (int)(rl * 8), MPI_BYTE, s->partner,
                              TAG_PIECE, x->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) gp_xch_mpi_die(x->comm, x->rank, "transfer: MPI_Sendrecv", rc);
        comm += MPI_Wtime() - t0;
        if (rl > 0) stream_piece(x, s, &i, ro, rl, ro + rl == s->kc, stable);
    }
    return comm;
}

/* The mpi transport's merge: the kept part is copied beside the received one in the
 * receive buffer and the two are merged into the shard buffer; a rank that received nothing
 * keeps a prefix in place or copies its kept suffix over, and one that keeps nothing has
 * its result in the receive buffer already. */
static void mpi_merge(gp_exchange *x, const xstep *s, int stable)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    char *rk = x->kb[c ^ 1];
    uint64_t *rv = x->vb[c ^ 1];
    const char *kk = x->kb[c] + (size_t)s->keep0 * w;
    const uint64_t *kv = x->values ? x->vb[c] + s->keep0 : NULL;
    if (x->stream && (s->ng > 0 || s->kc > 0)) x->stream_comm_s = stream_step(x, s, stable);
    if (x->stream && s->kc > 0) {
        x->cur = c ^ 1; /* the merged (or taken) elements are in the other buffer */
        return;
    }
    if (s->kc == 0) {
        if (s->keep0 == 0 || s->ka == 0) return;
        gp_xch_copy(x, rk, rv, kk, kv, s->ka);
        x->cur = c ^ 1;
        return;
    }
    if (s->ka == 0) {
        x->cur = c ^ 1; /* all of it was received, at the start of the receive buffer */
        return;
    }
    const int64_t kdst = s->lower ? 0 : s->kc, tsrc = s->lower ? s->ka : 0;
    gp_xch_copy(x, rk + (size_t)kdst * w, rv ? rv + kdst : NULL, kk, kv, s->ka);
    gp_xch_merge_parts(x, s, rk + (size_t)kdst * w, rv ? rv + kdst : NULL,
                       rk + (size_t)tsrc * w, rv ? rv + tsrc : NULL, x->kb[c], x->vb[c], stable);
}

/* ---- setup and teardown ------------------------------------------------------------- */

/* 1 when MPI can take device pointers of a non-host-memory backend (a CUDA-aware MPI, asked
 * at run time where <mpi-ext.h> offers MPIX_Query_cuda_support). */
static int mpi_takes_device_memory(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

/* Whether the mpi transport stages through host pieces (memory MPI cannot take, or the
 * test knob GPUPRIM_EXCHANGE_STAGE=1). */
static int needs_staging(const gp_backend *be)
{
    if (gp_tuning_get()->xchg_stage) return 1; /* the knobs, read once (kernels/tuning.h) */
    return !(be->caps & GP_CAP_HOST_MEMORY) && !mpi_takes_device_memory();
}

/* Pieces [from, 4) (the four staging pieces, pinned; the two receive pieces, 2 and 3, of a
 * streamed step). Returns 0, or -1 (host_alloc failed). */
static int alloc_pieces(gp_exchange *x, int from)
{
    for (int i = from; i < 4; i++)
        if (!(x->pieces[i] = x->be->host_alloc((size_t)x->piece))) return -1;
    return 0;
}

/* Whether this rank stages or streams (host memory, unless GPUPRIM_EXCHANGE_STREAM=0: the
 * same on every rank, as every knob), and, where a step may go through mpi (P > 1, and not
 * every partner served by the shared transport), the pieces that takes: four staging pieces,
 * or two receive pieces of a streamed step (at least 8 elements of 8 bytes). */
static int mpi_setup(gp_exchange *x, const gp_exchange_config *cfg, int off_node, char *why,
                     size_t whylen)
{
    (void)cfg;
    const gp_tuning *t = gp_tuning_get();
    x->stage = needs_staging(x->be);
    x->stream = !x->stage && (x->be->caps & GP_CAP_HOST_MEMORY) && t->xchg_stream;
    /* GPUPRIM_EXCHANGE_PIECE_BYTES (a positive integer up to 1 GiB), else the default */
    x->piece = t->xchg_piece > 0 ? t->xchg_piece : x->stream ? XCH_STREAM_PIECE : XCH_PIECE;
    if (x->stream && x->piece < 64) x->piece = 64;
    if ((!x->stage && !x->stream) || x->P < 2 || (x->shared && off_node == 0) ||
        alloc_pieces(x, x->stage ? 0 : 2) == 0)
        return 0;
    snprintf(why, whylen, "the exchange's %s pieces (%.1f MiB) of %s memory",
             x->stage ? "staging" : "receive", (double)((x->stage ? 4 : 2) * x->piece) / 1048576.0,
             x->stage ? "pinned host" : "host");
    return -1;
}

/* Frees the staging pieces (those allocated, also after a failed setup). */
static int mpi_teardown(gp_exchange *x)
{
    for (int i = 0; i < 4; i++) {
        if (x->pieces[i]) x->be->host_free(x->pieces[i]);
        x->pieces[i] = NULL;
    }
    return GP_OK;
}

/* no end-of-step signal: the partner never reads this rank's memory, only what MPI delivered */
const xch_ops gp_xch_mpi = {.id = GP_TRANSPORT_MPI, .setup = mpi_setup, .teardown = mpi_teardown,
                            .split = mpi_split, .move = mpi_transfer, .merge = mpi_merge};
