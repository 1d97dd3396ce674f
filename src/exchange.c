/* exchange.c — MPI combination: statistics reduction, rank-level bitonic merge exchange. */
#define _GNU_SOURCE /* program_invocation_short_name: error lines name the calling program */
#include "exchange.h"

#include "gp_ext.h"
#include "h5io.h" /* gp_shard_range */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics reduction ------------------------------------------------------------ */

/* MPI user function: inout[i] = in[i] (+) inout[i], where `in` comes from the lower ranks
 * (MPI keeps operand order for non-commutative operations). */
static void stats_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    gp_stats *a = (gp_stats *)in, *b = (gp_stats *)inout;
    for (int i = 0; i < *len; i++) b[i] = gp_stats_combine(&a[i], &b[i]);
}

/* MPI_Reduce to `root` (root >= 0) or MPI_Allreduce (root < 0) of one record of `bytes`
 * bytes with the user operation fn (commute: MPI_Op_create's flag). The datatype and the
 * operation are created and freed here. Returns an MPI error code. */
static int reduce_record(MPI_Comm comm, const void *in, void *out, size_t bytes,
                         MPI_User_function *fn, int commute, int root)
{
    MPI_Datatype t;
    MPI_Op op;
    int rc = MPI_Type_contiguous((int)bytes, MPI_BYTE, &t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Op_create(fn, commute, &op);
    if (rc == MPI_SUCCESS) {
        rc = root >= 0 ? MPI_Reduce(in, out, 1, t, op, root, comm)
                       : MPI_Allreduce(in, out, 1, t, op, comm);
        MPI_Op_free(&op);
    }
    MPI_Type_free(&t);
    return rc;
}

int gp_stats_reduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total, int root)
{
    gp_stats out = *mine; /* what ranks other than root get back */
    int rc = reduce_record(comm, mine, &out, sizeof out, stats_op, 0 /* rank order */, root);
    *total = out;
    return rc;
}

int gp_stats_allreduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total)
{
    return reduce_record(comm, mine, total, sizeof *total, stats_op, 0 /* rank order */, -1);
}

/* ---- exact accumulators ---------------------------------------------------------------- */

static void superacc_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    gp_superacc *a = (gp_superacc *)in, *b = (gp_superacc *)inout;
    for (int i = 0; i < *len; i++) gp_superacc_add(&b[i], &a[i]);
}

int gp_superacc_allreduce(MPI_Comm comm, const gp_superacc *mine, gp_superacc *total)
{
    return reduce_record(comm, mine, total, sizeof *total, superacc_op, 1 /* exact */, -1);
}

/* ---- agreement on errors ------------------------------------------------------------- */

int gp_agree(MPI_Comm comm, int err, char *msg, size_t msglen)
{
    int rank, size, worst = 0, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&err, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst == 0) return 0;
    int cand = err ? rank : size;
    MPI_Allreduce(&cand, &first, 1, MPI_INT, MPI_MIN, comm);
    if (msglen > 0) msg[msglen - 1] = '\0';
    MPI_Bcast(msg, (int)msglen, MPI_CHAR, first, comm);
    return worst;
}

/* ---- point-to-point in pieces -------------------------------------------------------- */

#define GP_MPI_PIECE ((int64_t)1 << 30)

int gp_sendrecv_bytes(MPI_Comm comm, int partner, const void *sbuf, int64_t sbytes, void *rbuf,
                      int64_t rbytes)
{
    int64_t most = sbytes > rbytes ? sbytes : rbytes;
    int64_t pieces = most == 0 ? 1 : (most + GP_MPI_PIECE - 1) / GP_MPI_PIECE;
    for (int64_t p = 0; p < pieces; p++) {
        int64_t so = p * GP_MPI_PIECE, ro = so;
        int64_t sn = sbytes - so, rn = rbytes - ro;
        sn = sn < 0 ? 0 : (sn > GP_MPI_PIECE ? GP_MPI_PIECE : sn);
        rn = rn < 0 ? 0 : (rn > GP_MPI_PIECE ? GP_MPI_PIECE : rn);
        int rc = MPI_Sendrecv(sn ? (const char *)sbuf + so : sbuf, (int)sn, MPI_BYTE, partner, 7,
                              rn ? (char *)rbuf + ro : rbuf, (int)rn, MPI_BYTE, partner, 7,
                              comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* ---- all-to-all with 64-bit counts ------------------------------------------------------ */

/* The program the library runs in, for its one-line errors ("gpuprim_mpi", or the
 * caller's own program); "gpuprim" where the C library does not say. */
static const char *prog_name(void)
{
#if defined(__GLIBC__)
    return program_invocation_short_name;
#else
    return "gpuprim";
#endif
}

/* A failing point-to-point call of the all-to-all: the job cannot continue (partners would
 * wait forever), so abort it with one line. */
static void a2a_die(MPI_Comm comm, int rank, const char *what)
{
    fprintf(stderr, "%s: error: rank %d: all-to-all: %s\n", prog_name(), rank, what);
    fflush(stderr);
    MPI_Abort(comm, 1);
}

/* MPI_Alltoallv takes int counts and int displacements (in elements), so one call cannot
 * move 2^31 elements to one rank nor address past element 2^31 of a buffer. Here every
 * pair's block goes as point-to-point messages of at most `piece` bytes each (the pointers
 * are offset in C, so no displacement reaches MPI), all posted at once and completed with
 * one MPI_Waitall; MPI's non-overtaking rule keeps the pieces of a pair in order. */
int gp_alltoallv_big(MPI_Comm comm, const void *sbuf, const int64_t *scount,
                     const int64_t *sdispl, void *rbuf, const int64_t *rcount,
                     const int64_t *rdispl, size_t esz, int64_t piece)
{
    int rank, P;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &P) != MPI_SUCCESS)
        return MPI_ERR_COMM;
    if (piece <= 0) piece = GP_MPI_PIECE;
    if (piece > INT_MAX) piece = INT_MAX;
    const int64_t E = (int64_t)esz;
    /* messages this rank takes part in (local arguments only; nothing posted yet) */
    int64_t nreq = 0;
    int bad = esz == 0 || !scount || !sdispl || !rcount || !rdispl;
    for (int p = 0; !bad && p < P; p++) {
        if (scount[p] < 0 || rcount[p] < 0 || sdispl[p] < 0 || rdispl[p] < 0 ||
            scount[p] > INT64_MAX / E || rcount[p] > INT64_MAX / E) {
            bad = 1;
            break;
        }
        if (p == rank) {
            bad = scount[p] != rcount[p];
            continue;
        }
        nreq += (scount[p] * E + piece - 1) / piece + (rcount[p] * E + piece - 1) / piece;
    }
    if (nreq > INT_MAX) bad = 1; /* MPI_Waitall's count is an int */
    MPI_Request *req = bad ? NULL : malloc((size_t)(nreq > 0 ? nreq : 1) * sizeof *req);
    /* every rank must agree to go on: a rank that returned here alone would leave its
     * partners waiting for messages that never come */
    int why = bad ? 2 : req ? 0 : 1, worst = 0; /* 2: bad arguments, 1: no memory */
    int rc = MPI_Allreduce(&why, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS || worst) {
        free(req);
        return rc != MPI_SUCCESS ? rc : worst == 2 ? MPI_ERR_ARG : MPI_ERR_NO_MEM;
    }
    int64_t k = 0;
    /* receives first, then sends, pieces of each pair in order */
    for (int side = 0; side < 2; side++) {
        for (int q = 1; q < P; q++) {
            /* send to rank+q, receive from rank-q: the same pairing on every rank */
            const int p = side ? (rank + q) % P : (rank - q + P) % P;
            const int64_t bytes = (side ? scount[p] : rcount[p]) * E;
            if (bytes == 0) continue; /* the partner expects nothing either */
            char *base = side ? (char *)sbuf + (size_t)(sdispl[p] * E)
                              : (char *)rbuf + (size_t)(rdispl[p] * E);
            for (int64_t o = 0; o < bytes; o += piece) {
                const int len = (int)(bytes - o < piece ? bytes - o : piece);
                rc = side ? MPI_Isend(base + o, len, MPI_BYTE, p, 8, comm, &req[k])
                          : MPI_Irecv(base + o, len, MPI_BYTE, p, 8, comm, &req[k]);
                if (rc != MPI_SUCCESS) a2a_die(comm, rank, "posting a message failed");
                k++;
            }
        }
    }
    if (scount[rank] > 0)
        memmove((char *)rbuf + (size_t)(rdispl[rank] * E),
                (const char *)sbuf + (size_t)(sdispl[rank] * E), (size_t)(scount[rank] * E));
    rc = k > 0 ? MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    free(req);
    if (rc != MPI_SUCCESS) a2a_die(comm, rank, "MPI_Waitall failed");
    return MPI_SUCCESS;
}

/* ---- elements by global position ------------------------------------------------------ */

int gp_shard_owner(int64_t g, int64_t n, int P)
{
    const int64_t q = n / P, r = n % P;
    return g < r * (q + 1) ? (int)(g / (q + 1)) : (int)(r + (g - r * (q + 1)) / q);
}

/* gp_gather_by_index (exchange.h): requests grouped by owner, two all-to-alls with
 * 64-bit counts (gp_alltoallv_big). */
int gp_gather_by_index(MPI_Comm comm, int64_t n, const uint64_t *idx, int64_t nk,
                       const void *local, size_t esz, void *out)
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
        for (int64_t i = 0; i < nk; i++) sc[gp_shard_owner((int64_t)idx[i], n, P)]++;
        for (int p = 0; p < P; p++) {
            sd[p] = cur[p] = at;
            at += sc[p];
        }
        for (int64_t i = 0; i < nk; i++) {
            int64_t j = cur[gp_shard_owner((int64_t)idx[i], n, P)]++;
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
    free(sc), free(sd), free(rc), free(rd), free(cur), free(req), free(pos);
    free(rreq), free(ans), free(back);
    return err ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* ---- rank-level bitonic merge exchange ----------------------------------------------- */

static void die(MPI_Comm comm, int rank, const char *what, const char *detail)
{
    fprintf(stderr, "%s: error: rank %d: merge exchange: %s: %s\n", prog_name(), rank, what,
            detail ? detail : "");
    fflush(stderr);
    MPI_Abort(comm, 7);
}

/* A count outside [0, m] passed by rank `holder` (this rank, or a partner that sent it). */
static void count_die(MPI_Comm comm, int rank, int holder, int64_t count, int64_t m)
{
    char who[32], why[256];
    if (holder == rank) snprintf(who, sizeof who, "this rank");
    else snprintf(who, sizeof who, "rank %d", holder);
    snprintf(why, sizeof why,
             "%s holds %lld keys, outside [0, m = %lld] (m must be the same on every rank and "
             "at least every rank's count)",
             who, (long long)count, (long long)m);
    die(comm, rank, "arguments", why);
}

/* The exchange of gp_bitonic_exchange / gp_bitonic_exchange_pairs: with v == NULL keys
 * only; else every key carries one uint64 value (v->vals etc.). */
typedef struct pair_bufs {
    uint64_t *vals, *vrecv;
    uint64_t *hv_send, *hv_recv;
    int stable;
} pair_bufs;

/* Key i of a host array of unsigned keys of `width` bytes (4 or 8, native endianness). */
static uint64_t key_at(const void *k, int width, int64_t i)
{
    return width == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

/* 1 when hi's element b goes strictly before lo's element a in the merge: its key is
 * smaller, or (stable) the keys are equal and its value is smaller. Equal elements keep
 * lo first, the backends' tie rule (merge_split_keys / merge_split_pairs). lv / hv are read
 * only when stable. */
static int hi_before(int width, int stable, const void *lk, const uint64_t *lv, int64_t a,
                     const void *hk, const uint64_t *hv, int64_t b)
{
    const uint64_t x = key_at(hk, width, b), y = key_at(lk, width, a);
    if (x != y) return x < y;
    return stable && hv[b] < lv[a];
}

/* Merge path on the host: the number i of lo's elements among the first t of the merge of
 * lo (nlo) and hi (nhi), 0 <= t <= nlo + nhi, with the tie rule of hi_before (hi's j = t - i
 * elements make up the rest). The predicate "hi[t-1-i] goes before lo[i]" is false, then
 * true as i grows; i is the first i in [max(0, t-nhi), min(t, nlo)] where it holds (or the
 * top of the range), so lo[i-1] goes before hi[j] and hi[j-1] before lo[i]. O(log m). */
static int64_t merge_path_split(int width, int stable, const void *lk, const uint64_t *lv,
                                int64_t nlo, const void *hk, const uint64_t *hv, int64_t nhi,
                                int64_t t)
{
    int64_t a = t > nhi ? t - nhi : 0, b = t < nlo ? t : nlo;
    while (a < b) {
        const int64_t i = a + (b - a) / 2; /* i < min(t, nlo), so lo[i] and hi[t-1-i] exist */
        if (hi_before(width, stable, lk, lv, i, hk, hv, t - 1 - i)) b = i;
        else a = i + 1;
    }
    return a;
}

static int exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m, void **keys,
                    int64_t *nkeys, void *recv, void *host_send, void *host_recv,
                    const pair_bufs *v, gp_exchange_info *info)
{
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    if (m < 0 || *nkeys < 0 || *nkeys > m) count_die(comm, rank, rank, *nkeys, m);
    memset(info, 0, sizeof *info);
    /* the CPU backend's "device" memory is host memory: send my shard as it is */
    const int host_resident = strcmp(be->name, "cpu") == 0;
    const int stable = v ? v->stable != 0 : 0;
    int P2 = 1;
    while (P2 < P) P2 <<= 1;

    for (int k = 2; k <= P2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            info->stages++;
            /* first step of each merge: the mirror partner inside the k-block; then
             * half-cleaners. Every comparator keeps the minimum at the lower rank. */
            int partner = (j == (k >> 1)) ? (rank ^ (k - 1)) : (rank ^ j);
            if (partner >= P) continue; /* virtual all-+inf shard: keep mine */
            const int lower = rank < partner;
            /* 1. transfers: counts; my run device -> host (host_send / hv_send), MPI into
             * host_recv / hv_recv; then both sorted runs are host memory */
            double t0 = MPI_Wtime();
            int64_t mine = *nkeys, theirs = 0;
            int rc = MPI_Sendrecv(&mine, 1, MPI_INT64_T, partner, 6, &theirs, 1, MPI_INT64_T,
                                  partner, 6, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) die(comm, rank, "MPI_Sendrecv", "count exchange failed");
            if (theirs < 0 || theirs > m) count_die(comm, rank, partner, theirs, m);
            const void *hmine = NULL;     /* my keys, host memory */
            const uint64_t *hvmine = NULL; /* my values, host memory */
            for (int part = 0; part < (v ? 2 : 1); part++) {
                const int w = part ? 8 : width;
                void *dsrc = part ? (void *)v->vals : *keys;
                void *hs = part ? (void *)v->hv_send : host_send;
                void *hr = part ? (void *)v->hv_recv : host_recv;
                const void *sendp = dsrc;
                if (!host_resident) {
                    if (be->download(hs, dsrc, (size_t)mine * w))
                        die(comm, rank, "download", be->last_error());
                    sendp = hs;
                }
                rc = gp_sendrecv_bytes(comm, partner, sendp, mine * w, hr, theirs * w);
                if (rc != MPI_SUCCESS) die(comm, rank, "MPI_Sendrecv", "shard exchange failed");
                if (part) hvmine = (const uint64_t *)sendp;
                else hmine = sendp;
                info->bytes_sent += mine * w;
            }
            double t1 = MPI_Wtime();
            /* 2. the merge-path split of merge(lo, hi) at t = min(m, nlo + nhi), on the
             * host: the lower rank keeps lo[0, i) and hi[0, t-i), the upper one the rest */
            const void *lo = lower ? hmine : host_recv, *hi = lower ? host_recv : hmine;
            const uint64_t *vlo = NULL, *vhi = NULL;
            if (v) {
                vlo = lower ? hvmine : v->hv_recv;
                vhi = lower ? v->hv_recv : hvmine;
            }
            const int64_t nlo = lower ? mine : theirs, nhi = lower ? theirs : mine;
            const int64_t t = nlo + nhi < m ? nlo + nhi : m;
            const int64_t si = merge_path_split(width, stable, lo, vlo, nlo, hi, vhi, nhi, t);
            const int64_t sj = t - si;
            const int64_t a0 = lower ? 0 : si, ka = lower ? si : nlo - si; /* kept of lo */
            const int64_t b0 = lower ? 0 : sj, kb = lower ? sj : nhi - sj; /* kept of hi */
            double t2 = MPI_Wtime();
            /* 3. upload the kept runs side by side into recv (lo's part first, so that ties
             * keep lo first): recv[0, ka) and recv[ka, ka + kb), ka + kb <= m */
            for (int part = 0; part < (v ? 2 : 1); part++) {
                const size_t w = part ? 8 : (size_t)width;
                char *d = part ? (char *)v->vrecv : (char *)recv;
                const char *l = part ? (const char *)vlo : (const char *)lo;
                const char *h = part ? (const char *)vhi : (const char *)hi;
                if (be->upload(d, l + (size_t)a0 * w, (size_t)ka * w) ||
                    be->upload(d + (size_t)ka * w, h + (size_t)b0 * w, (size_t)kb * w))
                    die(comm, rank, "upload", be->last_error());
            }
            double t3 = MPI_Wtime();
            /* 4. merge them (the lower half of a merge-split with m = ka + kb: everything)
             * straight into my shard buffer */
            int64_t nout = 0;
            if (ka + kb > 0) {
                const char *rb = (const char *)recv + (size_t)ka * (size_t)width;
                if (!v) {
                    if (be->merge_split_keys(width, recv, ka, rb, kb, ka + kb, 0, *keys, &nout))
                        die(comm, rank, "merge-split", be->last_error());
                } else {
                    if (be->merge_split_pairs(width, recv, v->vrecv, ka, rb, v->vrecv + ka, kb,
                                              ka + kb, 0, v->stable, *keys, v->vals, &nout))
                        die(comm, rank, "merge-split", be->last_error());
                }
            }
            if (nout != ka + kb) die(comm, rank, "merge-split", "unexpected output count");
            *nkeys = nout;
            info->merges++;
            double t4 = MPI_Wtime();
            /* comm: counts, download, MPI and the upload of the kept runs (every transfer);
             * merge: the host split and the backend merge */
            const double tc = (t1 - t0) + (t3 - t2), tm = (t2 - t1) + (t4 - t3);
            info->t_comm += tc;
            info->t_merge += tm;
            if (info->stages <= GP_XSTEPS_MAX) {
                info->step_comm[info->stages - 1] = tc;
                info->step_merge[info->stages - 1] = tm;
                info->step_bytes[info->stages - 1] = mine * (width + (v ? 8 : 0));
            }
        }
    }
    return 0;
}

int gp_bitonic_exchange(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                        void **keys, int64_t *nkeys, void *recv, void *host_send,
                        void *host_recv, gp_exchange_info *info)
{
    return exchange(comm, be, width, m, keys, nkeys, recv, host_send, host_recv, NULL, info);
}

int gp_bitonic_exchange_pairs(MPI_Comm comm, const gp_backend *be, int width, int64_t m,
                              void **keys, uint64_t **vals, int64_t *nkeys, void *recv,
                              uint64_t *vrecv, void *host_send, void *host_recv,
                              uint64_t *hv_send, uint64_t *hv_recv, int stable,
                              gp_exchange_info *info)
{
    pair_bufs v = {*vals, vrecv, hv_send, hv_recv, stable};
    return exchange(comm, be, width, m, keys, nkeys, recv, host_send, host_recv, &v, info);
}
