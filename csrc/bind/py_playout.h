/*
 * py_playout.h - the random-playout counter shared by py_playout.c (random_playouts, any game)
 * and py_hex.c (hex_random_playouts, by filling the board).
 */
#ifndef MG_BIND_PY_PLAYOUT_H
#define MG_BIND_PY_PLAYOUT_H

#include "state.h"

struct mg_rng;

typedef int (*mg_py_playout_fn)(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies);

/* (first_wins, second_wins, draws, plies) of n playouts of `playout` from s (copied first; the
 * GIL is released, Ctrl-C stops it); NULL with an exception. */
PyObject *mg_py_playout_counts(const mg_py_state *s, long long n, unsigned long long seed, int max_plies,
                               mg_py_playout_fn playout);

#endif
