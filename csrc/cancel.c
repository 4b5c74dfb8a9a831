/* cancel.c - cooperative cancellation of long C work (see cancel.h). */
#include "cancel.h"

#include <stddef.h>

void mg_cancel_init(mg_cancel *c, int (*poll)(void *ctx), void *ctx)
{
    c->poll = poll;
    c->ctx = ctx;
    c->left = MG_CANCEL_EVERY;
    c->stopped = 0;
}

int mg_cancel_check(mg_cancel *c)
{
    if (!c)
        return 0;
    if (c->stopped)
        return 1; /* left stays 0: every later tick lands here and stops at once */
    c->left = MG_CANCEL_EVERY;
    if (c->poll && c->poll(c->ctx)) {
        c->stopped = 1;
        c->left = 0;
    }
    return c->stopped;
}
