/*
 * threadpool.h - a persistent pool of worker threads for the inference engine.
 *
 * mg_pool_run(p, fn, ctx, n) runs fn(ctx, task, thread) for task = 0..n-1 on the pool's threads
 * (the caller is thread 0 and works too) and returns when all are done.  Tasks are handed out
 * dynamically, so which thread runs a task varies: a task must write only its own outputs (and
 * may use per-thread scratch indexed by `thread`) so that results never depend on the thread
 * count or the schedule.  Workers wait on a condition variable between jobs (after a short
 * spin), so an idle pool costs nothing.  One caller at a time.
 */
#ifndef MG_MODEL_THREADPOOL_H
#define MG_MODEL_THREADPOOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_POOL_MAX_THREADS 256

typedef void (*mg_pool_fn)(void *ctx, int task, int thread);
typedef struct mg_pool mg_pool;

/* A pool of `threads` threads in all (1: no workers, everything runs in the caller).  NULL with
 * a message on failure. */
mg_pool *mg_pool_create(int threads, char *err, size_t errlen);
void mg_pool_free(mg_pool *p);
int mg_pool_threads(const mg_pool *p);
void mg_pool_run(mg_pool *p, mg_pool_fn fn, void *ctx, int ntasks);

#ifdef __cplusplus
}
#endif
#endif
