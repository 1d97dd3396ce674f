/* exchange.c — the rank exchange itself (exchange.h): its setup (the buffers, the node, the
 * transports), its run over the network's steps, its accessors and its teardown, and the
 * form on the caller's buffers. The network is in network.c, the transports in
 * transport_*.c. */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED */
#include "exchange_internal.h"

#include "tuning.h" /* the exchange's knobs */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* madvise */
#include <unistd.h>   /* sysconf */

const char *gp_transport_name(gp_transport t)
{
    switch (t) {
    case GP_TRANSPORT_AUTO: return "auto";
    case GP_TRANSPORT_SHARED: return "shared";
    case GP_TRANSPORT_MPI: return "mpi";
    default: return "?";
    }
}

/* ---- the run -------------------------------------------------------------------------- */

/* GPUPRIM_FAULT's exchange-step hook: this rank fails (one line, MPI_Abort) or dies of
 * SIGKILL in its first step with a real partner, after the split, while (shared) the
 * partner merges from its memory. */
static void inject_fault(gp_exchange *x, const xstep *s)
{
    const char *how = gp_transport_name(s->ops->id);
    if (x->fault_step == 2) {
        fprintf(stderr, "%s: rank %d: GPUPRIM_FAULT: injected SIGKILL in exchange step %d (%s)\n",
                gp_xch_prog(), x->rank, s->index + 1, how);
        fflush(stderr);
        raise(SIGKILL);
    }
    char why[96];
    snprintf(why, sizeof why, "injected failure in step %d (%s transport; GPUPRIM_FAULT)",
             s->index + 1, how);
    gp_xch_die(x->comm, x->rank, "fault", why);
}

/* One step with partner q: the plan, the transport's move, merge and end, and what the step
 * did in info. Returns this rank's new count. */
static int64_t run_step(gp_exchange *x, int step, int q, int64_t nkeys, int stable,
                        gp_exchange_info *info)
{
    const xpeer *p = gp_xch_find_peer(x, q);
    xstep s = {.index = step, .partner = q, .peer = p};
    s.ops = p && p->ops ? p->ops : &gp_xch_mpi;
    const double t0 = MPI_Wtime();
    gp_xch_plan(x, &s, nkeys, stable);
    if (x->fault_step && info->merges == 0) inject_fault(x, &s);
    x->stream_comm_s = 0.0;
    if (s.ops->move) s.ops->move(x, &s);
    const double t1 = MPI_Wtime();
    s.ops->merge(x, &s, stable);
    const double t2 = MPI_Wtime();
    if (s.ops->done) s.ops->done(x, &s);
    /* a streamed merge receives its pieces as it goes: that time counts as communication */
    const double tc = (t1 - t0) + (MPI_Wtime() - t2) + x->stream_comm_s;
    const double tm = t2 - t1 - x->stream_comm_s;
    const int64_t moved = s.kc * (int64_t)gp_xch_elem_bytes(x);
    info->merges++;
    info->bytes_moved += moved;
    info->bytes_whole += s.mine * (int64_t)gp_xch_elem_bytes(x);
    info->t_comm += tc;
    info->t_merge += tm;
    if (step < GP_XSTEPS_MAX) {
        info->step_comm[step] = tc;
        info->step_merge[step] = tm;
        info->step_bytes[step] = moved;
        info->step_transport[step] = s.ops->id;
    }
    return s.ka + s.kc;
}

int gp_exchange_run(gp_exchange *x, int64_t *nkeys, int stable, gp_exchange_info *info)
{
    gp_exchange_info scratch;
    if (!info) info = &scratch;
    memset(info, 0, sizeof *info);
    if (x->m < 0 || *nkeys < 0 || *nkeys > x->m)
        gp_xch_count_die(x->comm, x->rank, x->rank, *nkeys, x->m);
    stable = x->values && stable;
    /* the shard is complete in device memory before a partner reads it (mapped, or through
     * a copy stream of the staging), whatever stream or process wrote it */
    if (x->P > 1 && x->be->synchronize())
        gp_xch_die(x->comm, x->rank, "synchronize", x->be->last_error());
    xnet net;
    int q;
    gp_xch_net_start(&net, x->P);
    while (gp_xch_net_next(&net, x->rank, &q)) {
        const int step = info->stages++;
        if (q >= x->P) continue; /* virtual all-+inf shard: keep mine */
        *nkeys = run_step(x, step, q, *nkeys, stable, info);
    }
    return 0;
}

/* ---- setup and teardown ------------------------------------------------------------- */

/* Test knob GPUPRIM_EXCHANGE_NODE_RANKS=k (a positive integer; other values are ignored):
 * the ranks of a node count as nodes of k consecutive node-local ranks each, so that the
 * transports between nodes (auto's mixed steps, --transport shared's error) run on one
 * machine. Collective over the node (every rank sees the same environment). */
static void node_knob(gp_exchange *x)
{
    const int k = gp_tuning_get()->xchg_node_ranks;
    if (k <= 0) return;
    int nr = 0;
    MPI_Comm sub;
    MPI_Comm_rank(x->node, &nr);
    if (MPI_Comm_split(x->node, (int)(nr / k), nr, &sub) != MPI_SUCCESS) return;
    MPI_Comm_free(&x->node);
    x->node = sub;
    MPI_Comm_set_errhandler(x->node, MPI_ERRORS_RETURN);
}

/* The buffers of a block: keys 0 | keys 1 | values 0 | values 1, each on XCH_ALIGN. */
static void layout(gp_exchange *x)
{
    const size_t um = (size_t)x->m;
    const size_t kb = (um * (size_t)x->width + XCH_ALIGN - 1) / XCH_ALIGN * XCH_ALIGN;
    const size_t vb = x->values ? (um * 8 + XCH_ALIGN - 1) / XCH_ALIGN * XCH_ALIGN : 0;
    x->off[0] = 0, x->off[1] = kb, x->off[2] = 2 * kb, x->off[3] = 2 * kb + vb;
    x->block = 2 * kb + 2 * vb;
    if (x->block == 0) x->block = XCH_ALIGN;
}

/* The two key buffers and the two value buffers, in this rank's block. */
static void point_buffers(gp_exchange *x)
{
    for (int b = 0; b < 2; b++) {
        x->kb[b] = x->base + x->off[b];
        x->vb[b] = x->values ? (uint64_t *)(x->base + x->off[2 + b]) : NULL;
    }
}

/* cfg is usable and the same on every rank (one MPI_Allreduce). Returns 0, or GP_EINVAL with
 * "rank R: ..." in msg (agreed by the caller). */
static int check_config(MPI_Comm comm, int rank, const gp_backend *be,
                        const gp_exchange_config *cfg, char *msg, size_t msglen)
{
    int bad = !be || !cfg || (cfg->width != 4 && cfg->width != 8) || cfg->m < 0 ||
              (unsigned)cfg->transport > (unsigned)GP_TRANSPORT_MPI;
    int64_t v[6] = {0, 0, 0, 0, 0, 0}, mx[6];
    if (bad) {
        snprintf(msg, msglen, "rank %d: bad exchange configuration (need a backend, a width of 4 "
                 "or 8, m >= 0 and a transport)", rank);
    } else {
        const int64_t val = cfg->values != 0;
        v[0] = cfg->m, v[1] = -cfg->m, v[2] = cfg->width, v[3] = -cfg->width, v[4] = val;
        v[5] = -val;
    }
    if (MPI_Allreduce(v, mx, 6, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS && !bad) {
        bad = 1;
        snprintf(msg, msglen, "rank %d: MPI_Allreduce of the exchange configuration failed", rank);
    }
    if (!bad && (mx[0] != -mx[1] || mx[2] != -mx[3] || mx[4] != -mx[5])) {
        bad = 1;
        snprintf(msg, msglen, "rank %d: m, the key width and whether values move must be the "
                 "same on every rank", rank);
    }
    return bad ? GP_EINVAL : 0;
}

/* The shared transport where a rank wants it (gp_xch_shared_wanted): set up on every rank,
 * or, when it fails on any rank, undone everywhere, then a fallback to mpi (auto, with the
 * notice in msg) or an error (shared). Collective. Returns 0 or GP_EDEVICE with msg set, the
 * same on every rank. */
static int setup_shared(gp_exchange *x, const gp_exchange_config *cfg, int off_node,
                        char *msg, size_t msglen)
{
    char why[400] = "", smsg[480] = "";
    const int sfail = gp_xch_shared.setup(x, cfg, off_node, why, sizeof why) != 0;
    snprintf(smsg, sizeof smsg, "rank %d: %s", x->rank, why);
    if (!gp_agree(x->comm, sfail, smsg, sizeof smsg)) {
        x->shared = 1;
        return 0;
    }
    gp_xch_shared.teardown(x);
    if (cfg->transport == GP_TRANSPORT_SHARED) {
        snprintf(msg, msglen, "the shared-memory transport cannot be set up: %s", smsg);
        return GP_EDEVICE;
    }
    snprintf(msg, msglen, "the shared-memory transport is not available (%s); the rank "
             "exchange goes through MPI", smsg);
    return 0;
}

/* This rank's block, and the shared transport when it is wanted: a window (host memory) or
 * the block from be->alloc with its IPC handle opened by the node's partners (setup_shared).
 * Then the mpi transport's staging pieces where this rank may stage. Collective. Returns 0
 * or a GP_E* code with msg set, the same on every rank. */
static int create_buffers(gp_exchange *x, const gp_exchange_config *cfg, int off_node,
                          char *msg, size_t msglen)
{
    const gp_backend *be = x->be;
    int any = 0;
    int err = gp_xch_shared_wanted(x, cfg->transport, off_node, &any, msg, msglen);
    if (!err && any) err = setup_shared(x, cfg, off_node, msg, msglen);
    if (err) return err;
    if (!x->base) x->base = be->alloc(x->block);
    int aerr = 0;
    char why[200] = "", amsg[400] = "";
    if (!x->base)
        snprintf(why, sizeof why, "the shard and receive buffers (%.1f MiB) of %s memory",
                 (double)(int64_t)x->block / 1048576.0, be->name);
    if (!x->base || gp_xch_mpi.setup(x, cfg, off_node, why, sizeof why)) {
        aerr = GP_ENOMEM;
        snprintf(amsg, sizeof amsg, "rank %d: cannot allocate %s: %s", x->rank, why,
                 be->last_error());
    }
    if (gp_agree(x->comm, aerr, amsg, sizeof amsg)) {
        snprintf(msg, msglen, "%s", amsg);
        return GP_ENOMEM;
    }
    point_buffers(x);
    return 0;
}

/* What every exchange starts from, the rest of *x zero: the communicator comm (this rank's
 * number in it and its size), the backend, the keys' width, whether values travel, m; no
 * node communicator and no window yet. */
static void xch_start(gp_exchange *x, MPI_Comm comm, const gp_backend *be, int width,
                      int values, int64_t m)
{
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->node = MPI_COMM_NULL;
    x->win = MPI_WIN_NULL;
    x->be = be;
    x->width = width;
    x->values = values != 0;
    x->m = m;
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->P);
}

int gp_exchange_create(MPI_Comm comm, const gp_backend *be, const gp_exchange_config *cfg,
                       gp_exchange **out, char *msg, size_t msglen)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (msglen > 0) msg[0] = '\0';
    if (out) *out = NULL;
    int err = check_config(comm, rank, be, cfg, msg, msglen);
    gp_exchange *x = err || !out ? NULL : calloc(1, sizeof *x);
    if (!err && !out) err = GP_EINVAL, snprintf(msg, msglen, "rank %d: out is NULL", rank);
    if (!err && !x) err = GP_ENOMEM, snprintf(msg, msglen, "rank %d: out of host memory", rank);
    if ((err = gp_agree(comm, err, msg, msglen))) {
        free(x);
        return err;
    }
    MPI_Comm own;
    MPI_Comm_dup(comm, &own);
    MPI_Comm_set_errhandler(own, MPI_ERRORS_RETURN);
    xch_start(x, own, be, cfg->width, cfg->values, cfg->m);
    x->own_comm = 1;
    x->fault_step = cfg->fault_step;
    layout(x);
    MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL, &x->node);
    MPI_Comm_set_errhandler(x->node, MPI_ERRORS_RETURN);
    node_knob(x);
    err = create_buffers(x, cfg, gp_xch_find_partners(x), msg, msglen);
    if (err) {
        gp_exchange_destroy(x);
        return err;
    }
    *out = x;
    return GP_OK;
}

int gp_exchange_destroy(gp_exchange *x)
{
    if (!x) return GP_OK;
    int err = gp_xch_shared.teardown(x);
    if (x->base && !x->base_window) x->be->free(x->base);
    gp_xch_mpi.teardown(x);
    if (x->node != MPI_COMM_NULL) MPI_Comm_free(&x->node);
    if (x->own_comm) MPI_Comm_free(&x->comm);
    free(x);
    return err;
}

void *gp_exchange_keys(const gp_exchange *x) { return x->kb[x->cur]; }
uint64_t *gp_exchange_values(const gp_exchange *x) { return x->vb[x->cur]; }
void *gp_exchange_spare_keys(const gp_exchange *x) { return x->kb[x->cur ^ 1]; }
uint64_t *gp_exchange_spare_values(const gp_exchange *x) { return x->vb[x->cur ^ 1]; }
void gp_exchange_use_spare(gp_exchange *x) { x->cur ^= 1; }

int gp_exchange_release_spare(gp_exchange *x)
{
    if (!x->base || x->base_window || !(x->be->caps & GP_CAP_HOST_MEMORY)) return 0;
    const long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return 0;
    const int s = x->cur ^ 1;
    const size_t bytes[2] = {(size_t)x->m * (size_t)x->width, x->values ? (size_t)x->m * 8 : 0};
    char *const at[2] = {x->kb[s], (char *)x->vb[s]};
    size_t released = 0;
    for (int i = 0; i < 2; i++) {
        if (!at[i] || bytes[i] == 0) continue;
        /* the whole pages inside the buffer */
        const uintptr_t a = ((uintptr_t)at[i] + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
        const uintptr_t e = ((uintptr_t)at[i] + bytes[i]) & ~((uintptr_t)pg - 1);
        if (e <= a) continue;
        if (madvise((void *)a, e - a, MADV_DONTNEED) == 0) released += e - a;
    }
    return released > 0;
}

gp_transport gp_exchange_transport(const gp_exchange *x)
{
    return x->shared ? GP_TRANSPORT_SHARED : GP_TRANSPORT_MPI;
}

/* ---- the form on the caller's buffers ------------------------------------------------ */

/* gp_bitonic_exchange(_pairs): an exchange on the caller's communicator and buffers (the
 * mpi transport), whose result is copied back into keys / vals when it ended in recv. */
static int borrowed_run(MPI_Comm comm, const gp_backend *be, int width, int64_t m, void *keys,
                        uint64_t *vals, void *recv, uint64_t *vrecv, int64_t *nkeys, int stable,
                        gp_exchange_info *info)
{
    gp_exchange x;
    xch_start(&x, comm, be, width, vals != NULL, m);
    if (width != 4 && width != 8) gp_xch_die(comm, x.rank, "arguments", "width is not 4 or 8");
    x.kb[0] = keys, x.kb[1] = recv, x.vb[0] = vals, x.vb[1] = vrecv;
    char why[200];
    if (gp_xch_mpi.setup(&x, NULL, 0, why, sizeof why))
        gp_xch_die(comm, x.rank, "staging pieces", be->last_error());
    gp_exchange_run(&x, nkeys, stable, info);
    if (x.cur) gp_xch_copy(&x, x.kb[0], x.vb[0], x.kb[1], x.vb[1], *nkeys);
    gp_xch_mpi.teardown(&x);
    return 0;
}

int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void *recv, void *host_send,
                        void *host_recv, gp_exchange_info *info)
{
    (void)host_send, (void)host_recv;
    return borrowed_run(comm, be, width, m, *keys, NULL, recv, NULL, nkeys, 0, info);
}

int gp_bitonic_exchange_pairs(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                              void **keys, uint64_t **vals, int64_t *nkeys, void *recv,
                              uint64_t *vrecv, void *host_send, void *host_recv,
                              uint64_t *hv_send, uint64_t *hv_recv, int stable,
                              gp_exchange_info *info)
{
    (void)host_send, (void)host_recv, (void)hv_send, (void)hv_recv;
    return borrowed_run(comm, be, width, m, *keys, *vals, recv, vrecv, nkeys, stable, info);
}
