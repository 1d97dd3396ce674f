/* network.c — the rank-level bitonic network (exchange.h): its steps and each rank's partner
 * in them, the plan of one step (the count exchange, the split by the step's transport, and
 * the split-first rule: the lower rank keeps merged[0, t), so only the elements that change
 * side move), and the local merge of a step, which both transports share. */
#include "exchange_internal.h"

/* The partner of `rank` in step j of merge k (the mirror partner inside the k-block first,
 * then half-cleaners: every comparator keeps the minimum at the lower rank). */
static int partner_of(int rank, int k, int j) { return j == (k >> 1) ? rank ^ (k - 1) : rank ^ j; }

void gp_xch_net_start(xnet *n, int P)
{
    n->P2 = 1;
    while (n->P2 < P) n->P2 <<= 1;
    n->k = 2;
    n->j = 1;
}

int gp_xch_net_next(xnet *n, int rank, int *q)
{
    if (n->k > n->P2) return 0;
    *q = partner_of(rank, n->k, n->j);
    if ((n->j >>= 1) == 0) { /* merge k is done: the next one starts with its mirror step */
        n->k <<= 1;
        n->j = n->k >> 1;
    }
    return 1;
}

xpeer *gp_xch_find_peer(gp_exchange *x, int q)
{
    for (int i = 0; i < x->npeers; i++)
        if (x->peers[i].rank == q) return &x->peers[i];
    return NULL;
}

int gp_xch_find_partners(gp_exchange *x)
{
    MPI_Group g, gn;
    MPI_Comm_group(x->comm, &g);
    MPI_Comm_group(x->node, &gn);
    int off_node = 0, q;
    xnet net;
    gp_xch_net_start(&net, x->P);
    while (gp_xch_net_next(&net, x->rank, &q)) {
        int nr = MPI_UNDEFINED;
        if (q >= x->P || gp_xch_find_peer(x, q) || x->npeers >= XCH_PEERS) continue;
        MPI_Group_translate_ranks(g, 1, &q, gn, &nr);
        x->peers[x->npeers++] = (xpeer){q, nr == MPI_UNDEFINED ? -1 : nr, NULL, 0, NULL};
        off_node += nr == MPI_UNDEFINED;
    }
    MPI_Group_free(&g);
    MPI_Group_free(&gn);
    return off_node;
}

/* The two ranks swap their counts (and which buffer is current: the shared transport reads
 * it in place), agree on the merge-path split of merge(lo, hi) at t = min(m, nlo + nhi) and
 * work out the ranges each keeps, gives and takes. The count goes out only after this rank's
 * last step is complete, so it also says "my run is ready". */
void gp_xch_plan(gp_exchange *x, xstep *s, int64_t nkeys, int stable)
{
    const int q = s->partner;
    s->lower = x->rank < q;
    int64_t mine[2] = {nkeys, x->cur}, theirs[2] = {0, 0};
    if (x->win != MPI_WIN_NULL) MPI_Win_sync(x->win); /* this rank's stores before the signal */
    int rc = MPI_Sendrecv(mine, 2, MPI_INT64_T, q, TAG_COUNT, theirs, 2, MPI_INT64_T, q,
                          TAG_COUNT, x->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) gp_xch_mpi_die(x->comm, x->rank, "count exchange: MPI_Sendrecv", rc);
    if (x->win != MPI_WIN_NULL) MPI_Win_sync(x->win); /* the partner's stores after it */
    if (theirs[0] < 0 || theirs[0] > x->m)
        gp_xch_count_die(x->comm, x->rank, q, theirs[0], x->m);
    if (theirs[1] != 0 && theirs[1] != 1)
        gp_xch_die(x->comm, x->rank, "count exchange", "bad buffer index");
    s->mine = nkeys;
    s->theirs = theirs[0];
    s->pcur = (int)theirs[1];
    s->nlo = s->lower ? s->mine : s->theirs;
    s->nhi = s->lower ? s->theirs : s->mine;
    s->t = s->nlo + s->nhi < x->m ? s->nlo + s->nhi : x->m;
    s->ops->split(x, s, stable);
    const int64_t si = s->split, sj = s->t - si;
    if (s->lower) { /* keeps lo[0, si) and takes hi[0, sj) */
        s->keep0 = 0, s->ka = si, s->give0 = si, s->ng = s->mine - si, s->take0 = 0, s->kc = sj;
    } else {        /* keeps hi[sj, nhi) and takes lo[si, nlo) */
        s->keep0 = sj, s->ka = s->mine - sj, s->give0 = 0, s->ng = sj, s->take0 = si;
        s->kc = s->theirs - si;
    }
}

void gp_xch_merge_parts(gp_exchange *x, const xstep *s, const char *kk, const uint64_t *kv,
                        const char *tk, const uint64_t *tv, char *dk, uint64_t *dv, int stable)
{
    const char *lk = s->lower ? kk : tk, *hk = s->lower ? tk : kk;
    /* keys only: no value pointers at all (merge_split's keys-only form) */
    const uint64_t *lv = !x->values ? NULL : s->lower ? kv : tv;
    const uint64_t *hv = !x->values ? NULL : s->lower ? tv : kv;
    const int64_t nl = s->lower ? s->ka : s->kc, nh = s->lower ? s->kc : s->ka, n = nl + nh;
    int64_t nout = -1;
    const int rc = x->be->merge_split(x->width, lk, lv, nl, hk, hv, nh, n, 0, stable, dk,
                                      x->values ? dv : NULL, &nout);
    if (rc) gp_xch_die(x->comm, x->rank, "merge-split", x->be->last_error());
    if (nout != n) gp_xch_die(x->comm, x->rank, "merge-split", "unexpected output count");
}

void gp_xch_copy(gp_exchange *x, char *dk, uint64_t *dv, const char *sk, const uint64_t *sv,
                 int64_t n)
{
    if (x->be->copy(dk, sk, (size_t)n * (size_t)x->width) ||
        (x->values && x->be->copy(dv, sv, (size_t)n * 8)))
        gp_xch_die(x->comm, x->rank, "copy", x->be->last_error());
}
