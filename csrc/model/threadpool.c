/*
 * threadpool.c - the persistent worker pool of threadpool.h (pthreads, C11 atomics).
 *
 * A job is published under the mutex (generation counter bumped) once no worker is still inside
 * the previous one; workers claim task indices from an atomic counter; the last finished task
 * and the last worker leaving a job wake the caller.
 */
#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define SPIN 2000

typedef struct worker_arg {
    mg_pool *p;
    int id;
} worker_arg;

struct mg_pool {
    int threads;
    pthread_t *tids;
    worker_arg *args;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    atomic_int gen;          /* bumped per job */
    int stop;
    int active;              /* workers inside a job (under mu) */
    mg_pool_fn fn;
    void *ctx;
    int ntasks;
    atomic_int next;         /* next task index */
    atomic_int pending;      /* tasks not finished */
};

static void run_tasks(mg_pool *p, mg_pool_fn fn, void *ctx, int ntasks, int thread)
{
    for (;;) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= ntasks)
            break;
        fn(ctx, t, thread);
        if (atomic_fetch_sub(&p->pending, 1) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *worker(void *arg)
{
    worker_arg *a = arg;
    mg_pool *p = a->p;
    int seen = 0;
    for (;;) {
        for (int s = 0; s < SPIN && atomic_load_explicit(&p->gen, memory_order_relaxed) == seen; s++)
            ;
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->gen) == seen && !p->stop)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = atomic_load(&p->gen);
        mg_pool_fn fn = p->fn;
        void *ctx = p->ctx;
        int n = p->ntasks;
        p->active++;
        pthread_mutex_unlock(&p->mu);
        run_tasks(p, fn, ctx, n, a->id);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

mg_pool *mg_pool_create(int threads, char *err, size_t errlen)
{
    if (threads < 1 || threads > MG_POOL_MAX_THREADS) {
        snprintf(err, errlen, "threads must be in [1, %d], got %d", MG_POOL_MAX_THREADS, threads);
        return NULL;
    }
    mg_pool *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->threads = threads;
    atomic_init(&p->gen, 0);
    atomic_init(&p->next, 0);
    atomic_init(&p->pending, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (threads > 1) {
        p->tids = calloc((size_t)threads, sizeof *p->tids);
        p->args = calloc((size_t)threads, sizeof *p->args);
        if (!p->tids || !p->args) {
            snprintf(err, errlen, "out of memory");
            mg_pool_free(p);
            return NULL;
        }
        for (int i = 1; i < threads; i++) {
            p->args[i].p = p;
            p->args[i].id = i;
            if (pthread_create(&p->tids[i], NULL, worker, &p->args[i]) != 0) {
                snprintf(err, errlen, "cannot start worker thread %d", i);
                mg_pool_free(p);
                return NULL;
            }
            p->started = i;
        }
    }
    return p;
}

void mg_pool_free(mg_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i <= p->started; i++)
        pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->tids);
    free(p->args);
    free(p);
}

int mg_pool_threads(const mg_pool *p)
{
    return p->threads;
}

void mg_pool_run(mg_pool *p, mg_pool_fn fn, void *ctx, int ntasks)
{
    if (ntasks <= 0)
        return;
    if (p->threads == 1 || ntasks == 1) {
        for (int t = 0; t < ntasks; t++)
            fn(ctx, t, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) /* a late worker still inside the previous job */
        pthread_cond_wait(&p->done, &p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->ntasks = ntasks;
    atomic_store(&p->next, 0);
    atomic_store(&p->pending, ntasks);
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    run_tasks(p, fn, ctx, ntasks, 0);
    for (int s = 0; s < SPIN && atomic_load(&p->pending) > 0; s++)
        ;
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->pending) > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
