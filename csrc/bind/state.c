/*
 * state.c - mavgame._core.State: any game of the registry as a Python object.
 *
 * The Python game classes (mavgame.Chess, mavgame.ConnectFour, ...) subclass this type,
 * so the hot methods (push, pop, legal_actions, ...) are direct C calls.
 */
#include "state.h"
#include "interrupt.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

PyObject *mg_py_value_error(const char *msg)
{
    /* A C message quotes bad input cut to a length, which can split a UTF-8 sequence: such
     * bytes become U+FFFD instead of turning the ValueError into a UnicodeDecodeError. */
    PyObject *s = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (s) {
        PyErr_SetObject(PyExc_ValueError, s);
        Py_DECREF(s);
    }
    return NULL;
}

int mg_py_add_type(PyObject *m, const char *name, PyTypeObject *t)
{
    if (PyType_Ready(t) < 0)
        return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

const char *mg_py_text_arg(PyObject *o, const char *what)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_ssize_t size;
    const char *s = PyUnicode_AsUTF8AndSize(o, &size);
    if (s && (Py_ssize_t)strlen(s) != size) {
        PyErr_Format(PyExc_ValueError, "%s %.200R contains a NUL character", what, o);
        return NULL;
    }
    return s;
}

PyObject *mg_py_move_error(const char *msg)
{
    const char *name = strncmp(msg, "illegal", 7) == 0     ? "IllegalMoveError"
                       : strncmp(msg, "ambiguous", 9) == 0 ? "AmbiguousMoveError"
                                                           : "InvalidMoveError";
    /* Looked up on the error path only (the types live in Python: no C global holds them). */
    PyObject *mod = PyImport_ImportModule("mavgame.errors");
    PyObject *type = mod ? PyObject_GetAttrString(mod, name) : NULL;
    Py_XDECREF(mod);
    if (!type || !PyExceptionClass_Check(type)) {
        Py_XDECREF(type);
        PyErr_Clear();
        return mg_py_value_error(msg);
    }
    PyObject *s = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (s) {
        PyErr_SetObject(type, s);
        Py_DECREF(s);
    }
    Py_DECREF(type);
    return NULL;
}

mg_py_state *mg_py_state_arg(PyObject *o, const char *what)
{
    if (!PyObject_TypeCheck(o, &mg_py_state_type)) {
        PyErr_Format(PyExc_TypeError, "%s must be a mavgame game state, not %.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    mg_py_state *s = (mg_py_state *)o;
    if (!s->game) {
        PyErr_Format(PyExc_ValueError, "%s is not initialised (its __init__ was not called)", what);
        return NULL;
    }
    return s;
}

#define CHECK_INIT(self)                                                                       \
    do {                                                                                       \
        if (!(self)->game) {                                                                   \
            PyErr_SetString(PyExc_ValueError, "game state is not initialised (call __init__)"); \
            return NULL;                                                                       \
        }                                                                                      \
    } while (0)

static void state_free_buffers(mg_py_state *self)
{
    PyMem_Free(self->state); /* root is in the same block */
    PyMem_Free(self->undo);
    PyMem_Free(self->actions);
    self->state = self->root = self->undo = NULL;
    self->actions = NULL;
    self->ply = self->cap = 0;
    self->game = NULL;
}

static void state_dealloc(mg_py_state *self)
{
    state_free_buffers(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Allocate the buffers for `g` (history capacity `cap`); on failure sets MemoryError. */
static int state_alloc(mg_py_state *self, const mg_game *g, Py_ssize_t cap)
{
    size_t ss = g->state_size, us = g->undo_size ? g->undo_size : 1;
    if (cap < 16)
        cap = 16;
    /* the position and the root in one block (the root at the next 16-byte boundary: a state may hold words
     * that want their alignment), the history in two that grow */
    size_t so = (ss + 15) & ~(size_t)15;
    self->state = PyMem_Calloc(2, so);
    self->root = self->state ? self->state + so : NULL;
    self->undo = PyMem_Calloc((size_t)cap, us);
    self->actions = PyMem_Calloc((size_t)cap, sizeof(int32_t));
    if (!self->state || !self->undo || !self->actions) {
        state_free_buffers(self);
        PyErr_NoMemory();
        return -1;
    }
    self->game = g;
    self->cap = cap;
    self->ply = 0;
    return 0;
}

static int state_init(mg_py_state *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"game", "text", "board_size", "flags", NULL};
    PyObject *name_obj, *text_obj = Py_None;
    int board_size = 0;
    long long flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO&O&:State", kwlist, &name_obj, &text_obj,
                                     MG_PY_C_INT("board_size", &board_size),
                                     MG_PY_INT("flags", LLONG_MIN, LLONG_MAX, &flags)))
        return -1;
    const char *name = mg_py_text_arg(name_obj, "game");
    if (!name)
        return -1;
    const mg_game *g = mg_game_by_name(name);
    if (!g) {
        PyErr_Format(PyExc_ValueError, "unknown game '%s'", name);
        return -1;
    }
    if (flags < 0 || flags > (long long)UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: unknown rule flags %lld (a bit set of the FLAG_* constants)", name,
                     flags);
        return -1;
    }
    const char *text = NULL;
    if (text_obj != Py_None) {
        if (!PyUnicode_Check(text_obj)) {
            PyErr_Format(PyExc_TypeError, "text must be a str or None, not %.100s", Py_TYPE(text_obj)->tp_name);
            return -1;
        }
        Py_ssize_t size;
        text = PyUnicode_AsUTF8AndSize(text_obj, &size);
        if (!text)
            return -1;
        if ((Py_ssize_t)strlen(text) != size) {
            PyErr_Format(PyExc_ValueError, "%s text %R contains a NUL character", name, text_obj);
            return -1;
        }
        if (strlen(text) >= MG_MAX_TEXT) {
            PyErr_Format(PyExc_ValueError, "%s text is too long (%zu characters)", name, strlen(text));
            return -1;
        }
    }
    mg_config cfg = {board_size, (uint32_t)flags};
    char err[MG_ERRLEN] = "";
    if (mg_config_check(g, &cfg, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    /* Build into a scratch buffer first so that a failed re-__init__ leaves the object as it was. */
    unsigned char scratch[MG_MAX_STATE];
    int rc = text ? g->from_text(scratch, &cfg, text, err, sizeof err) : g->init(scratch, &cfg, err, sizeof err);
    if (rc != MG_OK) {
        mg_py_value_error(err[0] ? err : "invalid game state");
        return -1;
    }
    state_free_buffers(self);
    if (state_alloc(self, g, 16) < 0)
        return -1;
    self->cfg = cfg;
    memcpy(self->state, scratch, g->state_size);
    memcpy(self->root, scratch, g->state_size);
    return 0;
}

/* ---- pushing and popping ---------------------------------------------------------- */

static int state_grow(mg_py_state *self)
{
    Py_ssize_t ncap = self->cap * 2;
    size_t us = self->game->undo_size ? self->game->undo_size : 1;
    unsigned char *nu = PyMem_Realloc(self->undo, (size_t)ncap * us);
    if (!nu) {
        PyErr_NoMemory();
        return -1;
    }
    self->undo = nu;
    int32_t *na = PyMem_Realloc(self->actions, (size_t)ncap * sizeof(int32_t));
    if (!na) {
        PyErr_NoMemory();
        return -1;
    }
    self->actions = na;
    self->cap = ncap;
    return 0;
}

/* How many legal moves a move error lists before "... (N in all)". */
#define MOVE_ERROR_LIST 40

/* A move error (mg_py_move_error) for a move that cannot be played in the current position, the same for every
 * game: `what` (which names the move or action and says why), then the legal moves ("; legal moves: 1, 2, 3",
 * the first MOVE_ERROR_LIST and the count of all beyond that; "none (the game is over)").  The chess family's
 * messages also name the position by its FEN (" in position '<FEN>'", once: a message of its own that already
 * ends with " in <FEN>" keeps it); the other games' texts are mavgame's own board strings, no help to a person
 * at a prompt, and are left out. */
static int move_error(mg_py_state *self, const char *what)
{
    const mg_game *g = self->game;
    char text[MG_MAX_TEXT];
    size_t tl = g->to_text(self->state, text, sizeof text);
    size_t wl = strlen(what);
    if (wl >= tl + 4 && memcmp(what + wl - tl, text, tl) == 0 && memcmp(what + wl - tl - 4, " in ", 4) == 0)
        wl -= tl + 4;
    char legal[MOVE_ERROR_LIST * (MG_MAX_MOVE_STR + 2) + 64];
    int32_t moves[MG_MAX_MOVES];
    int n = g->legal_actions(self->state, moves);
    size_t ll = 0;
    legal[0] = '\0';
    for (int i = 0; i < n && i < MOVE_ERROR_LIST; i++) {
        char ms[MG_MAX_MOVE_STR];
        if (!g->action_to_str(self->state, moves[i], ms, sizeof ms))
            snprintf(ms, sizeof ms, "%d", (int)moves[i]);
        ll += (size_t)snprintf(legal + ll, sizeof legal - ll, "%s%s", i ? ", " : "", ms);
    }
    if (n > MOVE_ERROR_LIST)
        snprintf(legal + ll, sizeof legal - ll, ", ... (%d in all)", n);
    else if (n == 0)
        snprintf(legal, sizeof legal, "none (the game is over)");
    char msg[MG_ERRLEN + MG_MAX_TEXT + sizeof legal + 48];
    const char *sep = "; legal moves: ";
    if (n == 0 && strstr(what, "the game is over")) { /* said already */
        sep = "";
        legal[0] = '\0';
    }
    if (g->san) /* the chess family: FEN, a notation people read */
        snprintf(msg, sizeof msg, "%.*s in position '%s'%s%s", (int)wl, what, text, sep, legal);
    else
        snprintf(msg, sizeof msg, "%.*s%s%s", (int)wl, what, sep, legal);
    mg_py_move_error(msg);
    return -1;
}

/* repr(o) into buf (buflen >= 8); one too long is cut on a UTF-8 character boundary and ends in "..." (a huge
 * int's digits).  -1 with an exception if repr fails. */
static int repr_text(PyObject *o, char *buf, size_t buflen)
{
    PyObject *r = PyObject_Repr(o);
    Py_ssize_t n;
    const char *rs = r ? PyUnicode_AsUTF8AndSize(r, &n) : NULL;
    if (rs) {
        size_t len = (size_t)n;
        if (len >= buflen) {
            len = buflen - 4;
            while (len > 0 && ((unsigned char)rs[len] & 0xC0) == 0x80)
                len--;
        }
        memcpy(buf, rs, len);
        strcpy(buf + len, (size_t)n >= buflen ? "..." : "");
    }
    Py_XDECREF(r);
    return rs ? 0 : -1;
}

/* The move error for a move string no game parser can read (`why`: it has a NUL character, or a lone surrogate
 * that has no UTF-8 form): the move is shown as the repr of its first MG_QUOTE_MAX characters, "..." after it if
 * cut (the C parsers' quoting, mg_quote_str, needs UTF-8 text). */
static int unreadable_move(mg_py_state *self, PyObject *move, const char *why)
{
    Py_ssize_t n = PyUnicode_GetLength(move);
    PyObject *head = PyUnicode_Substring(move, 0, n > MG_QUOTE_MAX ? MG_QUOTE_MAX : n);
    char rs[10 * MG_QUOTE_MAX + 8], err[sizeof rs + 128];   /* an escape as '\U0010ffff' has 10 bytes */
    int rc = head ? repr_text(head, rs, sizeof rs) : -1;
    Py_XDECREF(head);
    if (rc < 0)
        return -1;
    snprintf(err, sizeof err, "invalid %s move %s%s: %s", self->game->name, rs, n > MG_QUOTE_MAX ? "..." : "", why);
    return move_error(self, err);
}

/* The UTF-8 text of a move string, NULL with an exception set on failure; NULL with no exception set if it is
 * not valid Unicode (a lone surrogate: it has no UTF-8 form), which callers report as a bad move. */
static const char *move_utf8(PyObject *move, Py_ssize_t *size)
{
    const char *s = PyUnicode_AsUTF8AndSize(move, size);
    if (!s && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        PyErr_Clear();
    return s;
}

/* Parse an int action or a move string into a legal action; -1 with an exception on failure. */
int mg_py_state_parse_move(mg_py_state *self, PyObject *move, int32_t *out)
{
    const mg_game *g = self->game;
    char err[MG_ERRLEN] = "";
    if (PyUnicode_Check(move)) {
        Py_ssize_t size;
        const char *s = move_utf8(move, &size);
        if (!s)
            return PyErr_Occurred() ? -1 : unreadable_move(self, move, "not valid Unicode (a lone surrogate)");
        if ((Py_ssize_t)strlen(s) != size)
            return unreadable_move(self, move, "contains a NUL character");
        if (strlen(s) >= 64) {
            snprintf(err, sizeof err, "invalid %s move %s: too long", g->name,
                     MG_QUOTE(s, MG_QUOTE_MAX));
            return move_error(self, err);
        }
        if (g->action_from_str(self->state, s, out, err, sizeof err) != MG_OK) {
            if (!err[0])
                snprintf(err, sizeof err, "invalid %s move '%s'", g->name, s);
            return move_error(self, err);
        }
        return 0;
    }
    if (PyLong_Check(move) || PyIndex_Check(move)) {
        long long v = PyLong_AsLongLong(move);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            char rs[64];
            if (repr_text(move, rs, sizeof rs) < 0)
                return -1;
            snprintf(err, sizeof err, "illegal %s action %s (out of range)", g->name, rs);
            return move_error(self, err);
        }
        if (v < 0 || v >= g->num_actions || !g->is_legal(self->state, (int32_t)v)) {
            char ms[MG_MAX_MOVE_STR];
            int32_t as_str;
            char num[32], serr[MG_ERRLEN];
            snprintf(num, sizeof num, "%lld", v);
            if ((v < 0 || v >= g->num_actions) &&
                g->action_from_str(self->state, num, &as_str, serr, sizeof serr) == MG_OK)
                /* Connect Four: actions are columns 0..6, move strings "1".."7". */
                snprintf(err, sizeof err, "illegal %s action %lld (not in 0..%d; the move string '%s' is action %d)",
                         g->name, v, (int)g->num_actions - 1, num, (int)as_str);
            else if (v < 0 || v >= g->num_actions)
                snprintf(err, sizeof err, "illegal %s action %lld (not in 0..%d)", g->name, v,
                         (int)g->num_actions - 1);
            else if (g->action_to_str(self->state, (int32_t)v, ms, sizeof ms))
                snprintf(err, sizeof err, "illegal %s action %lld ('%s')", g->name, v, ms);
            else
                snprintf(err, sizeof err, "illegal %s action %lld", g->name, v);
            return move_error(self, err);
        }
        *out = (int32_t)v;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a move must be an int action or a move string, not %.100s",
                 Py_TYPE(move)->tp_name);
    return -1;
}

static void state_push_unchecked(mg_py_state *self, int32_t a)
{
    const mg_game *g = self->game;
    g->make(self->state, a, self->undo + (size_t)self->ply * g->undo_size);
    self->actions[self->ply++] = a;
}

static PyObject *state_push(mg_py_state *self, PyObject *move)
{
    CHECK_INIT(self);
    int32_t a;
    if (mg_py_state_parse_move(self, move, &a) < 0)
        return NULL;
    if (self->ply == self->cap && state_grow(self) < 0)
        return NULL;
    state_push_unchecked(self, a);
    return PyLong_FromLong(a);
}

static PyObject *state_parse(mg_py_state *self, PyObject *move)
{
    CHECK_INIT(self);
    int32_t a;
    if (mg_py_state_parse_move(self, move, &a) < 0)
        return NULL;
    return PyLong_FromLong(a);
}

static PyObject *state_pop(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    if (self->ply == 0) {
        PyErr_SetString(PyExc_IndexError, "pop from a game state with no moves pushed");
        return NULL;
    }
    const mg_game *g = self->game;
    int32_t a = self->actions[--self->ply];
    g->unmake(self->state, a, self->undo + (size_t)self->ply * g->undo_size);
    return PyLong_FromLong(a);
}

/* ---- queries --------------------------------------------------------------------- */

static PyObject *state_legal_actions(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    int32_t moves[MG_MAX_MOVES];
    npy_intp n = self->game->legal_actions(self->state, moves);
    PyObject *arr = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!arr)
        return NULL;
    memcpy(PyArray_DATA((PyArrayObject *)arr), moves, (size_t)n * sizeof(int32_t));
    return arr;
}

static PyObject *state_num_legal_actions(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    int32_t moves[MG_MAX_MOVES];
    return PyLong_FromLong(self->game->legal_actions(self->state, moves));
}

static PyObject *state_legal_actions_mask(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    int32_t moves[MG_MAX_MOVES];
    int n = self->game->legal_actions(self->state, moves);
    npy_intp dim = self->game->num_actions;
    PyObject *arr = PyArray_ZEROS(1, &dim, NPY_BOOL, 0);
    if (!arr)
        return NULL;
    npy_bool *d = PyArray_DATA((PyArrayObject *)arr);
    for (int i = 0; i < n; i++)
        d[moves[i]] = 1;
    return arr;
}

/* ---- move strings (the cache: move_cache.c) ------------------------------------------------ */

/* The `legal_moves` property (python-chess's name is an attribute, not a method): a new list of the move strings
 * (the cached str of each move: no str is made in a position seen before). */
static PyObject *state_get_legal_moves(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    int32_t moves[MG_MAX_MOVES];
    int n = self->game->legal_actions(self->state, moves);
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    mg_py_move_strs *cache = mg_py_move_strs_of(self->game, self->cfg.board_size);
    for (int i = 0; i < n; i++) {
        char buf[MG_MAX_MOVE_STR];
        size_t len = self->game->action_to_str(self->state, moves[i], buf, sizeof buf);
        PyObject *s = mg_py_move_str(cache, moves[i], buf, len);
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyObject *state_is_legal(mg_py_state *self, PyObject *move)
{
    CHECK_INIT(self);
    int32_t a;
    if (PyUnicode_Check(move)) {
        Py_ssize_t size;
        const char *s = move_utf8(move, &size);
        char err[MG_ERRLEN];
        if (!s && PyErr_Occurred())
            return NULL;
        if (!s || strlen(s) >= 64 || (Py_ssize_t)strlen(s) != size)
            Py_RETURN_FALSE;
        return PyBool_FromLong(self->game->action_from_str(self->state, s, &a, err, sizeof err) == MG_OK);
    }
    if (!PyLong_Check(move)) {
        PyErr_Format(PyExc_TypeError, "a move must be an int action or a move string, not %.100s",
                     Py_TYPE(move)->tp_name);
        return NULL;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(move, &overflow);
    if (overflow || v < 0 || v >= self->game->num_actions)
        Py_RETURN_FALSE;
    return PyBool_FromLong(self->game->is_legal(self->state, (int32_t)v));
}

static PyObject *state_text(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    char buf[MG_MAX_TEXT];
    size_t n = self->game->to_text(self->state, buf, sizeof buf);
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
}

static PyObject *state_action_to_str(mg_py_state *self, PyObject *arg)
{
    CHECK_INIT(self);
    long long v;
    if (!MG_PY_INT_ARG(arg, "action", LLONG_MIN, LLONG_MAX, &v))
        return NULL;
    char buf[MG_MAX_MOVE_STR];
    size_t n = 0;
    if (v >= 0 && v < self->game->num_actions)
        n = self->game->action_to_str(self->state, (int32_t)v, buf, sizeof buf);
    if (n == 0) {
        PyErr_Format(PyExc_ValueError, "%lld is not a valid %s action", v, self->game->name);
        return NULL;
    }
    return mg_py_move_str(mg_py_move_strs_of(self->game, self->cfg.board_size), (int32_t)v, buf, n);
}

static PyObject *state_action_from_str(mg_py_state *self, PyObject *arg)
{
    CHECK_INIT(self);
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "move must be a str, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    return state_parse(self, arg);
}

static PyObject *state_outcome(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    int reason = MG_TERM_NONE;
    int r = self->game->outcome(self->state, &reason);
    return Py_BuildValue("(is)", r, mg_termination_name(reason));
}

static PyObject *state_result(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    return PyUnicode_FromString(mg_result_string(self->game->outcome(self->state, NULL)));
}

static PyObject *state_is_terminal(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    return PyBool_FromLong(self->game->outcome(self->state, NULL) != MG_ONGOING);
}

static PyObject *state_history(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    npy_intp n = self->ply;
    PyObject *arr = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!arr)
        return NULL;
    memcpy(PyArray_DATA((PyArrayObject *)arr), self->actions, (size_t)n * sizeof(int32_t));
    return arr;
}

static PyObject *state_root_text(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    char buf[MG_MAX_TEXT];
    size_t n = self->game->to_text(self->root, buf, sizeof buf);
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
}

/* ---- perft (the GIL is released; work happens on a private copy of the state) ----- */

static int depth_arg(PyObject *arg, int *depth)
{
    if (!MG_PY_C_INT_ARG(arg, "perft depth", depth))
        return -1;
    if (*depth < 0 || *depth > 64) {
        PyErr_Format(PyExc_ValueError, "perft depth must be in 0..64, got %d", *depth);
        return -1;
    }
    return 0;
}

static PyObject *state_perft(mg_py_state *self, PyObject *arg)
{
    CHECK_INIT(self);
    int depth;
    if (depth_arg(arg, &depth) < 0)
        return NULL;
    _Alignas(16) unsigned char copy[MG_MAX_STATE];
    memcpy(copy, self->state, self->game->state_size);
    const mg_game *g = self->game;
    uint64_t n;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    Py_BEGIN_ALLOW_THREADS
    n = mg_perft_cancel(g, copy, depth, &pi.cancel);
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi))
        return NULL;
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *state_perft_divide(mg_py_state *self, PyObject *arg)
{
    CHECK_INIT(self);
    int depth;
    if (depth_arg(arg, &depth) < 0)
        return NULL;
    if (depth < 1) {
        PyErr_SetString(PyExc_ValueError, "perft_divide needs depth >= 1");
        return NULL;
    }
    _Alignas(16) unsigned char copy[MG_MAX_STATE];
    memcpy(copy, self->state, self->game->state_size);
    const mg_game *g = self->game;
    int32_t moves[MG_MAX_MOVES];
    uint64_t counts[MG_MAX_MOVES];
    int n;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    Py_BEGIN_ALLOW_THREADS
    n = mg_perft_divide(g, copy, depth, moves, counts, &pi.cancel);
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi))
        return NULL;
    npy_intp dim = n;
    PyObject *acts = PyArray_SimpleNew(1, &dim, NPY_INT32);
    PyObject *cnts = PyArray_SimpleNew(1, &dim, NPY_UINT64);
    if (!acts || !cnts) {
        Py_XDECREF(acts);
        Py_XDECREF(cnts);
        return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)acts), moves, (size_t)n * sizeof(int32_t));
    memcpy(PyArray_DATA((PyArrayObject *)cnts), counts, (size_t)n * sizeof(uint64_t));
    return Py_BuildValue("(NN)", acts, cnts);
}

/* ---- returns (OpenSpiel's name; the adapter is mavgame.compat.openspiel) ---------------- */

static PyObject *state_returns(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    int r = self->game->outcome(self->state, NULL);
    double r0 = r == MG_P0_WINS ? 1.0 : r == MG_P1_WINS ? -1.0 : 0.0;
    double r1 = r == MG_P1_WINS ? 1.0 : r == MG_P0_WINS ? -1.0 : 0.0;
    return Py_BuildValue("[dd]", r0, r1);
}

/* ---- observation tensors ------------------------------------------------------------- */

static PyObject *state_observation_tensor(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    const mg_game *g = self->game;
    int shape[3];
    g->obs_shape(self->state, shape);
    npy_intp dims[3] = {shape[0], shape[1], shape[2]};
    PyObject *arr = PyArray_SimpleNew(3, dims, NPY_FLOAT32);
    if (!arr)
        return NULL;
    g->observation(self->state, PyArray_DATA((PyArrayObject *)arr));
    return arr;
}

/* _core.observation_tensors(states) -> float32 array (len(states), planes, rows, cols). */
PyObject *mg_py_observation_tensors(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "observation_tensors needs a sequence of game states");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    if (n == 0) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "observation_tensors needs at least one state (the shape depends on the game)");
        return NULL;
    }
    const mg_game *g = NULL;
    int shape[3] = {0, 0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "states[%zd]", i);
        mg_py_state *s = mg_py_state_arg(items[i], what);
        if (!s) {
            Py_DECREF(seq);
            return NULL;
        }
        int sh[3];
        s->game->obs_shape(s->state, sh);
        if (i == 0) {
            g = s->game;
            memcpy(shape, sh, sizeof shape);
        } else if (s->game != g || memcmp(sh, shape, sizeof sh) != 0) {
            PyErr_Format(PyExc_ValueError,
                         "observation_tensors: states[%zd] is a %s state with observations of shape (%d, %d, %d), "
                         "states[0] a %s state with (%d, %d, %d): a batch needs one game and one board size",
                         i, s->game->name, sh[0], sh[1], sh[2], g->name, shape[0], shape[1], shape[2]);
            Py_DECREF(seq);
            return NULL;
        }
    }
    npy_intp dims[4] = {n, shape[0], shape[1], shape[2]};
    PyObject *arr = PyArray_SimpleNew(4, dims, NPY_FLOAT32);
    if (!arr) {
        Py_DECREF(seq);
        return NULL;
    }
    float *out = PyArray_DATA((PyArrayObject *)arr);
    size_t per = (size_t)shape[0] * (size_t)shape[1] * (size_t)shape[2];
    for (Py_ssize_t i = 0; i < n; i++) {
        mg_py_state *s = (mg_py_state *)items[i];
        g->observation(s->state, out + (size_t)i * per);
    }
    Py_DECREF(seq);
    return arr;
}

/* ---- copying, comparing, pickling ---------------------------------------------------- */

static PyObject *state_copy_impl(mg_py_state *self, int with_history)
{
    CHECK_INIT(self);
    PyTypeObject *tp = Py_TYPE(self);
    mg_py_state *c = (mg_py_state *)tp->tp_alloc(tp, 0);
    if (!c)
        return NULL;
    const mg_game *g = self->game;
    Py_ssize_t ply = with_history ? self->ply : 0;
    if (state_alloc(c, g, ply + 16) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    c->cfg = self->cfg;
    memcpy(c->state, self->state, g->state_size);
    if (with_history) {
        memcpy(c->root, self->root, g->state_size);
        memcpy(c->undo, self->undo, (size_t)ply * g->undo_size);
        memcpy(c->actions, self->actions, (size_t)ply * sizeof(int32_t));
        c->ply = ply;
    } else {
        memcpy(c->root, self->state, g->state_size);
    }
    /* Subclass attributes travel with the copy (shallow). */
    PyObject **sd = _PyObject_GetDictPtr((PyObject *)self);
    if (sd && *sd) {
        PyObject **cd = _PyObject_GetDictPtr((PyObject *)c);
        if (cd) {
            *cd = PyDict_Copy(*sd);
            if (!*cd) {
                Py_DECREF(c);
                return NULL;
            }
        }
    }
    return (PyObject *)c;
}

/* copy(stack=True), by the vectorcall convention (mg_py_fast_args: MCTS.search copies its root each call) */
static PyObject *state_copy(mg_py_state *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stack"};
    PyObject *v[1];
    int stack = 1;
    if (mg_py_fast_args("copy", args, nargs, kwnames, names, 1, 1, 0, v) < 0 ||
        (v[0] && (stack = PyObject_IsTrue(v[0])) < 0))
        return NULL;
    return state_copy_impl(self, stack);
}

static PyObject *state_deepcopy(mg_py_state *self, PyObject *memo)
{
    (void)memo;
    return state_copy_impl(self, 1);
}

static PyObject *state_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &mg_py_state_type) ||
        !PyObject_TypeCheck(b, &mg_py_state_type))
        Py_RETURN_NOTIMPLEMENTED;
    mg_py_state *x = (mg_py_state *)a, *y = (mg_py_state *)b;
    int eq;
    if (!x->game || !y->game) {
        eq = x == y;
    } else if (x->game != y->game || x->cfg.board_size != y->cfg.board_size || x->cfg.flags != y->cfg.flags) {
        eq = 0;
    } else {
        /* Equal positions: same text (board, side to move, rights, clocks) and same hash. */
        char tx[MG_MAX_TEXT], ty[MG_MAX_TEXT];
        x->game->to_text(x->state, tx, sizeof tx);
        y->game->to_text(y->state, ty, sizeof ty);
        eq = strcmp(tx, ty) == 0 && x->game->hash(x->state) == y->game->hash(y->state);
    }
    if (op == Py_NE)
        eq = !eq;
    return PyBool_FromLong(eq);
}

/* Pickle as (rebuild, (type, game, board_size, flags, root text, actions), __dict__):
 * unpickling replays the moves with legality checks, so bad data cannot corrupt a state. */
static PyObject *state_reduce(mg_py_state *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_INIT(self);
    PyObject *mod = PyImport_ImportModule("mavgame._core");
    if (!mod)
        return NULL;
    PyObject *rebuild = PyObject_GetAttrString(mod, "_rebuild_state");
    Py_DECREF(mod);
    if (!rebuild)
        return NULL;
    char buf[MG_MAX_TEXT];
    size_t n = self->game->to_text(self->root, buf, sizeof buf);
    PyObject *acts = state_history(self, NULL);
    if (!acts) {
        Py_DECREF(rebuild);
        return NULL;
    }
    PyObject *dict = Py_None;
    PyObject **dp = _PyObject_GetDictPtr((PyObject *)self);
    if (dp && *dp)
        dict = *dp;
    return Py_BuildValue("(N(Osiis#N)O)", rebuild, (PyObject *)Py_TYPE(self), self->game->name,
                         self->cfg.board_size, (int)self->cfg.flags, buf, (Py_ssize_t)n, acts, dict);
}

static PyObject *state_setstate(mg_py_state *self, PyObject *dict)
{
    if (dict == Py_None)
        Py_RETURN_NONE;
    PyObject **dp = _PyObject_GetDictPtr((PyObject *)self);
    if (!dp || !PyDict_Check(dict)) {
        PyErr_SetString(PyExc_TypeError, "cannot restore attributes of this game state");
        return NULL;
    }
    if (!*dp) {
        *dp = PyDict_New();
        if (!*dp)
            return NULL;
    }
    if (PyDict_Update(*dp, dict) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _core._rebuild_state(type, game, board_size, flags, text, actions) */
PyObject *mg_py_rebuild_state(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyTypeObject *tp;
    const char *name, *text;
    int board_size, flags;
    PyObject *acts, *name_o, *text_o;
    if (!PyArg_ParseTuple(args, "O!OO&O&OO:_rebuild_state", &PyType_Type, &tp, &name_o,
                          MG_PY_C_INT("board_size", &board_size), MG_PY_C_INT("flags", &flags), &text_o, &acts))
        return NULL;
    if (!(name = mg_py_text_arg(name_o, "game")) || !(text = mg_py_text_arg(text_o, "text")))
        return NULL;
    if (!PyType_IsSubtype(tp, &mg_py_state_type)) {
        PyErr_SetString(PyExc_TypeError, "_rebuild_state needs a State subclass");
        return NULL;
    }
    mg_py_state *s = (mg_py_state *)tp->tp_alloc(tp, 0);
    if (!s)
        return NULL;
    PyObject *iargs = Py_BuildValue("(ssiI)", name, text, board_size, (unsigned)flags);
    int rc = iargs ? state_init(s, iargs, NULL) : -1;
    Py_XDECREF(iargs);
    if (rc < 0) {
        Py_DECREF(s);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(acts, "actions must be a sequence");
    if (!seq) {
        Py_DECREF(s);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *r = state_push(s, PySequence_Fast_GET_ITEM(seq, i));
        if (!r) {
            Py_DECREF(seq);
            Py_DECREF(s);
            return NULL;
        }
        Py_DECREF(r);
    }
    Py_DECREF(seq);
    return (PyObject *)s;
}

/* ---- properties ----------------------------------------------------------------------- */

static PyObject *state_get_to_move(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromLong(self->game->to_move(self->state));
}

static PyObject *state_get_hash(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromUnsignedLongLong(self->game->hash(self->state));
}

static PyObject *state_get_ply(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromSsize_t(self->ply);
}

static PyObject *state_get_game(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return mg_py_game_name(self->game, self->cfg.board_size);
}

static PyObject *state_get_num_actions(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromLong(self->game->num_actions);
}

static PyObject *state_get_max_moves(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromLong(self->game->max_moves);
}

static PyObject *state_get_board_size(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromLong(self->cfg.board_size);
}

static PyObject *state_get_flags(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    return PyLong_FromUnsignedLong(self->cfg.flags);
}

static PyObject *state_get_observation_shape(mg_py_state *self, void *Py_UNUSED(c))
{
    CHECK_INIT(self);
    int shape[3];
    self->game->obs_shape(self->state, shape);
    return Py_BuildValue("(iii)", shape[0], shape[1], shape[2]);
}

static PyObject *state_repr(mg_py_state *self)
{
    if (!self->game)
        return PyUnicode_FromFormat("<%s (uninitialised)>", Py_TYPE(self)->tp_name);
    char buf[MG_MAX_TEXT];
    self->game->to_text(self->state, buf, sizeof buf);
    return PyUnicode_FromFormat("%s(%s, '%s')", Py_TYPE(self)->tp_name, self->game->name, buf);
}

static PyMethodDef state_methods[] = {
    {"push", (PyCFunction)state_push, METH_O,
     "push(move) -> int\n\nPlay a legal move given as an int action or a move string; returns the action.\n"
     "Raises ValueError (naming the move and the position) if it is malformed or illegal."},
    {"parse_move", (PyCFunction)state_parse, METH_O,
     "parse_move(move) -> int\n\nThe legal action for an int action or move string, without playing it."},
    {"pop", (PyCFunction)state_pop, METH_NOARGS, "pop() -> int\n\nTake back the last move; returns its action."},
    {"num_legal_actions", (PyCFunction)state_num_legal_actions, METH_NOARGS,
     "num_legal_actions() -> int\n\nThe number of legal actions (len(legal_actions()) without the array)."},
    {"legal_actions", (PyCFunction)state_legal_actions, METH_NOARGS,
     "legal_actions() -> numpy.ndarray[int32]\n\nThe legal actions in the game's move generation order."},
    {"legal_actions_mask", (PyCFunction)state_legal_actions_mask, METH_NOARGS,
     "legal_actions_mask() -> numpy.ndarray[bool]\n\nA mask over all num_actions action ids."},
    {"is_legal", (PyCFunction)state_is_legal, METH_O, "is_legal(move) -> bool"},
    {"text", (PyCFunction)state_text, METH_NOARGS, "text() -> str\n\nThe game's own text (FEN for chess)."},
    {"root_text", (PyCFunction)state_root_text, METH_NOARGS,
     "root_text() -> str\n\nThe text of the position before the first pushed move."},
    {"action_to_str", (PyCFunction)state_action_to_str, METH_O, "action_to_str(action) -> str"},
    {"action_from_str", (PyCFunction)state_action_from_str, METH_O,
     "action_from_str(move) -> int\n\nParse a move string into a legal action (ValueError if not legal)."},
    {"outcome", (PyCFunction)state_outcome, METH_NOARGS,
     "outcome() -> (int, str)\n\n(result, termination): result 0 ongoing, 1 first player wins, 2 second player "
     "wins, 3 draw."},
    {"result", (PyCFunction)state_result, METH_NOARGS, "result() -> str\n\n'1-0', '0-1', '1/2-1/2' or '*'."},
    {"is_terminal", (PyCFunction)state_is_terminal, METH_NOARGS, "is_terminal() -> bool"},
    {"history", (PyCFunction)state_history, METH_NOARGS,
     "history() -> numpy.ndarray[int32]\n\nThe actions pushed since construction."},
    {"perft", (PyCFunction)state_perft, METH_O,
     "perft(depth) -> int\n\nNumber of leaf nodes of the legal move tree (the GIL is released; Ctrl-C raises "
     "KeyboardInterrupt within a fraction of a second, the state unchanged)."},
    {"perft_divide", (PyCFunction)state_perft_divide, METH_O,
     "perft_divide(depth) -> (actions, counts)\n\nperft(depth - 1) below each legal move."},
    {"copy", (PyCFunction)(void (*)(void))state_copy, METH_FASTCALL | METH_KEYWORDS,
     "copy(stack=True)\n\nAn independent copy; stack=False drops the move history."},
    {"returns", (PyCFunction)state_returns, METH_NOARGS,
     "returns() -> list[float]\n\nOpenSpiel's returns: [1.0, -1.0] if the first player won, [-1.0, 1.0] if "
     "the second did, [0.0, 0.0] for a draw or a game in progress (OpenSpiel's whole API: "
     "mavgame.compat.openspiel)."},
    {"observation_tensor", (PyCFunction)state_observation_tensor, METH_NOARGS,
     "observation_tensor() -> numpy.ndarray[float32] of shape observation_shape\n\n"
     "OpenSpiel-style planes of the board and the side to move (planes, rows, cols); rows in the order of "
     "text() (top row first).  mavgame._core.observation_tensors(states) batches them.  The planes of each "
     "game are listed in docs/architecture.md."},
    {"__copy__", (PyCFunction)state_deepcopy, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)state_deepcopy, METH_O, NULL},
    {"__reduce__", (PyCFunction)state_reduce, METH_NOARGS, NULL},
    {"__setstate__", (PyCFunction)state_setstate, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef state_getset[] = {
    {"to_move", (getter)state_get_to_move, NULL, "The player to move: 0 (first) or 1 (second).", NULL},
    {"hash", (getter)state_get_hash, NULL, "64-bit position hash (Zobrist key).", NULL},
    {"ply", (getter)state_get_ply, NULL, "Number of moves pushed since construction.", NULL},
    {"legal_moves", (getter)state_get_legal_moves, NULL,
     "The legal moves as a new list of move strings (UCI for chess), a property as python-chess's "
     "board.legal_moves; the game classes give a live view (mavgame.games.base.LegalMoves).", NULL},
    {"game", (getter)state_get_game, NULL, "The game's registry name.", NULL},
    {"num_actions", (getter)state_get_num_actions, NULL, "Size of the action id space.", NULL},
    {"max_moves", (getter)state_get_max_moves, NULL, "Upper bound on the number of legal moves.", NULL},
    {"board_size", (getter)state_get_board_size, NULL, "Board size parameter (0: the game's default).", NULL},
    {"flags", (getter)state_get_flags, NULL, "Rule flags.", NULL},
    {"observation_shape", (getter)state_get_observation_shape, NULL,
     "Shape (planes, rows, cols) of observation_tensor().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject mg_py_state_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.State",
    .tp_basicsize = sizeof(mg_py_state),
    .tp_dealloc = (destructor)state_dealloc,
    .tp_repr = (reprfunc)state_repr,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "State(game, text=None, board_size=0, flags=0)\n\n"
              "flags: a bit set of the game's rule flags (FLAG_CHESS960, FLAG_GARDNER_BISHOP, FLAG_HEX_SWAP);\n"
              "a flag the game does not define is refused with ValueError.\n"
              "A position of any mavgame game, with its move history. Mutable (push/pop), so unhashable;\n"
              "use .hash for the position key.\n\n"
              "Threads: each method runs with the GIL held, or on a private copy of the position when it\n"
              "releases the GIL (perft, playouts, solvers, searches), so a State may be read from several\n"
              "threads, and a long computation on it does not see moves pushed meanwhile.  Mutation is not\n"
              "coordinated: push/pop from two threads interleave (each call whole, the sequence not); give\n"
              "each thread its own copy() to play on.",
    .tp_richcompare = state_richcompare,
    .tp_methods = state_methods,
    .tp_getset = state_getset,
    .tp_init = (initproc)state_init,
    .tp_new = PyType_GenericNew,
};

int mg_bind_state(PyObject *m)
{
    if (PyType_Ready(&mg_py_state_type) < 0)
        return -1;
    /* The rule flags of csrc/game.h, for State(game, text, board_size, flags). */
    if (PyModule_AddIntConstant(m, "FLAG_CHESS960", MG_FLAG_CHESS960) < 0 ||
        PyModule_AddIntConstant(m, "FLAG_GARDNER_BISHOP", MG_FLAG_GARDNER_BISHOP) < 0 ||
        PyModule_AddIntConstant(m, "FLAG_HEX_SWAP", MG_FLAG_HEX_SWAP) < 0)
        return -1;
    return mg_py_add_type(m, "State", &mg_py_state_type);
}
