/*
 * cancel.h - cooperative cancellation of long C work (perft, solvers, searches).
 *
 * The core has no global mutable state and knows nothing about Python or signals: a long
 * algorithm takes an optional caller-owned `mg_cancel` and asks it, at points of its own
 * choosing, whether to stop.  The caller supplies the poll function: the Python binding's
 * poll briefly takes the GIL and runs PyErr_CheckSignals() (at most every ~50 ms, so Ctrl-C
 * reaches a search within a fraction of a second); a C program may poll a flag or a clock.
 *
 *   mg_cancel_tick(c)   cheap: counts down and polls once every MG_CANCEL_EVERY ticks; for
 *                       algorithms with cheap nodes (perft, solvers, playouts)
 *   mg_cancel_check(c)  polls now; for algorithms with expensive steps (an MCTS batch)
 *
 * Both return non-zero once the poll function has asked to stop, and keep returning non-zero
 * (the request is sticky), so an algorithm can unwind by returning at its next check.  A NULL
 * `mg_cancel *` never stops.  An algorithm that stops this way leaves its inputs unchanged
 * (or, for an MCTS tree, consistent), releases what it allocated, and reports the stop as
 * documented in its header.  One mg_cancel serves one call at a time (not thread-safe).
 */
#ifndef MG_CANCEL_H
#define MG_CANCEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ticks between two polls in mg_cancel_tick. */
#define MG_CANCEL_EVERY 64

typedef struct mg_cancel {
    int (*poll)(void *ctx);  /* non-zero: stop.  NULL: never stops */
    void *ctx;
    uint32_t left;           /* ticks until the next poll */
    int stopped;             /* 1 once poll returned non-zero */
} mg_cancel;

/* A cancellation object that polls `poll(ctx)` (poll may be NULL). */
void mg_cancel_init(mg_cancel *c, int (*poll)(void *ctx), void *ctx);
/* Poll now (unless already stopped); returns c->stopped.  `c` may be NULL (returns 0). */
int mg_cancel_check(mg_cancel *c);

static inline int mg_cancel_tick(mg_cancel *c)
{
    if (!c)
        return 0;
    if (c->stopped) /* sticky: once stopped, every tick says so (a deep recursion unwinds at once) */
        return 1;
    if (c->left) {
        c->left--;
        return 0;
    }
    return mg_cancel_check(c);
}

#ifdef __cplusplus
}
#endif
#endif /* MG_CANCEL_H */
