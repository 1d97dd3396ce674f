/* pipeline.c — the gpuprim_mpi job on every rank. */
#define _POSIX_C_SOURCE 200809L
#include "pipeline.h"

#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_ext.h"
#include "h5io.h"
#include "progress.h"

const char *const gp_phase_names[GP_NPHASES] = {
    "read", "upload", "reduce", "integrate", "local sort", "rank exchange", "verify", "write",
    "total"};

/* ---- backend selection --------------------------------------------------------------- */

int gp_select_backend(MPI_Comm comm, const gp_options *o, const gp_backend **be,
                      gp_binding *bind, gp_result *res, char *msg, size_t msglen)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(bind, 0, sizeof *bind);
    bind->rank = rank;
    bind->device = -1;
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS) {
        snprintf(msg, msglen, "MPI_Comm_split_type failed");
        return GP_EXIT_FAIL;
    }
    MPI_Comm_rank(node, &bind->local_rank);
    MPI_Comm_size(node, &bind->local_size);
    if (gethostname(bind->host, sizeof bind->host - 1) != 0) strcpy(bind->host, "?");
    gp_bind_env env;
    gp_bind_choice choice;
    memset(&choice, 0, sizeof choice);
    gp_bind_env_from_process(&env);
    bind->cuda_visible_set = env.cuda_visible_devices != NULL;
    snprintf(bind->cuda_visible, sizeof bind->cuda_visible, "%s",
             env.cuda_visible_devices ? env.cuda_visible_devices : "");

    int err = 0, fell_back = 0, ndev = 0;
    char why[256] = "";
    *be = NULL;
    if (o->backend != GP_BACKEND_CPU) {
        ndev = gp_cuda_device_count();
        if (ndev > 0) {
            gp_bind_choose(bind->local_rank, bind->local_size, ndev, &env, &choice);
            bind->device = choice.device;
            *be = gp_backend_cuda(bind->device, why, sizeof why);
            if (!*be) {
                err = GP_EXIT_DEVICE;
                snprintf(msg, msglen, "rank %d (%s): cannot use CUDA device %d: %s", rank,
                         bind->host, bind->device, why);
            } else {
                gp_cuda_device_info(bind->device, bind->device_name, sizeof bind->device_name,
                                    bind->busid, sizeof bind->busid);
            }
        } else {
            gp_backend_cuda(0, why, sizeof why); /* for the reason */
            if (o->backend == GP_BACKEND_CUDA) {
                err = GP_EXIT_DEVICE;
                snprintf(msg, msglen, "--backend cuda: rank %d (%s): %s", rank, bind->host, why);
            } else {
                fell_back = 1;
            }
        }
    }
    if (!*be && !err) {
        *be = gp_backend_cpu();
        bind->device = -1;
        snprintf(bind->device_name, sizeof bind->device_name, "CPU");
    }
    err = gp_agree(comm, err, msg, msglen);
    if (err) {
        MPI_Comm_free(&node);
        return err;
    }

    /* sharing: ranks of a node with the same GPU (PCI bus id, else gp_bind_choose's key) */
    int any_fell = 0, per_gpu = 0, mine_per_gpu = 0;
    MPI_Allreduce(&fell_back, &any_fell, 1, MPI_INT, MPI_MAX, comm);
    char key[64] = "", *keys = (char *)calloc((size_t)bind->local_size, sizeof key);
    res->bindings = rank == 0 ? (gp_binding *)calloc((size_t)size, sizeof *bind) : NULL;
    if (!keys || (rank == 0 && !res->bindings)) { /* a few KiB: the collectives need them */
        fprintf(stderr, "gpuprim_mpi: error: rank %d: out of memory for the binding table\n", rank);
        MPI_Abort(comm, GP_EXIT_FAIL);
    }
    if (bind->device >= 0) snprintf(key, sizeof key, "%s", bind->busid[0] ? bind->busid : choice.gpu_key);
    if (MPI_Allgather(key, (int)sizeof key, MPI_CHAR, keys, (int)sizeof key, MPI_CHAR, node) ==
        MPI_SUCCESS)
        mine_per_gpu = gp_bind_ranks_per_gpu(keys, sizeof key, bind->local_size);
    else if (bind->device >= 0)
        mine_per_gpu = choice.ranks_per_gpu;
    free(keys);
    MPI_Comm_free(&node);
    MPI_Allreduce(&mine_per_gpu, &per_gpu, 1, MPI_INT, MPI_MAX, comm);
    MPI_Gather(bind, (int)sizeof *bind, MPI_BYTE, res->bindings, (int)sizeof *bind, MPI_BYTE, 0, comm);
    if (rank == 0) {
        if (any_fell)
            fprintf(stderr, "gpuprim_mpi: notice: %s; using the CPU backend\n", why[0] ? why : "no CUDA device visible");
        if (per_gpu > 1 && !o->quiet)
            fprintf(stderr, "gpuprim_mpi: warning: up to %d ranks share one GPU (more ranks than visible GPUs on a node)\n",
                    per_gpu);
    }
    res->ranks = size;
    res->backend = (*be)->name;
    res->gpus_visible = ndev;
    res->ranks_per_gpu_max = per_gpu;
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------- */

static double now(void) { return MPI_Wtime(); }

/* A backend call: on failure record "rank R: what: reason" and set err. */
#define BE_CALL(what, call)                                                               \
    do {                                                                                  \
        if (!err && (call)) {                                                             \
            err = GP_EXIT_DEVICE;                                                         \
            snprintf(msg, msglen, "rank %d: %s: %s", rank, what, be->last_error());       \
        }                                                                                 \
    } while (0)

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Uniform trapezoid rule from the statistics: h * (sum - (y0 + y_{N-1}) / 2). */
static double uniform_trapezoid(const gp_stats *s, double h)
{
    if (s->count < 2) return 0.0;
    if (s->nan_count > 0) return NAN;
    return h * (s->sum - 0.5 * (s->yfirst + s->ylast));
}

/* Test hook for fault handling: GPUPRIM_FAULT=RANK:PHASE[:kill] makes rank RANK fail when it
 * reaches PHASE (read, reduce, sort, exchange, write): by default as a failed call (the
 * ranks agree on the error and leave together), with ":kill" by SIGKILL (the launcher ends
 * the job). Returns 1 when this rank must fail here. */
static int fault_at(int rank, const char *phase)
{
    const char *f = getenv("GPUPRIM_FAULT");
    int r = -1;
    char ph[32] = "", kind[16] = "";
    if (!f || sscanf(f, "%d:%31[^:]:%15s", &r, ph, kind) < 2 || r != rank || strcmp(ph, phase))
        return 0;
    fprintf(stderr, "gpuprim_mpi: rank %d: GPUPRIM_FAULT: injected %s in phase %s\n", rank,
            strcmp(kind, "kill") == 0 ? "SIGKILL" : "failure", phase);
    fflush(stderr);
    if (strcmp(kind, "kill") == 0) raise(SIGKILL);
    return 1;
}

#define FAULT(phase, code)                                                                \
    do {                                                                                  \
        if (!err && fault_at(rank, phase)) {                                              \
            err = (code);                                                                 \
            snprintf(msg, msglen, "rank %d: injected failure in phase %s (GPUPRIM_FAULT)", \
                     rank, phase);                                                        \
        }                                                                                 \
    } while (0)

/* Rank that holds global element g when n elements are sharded by gp_shard_range. */
static int owner_of(int64_t g, int64_t n, int P)
{
    const int64_t q = n / P, r = n % P;
    return g < r * (q + 1) ? (int)(g / (q + 1)) : (int)(r + (g - r * (q + 1)) / q);
}

/* out[i] = the element at global position idx[i] (i < nk) of a distributed array of n
 * elements of esz bytes sharded by gp_shard_range (this rank holds `local`, its shard):
 * requests grouped by owner, two MPI_Alltoallv calls. Collective. Returns 0 or
 * GP_EXIT_FAIL with msg set (also when a message would exceed INT_MAX elements/bytes). */
static int gather_by_index(MPI_Comm comm, int64_t n, const uint64_t *idx, int64_t nk,
                           const void *local, size_t esz, void *out, char *msg, size_t msglen)
{
    int P, rank, err = 0;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    int64_t off, cnt;
    gp_shard_range(n, P, rank, &off, &cnt);
    int *sc = calloc((size_t)P, sizeof *sc), *sd = calloc((size_t)P, sizeof *sd);
    int *rc = calloc((size_t)P, sizeof *rc), *rd = calloc((size_t)P, sizeof *rd);
    int *scb = calloc((size_t)P, sizeof *scb), *sdb = calloc((size_t)P, sizeof *sdb);
    int *rcb = calloc((size_t)P, sizeof *rcb), *rdb = calloc((size_t)P, sizeof *rdb);
    int64_t *cur = calloc((size_t)P, sizeof *cur);
    int64_t *req = malloc((size_t)(nk ? nk : 1) * sizeof *req);
    int64_t *pos = malloc((size_t)(nk ? nk : 1) * sizeof *pos);
    int64_t *rreq = NULL;
    char *ans = NULL, *back = NULL;
    if (!sc || !sd || !rc || !rd || !scb || !sdb || !rcb || !rdb || !cur || !req || !pos) err = 1;
    int64_t per[1] = {0}, tot_recv = 0;
    if (!err) {
        for (int64_t i = 0; i < nk; i++) cur[owner_of((int64_t)idx[i], n, P)]++;
        for (int p = 0; p < P; p++) {
            if (cur[p] * (int64_t)esz > INT_MAX || per[0] > INT_MAX) err = 1;
            sc[p] = (int)cur[p];
            sd[p] = (int)per[0];
            per[0] += cur[p];
            cur[p] = sd[p];
        }
        for (int64_t i = 0; i < nk; i++) {
            int64_t j = cur[owner_of((int64_t)idx[i], n, P)]++;
            req[j] = (int64_t)idx[i];
            pos[j] = i;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    if (!err) {
        MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
        for (int p = 0; p < P; p++) {
            rd[p] = (int)tot_recv;
            tot_recv += rc[p];
            if (tot_recv * (int64_t)esz > INT_MAX) err = 1;
            scb[p] = sc[p] * (int)esz;
            sdb[p] = sd[p] * (int)esz;
        }
        rreq = malloc((size_t)(tot_recv ? tot_recv : 1) * sizeof *rreq);
        ans = malloc((size_t)(tot_recv ? tot_recv : 1) * esz);
        back = malloc((size_t)(nk ? nk : 1) * esz);
        if (!rreq || !ans || !back) err = 1;
        for (int p = 0; p < P; p++) {
            rcb[p] = rc[p] * (int)esz;
            rdb[p] = rd[p] * (int)esz;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    if (!err && MPI_Alltoallv(req, sc, sd, MPI_INT64_T, rreq, rc, rd, MPI_INT64_T, comm) != MPI_SUCCESS)
        err = 1;
    if (!err) {
        for (int64_t j = 0; j < tot_recv; j++)
            memcpy(ans + j * esz, (const char *)local + (size_t)(rreq[j] - off) * esz, esz);
        if (MPI_Alltoallv(ans, rcb, rdb, MPI_BYTE, back, scb, sdb, MPI_BYTE, comm) != MPI_SUCCESS)
            err = 1;
    }
    if (!err)
        for (int64_t j = 0; j < nk; j++) memcpy((char *)out + pos[j] * esz, back + j * esz, esz);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    if (err) snprintf(msg, msglen, "--payload: moving the payload to its sorted places failed "
                                   "(memory, or more than 2^31 bytes between two ranks)");
    free(sc), free(sd), free(rc), free(rd), free(scb), free(sdb), free(rcb), free(rdb);
    free(cur), free(req), free(pos), free(rreq), free(ans), free(back);
    return err ? GP_EXIT_FAIL : 0;
}

/* ---- the file job -------------------------------------------------------------------- */

int gp_run_file(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                char *msg, size_t msglen)
{
    int rank, P, err = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    double t[GP_NPHASES] = {0}, t0 = now(), tp;

    /* --out must not be the input */
    if (o->out && rank == 0 && same_file(o->out, o->file)) {
        err = GP_EXIT_USAGE;
        snprintf(msg, msglen, "--out %s is the input file", o->out);
    }
    if ((err = gp_agree(comm, err, msg, msglen))) return err;

    gp_h5_input in;
    tp = now();
    gp_progress_phase(gp_phase_names[GP_PH_READ]);
    err = gp_h5_open(comm, o->file, o->dataset, &in, msg, msglen);
    if (err) return err;
    const gp_dtype dt = in.dtype;
    const size_t sz = gp_dtype_size(dt);
    const int64_t N = in.n;
    const int64_t m = (N + P - 1) / P; /* slots per rank for the merge exchange */
    int64_t off, cnt;
    gp_shard_range(N, P, rank, &off, &cnt);
    snprintf(res->file, sizeof res->file, "%s", in.file);
    snprintf(res->dataset, sizeof res->dataset, "%s", in.dataset);
    snprintf(res->type_desc, sizeof res->type_desc, "%s", in.type_desc);
    res->dtype = dt;
    res->n = N;
    res->dx = o->dx;
    res->out = o->out;

    /* buffers: the shard lives in m slots so the exchange can grow it to m keys */
    const int sorting = !o->no_sort;
    /* a uint64 value per key: the input position (argsort, stable ties, payload lookup) */
    const int pairs = sorting && (o->stable || o->argsort || o->payload);
    uint64_t *dval = NULL, *dvspare = NULL, *dvrecv = NULL, *hval = NULL, *hvrecv = NULL;
    if (pairs) {
        dval = be->alloc((size_t)m * 8);
        hval = be->host_alloc((size_t)(m > 0 ? m : 1) * 8);
        if (P > 1) {
            dvspare = be->alloc((size_t)m * 8);
            dvrecv = be->alloc((size_t)m * 8);
            hvrecv = be->host_alloc((size_t)(m > 0 ? m : 1) * 8);
        }
    }
    const int vals_missing = pairs && (!dval || !hval || (P > 1 && (!dvspare || !dvrecv || !hvrecv)));
    void *host = be->host_alloc((size_t)(m > 0 ? m : 1) * sz);
    void *dev = be->alloc((size_t)m * sz);
    void *dspare = NULL, *drecv = NULL, *hrecv = NULL;
    if (sorting && P > 1) {
        dspare = be->alloc((size_t)m * sz);
        drecv = be->alloc((size_t)m * sz);
        hrecv = be->host_alloc((size_t)(m > 0 ? m : 1) * sz);
    }
    if (!host || !dev || vals_missing || (sorting && P > 1 && (!dspare || !drecv || !hrecv))) {
        err = GP_EXIT_DEVICE;
        snprintf(msg, msglen, "rank %d: cannot allocate %lld elements (%.1f MiB) of %s memory: %s",
                 rank, (long long)m, (double)m * sz / 1048576.0, be->name, be->last_error());
    }
    FAULT("read", GP_EXIT_READ);
    err = gp_agree(comm, err, msg, msglen);

    if (!err) {
        err = gp_h5_read(comm, &in, NULL, dt, off, cnt, host, msg, msglen);
        t[GP_PH_READ] = now() - tp;
        gp_progress_done();
    }

    gp_stats local = gp_stats_empty(), total;
    if (!err) {
        tp = now();
        gp_progress_phase(gp_phase_names[GP_PH_UPLOAD]);
        BE_CALL("upload", be->upload(dev, host, (size_t)cnt * sz));
        t[GP_PH_UPLOAD] = now() - tp;
        tp = now();
        gp_progress_phase(gp_phase_names[GP_PH_REDUCE]);
        BE_CALL("statistics", be->stats(dt, dev, cnt, sorting ? 0 : GP_STATS_NOHASH, &local));
        FAULT("reduce", GP_EXIT_DEVICE);
        t[GP_PH_REDUCE] = now() - tp;
        gp_progress_done();
        err = gp_agree(comm, err, msg, msglen);
    }

    /* non-uniform trapezoid rule: coordinates read as float64 */
    if (!err && o->xdataset) {
        double *hx = be->host_alloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(double));
        double *dx = be->alloc((size_t)cnt * sizeof(double));
        if (!hx || !dx) {
            err = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "rank %d: cannot allocate the --x coordinates: %s", rank, be->last_error());
        }
        err = gp_agree(comm, err, msg, msglen);
        if (!err) {
            tp = now();
            gp_progress_phase(gp_phase_names[GP_PH_READ]);
            err = gp_h5_read(comm, &in, o->xdataset, GP_F64, off, cnt, hx, msg, msglen);
            t[GP_PH_READ] += now() - tp;
            gp_progress_done();
        }
        if (!err) {
            tp = now();
            gp_progress_phase(gp_phase_names[GP_PH_INTEGRATE]);
            BE_CALL("upload x", be->upload(dx, hx, (size_t)cnt * sizeof(double)));
            BE_CALL("trapezoid rule", be->trap_x(dt, dev, dx, cnt, &local));
            t[GP_PH_INTEGRATE] = now() - tp;
            gp_progress_done();
            err = gp_agree(comm, err, msg, msglen);
        }
        if (hx) be->host_free(hx);
        if (dx) be->free(dx);
    }

    if (!err) {
        tp = now();
        if (gp_stats_allreduce(comm, &local, &total) != MPI_SUCCESS) {
            err = GP_EXIT_FAIL;
            snprintf(msg, msglen, "MPI_Allreduce of the statistics failed");
        }
        t[GP_PH_REDUCE] += now() - tp;
        if (o->reproducible) {
            /* exact sums of the values and of their squares: the same bits for any layout */
            gp_superacc av, aq, tv, tq;
            gp_superacc_zero(&av);
            gp_superacc_zero(&aq);
            BE_CALL("exact sum", be->exact_sum(dt, dev, cnt, GP_SA_VALUES, &av));
            BE_CALL("exact sum of squares", be->exact_sum(dt, dev, cnt, GP_SA_SQUARES, &aq));
            err = gp_agree(comm, err, msg, msglen);
            if (!err && (gp_superacc_allreduce(comm, &av, &tv) != MPI_SUCCESS ||
                         gp_superacc_allreduce(comm, &aq, &tq) != MPI_SUCCESS)) {
                err = GP_EXIT_FAIL;
                snprintf(msg, msglen, "MPI_Allreduce of the exact sums failed");
            }
            if (!err) {
                tv.nan = tq.nan = 0; /* the statistics skip NaNs (they are counted apart) */
                total.sum = gp_superacc_to_double(&tv);
                total.sumsq = gp_superacc_to_double(&tq);
            }
            t[GP_PH_REDUCE] += now() - tp;
            res->reproducible = 1;
        }
        res->stats = total;
        res->integral_nonuniform = o->xdataset != NULL;
        res->integral = o->xdataset ? total.trap : uniform_trapezoid(&total, o->dx);
    }

    /* sort: keys, local bitonic sort, rank-level merge exchange, back to values */
    int64_t nk = cnt;
    if (!err && sorting) {
        const int width = (int)sz;
        tp = now();
        gp_progress_phase(gp_phase_names[GP_PH_SORT]);
        const gp_dtype kt = width == 4 ? GP_U32 : GP_U64; /* the keys as an element type */
        res->descending = o->descending;
        res->stable = o->stable;
        if (pairs) {
            for (int64_t i = 0; i < cnt; i++) hval[i] = (uint64_t)(off + i);
            BE_CALL("upload positions", be->upload(dval, hval, (size_t)cnt * 8));
        }
        BE_CALL("to keys", o->descending ? be->to_keys_desc(dt, dev, cnt) : be->to_keys(dt, dev, cnt));
        /* the multiset fingerprint in key space (ascending keys: the input statistics have it) */
        uint64_t hash_in = total.hash;
        if (o->descending) {
            gp_stats kl = gp_stats_empty(), kt_tot;
            BE_CALL("key statistics", be->stats(kt, dev, cnt, 0, &kl));
            err = gp_agree(comm, err, msg, msglen);
            if (!err && gp_stats_allreduce(comm, &kl, &kt_tot) != MPI_SUCCESS) {
                err = GP_EXIT_FAIL;
                snprintf(msg, msglen, "MPI_Allreduce of the key statistics failed");
            }
            hash_in = kt_tot.hash;
        }
        if (pairs) BE_CALL("local sort", be->sort_pairs(width, dev, dval, cnt, o->stable));
        else BE_CALL("local sort", be->sort_keys(width, dev, cnt));
        FAULT("sort", GP_EXIT_DEVICE);
        t[GP_PH_SORT] = now() - tp;
        gp_progress_done();
        err = gp_agree(comm, err, msg, msglen);
        if (!err && P > 1) {
            gp_exchange_info xi;
            tp = now();
            gp_progress_phase(gp_phase_names[GP_PH_EXCHANGE]);
            if (fault_at(rank, "exchange")) { /* a rank lost inside the point-to-point phase */
                fprintf(stderr, "gpuprim_mpi: error: rank %d: injected failure in phase exchange "
                                "(GPUPRIM_FAULT); aborting the job\n", rank);
                fflush(stderr);
                MPI_Abort(comm, GP_EXIT_DEVICE);
            }
            if (pairs)
                gp_bitonic_exchange_pairs(comm, be, width, m, &dev, &dval, &nk, &dspare, &dvspare,
                                          drecv, dvrecv, host, hrecv, hval, hvrecv, o->stable, &xi);
            else
                gp_bitonic_exchange(comm, be, width, m, &dev, &nk, &dspare, drecv, host, hrecv, &xi);
            t[GP_PH_EXCHANGE] = now() - tp;
            gp_progress_done();
            int64_t bytes = 0;
            MPI_Reduce(&xi.bytes_sent, &bytes, 1, MPI_INT64_T, MPI_SUM, 0, comm);
            res->exchange_stages = xi.stages;
            res->exchange_bytes = bytes;
            int ns = xi.stages < GP_XSTEPS_MAX ? xi.stages : GP_XSTEPS_MAX;
            MPI_Reduce(xi.step_comm, res->xstep_comm_ms, ns, MPI_DOUBLE, MPI_MAX, 0, comm);
            MPI_Reduce(xi.step_merge, res->xstep_merge_ms, ns, MPI_DOUBLE, MPI_MAX, 0, comm);
            MPI_Reduce(xi.step_bytes, res->xstep_bytes, ns, MPI_INT64_T, MPI_SUM, 0, comm);
            for (int s = 0; s < ns; s++) {
                res->xstep_comm_ms[s] *= 1e3;
                res->xstep_merge_ms[s] *= 1e3;
            }
        }
        if (!err) {
            tp = now();
            gp_progress_phase(gp_phase_names[GP_PH_VERIFY]);
            /* check in key space: every shard ascending, boundaries in order, multiset kept */
            gp_stats sl = gp_stats_empty(), st;
            BE_CALL("verify statistics", be->stats(kt, dev, nk, GP_STATS_ORDER, &sl));
            BE_CALL("from keys", o->descending ? be->from_keys_desc(dt, dev, nk) : be->from_keys(dt, dev, nk));
            err = gp_agree(comm, err, msg, msglen);
            if (!err && gp_stats_allreduce(comm, &sl, &st) != MPI_SUCCESS) {
                err = GP_EXIT_FAIL;
                snprintf(msg, msglen, "MPI_Allreduce of the verification failed");
            }
            t[GP_PH_VERIFY] = now() - tp;
            gp_progress_done();
            if (!err) {
                res->sorted_done = 1;
                res->sorted_stats = st;
                res->sorted_descents = st.descents;
                res->sorted_hash_in = hash_in;
                res->sorted_ok = st.descents == 0 && st.count == total.count && st.hash == hash_in;
            }
        }
    }

    if (!err && o->out) {
        tp = now();
        gp_progress_phase(gp_phase_names[GP_PH_WRITE]);
        BE_CALL("download", be->download(host, dev, (size_t)nk * sz));
        err = gp_agree(comm, err, msg, msglen);
        if (!err && !res->sorted_ok) {
            err = GP_EXIT_VERIFY;
            snprintf(msg, msglen, "%s: the sorted result failed its check; nothing written", o->out);
        }
        if (!err) {
            /* rank r holds global slots [r*m, r*m + nk); an empty rank past N writes nothing */
            int64_t woff = (int64_t)rank * m < N ? (int64_t)rank * m : N;
            gp_h5_outds ds[3] = {{in.dataset, in.ftype, dt, host}};
            int nds = 1;
            gp_h5_input pin;
            void *hpay = NULL, *psorted = NULL;
            int pin_open = 0;
            if (pairs) BE_CALL("download positions", be->download(hval, dval, (size_t)nk * 8));
            err = gp_agree(comm, err, msg, msglen);
            if (!err && o->argsort) {
                snprintf(res->argsort_dset, sizeof res->argsort_dset, "%s_argsort", in.dataset);
                ds[nds++] = (gp_h5_outds){res->argsort_dset, H5I_INVALID_HID, GP_I64, hval};
            }
            if (!err && o->payload) {
                err = gp_h5_open(comm, o->file, o->payload, &pin, msg, msglen);
                pin_open = !err;
                if (!err && (pin.n != N || strcmp(pin.dataset, in.dataset) == 0 ||
                             strcmp(pin.dataset, res->argsort_dset) == 0)) {
                    err = GP_EXIT_DATASET;
                    snprintf(msg, msglen, "%s: --payload %s: %s", o->file, pin.dataset,
                             pin.n != N ? "needs the same element count as the data"
                                        : "must be another dataset than the data and its argsort");
                }
                const size_t psz = pin_open ? gp_dtype_size(pin.dtype) : 1;
                if (!err) {
                    hpay = malloc((size_t)(cnt > 0 ? cnt : 1) * psz);
                    psorted = malloc((size_t)(nk > 0 ? nk : 1) * psz);
                    if (!hpay || !psorted) {
                        err = GP_EXIT_FAIL;
                        snprintf(msg, msglen, "rank %d: --payload: out of host memory", rank);
                    }
                    err = gp_agree(comm, err, msg, msglen);
                }
                if (!err) err = gp_h5_read(comm, &pin, NULL, pin.dtype, off, cnt, hpay, msg, msglen);
                if (!err) err = gather_by_index(comm, N, hval, nk, hpay, psz, psorted, msg, msglen);
                if (!err) {
                    snprintf(res->payload_dset, sizeof res->payload_dset, "%s", pin.dataset);
                    ds[nds++] = (gp_h5_outds){res->payload_dset, pin.ftype, pin.dtype, psorted};
                }
            }
            FAULT("write", GP_EXIT_WRITE);
            err = gp_agree(comm, err, msg, msglen);
            if (!err)
                err = gp_h5_write_many(comm, o->out, ds, nds, N, woff, nk, o->force, msg, msglen);
            if (pin_open) gp_h5_close(&pin);
            free(hpay);
            free(psorted);
        }
        t[GP_PH_WRITE] = now() - tp;
        gp_progress_done();
    }

    if (host) be->host_free(host);
    if (hrecv) be->host_free(hrecv);
    if (hval) be->host_free(hval);
    if (hvrecv) be->host_free(hvrecv);
    if (dval) be->free(dval);
    if (dvspare) be->free(dvspare);
    if (dvrecv) be->free(dvrecv);
    if (dev) be->free(dev);
    if (dspare) be->free(dspare);
    if (drecv) be->free(drecv);
    gp_h5_close(&in);

    t[GP_PH_TOTAL] = now() - t0;
    MPI_Reduce(t, res->t, GP_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (!err && res->sorted_done && !res->sorted_ok) {
        err = GP_EXIT_VERIFY;
        snprintf(msg, msglen, "%s: %s: the sorted result failed its check (%lld descents, count %lld vs %lld)",
                 res->file, res->dataset, (long long)res->sorted_descents,
                 (long long)res->sorted_stats.count, (long long)res->stats.count);
    }
    return err;
}

/* ---- function mode ------------------------------------------------------------------- */

int gp_run_function(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                    char *msg, size_t msglen)
{
    int rank, P, err = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    double t0 = now(), t[GP_NPHASES] = {0};
    const double h = (o->b - o->a) / (double)o->n;
    int64_t i0, cnt;
    gp_shard_range(o->n + 1, P, rank, &i0, &cnt); /* n + 1 points */
    gp_stats s = gp_stats_empty(), total;
    s.has_x = 0;
    double w = 0.0;
    gp_progress_phase(gp_phase_names[GP_PH_INTEGRATE]);
    BE_CALL("trapezoid rule", be->trap_fn(o->func, o->a, h, o->n, i0, i0 + cnt, &w));
    s.count = cnt;
    s.sum = w;
    t[GP_PH_INTEGRATE] = now() - t0;
    gp_progress_done();
    err = gp_agree(comm, err, msg, msglen);
    if (!err && gp_stats_reduce(comm, &s, &total, 0) != MPI_SUCCESS) {
        err = GP_EXIT_FAIL;
        snprintf(msg, msglen, "MPI_Reduce of the partial integrals failed");
    }
    t[GP_PH_TOTAL] = now() - t0;
    MPI_Reduce(t, res->t, GP_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    res->function_mode = 1;
    res->func = o->func;
    res->a = o->a;
    res->b = o->b;
    res->h = h;
    res->ntrap = o->n;
    if (!err && rank == 0) {
        res->integral = h * total.sum;
        res->exact = gp_func_exact(o->func, o->a, o->b);
    }
    return err;
}
