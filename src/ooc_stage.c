/* ooc_stage.c — the out-of-core run pass (ooc.h): every run of the shard through the device,
 * with a staging thread that moves run k+1 up and run k-1 down while the job's thread works
 * on run k.
 *
 * Two threads, one protocol (a mutex and a condition variable):
 *   staging thread  for k = 0, 1, ...: once run k - nslots is done on the device, stage it
 *                   down (from its slot into the spare host buffer); then stage run k up
 *                   into the same slot (from the current host buffer) and count it as up;
 *                   at the end, stage the last runs down as they are done.
 *   job's thread    for k = 0, 1, ...: wait until run k is up, work on it (fn: statistics,
 *                   keys, the sort, ending with the device synchronised), count it as done.
 * With two slots the device works on one while the other's runs travel. Either thread stops
 * at its first failure and tells the other, which stops at its next wait; the job's thread
 * joins the staging thread before it returns, so nothing is in flight afterwards.
 *
 * Staging through the ring of four host pieces (pinned on CUDA; j->ooc->piece bytes each):
 * up, a piece is copied from the host buffer into ring 0 or 1 (gp_host_memcpy, on the
 * host's threads) while the one before travels (upload_async); down, a piece travels into
 * ring 2 or 3 (download_async) while the one before is copied out. Without pieces (piece 0,
 * a host-memory backend) a run goes in one upload / download call. The staging thread is
 * the only caller of the backend's transfers while the pass runs (the backends' threading
 * contract allows this one other thread: kernels.h, cuda_backend.cu). */
#define _POSIX_C_SOURCE 200809L
#include "ooc.h"

#include <pthread.h>
#include <stdio.h>

#include "host.h"
#include "jobstate.h"

typedef struct stager {
    gp_job *j;
    int xdata;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t up, done; /* runs staged up; runs the device has finished */
    int stop;         /* either thread gave up */
    int err;          /* the staging thread's failure (GP_EXIT_DEVICE), with msg */
    char msg[320];
} stager;

/* The elements [*lo, *lo + *n) of run k of this rank's shard. */
static void run_range(const gp_job *j, int64_t k, int64_t *lo, int64_t *n)
{
    const int64_t run = j->ooc->run;
    *lo = k * run < j->cnt ? k * run : j->cnt;
    *n = j->cnt - *lo < run ? j->cnt - *lo : run;
}

/* A staging failure: this thread's backend error in s->msg, the other thread told. */
static int stage_fail(stager *s, const char *what)
{
    pthread_mutex_lock(&s->mu);
    if (!s->err) {
        s->err = GP_EXIT_DEVICE;
        snprintf(s->msg, sizeof s->msg, "rank %d: out-of-core staging: %s: %s", s->j->rank, what,
                 s->j->be->last_error());
    }
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return -1;
}

/* bytes from host memory up to dev: straight (no pieces), or piece by piece through ring 0
 * and 1, each piece's copy into the ring overlapping the upload of the one before. */
static int stage_up(stager *s, char *dev, const char *host, int64_t bytes)
{
    const gp_backend *be = s->j->be;
    const gp_ooc *p = s->j->ooc;
    if (bytes <= 0) return 0;
    if (p->piece == 0) return be->upload(dev, host, (size_t)bytes) ? stage_fail(s, "upload") : 0;
    for (int64_t at = 0, k = 0; at < bytes; at += p->piece, k++) {
        const int64_t c = bytes - at < p->piece ? bytes - at : p->piece;
        void *h = p->ring[k & 1];
        gp_host_memcpy(h, host + at, (size_t)c); /* its twin travels meanwhile */
        if (be->upload_wait() || be->upload_async(dev + at, h, (size_t)c)) {
            (void)be->upload_wait(); /* nothing left in flight */
            return stage_fail(s, "upload");
        }
    }
    return be->upload_wait() ? stage_fail(s, "upload") : 0;
}

/* bytes from dev down to host memory: straight, or piece by piece through ring 2 and 3, each
 * piece's copy out of the ring overlapping the download of the next. */
static int stage_down(stager *s, char *host, const char *dev, int64_t bytes)
{
    const gp_backend *be = s->j->be;
    const gp_ooc *p = s->j->ooc;
    if (bytes <= 0) return 0;
    if (p->piece == 0)
        return be->download(host, dev, (size_t)bytes) ? stage_fail(s, "download") : 0;
    const int64_t pb = p->piece, np = (bytes + pb - 1) / pb;
    if (be->download_async(p->ring[2], dev, (size_t)(bytes < pb ? bytes : pb)))
        return stage_fail(s, "download");
    for (int64_t k = 0; k < np; k++) {
        const int64_t at = k * pb, c = bytes - at < pb ? bytes - at : pb;
        const int64_t at1 = at + pb, c1 = bytes - at1 < pb ? bytes - at1 : pb;
        if (be->download_wait() ||
            (k + 1 < np && be->download_async(p->ring[2 + ((k + 1) & 1)], dev + at1, (size_t)c1))) {
            (void)be->download_wait();
            return stage_fail(s, "download");
        }
        gp_host_memcpy(host + at, p->ring[2 + (k & 1)], (size_t)c);
    }
    return 0;
}

/* Run k between its slot and host memory: up (up != 0), the keys from the current host
 * buffer and with xdata the --x coordinates into the slot's aux part; down, the sorted keys
 * into the spare host buffer and with pairs their positions. */
static int move_run(stager *s, int64_t k, int up)
{
    const gp_job *j = s->j;
    gp_ooc *p = j->ooc;
    const int slot = (int)(k % p->nslots);
    int64_t lo, n;
    run_range(j, k, &lo, &n);
    const double t0 = now();
    const size_t ko = (size_t)lo * j->sz;
    const int64_t kb = n * (int64_t)j->sz;
    int rc;
    if (up) {
        rc = stage_up(s, p->dk[slot], (const char *)gp_ooc_keys(j) + ko, kb);
        if (!rc && s->xdata)
            rc = stage_up(s, (char *)p->dv[slot], (const char *)(p->hx + lo), n * 8);
        p->t_up += now() - t0;
    } else {
        rc = stage_down(s, (char *)gp_ooc_spare_keys(j) + ko, p->dk[slot], kb);
        if (!rc && j->pairs)
            rc = stage_down(s, (char *)(gp_ooc_spare_vals(j) + lo), (const char *)p->dv[slot],
                            n * 8);
        p->t_down += now() - t0;
    }
    return rc;
}

/* Waits until *count (s->up or s->done) passes k: run k is up, or done on the device.
 * Returns 0, or -1 when a thread gave up. */
static int wait_past(stager *s, const int64_t *count, int64_t k)
{
    pthread_mutex_lock(&s->mu);
    while (*count <= k && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
    const int stop = s->stop;
    pthread_mutex_unlock(&s->mu);
    return stop ? -1 : 0;
}

/* Counts run k in *count (up, or done), or with failed, stops the pass; tells the other
 * thread. */
static void post(stager *s, int64_t *count, int64_t k, int failed)
{
    pthread_mutex_lock(&s->mu);
    if (failed) s->stop = 1;
    else *count = k + 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The staging thread (see the file comment). */
static void *stage_main(void *arg)
{
    stager *s = arg;
    const gp_ooc *p = s->j->ooc;
    const int64_t K = p->nruns, ns = p->nslots;
    for (int64_t k = 0; k < K; k++) {
        if (k >= ns && (wait_past(s, &s->done, k - ns) || move_run(s, k - ns, 0))) return NULL;
        if (move_run(s, k, 1)) return NULL;
        post(s, &s->up, k, 0);
    }
    for (int64_t k = K > ns ? K - ns : 0; k < K; k++)
        if (wait_past(s, &s->done, k) || move_run(s, k, 0)) return NULL;
    return NULL;
}

/* The job's side of the pass: each run, once up, through fn. Returns fn's failure or 0. */
static int device_side(stager *s, gp_ooc_run_fn fn, void *ctx)
{
    gp_job *j = s->j;
    gp_ooc *p = j->ooc;
    int err = 0;
    for (int64_t k = 0; k < p->nruns && !err; k++) {
        if (wait_past(s, &s->up, k)) break;
        int64_t lo, n;
        run_range(j, k, &lo, &n);
        const int slot = (int)(k % p->nslots);
        const double t0 = now();
        err = fn(j, k, p->dk[slot], p->dv[slot], lo, n, ctx);
        p->t_dev += now() - t0;
        post(s, &s->done, k, err != 0);
    }
    return err;
}

int gp_ooc_run_pass(gp_job *j, int xdata, gp_ooc_run_fn fn, void *ctx)
{
    stager s = {.j = j, .xdata = xdata};
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    pthread_t t;
    int err = 0;
    if (pthread_create(&t, NULL, stage_main, &s) != 0) {
        snprintf(j->msg, j->msglen, "rank %d: cannot start the out-of-core staging thread",
                 j->rank);
        err = GP_EXIT_FAIL;
    } else {
        err = device_side(&s, fn, ctx);
        pthread_join(t, NULL);
        if (!err && s.err) {
            err = s.err;
            snprintf(j->msg, j->msglen, "%s", s.msg);
        }
    }
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    return err;
}
