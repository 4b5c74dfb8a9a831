/*
 * py_mcts_tree.h - the C tree inside a mavgame._core.MCTSTree object (py_mcts.c), for bindings that run
 * a tree's search themselves (py_mcts_multi.c: many trees searched together).
 */
#ifndef MG_BIND_PY_MCTS_TREE_H
#define MG_BIND_PY_MCTS_TREE_H

#include "state.h"

#include "../search/mcts.h"

/* Claim the tree of MCTSTree `o` (argument `what` in messages) for a search: 0 with *m and *g (its game,
 * NULL in state tracking) and the tree marked busy (as during MCTSTree.search), or -1 with a TypeError
 * (not an MCTSTree), ValueError (not initialised) or RuntimeError (in use) set. */
int mg_py_mcts_claim(PyObject *o, const char *what, mg_mcts **m, const mg_game **g);
/* Release a tree claimed by mg_py_mcts_claim. */
void mg_py_mcts_release(PyObject *o);

#endif
