/*
 * move_cache.c - the move string cache (move_cache.h): interned move strs per game, board size and action id, and
 * the interned game names, in slots that the module state holds (core_state.h).
 */
#include "move_cache.h"

#include <string.h>

mg_py_move_strs *mg_py_move_strs_find(mg_py_move_strs *slots, const mg_game *g, int board_size)
{
    if (!slots)
        return NULL;
    for (int i = 0; i < MG_PY_MOVE_STR_SLOTS; i++) {
        mg_py_move_strs *c = &slots[i];
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

PyObject *mg_py_move_strs_game_name(mg_py_move_strs *c, const mg_game *g)
{
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
