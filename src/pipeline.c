/* pipeline.c — the gpuprim_mpi job on every rank. */
#define _XOPEN_SOURCE 700 /* realpath */
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
#include "gp_path.h"
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
    res->mem_share = bind->device >= 0 ? (mine_per_gpu > 0 ? mine_per_gpu : 1)
                                       : (bind->local_size > 0 ? bind->local_size : 1);
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

/* Two dataset paths of the output file clash: the same path, or one a group above the
 * other ("/a_argsort" and "/a_argsort/x"). */
static int name_clash(const char *a, const char *b)
{
    if (!a[0] || !b[0]) return 0;
    const size_t la = strlen(a), lb = strlen(b);
    if (la == lb) return strcmp(a, b) == 0;
    const char *s = la < lb ? a : b, *l = la < lb ? b : a;
    const size_t ls = la < lb ? la : lb;
    return strncmp(s, l, ls) == 0 && l[ls] == '/';
}

/* a and b name the same file: the same existing file, or the same name in the same folder
 * (folders compared by realpath) when one does not exist yet */
static int same_target(const char *a, const char *b)
{
    if (same_file(a, b)) return 1;
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    const char *ba, *bb;
    if (gp_path_folder(a, da, sizeof da, &ba) || gp_path_folder(b, db, sizeof db, &bb)) return 0;
    if (!realpath(da, ra) || !realpath(db, rb)) return 0;
    return strcmp(ra, rb) == 0 && strcmp(ba, bb) == 0;
}

int gp_check_outputs(MPI_Comm comm, const gp_options *o, char *msg, size_t msglen)
{
    int rank, err = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        const char *in = o->function_mode ? NULL : o->file;
        if (o->out && in && same_file(o->out, in)) {
            err = GP_EXIT_USAGE;
            snprintf(msg, msglen, "--out %s is the input file", o->out);
        } else if (o->json && in && same_file(o->json, in)) {
            err = GP_EXIT_USAGE;
            snprintf(msg, msglen, "--json %s is the input file", o->json);
        } else if (o->json && o->out && same_target(o->json, o->out)) {
            err = GP_EXIT_USAGE;
            snprintf(msg, msglen, "--json %s is the --out file", o->json);
        } else if (o->out && gp_h5_check_target(o->out, o->force, msg, msglen) != 0) {
            err = GP_EXIT_WRITE;
        } else if (o->json && !gp_json_path_ok(o->json, msg, msglen)) {
            err = GP_EXIT_WRITE;
        }
    }
    return gp_agree(comm, err, msg, msglen);
}

/* Uniform trapezoid rule from the statistics: h * (sum - (y0 + y_{N-1}) / 2). */
static double uniform_trapezoid(const gp_stats *s, double h, gp_dtype dt)
{
    if (s->count < 2) return 0.0;
    if (s->nan_count > 0) return NAN;
    /* an infinite sample: every weight is positive, so the rule is inf, -inf, or NaN with
     * both (sum - ends would be inf - inf) */
    if (isinf(s->yfirst) || isinf(s->ylast) || isinf(s->sum)) {
        const int pos = gp_key_to_double(dt, s->max_key) == INFINITY;
        const int neg = gp_key_to_double(dt, s->min_key) == -INFINITY;
        if (pos && neg) return NAN;
        if (pos || neg) return (pos ? h : -h) * INFINITY;
    }
    /* the ends halved apart: y0 + y_{N-1} can overflow where the result does not */
    return h * (s->sum - 0.5 * s->yfirst - 0.5 * s->ylast);
}

/* Test hook for fault handling: GPUPRIM_FAULT=RANK:PHASE[:kill] makes rank RANK fail when it
 * reaches PHASE (alloc, read, reduce, sort, exchange, write): by default as a failed call
 * (the ranks agree on the error and leave together; "alloc" makes a real allocation of
 * 2^62 bytes fail in the backend), with ":kill" by SIGKILL (the launcher ends the job).
 * Returns 1 when this rank must fail here. */
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

/* Appends " (OPTION)" to an error message about the dataset that option names. */
static void append_option(char *msg, size_t msglen, const char *option)
{
    const size_t l = strnlen(msg, msglen);
    if (l + 1 < msglen) snprintf(msg + l, msglen - l, " (%s)", option);
}

/* Rank that holds global element g when n elements are sharded by gp_shard_range. */
static int owner_of(int64_t g, int64_t n, int P)
{
    const int64_t q = n / P, r = n % P;
    return g < r * (q + 1) ? (int)(g / (q + 1)) : (int)(r + (g - r * (q + 1)) / q);
}

/* out[i] = the element at global position idx[i] (i < nk) of a distributed array of n
 * elements of esz bytes sharded by gp_shard_range (this rank holds `local`, its shard):
 * requests grouped by owner, two all-to-alls. Counts and displacements are 64-bit and the
 * all-to-alls are gp_alltoallv_big (pieces of at most 1 GiB), since MPI_Alltoallv's int
 * counts and displacements would cap what moves between two ranks at 2^31 bytes and
 * overflow past byte 2^31 of a buffer. Collective. Returns 0 or GP_EXIT_FAIL with msg set. */
static int gather_by_index(MPI_Comm comm, int64_t n, const uint64_t *idx, int64_t nk,
                           const void *local, size_t esz, void *out, char *msg, size_t msglen)
{
    int P, rank, err = 0;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    int64_t off, cnt;
    gp_shard_range(n, P, rank, &off, &cnt);
    int64_t *sc = calloc((size_t)P, sizeof *sc), *sd = calloc((size_t)P, sizeof *sd);
    int64_t *rc = calloc((size_t)P, sizeof *rc), *rd = calloc((size_t)P, sizeof *rd);
    int64_t *cur = calloc((size_t)P, sizeof *cur);
    int64_t *req = malloc((size_t)(nk ? nk : 1) * sizeof *req);
    int64_t *pos = malloc((size_t)(nk ? nk : 1) * sizeof *pos);
    int64_t *rreq = NULL;
    char *ans = NULL, *back = NULL;
    if (!sc || !sd || !rc || !rd || !cur || !req || !pos) err = 1;
    int64_t at = 0, tot_recv = 0;
    if (!err) {
        for (int64_t i = 0; i < nk; i++) sc[owner_of((int64_t)idx[i], n, P)]++;
        for (int p = 0; p < P; p++) {
            sd[p] = cur[p] = at;
            at += sc[p];
        }
        for (int64_t i = 0; i < nk; i++) {
            int64_t j = cur[owner_of((int64_t)idx[i], n, P)]++;
            req[j] = (int64_t)idx[i];
            pos[j] = i;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    if (!err) {
        if (MPI_Alltoall(sc, 1, MPI_INT64_T, rc, 1, MPI_INT64_T, comm) != MPI_SUCCESS) err = 1;
        for (int p = 0; !err && p < P; p++) {
            rd[p] = tot_recv;
            tot_recv += rc[p];
        }
        rreq = malloc((size_t)(tot_recv ? tot_recv : 1) * sizeof *rreq);
        ans = malloc((size_t)(tot_recv ? tot_recv : 1) * esz);
        back = malloc((size_t)(nk ? nk : 1) * esz);
        if (!rreq || !ans || !back) err = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    /* gp_alltoallv_big fails on every rank alike, or aborts the job */
    if (!err && gp_alltoallv_big(comm, req, sc, sd, rreq, rc, rd, sizeof *req, 0) != MPI_SUCCESS)
        err = 1;
    if (!err) {
        for (int64_t j = 0; j < tot_recv; j++)
            memcpy(ans + (size_t)j * esz, (const char *)local + (size_t)(rreq[j] - off) * esz, esz);
        if (gp_alltoallv_big(comm, ans, rc, rd, back, sc, sd, esz, 0) != MPI_SUCCESS) err = 1;
    }
    if (!err)
        for (int64_t j = 0; j < nk; j++)
            memcpy((char *)out + (size_t)pos[j] * esz, back + (size_t)j * esz, esz);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm);
    if (err) snprintf(msg, msglen, "--payload: moving the payload to its sorted places failed "
                                   "(out of host memory, or an MPI error)");
    free(sc), free(sd), free(rc), free(rd), free(cur), free(req), free(pos);
    free(rreq), free(ans), free(back);
    return err ? GP_EXIT_FAIL : 0;
}

/* ---- device memory: the sort's need, chunked statistics ------------------------------- */

#define GP_MEM_MARGIN_MAX ((uint64_t)512 << 20) /* the margin is 1/8 of free, at most this */
#define GP_CHUNK_MIN ((int64_t)4096)            /* elements: the smallest chunk */

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t gp_job_mem_need(int64_t m, int64_t cnt, size_t sz, int P, int sorting, int pairs,
                         int xdata, int unified)
{
    const uint64_t um = m > 0 ? (uint64_t)m : 0, uc = cnt > 0 ? (uint64_t)cnt : 0;
    const uint64_t slot = (uint64_t)sz + (pairs && sorting ? 8u : 0u);
    /* the shard, and for the exchange its receive buffer (exchange.h) */
    const uint64_t ndev = (sorting && P > 1) ? 2 : 1, nhost = (sorting && P > 1) ? 2 : 1;
    const uint64_t xb = xdata ? mul_sat(uc, 8) : 0;
    uint64_t need = add_sat(mul_sat(mul_sat(um, slot), ndev), xb);
    if (unified) need = add_sat(need, add_sat(mul_sat(mul_sat(um, slot), nhost), xb));
    return need;
}

/* The bytes a rank may use of `free_bytes` reported free on a device shared by `share`
 * ranks: its share, less a margin of 1/8 of it (at most GP_MEM_MARGIN_MAX) for the
 * kernels' scratch, the runtime and fragmentation. */
static uint64_t mem_usable(size_t free_bytes, int share)
{
    const uint64_t avail = (uint64_t)free_bytes / (uint64_t)(share > 0 ? share : 1);
    const uint64_t margin = avail / 8 < GP_MEM_MARGIN_MAX ? avail / 8 : GP_MEM_MARGIN_MAX;
    return avail - margin;
}

/* Elements per chunk for `usable` bytes: the largest power of two whose device buffers (sz
 * bytes, + 8 with --x coordinates; twice that when `unified`, the host staging buffers
 * being the same memory) fit, and at least GP_CHUNK_MIN. A power-of-two multiple of the CPU
 * backend's 4096-term summation blocks keeps its sums bitwise those of an unchunked run. */
static int64_t chunk_elems_for(uint64_t usable, size_t sz, int xdata, int unified)
{
    const uint64_t per = ((uint64_t)sz + (xdata ? 8u : 0u)) * (unified ? 2u : 1u);
    const uint64_t fit = usable / per;
    int64_t c = GP_CHUNK_MIN;
    while (c < ((int64_t)1 << 61) && (uint64_t)c * 2 <= fit) c *= 2;
    return c;
}

/* `bytes` in GiB as text: one decimal from 10 GiB, else three significant digits. */
static const char *gib_text(char *buf, size_t len, uint64_t bytes)
{
    const double g = (double)bytes / 1073741824.0;
    snprintf(buf, len, g >= 10.0 ? "%.1f" : "%.3g", g);
    return buf;
}

/* In-order combination of chunk records as a binary counter: whenever the two newest
 * records each cover 2^k chunks they become one (older, newer); the total folds the rest
 * from the newest to the oldest. The order of the pieces is kept throughout (gp_stats_combine
 * is not commutative), and float64 sums get a pairwise (log2 chunks) error growth. */
typedef struct stats_stack {
    gp_stats v[64];
    int level[64];
    int top;
} stats_stack;

static void stats_stack_push(stats_stack *s, const gp_stats *rec)
{
    gp_stats x = *rec;
    int lvl = 0;
    while (s->top > 0 && s->level[s->top - 1] == lvl) {
        x = gp_stats_combine(&s->v[s->top - 1], &x); /* older, newer */
        s->top--;
        lvl++;
    }
    s->v[s->top] = x;
    s->level[s->top] = lvl;
    s->top++;
}

static gp_stats stats_stack_total(const stats_stack *s)
{
    if (s->top == 0) return gp_stats_empty();
    gp_stats r = s->v[s->top - 1];
    for (int k = s->top - 2; k >= 0; k--) r = gp_stats_combine(&s->v[k], &r);
    return r;
}

/* The statistics pass of a --no-sort job over this rank's shard [off, off + cnt) of the open
 * input in nchunks chunks of `chunk` elements (the same nchunks on every rank: a rank whose
 * shard ends early makes empty reads, as the reads are collective): per chunk a read of the
 * values (and of the --x coordinates), upload, be->stats (GP_STATS_NOHASH), be->trap_x with
 * --x, be->exact_sum of values and squares into *av / *aq with --reproducible (they are
 * added to, not reset); the chunk records go through a stats_stack into *out, which then
 * describes the whole shard like one be->stats (+ trap_x) call on it. Times are added to
 * t[GP_PH_READ / UPLOAD / REDUCE / INTEGRATE]. Collective: the ranks agree on every error
 * after each chunk. Returns 0 or a GP_EXIT_* code with msg set (the same on every rank). */
static int stats_chunked(MPI_Comm comm, const gp_options *o, const gp_backend *be,
                         const gp_h5_input *in, int64_t off, int64_t cnt, int64_t chunk,
                         int64_t nchunks, gp_stats *out, gp_superacc *av, gp_superacc *aq,
                         double *t, char *msg, size_t msglen)
{
    int rank, err = 0;
    MPI_Comm_rank(comm, &rank);
    const gp_dtype dt = in->dtype;
    const size_t sz = gp_dtype_size(dt);
    const int xdata = o->xdataset != NULL;
    const int64_t cap = chunk < cnt ? chunk : cnt; /* buffer elements */
    const size_t hcap = (size_t)(cap > 0 ? cap : 1);
    void *host = be->host_alloc(hcap * sz);
    void *dev = be->alloc((size_t)cap * sz);
    double *hx = xdata ? be->host_alloc(hcap * sizeof(double)) : NULL;
    double *dx = xdata ? be->alloc((size_t)cap * sizeof(double)) : NULL;
    if (!host || !dev || (xdata && (!hx || !dx))) {
        err = GP_EXIT_DEVICE;
        snprintf(msg, msglen, "rank %d: cannot allocate a chunk of %lld elements (%.1f MiB) of %s memory: %s",
                 rank, (long long)cap, (double)cap * (double)(sz + (xdata ? 8 : 0)) / 1048576.0,
                 be->name, be->last_error());
    }
    err = gp_agree(comm, err, msg, msglen);

    stats_stack st;
    st.top = 0;
    gp_progress_phase(gp_phase_names[GP_PH_REDUCE]);
    for (int64_t k = 0; !err && k < nchunks; k++) {
        const int64_t lo = k * chunk < cnt ? k * chunk : cnt; /* k * chunk < m + chunk */
        const int64_t ck = cnt - lo < chunk ? cnt - lo : chunk;
        double tp = now();
        err = gp_h5_read(comm, in, NULL, dt, off + lo, ck, host, msg, msglen);
        if (!err && xdata)
            err = gp_h5_read(comm, in, o->xdataset, GP_F64, off + lo, ck, hx, msg, msglen);
        t[GP_PH_READ] += now() - tp;
        if (err) break; /* gp_h5_read fails on every rank alike */
        if (ck > 0 || (k == 0 && cnt == 0)) { /* an empty shard: the record of n = 0 */
            gp_stats rec = gp_stats_empty();
            tp = now();
            BE_CALL("upload", be->upload(dev, host, (size_t)ck * sz));
            t[GP_PH_UPLOAD] += now() - tp;
            tp = now();
            BE_CALL("statistics", be->stats(dt, dev, ck, GP_STATS_NOHASH, &rec));
            if (o->reproducible) {
                BE_CALL("exact sum", be->exact_sum(dt, dev, ck, GP_SA_VALUES, av));
                BE_CALL("exact sum of squares", be->exact_sum(dt, dev, ck, GP_SA_SQUARES, aq));
            }
            t[GP_PH_REDUCE] += now() - tp;
            if (xdata) {
                tp = now();
                BE_CALL("upload x", be->upload(dx, hx, (size_t)ck * sizeof(double)));
                BE_CALL("trapezoid rule", be->trap_x(dt, dev, dx, ck, &rec));
                t[GP_PH_INTEGRATE] += now() - tp;
            }
            if (!err) stats_stack_push(&st, &rec);
        }
        if (k == 0) FAULT("reduce", GP_EXIT_DEVICE);
        err = gp_agree(comm, err, msg, msglen);
    }
    gp_progress_done();
    *out = stats_stack_total(&st);
    if (host) be->host_free(host);
    if (dev) be->free(dev);
    if (hx) be->host_free(hx);
    if (dx) be->free(dx);
    return err;
}

/* Bytes per piece of read_upload: large enough for efficient MPI-IO, small enough that the
 * last piece's upload (what is left to wait for) is short (~5 ms at 50 GB/s). */
#define GP_READ_PIECE_BYTES ((int64_t)256 << 20)

/* Reads this rank's shard [off, off + cnt) of dataset `dataset` (NULL: in->dataset) of the
 * open input as type `as` into host[0, cnt) (host_alloc memory) and copies it to dev[0, cnt)
 * on the device, overlapped: the shard is read in pieces of GP_READ_PIECE_BYTES (test knob:
 * GPUPRIM_READ_PIECE_BYTES=<positive integer>; other values are ignored) and each
 * piece's upload (be->upload_async) runs while the next piece is read. m is the largest
 * shard (the same on every rank), so every rank makes the same number of collective reads
 * (a rank whose shard ends early makes empty ones). Adds the read time to *t_read and the
 * final wait for the uploads to *t_upload (seconds). A failed upload does not stop the
 * reads (the other ranks are in them); it is reported after the last one. Returns 0 or a
 * GP_EXIT_* / GP_IO_* code with msg set; a read error is the same on every rank, an upload
 * error is this rank's (the caller agrees on it). */
static int read_upload(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
                       int64_t off, int64_t cnt, int64_t m, void *host, void *dev,
                       const gp_backend *be, double *t_read, double *t_upload, char *msg,
                       size_t msglen)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    const size_t sz = gp_dtype_size(as);
    int64_t pbytes = GP_READ_PIECE_BYTES;
    const char *pk = getenv("GPUPRIM_READ_PIECE_BYTES"); /* test knob: small pieces in CI */
    if (pk && *pk) {
        char *end = NULL;
        const long long v = strtoll(pk, &end, 10);
        if (end && *end == '\0' && v > 0) pbytes = v;
    }
    const int64_t pe = pbytes / (int64_t)sz > 0 ? pbytes / (int64_t)sz : 1;
    const int64_t npieces = m > 0 ? (m + pe - 1) / pe : 1;
    int err = 0, uerr = 0;
    double tp = now();
    for (int64_t p = 0; p < npieces; p++) {
        const int64_t lo = p * pe < cnt ? p * pe : cnt;
        const int64_t c = cnt - lo < pe ? cnt - lo : pe;
        char *h = (char *)host + (size_t)lo * sz;
        err = gp_h5_read(comm, in, dataset, as, off + lo, c, h, msg, msglen);
        if (err) break; /* gp_h5_read fails on every rank alike */
        if (!uerr && c > 0 && be->upload_async((char *)dev + (size_t)lo * sz, h, (size_t)c * sz)) {
            uerr = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "rank %d: upload: %s", rank, be->last_error());
        }
    }
    *t_read += now() - tp;
    tp = now();
    gp_progress_phase(gp_phase_names[GP_PH_UPLOAD]);
    if (be->upload_wait() && !uerr) {
        uerr = GP_EXIT_DEVICE;
        snprintf(msg, msglen, "rank %d: upload: %s", rank, be->last_error());
    }
    *t_upload += now() - tp;
    return err ? err : uerr;
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
    _Static_assert(GP_H5_MAXDIMS <= sizeof res->dims / sizeof res->dims[0],
                   "gp_result.dims holds every dimension");
    res->ndims = in.ndims;
    for (int d = 0; d < res->ndims; d++) res->dims[d] = (int64_t)in.dims[d];
    res->dtype = dt;
    res->n = N;
    res->dx = o->dx;
    res->out = o->out;

    /* --x is opened once here, so that a missing or unusable one is found before the
     * work and named as --x */
    if (o->xdataset) {
        gp_h5_input xin;
        err = gp_h5_open(comm, o->file, o->xdataset, &xin, msg, msglen);
        if (err) {
            append_option(msg, msglen, "--x");
            gp_h5_close(&in);
            return err;
        }
        gp_h5_close(&xin);
    }
    /* --payload: opened and checked now, before any work (it is written last): the same
     * element count, and an output path apart from the data's and the argsort's; kept open
     * for the write */
    gp_h5_input pin;
    int pin_open = 0;
    char argsort_dset[sizeof res->argsort_dset] = "";
    if (o->argsort) snprintf(argsort_dset, sizeof argsort_dset, "%s_argsort", in.dataset);
    if (o->payload) {
        err = gp_h5_open(comm, o->file, o->payload, &pin, msg, msglen);
        pin_open = !err;
        if (err) append_option(msg, msglen, "--payload");
        if (!err && (pin.n != N || name_clash(pin.dataset, in.dataset) ||
                     name_clash(pin.dataset, argsort_dset))) {
            err = GP_EXIT_DATASET;
            snprintf(msg, msglen, "%s: --payload %s: %s", o->file, pin.dataset,
                     pin.n != N ? "needs the same element count as the data"
                                : "must be another dataset than the data and its "
                                  "argsort, and not inside or above either in the output "
                                  "file's paths");
        }
        if (err) { /* the same on every rank: gp_h5_open agrees, pin and in are alike */
            if (pin_open) gp_h5_close(&pin);
            gp_h5_close(&in);
            return err;
        }
    }

    const int sorting = !o->no_sort;
    /* a stored float wider than 8 bytes (long double, quad) is sorted as float64, so --out,
     * written in the stored type, holds values rounded to float64 */
    if (o->out && sorting && rank == 0 && H5Tget_class(in.ftype) == H5T_FLOAT &&
        H5Tget_size(in.ftype) > 8)
        fprintf(stderr, "gpuprim_mpi: notice: %s:%s is %s, read as float64: --out %s holds its "
                "values rounded to float64 (beyond its range: inf or 0)\n",
                in.file, in.dataset, in.type_desc, o->out);
    /* a uint64 value per key: the input position (argsort, stable ties, payload lookup) */
    const int pairs = sorting && (o->stable || o->argsort || o->payload);

    /* device memory: a sort that does not fit fails here, before anything is allocated; a
     * statistics-only job whose shard does not fit goes through the device in chunks */
    const int unified = strcmp(be->name, "cpu") == 0; /* its device memory is host memory */
    size_t mfree = 0, mtotal = 0;
    {
        /* a malformed test knob: its own clean line (the backend's would name its source) */
        size_t probe = SIZE_MAX;
        char why[160];
        if (!err && gp_mem_limit_env(&probe, why, sizeof why) != 0) {
            err = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "%s", why);
        }
    }
    BE_CALL("device memory query", be->mem_info(&mfree, &mtotal));
    const int share = res->mem_share > 0 ? res->mem_share : 1;
    const uint64_t usable = mem_usable(mfree, share);
    const uint64_t need = gp_job_mem_need(m, cnt, sz, P, sorting, pairs, o->xdataset != NULL, unified);
    int64_t chunk_mine = INT64_MAX, chunk = INT64_MAX, nchunks = 0;
    if (!err && need > usable) {
        if (sorting) {
            char g1[32], g2[32];
            err = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "%s:%s: sorting %lld elements on rank %d needs %s GiB of device "
                     "memory, %s GiB free (use more GPUs or nodes: ranks on one device share it)", in.file, in.dataset, (long long)cnt,
                     rank, gib_text(g1, sizeof g1, need), gib_text(g2, sizeof g2, usable));
        } else {
            chunk_mine = chunk_elems_for(usable, sz, o->xdataset != NULL, unified);
        }
    }
    err = gp_agree(comm, err, msg, msglen);
    if (!err && !sorting &&
        MPI_Allreduce(&chunk_mine, &chunk, 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
        err = GP_EXIT_FAIL;
        snprintf(msg, msglen, "MPI_Allreduce of the chunk size failed");
    }
    const int chunked = !err && chunk < INT64_MAX;
    if (chunked) {
        nchunks = (m + chunk - 1) / chunk; /* rank 0 holds the largest shard, m elements */
        res->chunks = nchunks;
        res->chunk_elems = chunk;
        const uint64_t cbytes = (uint64_t)chunk * (sz + (o->xdataset ? 8 : 0));
        if (rank == 0)
            fprintf(stderr, "gpuprim_mpi: notice: %s:%s: a shard of %lld elements does not fit in "
                    "the free device memory; processed in %lld chunks of %llu bytes (%lld elements%s)\n",
                    in.file, in.dataset, (long long)m, (long long)nchunks,
                    (unsigned long long)cbytes, (long long)chunk,
                    o->xdataset ? " with their --x coordinates" : "");
        if (o->verbose)
            fprintf(stderr, "gpuprim_mpi: rank %d: shard of %lld elements needs %llu bytes, %llu "
                    "usable (%zu free, shared by %d rank%s): %lld chunks of %lld elements\n",
                    rank, (long long)cnt, (unsigned long long)need, (unsigned long long)usable,
                    mfree, share, share == 1 ? "" : "s", (long long)((cnt + chunk - 1) / chunk),
                    (long long)chunk);
        fflush(stderr);
    }

    /* buffers: the shard lives in m slots so the exchange can grow it to m keys (a chunked
     * pass allocates its own, chunk-sized ones) */
    uint64_t *dval = NULL, *dvrecv = NULL, *hval = NULL, *hvrecv = NULL;
    if (!err && pairs) {
        dval = be->alloc((size_t)m * 8);
        hval = be->host_alloc((size_t)(m > 0 ? m : 1) * 8);
        if (P > 1) {
            dvrecv = be->alloc((size_t)m * 8);
            hvrecv = be->host_alloc((size_t)(m > 0 ? m : 1) * 8);
        }
    }
    const int vals_missing = pairs && (!dval || !hval || (P > 1 && (!dvrecv || !hvrecv)));
    void *host = NULL, *dev = NULL;
    void *drecv = NULL, *hrecv = NULL;
    if (!err && !chunked) {
        host = be->host_alloc((size_t)(m > 0 ? m : 1) * sz);
        dev = be->alloc((size_t)m * sz);
        if (sorting && P > 1) {
            drecv = be->alloc((size_t)m * sz);
            hrecv = be->host_alloc((size_t)(m > 0 ? m : 1) * sz);
        }
        if (!host || !dev || vals_missing || (sorting && P > 1 && (!drecv || !hrecv))) {
            err = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "rank %d: cannot allocate %lld elements (%.1f MiB) of %s memory: %s",
                     rank, (long long)m, (double)m * sz / 1048576.0, be->name, be->last_error());
        }
    }
    /* GPUPRIM_FAULT=R:alloc: a real failed allocation on rank R (2^62 bytes through the
     * backend), so that the path of a genuine out-of-memory is what the test exercises */
    if (!err && fault_at(rank, "alloc")) {
        const size_t huge = (size_t)1 << 62;
        void *p = be->alloc(huge);
        if (p) {
            be->free(p);
        } else {
            err = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "rank %d: cannot allocate %zu bytes of %s memory: %s", rank,
                     huge, be->name, be->last_error());
        }
    }
    FAULT("read", GP_EXIT_READ);
    err = gp_agree(comm, err, msg, msglen);

    if (!err && !chunked) {
        /* read and upload overlapped; the upload phase is the wait for the last piece */
        t[GP_PH_READ] = now() - tp; /* opening, planning */
        err = read_upload(comm, &in, NULL, dt, off, cnt, m, host, dev, be, &t[GP_PH_READ],
                          &t[GP_PH_UPLOAD], msg, msglen);
        gp_progress_done();
        err = gp_agree(comm, err, msg, msglen); /* an upload may fail on some ranks only */
    }

    gp_stats local = gp_stats_empty(), total;
    gp_superacc av, aq; /* --reproducible: exact sums of the values and of their squares */
    gp_superacc_zero(&av);
    gp_superacc_zero(&aq);
    if (!err && chunked) {
        t[GP_PH_READ] = now() - tp; /* opening, planning */
        gp_progress_done();
        err = stats_chunked(comm, o, be, &in, off, cnt, chunk, nchunks, &local, &av, &aq, t, msg,
                            msglen);
    } else if (!err) {
        tp = now();
        gp_progress_phase(gp_phase_names[GP_PH_REDUCE]);
        BE_CALL("statistics", be->stats(dt, dev, cnt, sorting ? 0 : GP_STATS_NOHASH, &local));
        FAULT("reduce", GP_EXIT_DEVICE);
        t[GP_PH_REDUCE] = now() - tp;
        gp_progress_done();
        err = gp_agree(comm, err, msg, msglen);
    }

    /* non-uniform trapezoid rule: coordinates read as float64 */
    if (!err && !chunked && o->xdataset) {
        double *hx = be->host_alloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(double));
        double *dx = be->alloc((size_t)cnt * sizeof(double));
        if (!hx || !dx) {
            err = GP_EXIT_DEVICE;
            snprintf(msg, msglen, "rank %d: cannot allocate the --x coordinates: %s", rank, be->last_error());
        }
        err = gp_agree(comm, err, msg, msglen);
        if (!err) {
            gp_progress_phase(gp_phase_names[GP_PH_READ]);
            err = read_upload(comm, &in, o->xdataset, GP_F64, off, cnt, m, hx, dx, be,
                              &t[GP_PH_READ], &t[GP_PH_UPLOAD], msg, msglen);
            gp_progress_done();
            err = gp_agree(comm, err, msg, msglen);
        }
        if (!err) {
            tp = now();
            gp_progress_phase(gp_phase_names[GP_PH_INTEGRATE]);
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
            /* exact sums of the values and of their squares: the same bits for any layout
             * (a chunked pass has added its chunks into av / aq already) */
            gp_superacc tv, tq;
            if (!chunked) {
                BE_CALL("exact sum", be->exact_sum(dt, dev, cnt, GP_SA_VALUES, &av));
                BE_CALL("exact sum of squares", be->exact_sum(dt, dev, cnt, GP_SA_SQUARES, &aq));
            }
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
        res->integral = o->xdataset ? total.trap : uniform_trapezoid(&total, o->dx, dt);
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
                gp_bitonic_exchange_pairs(comm, be, width, m, &dev, &dval, &nk, drecv, dvrecv,
                                          host, hrecv, hval, hvrecv, o->stable, &xi);
            else
                gp_bitonic_exchange(comm, be, width, m, &dev, &nk, drecv, host, hrecv, &xi);
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
            void *hpay = NULL, *psorted = NULL;
            if (pairs) BE_CALL("download positions", be->download(hval, dval, (size_t)nk * 8));
            err = gp_agree(comm, err, msg, msglen);
            if (!err && o->argsort) {
                snprintf(res->argsort_dset, sizeof res->argsort_dset, "%s", argsort_dset);
                ds[nds++] = (gp_h5_outds){res->argsort_dset, H5I_INVALID_HID, GP_I64, hval};
            }
            if (!err && o->payload) { /* opened and checked at the start */
                const size_t psz = gp_dtype_size(pin.dtype);
                hpay = malloc((size_t)(cnt > 0 ? cnt : 1) * psz);
                psorted = malloc((size_t)(nk > 0 ? nk : 1) * psz);
                if (!hpay || !psorted) {
                    err = GP_EXIT_FAIL;
                    snprintf(msg, msglen, "rank %d: --payload: out of host memory", rank);
                }
                err = gp_agree(comm, err, msg, msglen);
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
                err = gp_h5_write_many_staged(comm, o->out, ds, nds, N, woff, nk, o->force, msg,
                                              msglen);
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
    if (dvrecv) be->free(dvrecv);
    if (dev) be->free(dev);
    if (drecv) be->free(drecv);
    if (pin_open) gp_h5_close(&pin);
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
