/* ph_ooc.c — the out-of-core sort's buffers and phases (ooc.h): the host buffers (the host
 * exchange's with P > 1), the device slots and the staging ring; the read into host memory;
 * the runs (their statistics, keys and sorts; the pass itself is ooc_stage.c); the merge of
 * the runs on the host's threads; the check and the keys back to values on the host. */
#define _POSIX_C_SOURCE 200809L
#include "ooc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_merge_mt.h"
#include "host.h"
#include "ph.h"
#include "pipeline.h"
#include "progress.h"
#include "startup.h"
#include "tuning.h"

/* ---- the host buffers ------------------------------------------------------------------ */

/* The spare becomes the current buffer. */
static void use_spare(gp_job *j)
{
    if (j->xchg) gp_exchange_use_spare(j->xchg);
    else j->ooc->cur ^= 1;
}

/* ---- alloc ----------------------------------------------------------------------------- */

/* The host buffers without an exchange (P = 1), and the --x coordinates: the CPU backend's
 * memory (huge pages for large blocks). Returns what failed, or NULL. */
static const char *alloc_host(gp_job *j)
{
    const gp_backend *cpu = gp_backend_cpu();
    gp_ooc *p = j->ooc;
    const size_t m = (size_t)(j->m > 0 ? j->m : 1);
    for (int b = 0; b < 2 && !j->xchg; b++) {
        if (!(p->hk[b] = cpu->alloc(m * j->sz))) return "the host buffers of the shard";
        if (j->pairs && !(p->hv[b] = cpu->alloc(m * 8))) return "the host buffers of the positions";
    }
    if (j->o->xdataset && !(p->hx = cpu->alloc((size_t)(j->cnt > 0 ? j->cnt : 1) * 8)))
        return "the host buffer of the --x coordinates";
    return NULL;
}

/* The device slots (keys, and the aux part) and the staging ring. Returns what failed, or
 * NULL. */
static const char *alloc_device(gp_job *j)
{
    const gp_backend *be = j->be;
    gp_ooc *p = j->ooc;
    for (int s = 0; s < p->nslots; s++) {
        if (!(p->dk[s] = be->alloc((size_t)p->slot * j->sz))) return "a device run slot";
        if (p->aux && !(p->dv[s] = be->alloc((size_t)p->slot * 8))) return "a device run slot";
    }
    if (be->sort_spare) { /* the sort's scratch, allocated once (not per run) */
        if (!(p->sk = be->alloc((size_t)p->slot * j->sz))) return "the run sort's scratch";
        if (j->pairs && !(p->sv = be->alloc((size_t)p->slot * 8))) return "the run sort's scratch";
    }
    for (int i = 0; i < 4 && p->piece > 0; i++)
        if (!(p->ring[i] = be->host_alloc((size_t)p->piece))) return "the staging pieces";
    return NULL;
}

/* The host buffers' first touch on the host's threads (gp_host_touch): the read and the
 * runs' downloads then write into pages that exist. */
static void touch_host(gp_job *j)
{
    const size_t m = (size_t)(j->m > 0 ? j->m : 0);
    gp_host_touch(gp_ooc_keys(j), m * j->sz);
    gp_host_touch(gp_ooc_spare_keys(j), m * j->sz);
    if (j->pairs) {
        gp_host_touch(gp_ooc_vals(j), m * 8);
        gp_host_touch(gp_ooc_spare_vals(j), m * 8);
    }
}

int gp_ooc_alloc(gp_job *j)
{
    int err = j->P > 1 ? gp_job_create_exchange(j, gp_backend_cpu()) : 0;
    if (err) return err;
    const char *what = alloc_host(j);
    const gp_backend *be = what ? gp_backend_cpu() : j->be;
    if (!what) what = alloc_device(j);
    if (what) {
        err = GP_EXIT_DEVICE;
        snprintf(j->msg, j->msglen, "rank %d: cannot allocate %s (out of core): %s", j->rank,
                 what, be->last_error());
    } else {
        touch_host(j);
    }
    return gp_agree(j->comm, err, j->msg, j->msglen);
}

void gp_ooc_release(gp_job *j)
{
    const gp_backend *cpu = gp_backend_cpu();
    gp_ooc *p = j->ooc;
    const int leave = gp_proc_leave_memory(j->be); /* device and pinned memory: the exit's */
    for (int b = 0; b < 2; b++) {
        if (p->hk[b]) cpu->free(p->hk[b]);
        if (p->hv[b]) cpu->free(p->hv[b]);
        if (p->dk[b] && !leave) j->be->free(p->dk[b]);
        if (p->dv[b] && !leave) j->be->free(p->dv[b]);
    }
    if (p->sk && !leave) j->be->free(p->sk);
    if (p->sv && !leave) j->be->free(p->sv);
    for (int i = 0; i < 4 && !leave; i++)
        if (p->ring[i]) j->be->host_free(p->ring[i]);
    if (p->hx) cpu->free(p->hx);
    free(p);
    j->ooc = NULL;
}

/* ---- read ------------------------------------------------------------------------------ */

/* [off, off + cnt) through reader r (sz bytes per element) straight into host memory, in
 * the pieces of a host-memory read (gp_job_piece_bytes: one call with posix, 256 MiB
 * collective calls with mpiio), as many calls on every rank (m elements). Books the read
 * row. */
static int read_host(gp_job *j, gp_h5_reader *r, size_t sz, void *host)
{
    const int64_t knob = gp_tuning_get()->read_piece_bytes;
    const int64_t pb = gp_job_piece_bytes(knob, j->in.io, 1, (int64_t)sz * (j->m > 1 ? j->m : 1));
    const int64_t pe = pb > 0 ? (pb / (int64_t)sz > 0 ? pb / (int64_t)sz : 1) : j->m;
    const int64_t np = j->m > 0 ? (j->m + pe - 1) / pe : 0;
    const double t0 = now();
    int err = 0;
    for (int64_t k = 0; k < np && !err; k++) {
        const int64_t lo = k * pe < j->cnt ? k * pe : j->cnt;
        const int64_t c = j->cnt - lo < pe ? j->cnt - lo : pe;
        err = gp_h5_reader_read(r, j->off + lo, c, (char *)host + (size_t)lo * sz, j->msg,
                                j->msglen);
    }
    j->t[GP_PH_READ] += now() - t0;
    return err;
}

int gp_ooc_read(gp_job *j)
{
    gp_h5_reader *r = NULL;
    int err = gp_open_reader(j, NULL, j->dt, &r);
    if (!err) err = read_host(j, r, j->sz, gp_ooc_keys(j));
    gp_h5_reader_close(r);
    if (j->o->xdataset) { /* opened on every rank (collective), read where the data were */
        err = gp_agree(j->comm, err, j->msg, j->msglen);
        r = NULL;
        if (!err) err = gp_open_reader(j, j->o->xdataset, GP_F64, &r);
        if (!err) err = read_host(j, r, sizeof(double), j->ooc->hx);
        gp_h5_reader_close(r);
    }
    return err;
}

/* ---- runs ------------------------------------------------------------------------------ */

/* The keys as an element type, and the order of the key maps. */
static gp_dtype key_type(const gp_job *j) { return j->sz == 4 ? GP_U32 : GP_U64; }
static gp_order key_order(const gp_job *j)
{
    return j->o->descending ? GP_DESCENDING : GP_ASCENDING;
}

/* The sort of run k in its slot (dk, dv) with the scratch slot (be->sort_spare): when the
 * sorted run ends in the scratch, the scratch and the slot trade places, so that the slot
 * holds the run for its download and the old slot is the next scratch. */
static int sort_with_scratch(gp_job *j, int64_t k, void *dk, uint64_t *dv, int64_t n)
{
    const gp_backend *be = j->be;
    gp_ooc *p = j->ooc;
    int err = 0, in_spare = 0;
    BE_CALL("local sort", be->sort_spare((int)j->sz, dk, j->pairs ? dv : NULL, p->sk,
                                         j->pairs ? p->sv : NULL, n, j->o->stable, &in_spare));
    if (!err && in_spare) {
        const int slot = (int)(k % p->nslots);
        p->dk[slot] = p->sk;
        p->sk = dk;
        if (j->pairs) {
            p->dv[slot] = p->sv;
            p->sv = dv;
        }
    }
    return err;
}

/* One run on the device (gp_ooc_run_fn): its statistics in input order (with the --x
 * coordinates the pass staged into dv), its order keys (and their multiset hash when
 * descending), the input positions, the sort; the device synchronised for the download.
 * GPUPRIM_FAULT=R:runs fails (or kills) rank R after its first run. */
static int one_run(gp_job *j, int64_t k, void *dk, uint64_t *dv, int64_t lo, int64_t n,
                   void *ctx)
{
    const gp_backend *be = j->be;
    int err = gp_stats_piece(j, dk, j->o->xdataset ? (const double *)dv : NULL, j->off + lo, n,
                             lo == 0, lo + n == j->cnt, ctx);
    BE_CALL("to keys", be->to_keys(j->dt, key_order(j), dk, n));
    if (!err && j->o->descending) {
        gp_stats ks = gp_stats_empty();
        BE_CALL("key statistics", be->stats(key_type(j), dk, n, 0, &ks));
        j->ooc->hash_desc += ks.hash;
    }
    if (j->pairs) BE_CALL("input positions", be->iota(dv, n, (uint64_t)(j->off + lo)));
    if (!err && j->ooc->sk)
        err = sort_with_scratch(j, k, dk, dv, n);
    else
        BE_CALL("local sort", be->sort((int)j->sz, dk, j->pairs ? dv : NULL, n, j->o->stable));
    BE_CALL("synchronize", be->synchronize());
    if (!err && k == 0 && gp_fault_fire(&j->fault, j->rank, gp_phase_fault(GP_PH_RUNS))) {
        err = GP_EXIT_DEVICE;
        snprintf(j->msg, j->msglen, "rank %d: injected failure in phase %s (GPUPRIM_FAULT)",
                 j->rank, gp_phase_fault(GP_PH_RUNS));
    }
    return err;
}

/* The runs (ooc.h): each through the device (gp_ooc_run_pass with one_run), the runs'
 * statistics records combined in input order into j->local. Books reduce and integrate (the
 * statistics) and the rest in the local sort row. */
int gp_ph_ooc_runs(gp_job *j)
{
    const double t0 = now(), booked = j->t[GP_PH_REDUCE] + j->t[GP_PH_INTEGRATE];
    j->res->sort.descending = j->o->descending;
    j->res->sort.stable = j->o->stable;
    gp_stats_stack st;
    st.top = 0;
    j->ooc->hash_desc = 0;
    const int err = gp_ooc_run_pass(j, j->o->xdataset != NULL, one_run, &st);
    j->local = gp_stats_stack_total(&st);
    j->t[GP_PH_SORT] += (now() - t0) - (j->t[GP_PH_REDUCE] + j->t[GP_PH_INTEGRATE] - booked);
    return err;
}

/* ---- merge ----------------------------------------------------------------------------- */

/* The multiset hash of the input's keys the check compares with: the input statistics'
 * (ascending keys), or the runs' descending keys summed over the ranks. */
static int input_hash(gp_job *j)
{
    j->hash_in = j->total.hash;
    if (!j->o->descending) return 0;
    uint64_t mine = j->ooc->hash_desc, sum = 0; /* MPI_SUM of unsigned: modulo 2^64 */
    if (MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, j->comm) != MPI_SUCCESS) {
        snprintf(j->msg, j->msglen, "MPI_Allreduce of the key hashes failed");
        return GP_EXIT_FAIL;
    }
    j->hash_in = sum;
    return 0;
}

/* The runs (in the spare buffer) merged into one sorted shard on the host's threads
 * (gp_cpu_merge_runs: the result in the current buffer, or it stays in the spare, which
 * then becomes the current one). --verbose: the rank's run and merge times. */
int gp_ph_ooc_merge(gp_job *j)
{
    gp_ooc *p = j->ooc;
    int err = input_hash(j);
    if (err) return err;
    const double t0 = now();
    int in_tmp = 0;
    if (gp_cpu_merge_runs((int)j->sz, gp_ooc_spare_keys(j), j->pairs ? gp_ooc_spare_vals(j) : NULL,
                          gp_ooc_keys(j), j->pairs ? gp_ooc_vals(j) : NULL, j->cnt, p->run,
                          j->o->stable, &in_tmp) != GP_OK) {
        snprintf(j->msg, j->msglen, "rank %d: merge of the runs: %s", j->rank,
                 gp_backend_cpu()->last_error());
        return GP_EXIT_DEVICE;
    }
    if (!in_tmp) use_spare(j);
    j->nk = j->cnt;
    p->t_merge = now() - t0;
    if (j->o->verbose)
        fprintf(stderr, "gpuprim_mpi: rank %d: out of core: %lld run%s: up %.4f s, device %.4f s, "
                "down %.4f s (overlapped); merge %.4f s on %d thread%s\n", j->rank,
                (long long)p->nruns, p->nruns == 1 ? "" : "s", p->t_up, p->t_dev, p->t_down,
                p->t_merge, gp_host_threads(), gp_host_threads() == 1 ? "" : "s");
    return 0;
}

/* ---- verify ---------------------------------------------------------------------------- */

/* The check on the host, in parts: each part's statistics of its sorted keys (with
 * GP_STATS_ORDER), then its keys back to values, a cache-sized piece at a time (the map
 * rewrites what the statistics just read), the pieces' records combined in order. */
#define VERIFY_PIECE ((int64_t)1 << 16)

typedef struct verify_job {
    const gp_job *j;
    char *keys;
    int64_t n;
    gp_stats *rec;
    int *rc;
} verify_job;

static void verify_part(void *ctx, int p, int np)
{
    const verify_job *v = ctx;
    const gp_backend *cpu = gp_backend_cpu();
    const int64_t lo = v->n / np * p + (p < v->n % np ? p : v->n % np);
    const int64_t c = v->n / np + (p < v->n % np ? 1 : 0);
    gp_stats all = gp_stats_empty();
    int rc = 0;
    for (int64_t at = lo; at < lo + c && !rc; at += VERIFY_PIECE) {
        const int64_t k = lo + c - at < VERIFY_PIECE ? lo + c - at : VERIFY_PIECE;
        char *keys = v->keys + (size_t)at * v->j->sz;
        gp_stats piece = gp_stats_empty();
        rc = cpu->stats(key_type(v->j), keys, k, GP_STATS_ORDER, &piece);
        if (!rc) rc = cpu->from_keys(v->j->dt, key_order(v->j), keys, k);
        all = gp_stats_combine(&all, &piece);
    }
    v->rec[p] = all;
    v->rc[p] = rc;
}

/* The out-of-core check (ooc.h): every shard ascending, the boundaries in order, the count
 * and the multiset kept, on the host's threads (the parts' records combined in order), then
 * the keys back to values. */
int gp_ph_ooc_verify(gp_job *j)
{
    int np = gp_host_threads();
    if ((int64_t)np > j->nk / 65536) np = (int)(j->nk / 65536);
    if (np < 1) np = 1;
    gp_stats *rec = calloc((size_t)np, sizeof *rec);
    int *rc = calloc((size_t)np, sizeof *rc), err = 0;
    gp_stats sl = gp_stats_empty();
    if (!rec || !rc) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "rank %d: verify: out of host memory", j->rank);
    } else {
        verify_job v = {j, gp_ooc_keys(j), j->nk, rec, rc};
        gp_host_parallel(np, verify_part, &v);
        for (int p = 0; p < np && !err; p++) {
            if (rc[p]) {
                err = GP_EXIT_DEVICE;
                snprintf(j->msg, j->msglen, "rank %d: verify: the statistics or the key map of "
                         "%lld sorted keys failed", j->rank, (long long)j->nk);
            }
            sl = gp_stats_combine(&sl, &rec[p]);
        }
    }
    free(rec);
    free(rc);
    if ((err = gp_agree(j->comm, err, j->msg, j->msglen))) return err;
    return gp_verify_finish(j, &sl);
}
