/* transport_shared.c — the shared transport (exchange.h): partners on one node map each
 * other's memory, through an MPI-3 shared-memory window (a host-memory backend) or CUDA IPC
 * handles (a backend with GP_CAP_IPC); a step splits with be->merge_path on the partner's
 * mapped run, merges from it in place, and ends with a signal each way. */
#include "exchange_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one step ------------------------------------------------------------------------- */

/* The split of a step: be->merge_path on this rank's current run and the partner's, mapped
 * here (its current buffer, which the count exchange named). */
static void shared_split(gp_exchange *x, xstep *s, int stable)
{
    const char *own = x->kb[x->cur];
    const uint64_t *ownv = x->vb[x->cur];
    s->pk = s->peer->base + x->off[s->pcur];
    s->pv = x->values ? (const uint64_t *)(s->peer->base + x->off[2 + s->pcur]) : NULL;
    const char *lk = s->lower ? own : s->pk, *hk = s->lower ? s->pk : own;
    const uint64_t *lv = s->lower ? ownv : s->pv, *hv = s->lower ? s->pv : ownv;
    if (x->be->merge_path(x->width, lk, stable ? lv : NULL, s->nlo, hk, stable ? hv : NULL,
                          s->nhi, s->t, stable, &s->split))
        gp_xch_die(x->comm, x->rank, "split (merge_path)", x->be->last_error());
}

/* The shared transport's step, after the plan: the merge of the kept part with the taken
 * part, read in place from the partner's memory, into this rank's other buffer, which then
 * becomes its shard buffer. A rank that takes nothing and keeps a prefix of its run does
 * nothing; one that takes or keeps nothing copies the other part. */
static void shared_merge(gp_exchange *x, const xstep *s, int stable)
{
    const size_t w = (size_t)x->width;
    const int c = x->cur;
    const char *kk = x->kb[c] + (size_t)s->keep0 * w;
    const uint64_t *kv = x->values ? x->vb[c] + s->keep0 : NULL;
    const char *tk = s->pk + (size_t)s->take0 * w;
    const uint64_t *tv = x->values ? s->pv + s->take0 : NULL;
    if (s->kc == 0 && (s->keep0 == 0 || s->ka == 0)) return; /* its run's first ka: in place */
    if (s->kc == 0 || s->ka == 0)
        gp_xch_copy(x, x->kb[c ^ 1], x->vb[c ^ 1], s->kc ? tk : kk, s->kc ? tv : kv,
                    s->kc ? s->kc : s->ka);
    else
        gp_xch_merge_parts(x, s, kk, kv, tk, tv, x->kb[c ^ 1], x->vb[c ^ 1], stable);
    x->cur = c ^ 1;
}

/* The end of a shared step: this rank's device work is complete and its reads of the
 * partner's memory are over; one message each way says so, after which either may write
 * the buffer the other read. */
static void shared_done(gp_exchange *x, const xstep *s)
{
    if (x->be->synchronize()) gp_xch_die(x->comm, x->rank, "synchronize", x->be->last_error());
    if (x->win != MPI_WIN_NULL) MPI_Win_sync(x->win);
    char a = 1, b = 0;
    int rc = MPI_Sendrecv(&a, 1, MPI_CHAR, s->partner, TAG_DONE, &b, 1, MPI_CHAR, s->partner,
                          TAG_DONE, x->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        gp_xch_mpi_die(x->comm, x->rank, "end-of-step signal: MPI_Sendrecv", rc);
}

/* ---- setup and teardown ------------------------------------------------------------- */

/* The shared transport on host memory: the block is this rank's part of an MPI-3
 * shared-memory window on the node, and every partner's part is mapped here
 * (MPI_Win_shared_query); a passive-target epoch on all ranks stays open for MPI_Win_sync.
 * Collective over the node. Returns 0, or -1 with the reason in why. */
static int setup_window(gp_exchange *x, int fault, char *why, size_t whylen)
{
    MPI_Info info;
    void *base = NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each rank's part on its own */
    int rc = MPI_Win_allocate_shared((MPI_Aint)x->block, 1, info, x->node, &base, &x->win);
    MPI_Info_free(&info);
    char es[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) {
        x->win = MPI_WIN_NULL;
        MPI_Error_string(rc, es, &len);
        snprintf(why, whylen, "MPI_Win_allocate_shared of %zu bytes: %s", x->block, es);
        return -1;
    }
    MPI_Win_set_errhandler(x->win, MPI_ERRORS_RETURN);
    x->base = base;
    x->base_window = 1;
    for (int i = 0; i < x->npeers; i++) {
        xpeer *p = &x->peers[i];
        MPI_Aint size = 0;
        int du = 0;
        void *pb = NULL;
        if (p->node_rank < 0) continue;
        rc = MPI_Win_shared_query(x->win, p->node_rank, &size, &du, &pb);
        if (rc != MPI_SUCCESS || (size_t)size < x->block || !pb) {
            snprintf(why, whylen, "MPI_Win_shared_query of rank %d's part failed", p->rank);
            return -1;
        }
        p->base = pb;
        p->ops = &gp_xch_shared;
    }
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, x->win);
    if (rc != MPI_SUCCESS) {
        snprintf(why, whylen, "MPI_Win_lock_all failed");
        return -1;
    }
    x->win_locked = 1;
    if (fault) snprintf(why, whylen, "injected failure of the window setup (GPUPRIM_FAULT)");
    return fault ? -1 : 0;
}

/* The shared transport on a backend with IPC: the handle of every rank's block (from
 * be->alloc) goes to the node's ranks (MPI_Allgather of a valid flag and the handle), and
 * each rank opens its partners' handles once. Collective over the node (a rank without a
 * block takes part, flagging its handle invalid). Returns 0, or -1 with the reason in why. */
static int setup_ipc(gp_exchange *x, int fault, char *why, size_t whylen)
{
    enum { H = 1 + GP_IPC_HANDLE_BYTES };
    unsigned char mine[H];
    int nn = 0, err = 0;
    memset(mine, 0, sizeof mine);
    if (x->base && x->be->ipc_get(x->base, mine + 1) == GP_OK) mine[0] = 1;
    else if (x->base) err = -1, snprintf(why, whylen, "ipc_get: %s", x->be->last_error());
    MPI_Comm_size(x->node, &nn);
    unsigned char *all = malloc((size_t)nn * H);
    int rc = MPI_Allgather(mine, H, MPI_BYTE, all ? all : mine, all ? H : 0, MPI_BYTE, x->node);
    if (!all || rc != MPI_SUCCESS) {
        free(all);
        snprintf(why, whylen, "%s",
                 !all ? "out of host memory" : "MPI_Allgather of the IPC handles failed");
        return -1;
    }
    for (int i = 0; i < x->npeers && !err; i++) {
        xpeer *p = &x->peers[i];
        const unsigned char *h = all + (size_t)p->node_rank * H;
        if (p->node_rank < 0) continue;
        void *pb = NULL;
        if (!h[0]) {
            err = -1;
            snprintf(why, whylen, "rank %d has no buffer handle to map", p->rank);
        } else if (x->be->ipc_open(h + 1, &pb) != GP_OK) {
            err = -1;
            snprintf(why, whylen, "ipc_open of rank %d's buffers: %s", p->rank,
                     x->be->last_error());
        } else {
            p->base = pb;
            p->ipc = 1;
            p->ops = &gp_xch_shared;
        }
    }
    free(all);
    if (!err && fault)
        err = -1, snprintf(why, whylen, "injected failure of the IPC setup (GPUPRIM_FAULT)");
    return err;
}

/* The setup: a window on a host-memory backend, else (GP_CAP_IPC) the block from be->alloc
 * with its handle opened by the node's partners; nothing on a backend with neither. */
static int shared_setup(gp_exchange *x, const gp_exchange_config *cfg, int off_node, char *why,
                        size_t whylen)
{
    (void)off_node;
    if (x->be->caps & GP_CAP_HOST_MEMORY) return setup_window(x, cfg->fault_setup, why, whylen);
    if (!(x->be->caps & GP_CAP_IPC)) return 0;
    x->base = x->be->alloc(x->block);
    return setup_ipc(x, cfg->fault_setup, why, whylen);
}

/* The teardown (collective over the node): closes this rank's mappings of its partners'
 * memory, waits until every rank of the node has closed its own (so no block is freed while
 * mapped), then frees the window (and with it a window block). */
static int unmap_shared(gp_exchange *x)
{
    int err = GP_OK;
    for (int i = 0; i < x->npeers; i++) {
        xpeer *p = &x->peers[i];
        if (p->ipc && p->base && x->be->ipc_close(p->base) != GP_OK) err = GP_EDEVICE;
        p->base = NULL;
        p->ipc = 0;
        p->ops = NULL;
    }
    if (x->node != MPI_COMM_NULL) MPI_Barrier(x->node);
    if (x->win != MPI_WIN_NULL) {
        if (x->win_locked) MPI_Win_unlock_all(x->win);
        MPI_Win_free(&x->win);
        x->win = MPI_WIN_NULL;
        x->win_locked = 0;
        if (x->base_window) x->base = NULL, x->base_window = 0;
    }
    x->shared = 0;
    return err;
}

int gp_xch_shared_wanted(gp_exchange *x, gp_transport want, int off_node, int *any, char *msg,
                         size_t msglen)
{
    const int maps = (x->be->caps & (GP_CAP_HOST_MEMORY | GP_CAP_IPC)) != 0;
    int err = 0;
    if (want == GP_TRANSPORT_SHARED && !maps) {
        err = GP_EINVAL;
        snprintf(msg, msglen, "rank %d: the %s backend cannot map memory between processes",
                 x->rank, x->be->name);
    } else if (want == GP_TRANSPORT_SHARED && off_node) {
        for (int i = 0; i < x->npeers; i++)
            if (x->peers[i].node_rank < 0) {
                err = GP_EINVAL;
                snprintf(msg, msglen, "rank %d: its partner rank %d is on another node (the "
                         "shared transport needs every partner on the node)", x->rank,
                         x->peers[i].rank);
                break;
            }
    }
    if ((err = gp_agree(x->comm, err, msg, msglen))) return err;
    int mine = want != GP_TRANSPORT_MPI && maps && x->npeers > off_node;
    *any = 0;
    if (MPI_Allreduce(&mine, any, 1, MPI_INT, MPI_MAX, x->comm) != MPI_SUCCESS) {
        snprintf(msg, msglen, "rank %d: MPI_Allreduce failed", x->rank);
        return gp_agree(x->comm, GP_EINVAL, msg, msglen);
    }
    return 0;
}

/* no move: the merge reads the partner's range in place */
const xch_ops gp_xch_shared = {.id = GP_TRANSPORT_SHARED, .setup = shared_setup,
                               .teardown = unmap_shared, .split = shared_split,
                               .merge = shared_merge, .done = shared_done};
