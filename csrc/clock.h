/*
 * clock.h - a monotonic clock in seconds, for time limits and timings (never the wall clock).
 */
#ifndef MG_CLOCK_H
#define MG_CLOCK_H
#include <time.h>

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin: only differences mean anything). */
static inline double mg_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the calling thread (benchmark timings: on a shared machine wall time would count the time
 * other processes hold the core). */
static inline double mg_thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif /* MG_CLOCK_H */
