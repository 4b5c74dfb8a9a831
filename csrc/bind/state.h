/*
 * state.h - the CPython binding of the game interface: mavgame._core.State.
 *
 * Other binding files (py_chess.c, py_connect_four.c, ...) take State objects as
 * arguments; they use these helpers to reach the C game and its state bytes.
 */
#ifndef MG_BIND_STATE_H
#define MG_BIND_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../game.h"
#include "py_args.h"

typedef struct mg_py_state {
    PyObject_HEAD
    const mg_game *game;     /* NULL until __init__ ran */
    mg_config cfg;
    unsigned char *state;    /* game->state_size bytes: the current position */
    unsigned char *root;     /* the position at construction (for pickling and replay; in the block of state) */
    unsigned char *undo;     /* cap * undo_size bytes, one record per pushed action */
    int32_t *actions;        /* the pushed actions */
    Py_ssize_t ply, cap;
} mg_py_state;

extern PyTypeObject mg_py_state_type;

/* The binding's caches in the module state: the move strings (move_cache.h), the interned names and dict
 * templates (core_state.h). */
#include "core_state.h"

/* Returns the State behind `o`, or NULL with TypeError (not a State) or ValueError
 * (not initialised) set; `what` names the argument in the message. */
mg_py_state *mg_py_state_arg(PyObject *o, const char *what);

/* The legal action for `move` (an int action or a move string) in `s`; 0 on success, -1 with
 * ValueError (malformed or illegal, naming the move and the position) or TypeError set. */
int mg_py_state_parse_move(mg_py_state *s, PyObject *move, int32_t *out);

/* The UTF-8 text of a str argument; NULL with TypeError (not a str) or ValueError (contains a
 * NUL character, which C would silently cut the text at) naming `what` and the value. */
const char *mg_py_text_arg(PyObject *o, const char *what);

/* _core.observation_tensors(states): the observation tensors of a batch of states of one game
 * (and board size) as one float32 array (n, planes, rows, cols), filled in C. */
PyObject *mg_py_observation_tensors(PyObject *mod, PyObject *arg);

/* Raise ValueError with the C error text. Returns NULL. */
PyObject *mg_py_value_error(const char *msg);

/* Raise the python-chess style error (mavgame.errors, all ValueError subclasses) for a move error
 * text, by its first word, which every game's action_from_str and the SAN parser begin with:
 * "illegal ..." IllegalMoveError, "ambiguous ..." AmbiguousMoveError, else InvalidMoveError.
 * Returns NULL. */
PyObject *mg_py_move_error(const char *msg);

/* Add the ready type `t` to module m as `name`: 0, or -1 with an exception (the reference released). */
int mg_py_add_type(PyObject *m, const char *name, PyTypeObject *t);

int mg_bind_state(PyObject *m);

#endif
