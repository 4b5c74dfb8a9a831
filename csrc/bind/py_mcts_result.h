/*
 * py_mcts_result.h - mavgame._core.MCTSResult (py_mcts_result.c): a copy of what an MCTS search left at the root
 * of its tree (the root edges, the principal variation, the counters), taken in one C call, from which
 * mavgame.search.results.SearchResult builds its fields on first read.  Also the array and dict builders that
 * MCTSTree's own result methods (py_mcts.c) share with it.
 */
#ifndef MG_BIND_PY_MCTS_RESULT_H
#define MG_BIND_PY_MCTS_RESULT_H

#include "state.h"

#include "../search/mcts.h"

/* A new MCTSResult of tree `m` as it is now: state_tracking as the tree's mode (the root and pv moves are then
 * copied as strs), `timed_out` the search's flag, `root` any object it keeps for its reader (engine mode: the
 * root position, to write the moves in; may be None), pv of at most `max_pv` moves.  NULL with an exception. */
PyObject *mg_py_mcts_result_new(const mg_mcts *m, int state_tracking, int timed_out, PyObject *root, int max_pv);

/* (actions int32, visits int64, q float64, prior float32, values float32, hallucinated bool) arrays, each of n
 * entries copied from the buffers (what MCTSTree.root_edges() returns).  NULL with an exception. */
PyObject *mg_py_root_edge_arrays(int n, const int32_t *actions, const uint32_t *visits, const double *q,
                                 const float *prior, const float *values, const uint8_t *hallucinated);

/* A new float64 array of a[0..n). */
PyObject *mg_py_float64_array(const double *a, int n);

/* MCTSTree.stats()'s dict of `s`: its 15 counters, in their order.  NULL with an exception. */
PyObject *mg_py_mcts_stats_dict(const mg_mcts_stats *s);

/* Ready the MCTSResult and MCTSResultField types and add them to module m: 0, or -1 with an exception. */
int mg_bind_mcts_result(PyObject *m);

#endif
