/*
 * py_mav_write.c - Python binding of the MAV writer (csrc/format/mav_write.c, mav_state.c):
 * mav_write, mav_prompts, mav_state_text, mav_state_to_game_text, mav_spec, mav_move_tokens.
 */
#include "py_mav_common.h"

#include <string.h>

static int parts_arg(const char *part)
{
    if (strcmp(part, "prompt") == 0)
        return MG_MAV_PART_PROMPT;
    if (strcmp(part, "target") == 0)
        return MG_MAV_PART_TARGET;
    if (strcmp(part, "all") == 0)
        return MG_MAV_PART_ALL;
    PyErr_Format(PyExc_ValueError, "part must be 'prompt', 'target' or 'all', not '%s'", part);
    return -1;
}

#define WRITE_BUF 65536

/* mav_write(state, commands, part="all", prev_state=None, prev_action=-1, actions=None,
 *           values=None, best=-1, order=None) -> str */
static PyObject *py_mav_write(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "commands", "part", "prev_state", "prev_action", "actions", "values", "best",
                             "order", NULL};
    PyObject *so, *cmds, *part_o = NULL, *prev_o = Py_None, *acts = Py_None, *vals = Py_None, *order_o = Py_None;
    const char *part = "all";
    int prev_action = -1, best = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOO&OOO&O:mav_write", kwlist, &so, &cmds, &part_o, &prev_o,
                                     MG_PY_C_INT("prev_action", &prev_action), &acts, &vals,
                                     MG_PY_C_INT("best", &best), &order_o))
        return NULL;
    if (part_o && !(part = mg_py_text_arg(part_o, "part")))
        return NULL;
    mg_py_state *s = mg_py_state_arg(so, "state");
    if (!s)
        return NULL;
    const mg_game *g = s->game;
    mg_mav_spec spec;
    int parts = parts_arg(part);
    if (parts < 0 || mg_py_spec_arg(g, cmds, &spec) < 0)
        return NULL;
    _Alignas(16) unsigned char prevbuf[MG_MAX_STATE];
    const void *prev = NULL;
    if (prev_o != Py_None) {
        mg_py_state *p = mg_py_game_state_arg(prev_o, g, "prev_state", "state");
        if (!p)
            return NULL;
        prev = p->state;
    } else if (spec.transition) {
        int32_t a;
        if (mg_py_prev_from_history(s, prevbuf, &a) < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "the commands start with a previous state: give prev_state and prev_action, or a state "
                            "with a move history");
            return NULL;
        }
        prev = prevbuf;
        prev_action = a;
    }
    mg_py_ann ann;
    if (mg_py_ann_arg(acts, vals, &ann) < 0)
        return NULL;
    PyArrayObject *order = NULL;
    if (order_o != Py_None) {
        order = (PyArrayObject *)mg_py_int_array(order_o, NPY_INT32, 1, 1, "order");
        if (!order) {
            mg_py_ann_clear(&ann);
            return NULL;
        }
    }
    mg_mav_input in = {s->state, prev, prev_action, ann.n, ann.acts ? PyArray_DATA(ann.acts) : NULL,
                       ann.vals ? PyArray_DATA(ann.vals) : NULL, best, order ? PyArray_DATA(order) : NULL,
                       order ? (int)PyArray_DIM(order, 0) : 0};
    char *buf = PyMem_Malloc(WRITE_BUF);
    if (!buf) {
        mg_py_ann_clear(&ann);
        Py_XDECREF(order);
        return PyErr_NoMemory();
    }
    char err[MG_ERRLEN] = "";
    long n = mg_mav_write(g, &spec, &in, parts, buf, WRITE_BUF, err, sizeof err);
    mg_py_ann_clear(&ann);
    Py_XDECREF(order);
    PyObject *res = n < 0 ? mg_py_value_error(err) : PyUnicode_FromStringAndSize(buf, n);
    PyMem_Free(buf);
    return res;
}

/* mav_prompts(states, commands) -> list[str]: prompts for plain (non-transition) commands,
 * or transition commands from each state's last move. */
static PyObject *py_mav_prompts(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *states, *cmds;
    if (!PyArg_ParseTuple(args, "OO:mav_prompts", &states, &cmds))
        return NULL;
    PyObject *seq = PySequence_Fast(states, "states must be a sequence of game states");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    if (!out) {
        Py_DECREF(seq);
        return NULL;
    }
    const mg_game *g = NULL;
    mg_mav_spec spec;
    char buf[8192];
    for (Py_ssize_t i = 0; i < n; i++) {
        long len = mg_py_state_prompt(seq, i, cmds, &g, &spec, buf, sizeof buf);
        if (len < 0)
            goto fail;
        PyObject *str = PyUnicode_FromStringAndSize(buf, len);
        if (!str)
            goto fail;
        PyList_SET_ITEM(out, i, str);
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

static PyObject *py_mav_state_text(PyObject *Py_UNUSED(m), PyObject *arg)
{
    mg_py_state *s = mg_py_state_arg(arg, "state");
    if (!s)
        return NULL;
    char out[MG_MAX_TEXT], err[MG_ERRLEN] = "";
    size_t n = mg_mav_state_write(s->game, s->state, out, sizeof out, err, sizeof err);
    if (!n)
        return mg_py_value_error(err);
    return PyUnicode_FromStringAndSize(out, (Py_ssize_t)n);
}

/* mav_state_to_game_text(game, text, board_size=0, flags=0) -> the game's own text (checked by the game) */
static PyObject *py_mav_state_to_game_text(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    mg_py_reader_args a;
    if (mg_py_reader_args_parse(args, kw, 0, &a) < 0)
        return NULL;
    char out[MG_MAX_TEXT], err[MG_ERRLEN] = "";
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    if (mg_mav_state_read(a.g, &a.cfg, a.text, (size_t)a.n, st, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    size_t len = a.g->to_text(st, out, sizeof out);
    return PyUnicode_FromStringAndSize(out, (Py_ssize_t)len);
}

static PyObject *py_mav_spec(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *go, *cmds;
    if (!PyArg_ParseTuple(args, "OO:mav_spec", &go, &cmds))
        return NULL;
    const mg_game *g = mg_py_mav_game_arg(go);
    mg_mav_spec spec;
    if (!g || mg_py_spec_arg(g, cmds, &spec) < 0)
        return NULL;
    char h[512];
    mg_mav_header(g, &spec, h, sizeof h);
    return Py_BuildValue("{s:s,s:i,s:O,s:i,s:i,s:i}", "header", h, "n_inputs", spec.n_inputs, "transition",
                         spec.transition ? Py_True : Py_False, "top_k", spec.top_pos >= 0 ? spec.top_k : -1,
                         "top_pos", spec.top_pos, "best_pos", spec.best_pos);
}

/* mav_move_tokens(game_name) -> list[str] */
static PyObject *py_mav_move_tokens(PyObject *Py_UNUSED(m), PyObject *arg)
{
    const char *name = mg_py_text_arg(arg, "game");
    if (!name)
        return NULL;
    char(*mv)[MG_MAV_MOVE_TOKEN_LEN] = PyMem_Malloc(4096 * MG_MAV_MOVE_TOKEN_LEN);
    if (!mv)
        return PyErr_NoMemory();
    int n = mg_mav_move_tokens(name, mv, 4096);
    if (n > 4096)
        n = 4096;
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_FromString(mv[i]);
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, s);
    }
    PyMem_Free(mv);
    return list;
}

static PyMethodDef write_functions[] = {
    {"mav_write", (PyCFunction)(void (*)(void))py_mav_write, METH_VARARGS | METH_KEYWORDS,
     "mav_write(state, commands, part='all', prev_state=None, prev_action=-1, actions=None, values=None, best=-1, "
     "order=None) -> str"},
    {"mav_prompts", py_mav_prompts, METH_VARARGS, "mav_prompts(states, commands) -> list[str]"},
    {"mav_state_text", py_mav_state_text, METH_O, "mav_state_text(state) -> str: the %state value"},
    {"mav_state_to_game_text", (PyCFunction)(void (*)(void))py_mav_state_to_game_text, METH_VARARGS | METH_KEYWORDS,
     "mav_state_to_game_text(game, text, board_size=0, flags=0) -> str: the game's own text"},
    {"mav_spec", py_mav_spec, METH_VARARGS, "mav_spec(game, commands) -> dict (header, n_inputs, ...)"},
    {"mav_move_tokens", py_mav_move_tokens, METH_O, "mav_move_tokens(game) -> list[str]"},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mav_write(PyObject *m) { return PyModule_AddFunctions(m, write_functions); }
