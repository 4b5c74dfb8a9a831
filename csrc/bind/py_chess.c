/*
 * py_chess.c - Python functions for the chess family (chess, Chess960, Gardner):
 * SAN in and out, check, move descriptions, Chess960 start positions.
 *
 *   san(state, move) -> str              SAN of a legal move (int action or move string), e.g. "Nf3"
 *   parse_san(state, san) -> int         the legal action for a SAN string (ValueError otherwise)
 *   is_check(state) -> bool              the side to move is in check
 *   move_info(state, move) -> tuple      (from, to, piece, capture, promotion, castle) of a legal move,
 *                                        squares as file + rank * files, piece/promotion as 'P'..'K' / '' ,
 *                                        castle 0, 1 (O-O) or 2 (O-O-O)
 *   chess960_fen(n) -> str               FEN of Chess960 start position n (0..959, 518 = standard)
 *   legal_move_objects(state, cache) -> list   cache[text] of each legal move's cached text: the Move objects of
 *                                        mavgame.games.chess (its dict subclass's __missing__ makes new ones)
 *   chess_draw_rules(state, claims) -> (insufficient_material, repetitions, can_claim_fifty,
 *                                        can_claim_threefold)
 *                                        python-chess's draw rules of a chess or Chess960 state (the
 *                                        claims, which look a move ahead, only when `claims` is true:
 *                                        None otherwise)
 *
 * The state-taking functions work for any game with SAN hooks (mg_san_ops_for).
 */
#include "../games/chess/chess.h"
#include "../games/san.h"
#include "state.h"
#include "py_args.h"

static const mg_san_ops *family_state(PyObject *obj, mg_py_state **out)
{
    mg_py_state *s = mg_py_state_arg(obj, "state");
    if (!s)
        return NULL;
    const mg_san_ops *ops = mg_san_ops_for(s->game->name);
    if (!ops) {
        PyErr_Format(PyExc_TypeError, "SAN functions need a chess-family game (chess, chess960, gardner), not '%s'",
                     s->game->name);
        return NULL;
    }
    *out = s;
    return ops;
}

/* The (state, move) arguments of san/move_info (`format` is "OO:<name>"): the state's SAN hooks,
 * *out the state and *a the legal action the move names; NULL with an exception set otherwise. */
static const mg_san_ops *family_state_move(PyObject *args, const char *format, mg_py_state **out, int32_t *a)
{
    PyObject *st, *act;
    if (!PyArg_ParseTuple(args, format, &st, &act))
        return NULL;
    const mg_san_ops *ops = family_state(st, out);
    if (!ops || mg_py_state_parse_move(*out, act, a) < 0)
        return NULL;
    return ops;
}

static PyObject *py_san(PyObject *Py_UNUSED(mod), PyObject *args)
{
    mg_py_state *s;
    int32_t a;
    const mg_san_ops *ops = family_state_move(args, "OO:san", &s, &a);
    if (!ops)
        return NULL;
    char buf[32];
    size_t n = mg_san_write(ops, s->state, a, buf, sizeof buf);
    if (n == 0)
        return mg_py_value_error("could not write SAN");
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
}

static PyObject *py_parse_san(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *st, *text_o;
    if (!PyArg_ParseTuple(args, "OO:parse_san", &st, &text_o))
        return NULL;
    const char *text = mg_py_text_arg(text_o, "san");
    if (!text)
        return NULL;
    mg_py_state *s;
    const mg_san_ops *ops = family_state(st, &s);
    if (!ops)
        return NULL;
    int32_t a;
    char err[MG_ERRLEN] = "";
    if (mg_san_parse(ops, s->state, text, &a, err, sizeof err) != MG_OK)
        return mg_py_move_error(err);
    return PyLong_FromLong(a);
}

static PyObject *py_is_check(PyObject *Py_UNUSED(mod), PyObject *st)
{
    mg_py_state *s;
    const mg_san_ops *ops = family_state(st, &s);
    if (!ops)
        return NULL;
    return PyBool_FromLong(ops->in_check(s->state));
}

static PyObject *py_move_info(PyObject *Py_UNUSED(mod), PyObject *args)
{
    mg_py_state *s;
    int32_t a;
    const mg_san_ops *ops = family_state_move(args, "OO:move_info", &s, &a);
    if (!ops)
        return NULL;
    mg_move_info mi;
    ops->move_info(s->state, a, &mi);
    char piece[2] = {mi.piece, 0}, promo[2] = {mi.promotion, 0};
    return Py_BuildValue("(iisOsi)", mi.from, mi.to, piece, mi.capture ? Py_True : Py_False, promo, mi.castle);
}

static PyObject *py_chess960_fen(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    int n;
    if (!MG_PY_INT_ARG(arg, "Chess960 position number", 0, 959, &n))
        return NULL;
    char buf[128];
    size_t len = mg_chess960_start_fen(n, buf, sizeof buf);
    if (len == 0) {
        PyErr_Format(PyExc_ValueError, "Chess960 position number must be in [0, 959], got %d", n);
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
}

static PyObject *py_chess_draw_rules(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *st;
    int claims = 0;
    if (!PyArg_ParseTuple(args, "O|p:chess_draw_rules", &st, &claims))
        return NULL;
    mg_py_state *s = mg_py_state_arg(st, "state");
    if (!s)
        return NULL;
    if (s->game != &mg_chess && s->game != &mg_chess960) {
        PyErr_Format(PyExc_TypeError, "python-chess's draw rules are for chess and chess960 states, not '%s'",
                     s->game->name);
        return NULL;
    }
    const mg_chess_state *cs = (const mg_chess_state *)s->state;
    int fifty = 0, threefold = 0;
    if (claims)
        mg_chess_draw_claims(cs, &fifty, &threefold);
    PyObject *f = claims ? PyBool_FromLong(fifty) : Py_NewRef(Py_None);
    PyObject *t = claims ? PyBool_FromLong(threefold) : Py_NewRef(Py_None);
    return Py_BuildValue("(OiNN)", mg_chess_insufficient_material(cs) ? Py_True : Py_False,
                         mg_chess_repetitions(cs), f, t);
}

/* _core.legal_move_objects(state, cache) -> list: cache[text] for the text of each legal move, in move generation
 * order (the chess family's Move objects: mavgame/games/chess.py keeps them in a dict subclass whose __missing__
 * makes one); the texts are the cached strs of State.legal_moves, looked up by their cached hashes. */
static PyObject *py_legal_move_objects(PyObject *Py_UNUSED(mod), PyObject *const *args, Py_ssize_t nargs)
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

static PyMethodDef chess_methods[] = {
    {"san", py_san, METH_VARARGS, "san(state, action) -> str\n\nStandard Algebraic Notation of a legal action."},
    {"parse_san", py_parse_san, METH_VARARGS,
     "parse_san(state, san) -> int\n\nThe legal action named by a SAN string; ValueError if it is malformed, "
     "illegal or ambiguous."},
    {"is_check", py_is_check, METH_O, "is_check(state) -> bool\n\nWhether the side to move is in check."},
    {"move_info", py_move_info, METH_VARARGS,
     "move_info(state, action) -> (from, to, piece, capture, promotion, castle)\n\nDescribes a legal action."},
    {"chess_draw_rules", py_chess_draw_rules, METH_VARARGS,
     "chess_draw_rules(state, claims=False) -> (insufficient_material, repetitions, can_claim_fifty, "
     "can_claim_threefold)\n\npython-chess's draw rules of a chess or Chess960 state: is_insufficient_material(), "
     "the occurrences of the position (is_repetition(n) is repetitions >= n) and, with claims, "
     "can_claim_fifty_moves() and can_claim_threefold_repetition() (None without)."},
    {"chess960_fen", py_chess960_fen, METH_O,
     "chess960_fen(n) -> str\n\nFEN of Chess960 start position n in 0..959 (Scharnagl numbering; 518 is the "
     "standard position)."},
    {"legal_move_objects", (PyCFunction)(void (*)(void))py_legal_move_objects, METH_FASTCALL,
     "legal_move_objects(state, cache) -> list\n\n[cache[m] for m in state.legal_moves] in C: the move objects of a "
     "python-chess style wrapper (mavgame.games.chess.Move), kept in `cache`, a dict (a subclass's __missing__ makes "
     "the object of a move seen first)."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_chess(PyObject *m)
{
    return PyModule_AddFunctions(m, chess_methods);
}
