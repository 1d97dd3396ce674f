/* ph_sort.c — the file job's sort phases (ph.h): order keys and the local sort,
 * the rank-level merge exchange, and the check of the sorted result. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "ph.h"

/* ---- sort ------------------------------------------------------------------------------ */

/* The keys as an element type (4-byte keys: u32, 8-byte: u64). */
static gp_dtype key_type(const gp_job *j) { return j->sz == 4 ? GP_U32 : GP_U64; }

/* The order of the key maps (--descending). */
static gp_order sort_order(const gp_options *o) { return o->descending ? GP_DESCENDING : GP_ASCENDING; }

/* The multiset fingerprint of the input in key space: the input statistics have it for
 * ascending keys; descending keys need their own pass. */
static int input_hash(gp_job *j)
{
    int err = 0;
    j->hash_in = j->total.hash;
    if (!j->o->descending) return 0;
    gp_stats kl = gp_stats_empty(), kt_tot;
    BE_CALL("key statistics", j->be->stats(key_type(j), j->dev, j->cnt, 0, &kl));
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    if (gp_stats_allreduce(j->comm, &kl, &kt_tot) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the key statistics failed");
        return GP_EXIT_FAIL;
    }
    j->hash_in = kt_tot.hash;
    return 0;
}

/* Whether the exchange's spare buffer serves the local sort as its scratch and is given back
 * before the write: on a backend whose sort takes one (be->sort_spare: the CPU's radix sort)
 * when the exchange's buffers are this process's own memory (the mpi transport). No scratch
 * of a shard's size is allocated, the sort's last pass may leave the keys in the spare (no
 * copy back), and the write's page cache takes the pages the spare gives back. On the 2-core
 * test machine (1 GiB, 2 ranks) the job took 6.5-7.1 s this way, against 8.9-9.2 s with the
 * shared transport and a scratch allocated per sort, and 8.4-8.7 s when the spare was lent
 * but not given back (bench/RESULTS.md, 2026-12-02). With the shared window the spare is
 * not lent: its pages, given back, did not speed the write there. */
int gp_job_lends_spare(const gp_job *j)
{
    return j->xchg && j->be->sort_spare && device_is_host(j->be) &&
           gp_exchange_transport(j->xchg) == GP_TRANSPORT_MPI;
}

/* Order keys (with the input positions when pairs) and the local bitonic sort. */
int gp_ph_sort(gp_job *j)
{
    const gp_backend *be = j->be;
    const gp_options *o = j->o;
    const int width = (int)j->sz;
    int err = 0;
    j->res->sort.descending = o->descending;
    j->res->sort.stable = o->stable;
    /* the input positions, made on the device (no host copy of them) */
    if (j->pairs) BE_CALL("input positions", be->iota(j->dval, j->cnt, (uint64_t)j->off));
    BE_CALL("to keys", be->to_keys(j->dt, sort_order(o), j->dev, j->cnt));
    if (!err) err = input_hash(j);
    if (gp_job_lends_spare(j)) {
        int in_spare = 0;
        BE_CALL("local sort", be->sort_spare(width, j->dev, j->pairs ? j->dval : NULL,
                                             gp_exchange_spare_keys(j->xchg),
                                             gp_exchange_spare_values(j->xchg), j->cnt,
                                             o->stable, &in_spare));
        if (!err && in_spare) {
            gp_exchange_use_spare(j->xchg);
            j->dev = gp_exchange_keys(j->xchg);
            j->dval = gp_exchange_values(j->xchg);
        }
    } else {
        BE_CALL("local sort", be->sort(width, j->dev, j->pairs ? j->dval : NULL, j->cnt, o->stable));
    }
    return err;
}

/* ---- exchange -------------------------------------------------------------------------- */

/* The rank-level merge exchange (it may switch the shard to its other buffer); the result
 * record gets its steps, the bytes moved between ranks and what the whole-shard exchange
 * would have sent (sums over ranks), and per step the transfer and merge times (max over
 * ranks, ms), the bytes (sum) and the transports (OR of the ranks' GP_TRANSPORT_* flags). */
int gp_ph_exchange(gp_job *j)
{
    gp_result_exchange *res = &j->res->xchg;
    gp_exchange_info xi;
    gp_exchange_run(j->xchg, &j->nk, j->o->stable, &xi);
    j->dev = gp_exchange_keys(j->xchg);
    j->dval = gp_exchange_values(j->xchg);
    int64_t mine[2] = {xi.bytes_moved, xi.bytes_whole}, sum[2] = {0, 0};
    MPI_Reduce(mine, sum, 2, MPI_INT64_T, MPI_SUM, 0, j->comm);
    res->stages = xi.stages;
    res->bytes = sum[0];
    res->bytes_whole = sum[1];
    const int ns = xi.stages < GP_XSTEPS_MAX ? xi.stages : GP_XSTEPS_MAX;
    MPI_Reduce(xi.step_comm, res->step_comm_ms, ns, MPI_DOUBLE, MPI_MAX, 0, j->comm);
    MPI_Reduce(xi.step_merge, res->step_merge_ms, ns, MPI_DOUBLE, MPI_MAX, 0, j->comm);
    MPI_Reduce(xi.step_bytes, res->step_bytes, ns, MPI_INT64_T, MPI_SUM, 0, j->comm);
    MPI_Reduce(xi.step_transport, res->step_transport, ns, MPI_INT, MPI_BOR, 0, j->comm);
    for (int s = 0; s < ns; s++) {
        res->step_comm_ms[s] *= 1e3;
        res->step_merge_ms[s] *= 1e3;
    }
    return 0;
}

/* ---- verify ---------------------------------------------------------------------------- */

/* The check in key space — every shard ascending, the boundaries in order, the count and the
 * multiset kept — then the keys back to values. */
int gp_ph_verify(gp_job *j)
{
    const gp_backend *be = j->be;
    int err = 0;
    gp_stats sl = gp_stats_empty();
    BE_CALL("verify statistics", be->stats(key_type(j), j->dev, j->nk, GP_STATS_ORDER, &sl));
    BE_CALL("from keys", be->from_keys(j->dt, sort_order(j->o), j->dev, j->nk));
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    return gp_verify_finish(j, &sl);
}

int gp_verify_finish(gp_job *j, const gp_stats *mine)
{
    gp_stats st;
    if (gp_stats_allreduce(j->comm, mine, &st) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the verification failed");
        return GP_EXIT_FAIL;
    }
    gp_result_sort *res = &j->res->sort;
    res->done = 1;
    res->stats = st;
    res->descents = st.descents;
    res->hash_in = j->hash_in;
    res->ok = st.descents == 0 && st.count == j->total.count && st.hash == j->hash_in;
    return 0;
}
