/*
 * move_cache.h - the move string cache of the binding (move_cache.c): one interned str per action id of each game
 * and board size, kept in the module state (core_state.h), so that State.legal_moves, State.action_to_str,
 * State.game and _core.legal_move_objects hand out cached objects instead of making new strs.
 */
#ifndef MG_BIND_MOVE_CACHE_H
#define MG_BIND_MOVE_CACHE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../game.h"

/* The move strings of one game and board size, for State.legal_moves and action_to_str: one interned str per
 * action id, made when the action's text is first asked for, so that a move list makes no new str objects.
 * A move's text can depend on the position as well as the action (standard chess writes a king-takes-rook
 * castling action as the king's two-square move, e1h1 as "e1g1", while the same action id of a rook on e1 is
 * "e1h1"): a cached str is used only when it is the text action_to_str wrote now.  Each action has room for two
 * texts (the second array made when a game first writes an action a second way); a third would be a new str per
 * call. */
typedef struct mg_py_move_strs {
    const mg_game *game;   /* NULL: a free slot */
    int board_size;
    PyObject *game_name;   /* the interned str of game->name (State.game), NULL until first asked for */
    int32_t n;             /* game->num_actions */
    PyObject **s;          /* [n]: the str of each action (a strong reference), NULL until first asked for */
    PyObject **alt;        /* [n] or NULL: the action's other text, where the position changes it */
} mg_py_move_strs;

/* Games x board sizes with a move string cache (more share no cache: their strs are made per call). */
#define MG_PY_MOVE_STR_SLOTS 32

/* The cache of game `g` at `board_size` among the MG_PY_MOVE_STR_SLOTS `slots` (the module state's: core_state.h's
 * mg_py_move_strs_of), made on first use; NULL (no exception) if there is none (slots NULL or full, no memory):
 * mg_py_move_str then makes a new str each time. */
mg_py_move_strs *mg_py_move_strs_find(mg_py_move_strs *slots, const mg_game *g, int board_size);

/* The str of a text buf[0..len) not (yet) cached for action `a` of cache `c` (may be NULL): made, and kept if one
 * of the action's two slots is free.  NULL with an exception (no memory). */
PyObject *mg_py_move_str_new(mg_py_move_strs *c, int32_t a, const char *buf, size_t len);

/* 1 if the ASCII str `s` is the text buf[0..len) (a move text has a few characters: no memcmp call). */
static inline int mg_py_same_text(PyObject *s, const char *buf, size_t len)
{
    if ((size_t)PyUnicode_GET_LENGTH(s) != len)
        return 0;
    const Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
    for (size_t i = 0; i < len; i++)
        if (d[i] != (Py_UCS1)buf[i])
            return 0;
    return 1;
}

/* A new reference to the str of action `a` whose text action_to_str wrote as buf[0..len): a cached one if its
 * text is the same, else a new one (cached if a slot is free).  NULL with an exception (no memory). */
static inline PyObject *mg_py_move_str(mg_py_move_strs *c, int32_t a, const char *buf, size_t len)
{
    if (c && a >= 0 && a < c->n) {
        PyObject *s = c->s[a];
        if (s && mg_py_same_text(s, buf, len))
            return Py_NewRef(s);
        if (s && c->alt && (s = c->alt[a]) && mg_py_same_text(s, buf, len))
            return Py_NewRef(s);
    }
    return mg_py_move_str_new(c, a, buf, len);
}

/* A new reference to the interned str of g->name, kept in g's cache `c` (made each call where `c` is NULL).  NULL
 * with an exception. */
PyObject *mg_py_move_strs_game_name(mg_py_move_strs *c, const mg_game *g);

/* Release what one cache slot holds and clear it. */
void mg_py_move_strs_free(mg_py_move_strs *c);

#endif
