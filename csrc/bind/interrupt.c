/* interrupt.c - Ctrl-C for long C work run without the GIL (see interrupt.h). */
#include "interrupt.h"
#include "../clock.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

/* mg_cancel poll: called without the GIL by the C work. */
static int poll_signals(void *ctx)
{
    mg_py_interrupt *pi = ctx;
    double now = mg_now_seconds();
    if (pi->deadline > 0.0 && now >= pi->deadline) {
        pi->timed_out = 1;
        return 1;
    }
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
    pi->next_check = mg_now_seconds() + MG_PY_INTERRUPT_SECONDS;
    pi->deadline = 0.0;
    pi->timed_out = 0;
}

void mg_py_interrupt_set_deadline(mg_py_interrupt *pi, double max_seconds)
{
    pi->deadline = max_seconds > 0.0 ? mg_now_seconds() + max_seconds : 0.0;
}

int mg_py_interrupted(const mg_py_interrupt *pi)
{
    if (!pi->cancel.stopped)
        return 0;
    if (pi->timed_out && !PyErr_Occurred())
        return 0; /* the time budget, not a signal */
    if (!PyErr_Occurred())
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    return 1;
}

int mg_py_max_seconds_arg(const char *fn, double v)
{
    if (v >= 0.0 && isfinite(v))
        return 1;
    char msg[128];
    snprintf(msg, sizeof msg, "%s%smax_seconds must be finite and >= 0 (0: no limit), got %g", fn ? fn : "",
             fn ? ": " : "", v);
    PyErr_SetString(PyExc_ValueError, msg);
    return 0;
}
