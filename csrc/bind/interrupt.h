/*
 * interrupt.h - Ctrl-C for long C work run without the GIL (see csrc/cancel.h).
 *
 * A binding that runs a long C call with the GIL released passes `&pi.cancel` to it; the
 * poll re-acquires the GIL (PyGILState_Ensure) at most every MG_PY_INTERRUPT_SECONDS and
 * runs PyErr_CheckSignals(), so a pending SIGINT (Ctrl-C, Jupyter's "interrupt kernel")
 * raises KeyboardInterrupt from the Python signal handler and stops the C work; between two
 * such checks a poll is one monotonic clock read.  Signal handlers run only in the main
 * thread: in other threads the work cannot be interrupted (as in Python itself).
 *
 *     mg_py_interrupt pi;
 *     mg_py_interrupt_init(&pi);
 *     Py_BEGIN_ALLOW_THREADS
 *     r = long_work(..., &pi.cancel);
 *     Py_END_ALLOW_THREADS
 *     if (mg_py_interrupted(&pi))
 *         return NULL;          (the handler's exception, usually KeyboardInterrupt, is set)
 */
#ifndef MG_BIND_INTERRUPT_H
#define MG_BIND_INTERRUPT_H

#include "state.h"
#include "../cancel.h"

#define MG_PY_INTERRUPT_SECONDS 0.05

typedef struct mg_py_interrupt {
    mg_cancel cancel;
    double next_check;   /* monotonic seconds of the next signal check */
} mg_py_interrupt;

/* Prepare `pi` (with the GIL held). */
void mg_py_interrupt_init(mg_py_interrupt *pi);
/* With the GIL held, after the work: 1 if a signal handler stopped it (its exception is
 * set; KeyboardInterrupt if none is), else 0. */
int mg_py_interrupted(const mg_py_interrupt *pi);

#endif
