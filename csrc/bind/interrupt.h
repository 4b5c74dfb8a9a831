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
 *
 * A time budget rides on the same poll: after mg_py_interrupt_set_deadline(&pi, seconds)
 * every poll (each mg_cancel_check, or every MG_CANCEL_EVERY ticks) also reads the clock
 * and stops the work once the budget is spent, setting `timed_out`; that is not an error
 * (mg_py_interrupted returns 0 for it, no exception is set), and a binding whose algorithm
 * keeps what it did so far (MCTS trees, the playout UCT, the Hex solver) returns it.
 */
#ifndef MG_BIND_INTERRUPT_H
#define MG_BIND_INTERRUPT_H

#include "state.h"
#include "../cancel.h"

#define MG_PY_INTERRUPT_SECONDS 0.05

typedef struct mg_py_interrupt {
    mg_cancel cancel;
    double next_check;   /* monotonic seconds of the next signal check */
    double deadline;     /* monotonic seconds at which to stop; 0: no time budget */
    int timed_out;       /* 1 once the poll stopped the work for the deadline */
} mg_py_interrupt;

/* Prepare `pi` (with the GIL held). */
void mg_py_interrupt_init(mg_py_interrupt *pi);
/* 1 if `v` is a valid time budget argument (finite, >= 0; 0: none), else 0 with a ValueError naming
 * the function `fn` (NULL: none) and the value. */
int mg_py_max_seconds_arg(const char *fn, double v);

/* Give the work a time budget of `max_seconds` from now (<= 0: none). */
void mg_py_interrupt_set_deadline(mg_py_interrupt *pi, double max_seconds);
/* With the GIL held, after the work: 1 if a signal handler stopped it (its exception is
 * set; KeyboardInterrupt if none is), else 0 (also when only the time budget stopped it:
 * then pi->timed_out is 1). */
int mg_py_interrupted(const mg_py_interrupt *pi);

#endif
