/* h5_pool.c — the threads that decode a reader's chunks (h5io_internal.h: gp_h5io_pool_*): a
 * fixed set of POSIX threads taking tasks from one first-in, first-out queue. A task is a
 * gp_pool_task embedded in the caller's record; the queue links them, so a submission never
 * allocates and never fails. The threads run only the caller's function on the task: no
 * HDF5 call is made off the calling thread (the library is not thread-safe). */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct gp_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;   /* a task was queued, or the pool stops */
    pthread_cond_t done;   /* a task finished */
    gp_pool_task *head, *tail;
    int stop;
    int running;           /* tasks taken from the queue and not finished */
    int nthreads;
    pthread_t *threads;
    gp_pool_fn fn;
    void *arg;
};

typedef struct worker_start {
    gp_pool *p;
    int index;
} worker_start;

/* One thread: takes the oldest task, runs it unlocked, marks it done; returns when the pool
 * stops and its queue is empty of tasks it may take. */
static void *worker(void *vp)
{
    worker_start ws = *(worker_start *)vp;
    gp_pool *p = ws.p;
    free(vp);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && !p->head) pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        gp_pool_task *t = p->head;
        p->head = t->next;
        if (!p->head) p->tail = NULL;
        t->next = NULL;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        p->fn(t, ws.index, p->arg);
        pthread_mutex_lock(&p->mu);
        t->done = 1;
        p->running--;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Stops and joins the first n threads of p, then frees p. */
static void pool_end(gp_pool *p, int n)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < n; k++) pthread_join(p->threads[k], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

gp_pool *gp_h5io_pool_create(int nthreads, gp_pool_fn fn, void *arg, char *why, size_t whylen)
{
    gp_pool *p = calloc(1, sizeof *p);
    if (nthreads < 1) nthreads = 1;
    if (!p || !(p->threads = calloc((size_t)nthreads, sizeof *p->threads))) {
        free(p);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0 || pthread_cond_init(&p->work, NULL) != 0 ||
        pthread_cond_init(&p->done, NULL) != 0) {
        /* glibc's initialisers do not fail; elsewhere give up without the pool */
        snprintf(why, whylen, "cannot initialise a mutex or condition variable");
        free(p->threads);
        free(p);
        return NULL;
    }
    p->fn = fn;
    p->arg = arg;
    for (int k = 0; k < nthreads; k++) {
        worker_start *ws = malloc(sizeof *ws);
        int rc = ws ? 0 : ENOMEM;
        if (ws) {
            ws->p = p;
            ws->index = k;
            rc = pthread_create(&p->threads[k], NULL, worker, ws);
            if (rc != 0) free(ws);
        }
        if (rc != 0) {
            snprintf(why, whylen, "cannot start decoding thread %d of %d (%s)", k + 1, nthreads,
                     strerror(rc));
            pool_end(p, k);
            return NULL;
        }
    }
    p->nthreads = nthreads;
    return p;
}

int gp_h5io_pool_threads(const gp_pool *p) { return p ? p->nthreads : 0; }

void gp_h5io_pool_submit(gp_pool *p, gp_pool_task *t)
{
    t->next = NULL;
    t->done = 0;
    pthread_mutex_lock(&p->mu);
    if (p->tail) p->tail->next = t;
    else p->head = t;
    p->tail = t;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void gp_h5io_pool_wait(gp_pool *p, gp_pool_task *t)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    while (!t->done) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void gp_h5io_pool_drain(gp_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    for (gp_pool_task *t = p->head; t; t = t->next) t->done = -1; /* never run */
    p->head = p->tail = NULL;
    while (p->running > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void gp_h5io_pool_destroy(gp_pool *p)
{
    if (!p) return;
    gp_h5io_pool_drain(p);
    pool_end(p, p->nthreads);
}
