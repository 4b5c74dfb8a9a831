/*
 * move_cache.c - the move string cache (move_cache.h): interned move strs per game, board size and action id,
 * the interned game names, and _core.legal_move_objects, which maps the cached strs to the chess family's Move
 * objects.
 */
#include "move_cache.h"
#include "state.h"

#include <string.h>

/* The move string cache of game `g` at `board_size`, made on first use; NULL (no exception) if there is none
 * (no module state, the slots full, no memory): mg_py_move_str then makes a new str each time. */
mg_py_move_strs *mg_py_move_strs_of(const mg_game *g, int board_size)
{
    mg_py_core_state *cs = mg_py_core();
    if (!cs)
        return NULL;
    for (int i = 0; i < MG_PY_MOVE_STR_SLOTS; i++) {
        mg_py_move_strs *c = &cs->move_strs[i];
        if (c->game == g && c->board_size == board_size)
            return c;
        if (!c->game) {
            PyObject **s = PyMem_Calloc(g->num_actions > 0 ? (size_t)g->num_actions : 1, sizeof *s);
            if (!s)
                return NULL;
            c->game = g;
            c->board_size = board_size;
            c->n = g->num_actions;
            c->s = s;
            return c;
        }
    }
    return NULL;
}

/* The str of a text not (yet) cached for action `a`: made, interned and kept in the first free one of the action's
 * two slots (a position that writes the action another way fills the second, `alt`, made then). */
PyObject *mg_py_move_str_new(mg_py_move_strs *c, int32_t a, const char *buf, size_t len)
{
    PyObject *s = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
    if (!s || !c || a < 0 || a >= c->n || len == 0)
        return s;
    PyObject **slot = &c->s[a];
    if (*slot) {
        if (!c->alt && !(c->alt = PyMem_Calloc((size_t)c->n, sizeof *c->alt)))
            return s; /* no memory for the second texts: this one uncached */
        slot = &c->alt[a];
        if (*slot)
            return s; /* a third text: uncached */
    }
    PyUnicode_InternInPlace(&s);
    if (PyUnicode_IS_ASCII(s)) /* cached strs are ASCII: one byte per character, as the C text (mg_py_same_text) */
        *slot = Py_NewRef(s);
    return s;
}

PyObject *mg_py_game_name(const mg_game *g, int board_size)
{
    mg_py_move_strs *c = mg_py_move_strs_of(g, board_size);
    if (!c)
        return PyUnicode_FromString(g->name);
    if (!c->game_name && !(c->game_name = PyUnicode_InternFromString(g->name)))
        return NULL;
    return Py_NewRef(c->game_name);
}

void mg_py_move_strs_free(mg_py_move_strs *c)
{
    for (int32_t a = 0; c->s && a < c->n; a++) {
        Py_CLEAR(c->s[a]);
        if (c->alt)
            Py_CLEAR(c->alt[a]);
    }
    Py_CLEAR(c->game_name);
    PyMem_Free(c->s);
    PyMem_Free(c->alt);
    memset(c, 0, sizeof *c);
}

/* _core.legal_move_objects(state, cache) -> list: cache[text] for the text of each legal move, in move generation
 * order (the chess family's Move objects: mavgame/games/chess.py keeps them in a dict subclass whose __missing__
 * makes one); the texts are the cached strs of State.legal_moves, looked up by their cached hashes. */
PyObject *mg_py_legal_move_objects(PyObject *Py_UNUSED(mod), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "legal_move_objects(state, cache) takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    mg_py_state *self = mg_py_state_arg(args[0], "state");
    if (!self)
        return NULL;
    PyObject *cache = args[1];
    if (!PyDict_Check(cache)) {
        PyErr_Format(PyExc_TypeError, "legal_move_objects: cache must be a dict, not %.100s", Py_TYPE(cache)->tp_name);
        return NULL;
    }
    int32_t moves[MG_MAX_MOVES];
    int n = self->game->legal_actions(self->state, moves);
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    mg_py_move_strs *strs = mg_py_move_strs_of(self->game, self->cfg.board_size);
    for (int i = 0; i < n; i++) {
        char buf[MG_MAX_MOVE_STR];
        size_t len = self->game->action_to_str(self->state, moves[i], buf, sizeof buf);
        PyObject *s = mg_py_move_str(strs, moves[i], buf, len);
        PyObject *m = s ? PyDict_GetItemWithError(cache, s) : NULL; /* borrowed */
        if (m)
            Py_INCREF(m);
        else if (s && !PyErr_Occurred())
            m = PyObject_GetItem(cache, s); /* a miss: __missing__ (or KeyError for a plain dict) */
        Py_XDECREF(s);
        if (!m) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, m);
    }
    return list;
}
