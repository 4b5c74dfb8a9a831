/*
 * py_chess_policy.c - Python functions for chess policy networks (csrc/games/chess/chess_policy.h):
 * the 41 input planes and the 1968-move index, in batches filled in C.
 *
 *   policy_planes(states) -> float32 (n, 41, 8, 8)     planes of each State (its last two positions from its history)
 *   policy_legal_mask(states) -> bool (n, 1968)        legal moves of each State over the index
 *   policy_game(state) -> (planes, masks, moves)       every position of a State's history, from its root:
 *                                                      planes (p + 1, 41, 8, 8), masks (p + 1, 1968), moves (p,)
 *                                                      int16 index of each played move (p = plies played)
 *   policy_index(state, move) -> int                   index of a legal move (int action or UCI string)
 *   policy_action(state, index) -> int                 the legal action with that index (ValueError if none)
 *   policy_uci(index) -> str, policy_uci_index(uci) -> int, policy_moves() -> list[str] (the 1968 strings)
 */
#include "policy_bind.h"
#include "py_args.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

const mg_chess_state *mg_py_chess_state(PyObject *o, const char *what, mg_py_state **out)
{
    mg_py_state *s = mg_py_state_arg(o, what);
    if (!s)
        return NULL;
    if (s->game != &mg_chess && s->game != &mg_chess960) {
        PyErr_Format(PyExc_TypeError, "%s: the chess policy needs a chess or chess960 state, not a '%s' state", what,
                     s->game->name);
        return NULL;
    }
    if (out)
        *out = s;
    return (const mg_chess_state *)s->state;
}

void mg_py_chess_prev_board(const mg_py_state *s, int back, uint8_t *board)
{
    const mg_game *g = s->game;
    mg_chess_state tmp;
    memcpy(&tmp, s->state, sizeof tmp);
    Py_ssize_t ply = s->ply;
    for (int k = 0; k < back && ply > 0; k++) {
        ply--;
        g->unmake(&tmp, s->actions[ply], s->undo + (size_t)ply * g->undo_size);
    }
    memcpy(board, tmp.board, 64);
}

/* The states of a non-empty sequence; *n its length.  NULL with an exception otherwise. */
static PyObject *state_seq(PyObject *arg, const char *fn, Py_ssize_t *n)
{
    PyObject *seq = PySequence_Fast(arg, "expected a sequence of chess states");
    if (!seq)
        return NULL;
    *n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < *n; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s: states[%zd]", fn, i);
        if (!mg_py_chess_state(PySequence_Fast_GET_ITEM(seq, i), what, NULL)) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    return seq;
}

static void fill_planes(const mg_py_state *s, float *out)
{
    const mg_chess_state *c = (const mg_chess_state *)s->state;
    uint8_t p1[64], p2[64];
    mg_py_chess_prev_board(s, 1, p1);
    mg_py_chess_prev_board(s, 2, p2);
    mg_policy_planes(c->board, p1, p2, c->stm, c->fullmove, out);
}

static void fill_mask(const mg_chess_state *c, npy_bool *mask)
{
    int32_t acts[MG_CHESS_MAX_MOVES];
    int16_t idx[MG_CHESS_MAX_MOVES];
    memset(mask, 0, MG_POLICY_MOVES);
    int n = mg_policy_legal(c, acts, idx);
    for (int i = 0; i < n; i++)
        mask[idx[i]] = 1;
}

static PyObject *py_policy_planes(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_ssize_t n;
    PyObject *seq = state_seq(arg, "policy_planes", &n);
    if (!seq)
        return NULL;
    npy_intp dims[4] = {n, MG_POLICY_PLANES, 8, 8};
    PyObject *arr = PyArray_SimpleNew(4, dims, NPY_FLOAT32);
    if (arr) {
        float *out = PyArray_DATA((PyArrayObject *)arr);
        for (Py_ssize_t i = 0; i < n; i++)
            fill_planes((mg_py_state *)PySequence_Fast_GET_ITEM(seq, i), out + (size_t)i * MG_POLICY_INPUT_SIZE);
    }
    Py_DECREF(seq);
    return arr;
}

static PyObject *py_policy_legal_mask(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_ssize_t n;
    PyObject *seq = state_seq(arg, "policy_legal_mask", &n);
    if (!seq)
        return NULL;
    npy_intp dims[2] = {n, MG_POLICY_MOVES};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_BOOL);
    if (arr) {
        npy_bool *out = PyArray_DATA((PyArrayObject *)arr);
        for (Py_ssize_t i = 0; i < n; i++) {
            mg_py_state *s = (mg_py_state *)PySequence_Fast_GET_ITEM(seq, i);
            fill_mask((const mg_chess_state *)s->state, out + (size_t)i * MG_POLICY_MOVES);
        }
    }
    Py_DECREF(seq);
    return arr;
}

static PyObject *py_policy_game(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    mg_py_state *s;
    if (!mg_py_chess_state(arg, "policy_game: state", &s))
        return NULL;
    const mg_game *g = s->game;
    Py_ssize_t p = s->ply;
    npy_intp dp[4] = {p + 1, MG_POLICY_PLANES, 8, 8}, dm[2] = {p + 1, MG_POLICY_MOVES}, dv[1] = {p};
    PyObject *planes = PyArray_SimpleNew(4, dp, NPY_FLOAT32);
    PyObject *masks = PyArray_SimpleNew(2, dm, NPY_BOOL);
    PyObject *moves = PyArray_SimpleNew(1, dv, NPY_INT16);
    if (!planes || !masks || !moves) {
        Py_XDECREF(planes);
        Py_XDECREF(masks);
        Py_XDECREF(moves);
        return NULL;
    }
    float *pl = PyArray_DATA((PyArrayObject *)planes);
    npy_bool *mk = PyArray_DATA((PyArrayObject *)masks);
    int16_t *mv = PyArray_DATA((PyArrayObject *)moves);
    mg_chess_state cur;
    unsigned char undo[MG_MAX_UNDO];
    uint8_t hist[3][64]; /* boards of plies i, i - 1, i - 2 (ring) */
    memcpy(&cur, s->root, sizeof cur);
    for (int k = 0; k < 3; k++)
        memcpy(hist[k], cur.board, 64);
    for (Py_ssize_t i = 0; i <= p; i++) {
        const uint8_t *b0 = hist[i % 3], *b1 = hist[(i + 2) % 3], *b2 = hist[(i + 1) % 3];
        if (i == 0)
            b1 = b2 = b0;
        else if (i == 1)
            b2 = b1;
        mg_policy_planes(b0, b1, b2, cur.stm, cur.fullmove, pl + (size_t)i * MG_POLICY_INPUT_SIZE);
        fill_mask(&cur, mk + (size_t)i * MG_POLICY_MOVES);
        if (i == p)
            break;
        int32_t a = s->actions[i];
        mv[i] = (int16_t)mg_policy_action_index(&cur, a);
        g->make(&cur, a, undo);
        memcpy(hist[(i + 1) % 3], cur.board, 64);
    }
    return Py_BuildValue("(NNN)", planes, masks, moves);
}

static PyObject *py_policy_index(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *st, *mv;
    if (!PyArg_ParseTuple(args, "OO:policy_index", &st, &mv))
        return NULL;
    mg_py_state *s;
    const mg_chess_state *c = mg_py_chess_state(st, "policy_index: state", &s);
    int32_t a;
    if (!c || mg_py_state_parse_move(s, mv, &a) < 0)
        return NULL;
    return PyLong_FromLong(mg_policy_action_index(c, a));
}

static PyObject *py_policy_action(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *st;
    long idx;
    if (!PyArg_ParseTuple(args, "OO&:policy_action", &st, MG_PY_INT("policy index", LONG_MIN, LONG_MAX, &idx)))
        return NULL;
    const mg_chess_state *c = mg_py_chess_state(st, "policy_action: state", NULL);
    if (!c)
        return NULL;
    int32_t acts[MG_CHESS_MAX_MOVES];
    int16_t ix[MG_CHESS_MAX_MOVES];
    int n = mg_policy_legal(c, acts, ix);
    for (int i = 0; i < n; i++)
        if (ix[i] == idx)
            return PyLong_FromLong(acts[i]);
    char uci[8] = "?";
    mg_policy_uci((int)idx, uci);
    char fen[MG_MAX_TEXT];
    mg_chess_to_fen(c, fen, sizeof fen);
    PyErr_Format(PyExc_ValueError, "policy index %ld (%s) is not a legal move in %s", idx, uci, fen);
    return NULL;
}

static PyObject *py_policy_uci(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    long idx;
    if (!MG_PY_INT_ARG(arg, "policy index", LONG_MIN, LONG_MAX, &idx))
        return NULL;
    char buf[8];
    int n = (idx >= 0 && idx < MG_POLICY_MOVES) ? mg_policy_uci((int)idx, buf) : 0;
    if (!n) {
        PyErr_Format(PyExc_ValueError, "policy index must be in 0..%d, got %ld", MG_POLICY_MOVES - 1, idx);
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, n);
}

static PyObject *py_policy_uci_index(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    const char *u = mg_py_text_arg(arg, "uci");
    if (!u)
        return NULL;
    int idx = mg_policy_from_uci(u);
    if (idx < 0) {
        PyErr_Format(PyExc_ValueError, "%R is not a UCI move string of the policy index", arg);
        return NULL;
    }
    return PyLong_FromLong(idx);
}

static PyObject *py_policy_moves(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(MG_POLICY_MOVES);
    if (!list)
        return NULL;
    for (int i = 0; i < MG_POLICY_MOVES; i++) {
        char buf[8];
        int n = mg_policy_uci(i, buf);
        PyObject *u = PyUnicode_FromStringAndSize(buf, n);
        if (!u) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, u);
    }
    return list;
}

static PyMethodDef policy_methods[] = {
    {"policy_planes", py_policy_planes, METH_O,
     "policy_planes(states) -> numpy.ndarray[float32] (n, 41, 8, 8)\n\nThe policy network's input planes of chess "
     "states (docs/policy.md)."},
    {"policy_legal_mask", py_policy_legal_mask, METH_O,
     "policy_legal_mask(states) -> numpy.ndarray[bool] (n, 1968)\n\nLegal moves of chess states over the move index."},
    {"policy_game", py_policy_game, METH_O,
     "policy_game(state) -> (planes, masks, moves)\n\nPlanes and legal masks of every position of a chess state's "
     "history from its root, and the index of each move played (int16)."},
    {"policy_index", py_policy_index, METH_VARARGS,
     "policy_index(state, move) -> int\n\nMove-index entry of a legal move (int action or UCI string)."},
    {"policy_action", py_policy_action, METH_VARARGS,
     "policy_action(state, index) -> int\n\nThe legal action with that move index; ValueError if none."},
    {"policy_uci", py_policy_uci, METH_O, "policy_uci(index) -> str\n\nUCI string of a move index entry."},
    {"policy_uci_index", py_policy_uci_index, METH_O,
     "policy_uci_index(uci) -> int\n\nMove index entry of a UCI string; ValueError if it has none."},
    {"policy_moves", py_policy_moves, METH_NOARGS, "policy_moves() -> list[str]\n\nThe 1968 UCI strings in index order."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_chess_policy(PyObject *m)
{
    if (PyModule_AddIntConstant(m, "POLICY_MOVES", MG_POLICY_MOVES) < 0 ||
        PyModule_AddIntConstant(m, "POLICY_PLANES", MG_POLICY_PLANES) < 0)
        return -1;
    return PyModule_AddFunctions(m, policy_methods);
}
