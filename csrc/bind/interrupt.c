/* interrupt.c - Ctrl-C for long C work run without the GIL (see interrupt.h). */
#include "interrupt.h"

#include <time.h>

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* mg_cancel poll: called without the GIL by the C work. */
static int poll_signals(void *ctx)
{
    mg_py_interrupt *pi = ctx;
    double now = monotonic_seconds();
    if (now < pi->next_check)
        return 0;
    pi->next_check = now + MG_PY_INTERRUPT_SECONDS;
    PyGILState_STATE gs = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0; /* the handler's exception stays set on this thread */
    PyGILState_Release(gs);
    return stop;
}

void mg_py_interrupt_init(mg_py_interrupt *pi)
{
    mg_cancel_init(&pi->cancel, poll_signals, pi);
    pi->next_check = monotonic_seconds() + MG_PY_INTERRUPT_SECONDS;
}

int mg_py_interrupted(const mg_py_interrupt *pi)
{
    if (!pi->cancel.stopped)
        return 0;
    if (!PyErr_Occurred())
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    return 1;
}
