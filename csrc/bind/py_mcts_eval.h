/*
 * py_mcts_eval.h - evaluator objects for searches bound to Python (py_mcts_eval.c): capsules of
 * C evaluators and the Python-callable bridge, and running a search with either.
 */
#ifndef MG_BIND_PY_MCTS_EVAL_H
#define MG_BIND_PY_MCTS_EVAL_H

#include "state.h"

#include "../cancel.h"
#include "../search/evaluator.h"

#define MG_EVAL_CAPSULE "mavgame.mcts_evaluator"

/* The search to run: MG_OK or MG_ERR with a message (called without the GIL). */
typedef int (*mg_py_eval_work)(void *ctx, const mg_evaluator *ev, mg_cancel *cancel, char *err, size_t errlen);

/* Run work(work_ctx, ev, cancel, ...) with the evaluator object `evo`: a capsule of a C evaluator (the GIL
 * released for the whole call; RuntimeError if another search uses it) or a Python callable
 * fn(batch, timeout) -> (outputs, seq), bridged with MAV prompts and output reading for game g
 * (cfg, state_tracking, spec: NULL for the mode's default; the GIL released between its calls).
 * max_seconds > 0: a time budget; when it stops the work, *timed_out is set and MG_OK returned.
 * MG_OK, or MG_ERR with a Python exception set or the work's message in err. */
int mg_py_with_evaluator(PyObject *evo, const mg_game *g, const mg_config *cfg, int state_tracking, const char *spec,
                         double max_seconds, mg_py_eval_work work, void *work_ctx, int *timed_out, char *err,
                         size_t errlen);

/* None for NULL, else the text (invalid UTF-8 replaced). */
PyObject *mg_py_str_or_none(const char *s);
/* A new int32 array of a[0..n). */
PyObject *mg_py_int32_array(const int32_t *a, int n);

#endif
