/* cpu_threads.c — the host's threads (host.h): the thread count of this process's host-side
 * loops (GPUPRIM_HOST_THREADS, or the program's share of the node's cores), one persistent
 * pool of workers that runs the parts of a parallel loop, and the parallel copy. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "host.h"
#include "tuning.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define POOL_MAX 1024 /* GPUPRIM_HOST_THREADS's largest value */

static int g_share = 1; /* the program's share (gp_host_threads_share) */

int gp_host_threads(void)
{
    const int knob = gp_tuning_get()->host_threads;
    const int n = knob > 0 ? knob : g_share;
    return n < 1 ? 1 : n > POOL_MAX ? POOL_MAX : n;
}

void gp_host_threads_share(int n) { g_share = n < 1 ? 1 : n; }

int gp_host_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- the pool ---------------------------------------------------------------------------- */

/* The pool: workers wait for a new generation of work, take parts until none is left, and
 * the last one to finish a part wakes the caller. `busy` admits one caller at a time. */
static struct {
    pthread_mutex_t lock, busy;
    pthread_cond_t work, done;
    int nworkers;           /* started (they never end: the process's exit ends them) */
    unsigned long gen;      /* bumped for every loop */
    gp_host_part_fn fn;
    void *ctx;
    int nparts, next, left; /* parts in all, the next to take, those not finished */
} g_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
            PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL, 0, 0, 0};

/* Takes and runs parts of the current loop until none is left (g_pool.lock held on entry
 * and on return). */
static void run_parts(void)
{
    while (g_pool.next < g_pool.nparts) {
        const int p = g_pool.next++;
        const gp_host_part_fn fn = g_pool.fn;
        void *ctx = g_pool.ctx;
        const int np = g_pool.nparts;
        pthread_mutex_unlock(&g_pool.lock);
        fn(ctx, p, np);
        pthread_mutex_lock(&g_pool.lock);
        if (--g_pool.left == 0) pthread_cond_broadcast(&g_pool.done);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&g_pool.lock);
    for (;;) {
        while (g_pool.gen == seen) pthread_cond_wait(&g_pool.work, &g_pool.lock);
        seen = g_pool.gen;
        run_parts();
    }
    return NULL; /* not reached */
}

/* Starts workers until there are `want` (fewer when a thread cannot start). Called with
 * g_pool.busy held. */
static void grow(int want)
{
    while (g_pool.nworkers < want) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        const int rc = pthread_create(&t, &a, worker, NULL);
        pthread_attr_destroy(&a);
        if (rc != 0) break;
        g_pool.nworkers++;
    }
}

void gp_host_parallel(int nparts, gp_host_part_fn fn, void *ctx)
{
    const int nt = gp_host_threads();
    if (nparts <= 1 || nt <= 1 || pthread_mutex_trylock(&g_pool.busy) != 0) {
        for (int p = 0; p < nparts; p++) fn(ctx, p, nparts);
        return;
    }
    grow((nparts < nt ? nparts : nt) - 1);
    pthread_mutex_lock(&g_pool.lock);
    g_pool.fn = fn;
    g_pool.ctx = ctx;
    g_pool.nparts = nparts;
    g_pool.next = 0;
    g_pool.left = nparts;
    g_pool.gen++;
    pthread_cond_broadcast(&g_pool.work);
    run_parts();
    while (g_pool.left > 0) pthread_cond_wait(&g_pool.done, &g_pool.lock);
    g_pool.fn = NULL;
    pthread_mutex_unlock(&g_pool.lock);
    pthread_mutex_unlock(&g_pool.busy);
}

/* ---- the parallel copy and the first touch ------------------------------------------------ */

#define COPY_PART_MIN ((size_t)4 << 20)
#define TOUCH_PAGE ((size_t)4096)

typedef struct copy_job {
    char *dst;
    const char *src; /* NULL for a first touch */
    size_t bytes;
} copy_job;

/* [*lo, *hi): part p of np of c's bytes, the parts cut at multiples of align (a power of
 * two). */
static void share(const copy_job *c, int p, int np, size_t align, size_t *lo, size_t *hi)
{
    const size_t per = (c->bytes / (size_t)np + align - 1) & ~(align - 1);
    *lo = per * (size_t)p < c->bytes ? per * (size_t)p : c->bytes;
    *hi = *lo + per < c->bytes ? *lo + per : c->bytes;
}

/* Part p of np of a copy: its share, cut at 64-byte boundaries. */
static void copy_part(void *ctx, int p, int np)
{
    const copy_job *c = ctx;
    size_t lo, hi;
    share(c, p, np, 64, &lo, &hi);
    if (hi > lo) memcpy(c->dst + lo, c->src + lo, hi - lo);
}

/* Part p of np of a first touch: one zero byte in each page of its share. */
static void touch_part(void *ctx, int p, int np)
{
    const copy_job *c = ctx;
    size_t lo, hi;
    share(c, p, np, TOUCH_PAGE, &lo, &hi);
    volatile char *b = c->dst;
    for (size_t at = lo; at < hi; at += TOUCH_PAGE) b[at] = 0;
}

/* fn over c's bytes: up to gp_host_threads() parts of at least COPY_PART_MIN bytes, or one
 * part on this thread. */
static void run_parts_of(copy_job *c, gp_host_part_fn fn)
{
    const int nt = gp_host_threads();
    size_t np = c->bytes / COPY_PART_MIN;
    if (np > (size_t)nt) np = (size_t)nt;
    if (np <= 1) fn(c, 0, 1);
    else gp_host_parallel((int)np, fn, c);
}

void gp_host_memcpy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return;
    copy_job c = {(char *)dst, (const char *)src, bytes};
    run_parts_of(&c, copy_part);
}

void gp_host_touch(void *buf, size_t bytes)
{
    if (!buf || bytes == 0) return;
    copy_job c = {(char *)buf, NULL, bytes};
    run_parts_of(&c, touch_part);
}
