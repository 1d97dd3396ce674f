/* transport_mpi.c — the mpi transport (exchange.h): the split by a probe search over MPI,
 * the crossing ranges through MPI (device pointers where the MPI is CUDA-aware or the memory
 * is host memory, else staged through four pinned host pieces), and the merge of the kept
 * part with the received one. Every pair of ranks can use it; it is the fallback. */
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
 * test knob GPUPRIM_EXCHANGE_STAGE=1), and the piece size (GPUPRIM_EXCHANGE_PIECE_BYTES,
 * a positive integer up to 1 GiB; default XCH_PIECE). */
static int needs_staging(const gp_backend *be, int64_t *piece)
{
    const gp_tuning *t = gp_tuning_get(); /* the knobs, read once (kernels/tuning.h) */
    *piece = t->xchg_piece > 0 ? t->xchg_piece : XCH_PIECE;
    if (t->xchg_stage) return 1;
    return !(be->caps & GP_CAP_HOST_MEMORY) && !mpi_takes_device_memory();
}

/* The four staging pieces (pinned host memory). Returns 0, or -1 (host_alloc failed). */
static int alloc_pieces(gp_exchange *x)
{
    for (int i = 0; i < 4; i++)
        if (!(x->pieces[i] = x->be->host_alloc((size_t)x->piece))) return -1;
    return 0;
}

/* Whether this rank stages, and, where it may stage (every rank has a real partner when
 * P > 1; some of its partners are reached through mpi), the four staging pieces. */
static int mpi_setup(gp_exchange *x, const gp_exchange_config *cfg, int off_node, char *why,
                     size_t whylen)
{
    (void)cfg;
    int64_t piece = 0;
    x->stage = needs_staging(x->be, &piece);
    x->piece = piece;
    if (!x->stage || x->P < 2 || (x->shared && off_node == 0) || alloc_pieces(x) == 0) return 0;
    snprintf(why, whylen, "the exchange's staging pieces (%.1f MiB) of pinned host memory",
             (double)(4 * x->piece) / 1048576.0);
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
