/*
 * py_mav.c - Python bindings of the MAV text format (csrc/format): prompts and targets,
 * %state text, the parser and batch metrics, value buckets and scoring, the tokenizer
 * (mavgame._core.MavTokenizer) and the example builder (mavgame._core.MavExampleBuilder).
 * The Python API on top is mavgame/mav.py.
 */
#include "state.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

#include "../format/examples.h"
#include "../format/mav.h"
#include "../format/tokenizer.h"
#include "../format/values.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* UTF-8 bytes of a str or bytes object.  A NUL inside is kept (the length goes with the text):
 * these are MAV texts and model outputs, which the parser, the metrics and the tokenizer take
 * as data and report on (a parse issue, an unknown character) rather than refuse as arguments. */
static const char *text_arg(PyObject *o, Py_ssize_t *n, const char *what)
{
    if (PyUnicode_Check(o))
        return PyUnicode_AsUTF8AndSize(o, n);
    if (PyBytes_Check(o)) {
        *n = PyBytes_GET_SIZE(o);
        return PyBytes_AS_STRING(o);
    }
    PyErr_Format(PyExc_TypeError, "%s must be a str or bytes, not %.100s", what, Py_TYPE(o)->tp_name);
    return NULL;
}

static const mg_game *game_arg(PyObject *o)
{
    if (PyObject_TypeCheck(o, &mg_py_state_type)) {
        mg_py_state *s = mg_py_state_arg(o, "game");
        return s ? s->game : NULL;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "game must be a game name or a game state, not %.100s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    const char *name = mg_py_text_arg(o, "game");
    if (!name)
        return NULL;
    const mg_game *g = mg_game_by_name(name);
    if (!g) {
        PyErr_Format(PyExc_ValueError, "unknown game '%s'", name);
        return NULL;
    }
    if (!mg_mav_game_supported(g, NULL)) {
        PyErr_Format(PyExc_ValueError, "the MAV format does not support game '%s'", name);
        return NULL;
    }
    return g;
}

/* A State argument that must be of game g (the game of `other`): the state, or NULL with a
 * TypeError/ValueError naming `what`. */
static mg_py_state *game_state_arg(PyObject *o, const mg_game *g, const char *what, const char *other)
{
    mg_py_state *s = mg_py_state_arg(o, what);
    if (s && s->game != g) {
        PyErr_Format(PyExc_ValueError, "%s is a %s state, %s is %s", what, s->game->name, other, g->name);
        return NULL;
    }
    return s;
}

/* Reference state argument: None or a State of game g (its configuration then replaces *cfg). */
static int ref_arg(PyObject *o, const mg_game *g, const void **ref, mg_config *cfg, const char *what)
{
    *ref = NULL;
    if (o == Py_None)
        return 0;
    mg_py_state *s = game_state_arg(o, g, what, "the text");
    if (!s)
        return -1;
    *ref = s->state;
    *cfg = s->cfg;
    return 0;
}

/* The arguments of the text readers: (game, text, board_size=0, flags=0) for
 * mav_state_to_game_text, (game, text, true_state=None, board_size=0, flags=0) for mav_parse. */
typedef struct reader_args {
    const mg_game *g;
    const char *text;
    Py_ssize_t n;
    mg_config cfg;
    const void *ref; /* the true_state's state, or NULL */
} reader_args;

static int reader_args_parse(PyObject *args, PyObject *kw, int with_ref, reader_args *a)
{
    static char *kw_plain[] = {"game", "text", "board_size", "flags", NULL};
    static char *kw_ref[] = {"game", "text", "true_state", "board_size", "flags", NULL};
    PyObject *go, *to, *ro = Py_None;
    int board_size = 0;
    unsigned int flags = 0;
    if (!(with_ref ? PyArg_ParseTupleAndKeywords(args, kw, "OO|OiI:mav_parse", kw_ref, &go, &to, &ro, &board_size,
                                                 &flags)
                   : PyArg_ParseTupleAndKeywords(args, kw, "OO|iI:mav_state_to_game_text", kw_plain, &go, &to,
                                                 &board_size, &flags)))
        return -1;
    a->cfg = (mg_config){board_size, flags};
    a->g = game_arg(go);
    if (!a->g)
        return -1;
    char err[MG_ERRLEN];
    if (mg_config_check(a->g, &a->cfg, err, sizeof err) != MG_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        return -1;
    }
    a->text = text_arg(to, &a->n, "text");
    if (!a->text)
        return -1;
    return ref_arg(ro, a->g, &a->ref, &a->cfg, "true_state");
}

/* The name of element i of a sequence argument ("states[3]"), for error messages. */
typedef struct arg_name {
    char s[64];
} arg_name;

static arg_name item_name(const char *seq, Py_ssize_t i, const char *field)
{
    arg_name a;
    snprintf(a.s, sizeof a.s, "%s[%zd]%s%s", seq, i, field ? " " : "", field ? field : "");
    return a;
}

/* max_len argument: None (-1 in *max_len) or an int >= lo; 0, or -1 with an error naming it. */
static int max_len_arg(PyObject *ml, Py_ssize_t lo, Py_ssize_t *max_len)
{
    *max_len = -1;
    if (ml == Py_None)
        return 0;
    *max_len = PyLong_AsSsize_t(ml);
    if (*max_len == -1 && PyErr_Occurred())
        return -1;
    if (*max_len < lo) {
        PyErr_Format(PyExc_ValueError, "max_len must be >= %zd, got %zd", lo, *max_len);
        return -1;
    }
    return 0;
}

/* A PyMem buffer of `size`-byte elements (NULL: none yet) grown, at least doubling, to hold `need`
 * of them: the buffer (buf itself when it is large enough), or NULL with MemoryError, buf and
 * *cap unchanged. */
static void *reserve(void *buf, size_t *cap, size_t need, size_t size)
{
    if (buf && need <= *cap)
        return buf;
    size_t nc = (*cap ? *cap * 2 : 4096) + need;
    void *nb = PyMem_Realloc(buf, nc * size);
    if (!nb)
        return PyErr_NoMemory();
    *cap = nc;
    return nb;
}

/* A batch: the B items of a sequence argument, and their token rows, stored one after another,
 * with their lengths (an int32 array). */
typedef struct tok_rows {
    PyObject *seq;
    Py_ssize_t B;
    int32_t *buf;
    size_t cap, used, longest;
    PyObject *lens;
    int32_t *L;
} tok_rows;

/* 0, or -1 with a TypeError `not_seq` when items is not a sequence (rows_free it either way). */
static int rows_init(tok_rows *r, PyObject *items, const char *not_seq)
{
    *r = (tok_rows){.seq = PySequence_Fast(items, not_seq)};
    if (!r->seq)
        return -1;
    r->B = PySequence_Fast_GET_SIZE(r->seq);
    npy_intp dim = r->B;
    r->lens = PyArray_SimpleNew(1, &dim, NPY_INT32);
    if (!r->lens)
        return -1;
    r->L = PyArray_DATA((PyArrayObject *)r->lens);
    return 0;
}

/* Room for up to n more tokens: where the next row starts, or NULL with MemoryError. */
static int32_t *rows_room(tok_rows *r, size_t n)
{
    int32_t *nb = reserve(r->buf, &r->cap, r->used + n, sizeof *nb);
    if (!nb)
        return NULL;
    r->buf = nb;
    return nb + r->used;
}

/* Row i (written at rows_room) has k tokens. */
static void rows_end(tok_rows *r, Py_ssize_t i, size_t k)
{
    r->L[i] = (int32_t)k;
    r->used += k;
    if (k > r->longest)
        r->longest = k;
}

/* The rows as a [B, width] int32 array padded with zeros (<pad>). */
static PyObject *rows_array(const tok_rows *r, npy_intp width)
{
    npy_intp dims[2] = {r->B, width};
    PyObject *arr = PyArray_ZEROS(2, dims, NPY_INT32, 0);
    if (!arr)
        return NULL;
    int32_t *D = PyArray_DATA((PyArrayObject *)arr);
    size_t off = 0;
    for (Py_ssize_t i = 0; i < r->B; i++) {
        memcpy(D + (size_t)i * (size_t)width, r->buf + off, (size_t)r->L[i] * sizeof(int32_t));
        off += (size_t)r->L[i];
    }
    return arr;
}

/* (ids[B, width], lengths[B]); width -1: the longest row. */
static PyObject *rows_result(const tok_rows *r, npy_intp width)
{
    PyObject *ids = rows_array(r, width >= 0 ? width : (npy_intp)r->longest);
    return ids ? Py_BuildValue("(NO)", ids, r->lens) : NULL;
}

static void rows_free(tok_rows *r)
{
    PyMem_Free(r->buf);
    Py_XDECREF(r->lens);
    Py_XDECREF(r->seq);
}

static int spec_arg(const mg_game *g, PyObject *o, mg_mav_spec *spec)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "commands must be a str such as '%%state %%top_all %%best_action', not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    const char *s = mg_py_text_arg(o, "commands");
    if (!s)
        return -1;
    char err[MG_ERRLEN];
    if (mg_mav_spec_parse(g, s, spec, err, sizeof err) != MG_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        return -1;
    }
    return 0;
}

/* The previous state of `s` from its history (copy, then unmake its last move). */
static int prev_from_history(const mg_py_state *s, unsigned char *prev, int32_t *action)
{
    const mg_game *g = s->game;
    if (s->ply <= 0)
        return -1;
    memcpy(prev, s->state, g->state_size);
    int32_t a = s->actions[s->ply - 1];
    g->unmake(prev, a, s->undo + (size_t)(s->ply - 1) * g->undo_size);
    *action = a;
    return 0;
}

/* An annotation from Python: actions (int32 array-like or None), values (float64 array-like). */
typedef struct py_ann {
    PyArrayObject *acts, *vals;
    int n;
} py_ann;

static void ann_clear(py_ann *a)
{
    Py_XDECREF(a->acts);
    Py_XDECREF(a->vals);
    a->acts = a->vals = NULL;
    a->n = 0;
}

static int ann_arg(PyObject *acts, PyObject *vals, py_ann *a)
{
    a->acts = a->vals = NULL;
    a->n = 0;
    if (acts == Py_None && vals == Py_None)
        return 0;
    if (acts == Py_None || vals == Py_None) {
        PyErr_SetString(PyExc_ValueError, "an annotation needs both actions and values");
        return -1;
    }
    a->acts = (PyArrayObject *)PyArray_FROMANY(acts, NPY_INT32, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!a->acts)
        return -1;
    a->vals = (PyArrayObject *)PyArray_FROMANY(vals, NPY_FLOAT64, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!a->vals) {
        ann_clear(a);
        return -1;
    }
    npy_intp na = PyArray_DIM(a->acts, 0), nv = PyArray_DIM(a->vals, 0);
    if (na != nv) {
        PyErr_Format(PyExc_ValueError, "annotation: %zd actions but %zd values", (Py_ssize_t)na, (Py_ssize_t)nv);
        ann_clear(a);
        return -1;
    }
    if (na > MG_MAX_MOVES) {
        PyErr_Format(PyExc_ValueError, "annotation: %zd moves, more than any position has", (Py_ssize_t)na);
        ann_clear(a);
        return -1;
    }
    a->n = (int)na;
    return 0;
}

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

/* ---- writing ------------------------------------------------------------------------------ */

/* The prompt of states[i] for the commands `cmds` into buf, *g and *spec following the state's
 * game (the transition form from the state's last move): its length, or -1 with an error naming
 * states[i]. */
static long state_prompt(PyObject *seq, Py_ssize_t i, PyObject *cmds, const mg_game **g, mg_mav_spec *spec,
                         char *buf, size_t cap)
{
    mg_py_state *s = mg_py_state_arg(PySequence_Fast_GET_ITEM(seq, i), item_name("states", i, NULL).s);
    if (!s)
        return -1;
    if (s->game != *g) {
        *g = s->game;
        if (spec_arg(*g, cmds, spec) < 0)
            return -1;
    }
    _Alignas(16) unsigned char prevbuf[MG_MAX_STATE];
    mg_mav_input in = {s->state, NULL, -1, 0, NULL, NULL, -1, NULL, 0};
    if (spec->transition) {
        if (prev_from_history(s, prevbuf, &in.prev_action) < 0) {
            PyErr_Format(PyExc_ValueError, "states[%zd] has no move history for the transition form", i);
            return -1;
        }
        in.prev = prevbuf;
    }
    char err[MG_ERRLEN];
    long len = mg_mav_write(*g, spec, &in, MG_MAV_PART_PROMPT, buf, cap, err, sizeof err);
    if (len < 0)
        PyErr_Format(PyExc_ValueError, "states[%zd]: %s", i, err);
    return len;
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
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOiOOiO:mav_write", kwlist, &so, &cmds, &part_o, &prev_o,
                                     &prev_action, &acts, &vals, &best, &order_o))
        return NULL;
    if (part_o && !(part = mg_py_text_arg(part_o, "part")))
        return NULL;
    mg_py_state *s = mg_py_state_arg(so, "state");
    if (!s)
        return NULL;
    const mg_game *g = s->game;
    mg_mav_spec spec;
    int parts = parts_arg(part);
    if (parts < 0 || spec_arg(g, cmds, &spec) < 0)
        return NULL;
    _Alignas(16) unsigned char prevbuf[MG_MAX_STATE];
    const void *prev = NULL;
    if (prev_o != Py_None) {
        mg_py_state *p = game_state_arg(prev_o, g, "prev_state", "state");
        if (!p)
            return NULL;
        prev = p->state;
    } else if (spec.transition) {
        int32_t a;
        if (prev_from_history(s, prevbuf, &a) < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "the commands start with a previous state: give prev_state and prev_action, or a state "
                            "with a move history");
            return NULL;
        }
        prev = prevbuf;
        prev_action = a;
    }
    py_ann ann;
    if (ann_arg(acts, vals, &ann) < 0)
        return NULL;
    PyArrayObject *order = NULL;
    if (order_o != Py_None) {
        order = (PyArrayObject *)PyArray_FROMANY(order_o, NPY_INT32, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
        if (!order) {
            ann_clear(&ann);
            return NULL;
        }
    }
    mg_mav_input in = {s->state, prev, prev_action, ann.n, ann.acts ? PyArray_DATA(ann.acts) : NULL,
                       ann.vals ? PyArray_DATA(ann.vals) : NULL, best, order ? PyArray_DATA(order) : NULL,
                       order ? (int)PyArray_DIM(order, 0) : 0};
    char *buf = PyMem_Malloc(WRITE_BUF);
    if (!buf) {
        ann_clear(&ann);
        Py_XDECREF(order);
        return PyErr_NoMemory();
    }
    char err[MG_ERRLEN] = "";
    long n = mg_mav_write(g, &spec, &in, parts, buf, WRITE_BUF, err, sizeof err);
    ann_clear(&ann);
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
        long len = state_prompt(seq, i, cmds, &g, &spec, buf, sizeof buf);
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
    reader_args a;
    if (reader_args_parse(args, kw, 0, &a) < 0)
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
    const mg_game *g = game_arg(go);
    mg_mav_spec spec;
    if (!g || spec_arg(g, cmds, &spec) < 0)
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

/* ---- parsing --------------------------------------------------------------------------------- */

static const char *const STATUS_NAMES[] = {"legal", "illegal", "malformed", "unchecked"};

static PyObject *none_ref(void)
{
    Py_INCREF(Py_None);
    return Py_None;
}

static PyObject *tri(int v) { return v < 0 ? none_ref() : PyBool_FromLong(v); }

/* Text that may hold arbitrary bytes copied from model output (invalid UTF-8 replaced). */
static PyObject *ustr(const char *s) { return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace"); }

static PyObject *slot_tuple(const mg_mav_slot *s)
{
    /* (present, valid, is_input, correct, text, ref_text) */
    return Py_BuildValue("(OOONNN)", s->present ? Py_True : Py_False, s->valid ? Py_True : Py_False,
                         s->is_input ? Py_True : Py_False, tri(s->correct), ustr(s->valid ? s->text : ""),
                         ustr(s->ref_text));
}

/* The %top entries as (list of move strings, int32 array [n, 6] of action, bucket, status code,
 * duplicate, line, col). */
static PyObject *moves_columns(const mg_mav_result *r)
{
    npy_intp dims[2] = {r->n_moves, 6};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_INT32);
    PyObject *names = PyList_New(r->n_moves);
    if (!arr || !names) {
        Py_XDECREF(arr);
        Py_XDECREF(names);
        return NULL;
    }
    int32_t *d = PyArray_DATA((PyArrayObject *)arr);
    for (int i = 0; i < r->n_moves; i++) {
        const mg_mav_move *mv = &r->moves[i];
        PyObject *u = PyUnicode_DecodeUTF8(mv->move, (Py_ssize_t)mv->len, "replace"); /* NUL bytes kept */
        if (!u) {
            Py_DECREF(arr);
            Py_DECREF(names);
            return NULL;
        }
        PyList_SET_ITEM(names, i, u);
        int32_t *row = d + 6 * i;
        row[0] = mv->action;
        row[1] = mv->bucket;
        row[2] = mv->status;
        row[3] = mv->duplicate;
        row[4] = mv->line;
        row[5] = mv->col;
    }
    return Py_BuildValue("(NN)", names, arr);
}

/* The parse result as a flat tuple (mavgame/mav.py ParseResult._from_tuple documents the order). */
static PyObject *result_tuple(const mg_mav_result *r)
{
    enum { N = 25 };
    PyObject *it[N] = {NULL};
    int k = 0;
    it[k++] = PyUnicode_FromString(r->game ? r->game->name : "");
    it[k++] = PyBool_FromLong(r->ok);
    it[k++] = PyBool_FromLong(r->header_ok);
    it[k++] = PyBool_FromLong(r->complete);
    PyObject *issues = PyList_New(0);
    for (int i = 0; issues && i < r->n_issues && i < MG_MAV_MAX_ISSUES; i++) {
        PyObject *t = Py_BuildValue("(iiN)", r->issues[i].line, r->issues[i].col, ustr(r->issues[i].msg));
        if (!t || PyList_Append(issues, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(issues);
            break;
        }
        Py_DECREF(t);
    }
    it[k++] = issues;
    it[k++] = PyLong_FromLong(r->n_issues);
    if (r->header_ok) {
        char h[512];
        mg_mav_header(r->game, &r->spec, h, sizeof h);
        it[k++] = PyUnicode_FromString(h);
    } else {
        it[k++] = none_ref();
    }
    it[k++] = PyLong_FromLong(r->header_ok ? r->spec.n_inputs : 0);
    it[k++] = PyBool_FromLong(r->header_ok && r->spec.transition);
    for (int i = 0; i < MG_MAV_NSLOTS; i++)
        it[k++] = slot_tuple(&r->slot[i]);
    it[k++] = ustr(r->prev_action);
    it[k++] = PyLong_FromLong(r->prev_action_id);
    it[k++] = PyBool_FromLong(r->top_present);
    it[k++] = PyLong_FromLong(r->top_k);
    it[k++] = r->top_outcome && r->outcome != MG_ONGOING ? PyUnicode_FromString(mg_result_string(r->outcome))
                                                         : none_ref();
    it[k++] = PyBool_FromLong(r->top_outcome);
    PyObject *moves = moves_columns(r);
    it[k++] = moves;
    it[k++] = PyBool_FromLong(r->best_present);
    it[k++] = PyBool_FromLong(r->best_invalid);
    it[k++] = ustr(r->best);
    it[k++] = PyLong_FromLong(r->best_id);
    it[k++] = PyUnicode_FromString(r->best_present && !r->best_invalid ? STATUS_NAMES[r->best_status] : "");
    if (r->has_ref) {
        int listed = r->count_expected == r->ref_n_legal && r->ref_outcome == MG_ONGOING;
        npy_intp nm = listed ? r->n_missing : 0;
        PyObject *miss = PyArray_SimpleNew(1, &nm, NPY_INT32);
        if (miss && nm)
            memcpy(PyArray_DATA((PyArrayObject *)miss), r->missing, (size_t)nm * sizeof(int32_t));
        PyObject *mstr = PyList_New(nm);
        for (npy_intp i = 0; mstr && i < nm; i++) {
            char b[MG_MAX_MOVE_STR];
            size_t l = r->game->action_to_str(r->ref, r->missing[i], b, sizeof b);
            PyObject *u = PyUnicode_FromStringAndSize(b, (Py_ssize_t)l);
            if (!u) {
                Py_CLEAR(mstr);
                break;
            }
            PyList_SET_ITEM(mstr, i, u);
        }
        /* (ref_n_legal, ref_result, n_illegal, n_malformed, n_duplicate, n_missing, n_correct,
         *  count_expected, outcome_correct, missing actions, missing moves) */
        it[k++] = (miss && mstr) ? Py_BuildValue("(isiiiiiiNNN)", r->ref_n_legal, mg_result_string(r->ref_outcome),
                                                 r->n_illegal, r->n_malformed, r->n_duplicate, r->n_missing,
                                                 r->n_correct, r->count_expected, tri(r->outcome_correct), miss, mstr)
                                 : NULL;
        if (!(miss && mstr)) {
            Py_XDECREF(miss);
            Py_XDECREF(mstr);
        }
    } else {
        it[k++] = none_ref();
    }
    PyObject *t = k == N ? PyTuple_New(N) : NULL;
    for (int i = 0; i < N; i++) {
        if (!it[i] || !t) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_SystemError, "mav_parse: result tuple has the wrong size");
            for (int j = 0; j < N; j++)
                Py_XDECREF(it[j]);
            Py_XDECREF(t);
            return NULL;
        }
    }
    for (int i = 0; i < N; i++)
        PyTuple_SET_ITEM(t, i, it[i]);
    return t;
}

/* mav_parse(game, text, true_state=None, board_size=0, flags=0) -> tuple */
static PyObject *py_mav_parse(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    reader_args a;
    if (reader_args_parse(args, kw, 1, &a) < 0)
        return NULL;
    /* on the stack (about 50 KB): a heap block this size is returned to the system and faulted
     * in again on every call */
    mg_mav_result res;
    mg_mav_parse(a.g, &a.cfg, a.text, (size_t)a.n, a.ref, &res);
    return result_tuple(&res);
}

static PyObject *metrics_dict(const mg_mav_metrics *m)
{
    return Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l}", "examples", m->examples, "parsed_ok",
                         m->parsed_ok, "best_total", m->best_total, "best_legal", m->best_legal, "top_all_examples",
                         m->top_all_examples, "top_listed", m->top_listed, "top_correct", m->top_correct,
                         "top_legal", m->top_legal, "state_total", m->state_total, "state_correct", m->state_correct,
                         "outcome_total", m->outcome_total, "outcome_correct", m->outcome_correct);
}

/* mav_metrics(game, texts, true_states=None) -> dict of counts */
static PyObject *py_mav_metrics(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *go, *texts, *refs = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O:mav_metrics", &go, &texts, &refs))
        return NULL;
    const mg_game *g = game_arg(go);
    if (!g)
        return NULL;
    PyObject *ts = PySequence_Fast(texts, "texts must be a sequence of str");
    if (!ts)
        return NULL;
    PyObject *rs = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(ts);
    if (refs != Py_None) {
        rs = PySequence_Fast(refs, "true_states must be a sequence of game states or None");
        if (!rs) {
            Py_DECREF(ts);
            return NULL;
        }
        if (PySequence_Fast_GET_SIZE(rs) != n) {
            PyErr_Format(PyExc_ValueError, "%zd texts but %zd true states", n, PySequence_Fast_GET_SIZE(rs));
            Py_DECREF(ts);
            Py_DECREF(rs);
            return NULL;
        }
    }
    mg_mav_result *r = PyMem_Malloc(sizeof *r);
    mg_mav_metrics met;
    memset(&met, 0, sizeof met);
    PyObject *res = NULL;
    if (!r) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len;
        const char *t = text_arg(PySequence_Fast_GET_ITEM(ts, i), &len, item_name("texts", i, NULL).s);
        if (!t)
            goto done;
        mg_config cfg = {0, 0};
        const void *ref = NULL;
        if (rs && ref_arg(PySequence_Fast_GET_ITEM(rs, i), g, &ref, &cfg, item_name("true_states", i, NULL).s) < 0)
            goto done;
        mg_mav_parse(g, &cfg, t, (size_t)len, ref, r);
        mg_mav_metrics_add(&met, r);
    }
    res = metrics_dict(&met);
done:
    PyMem_Free(r);
    Py_DECREF(ts);
    Py_XDECREF(rs);
    return res;
}

/* ---- values ------------------------------------------------------------------------------------ */

/* An element-wise function's argument as an array of in_type (converted with `flags`) and its
 * result, an array of out_type of the same shape: 0, or -1 with a TypeError "<needs>, got <type>". */
static int map_arrays(PyObject *arg, int in_type, int flags, int out_type, const char *needs, PyArrayObject **a,
                      PyObject **out)
{
    *a = (PyArrayObject *)PyArray_FROMANY(arg, in_type, 0, 0, flags);
    if (!*a) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s, got %.100s", needs, Py_TYPE(arg)->tp_name);
        return -1;
    }
    *out = PyArray_NewLikeArray(*a, NPY_CORDER, PyArray_DescrFromType(out_type), 0);
    if (!*out) {
        Py_CLEAR(*a);
        return -1;
    }
    return 0;
}

#define MAP_CAST (NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST)

static PyObject *map_double(PyObject *arg, double (*f)(double), const char *needs)
{
    PyArrayObject *a;
    PyObject *out;
    if (map_arrays(arg, NPY_FLOAT64, MAP_CAST, NPY_FLOAT64, needs, &a, &out) < 0)
        return NULL;
    npy_intp n = PyArray_SIZE(a);
    const double *x = PyArray_DATA(a);
    double *y = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp i = 0; i < n; i++)
        y[i] = f(x[i]);
    Py_DECREF(a);
    return out;
}

static PyObject *py_win_prob_cp(PyObject *Py_UNUSED(m), PyObject *arg)
{
    return map_double(arg, mg_mav_win_prob_cp, "win_prob_from_cp needs numbers");
}

static PyObject *py_bucket(PyObject *Py_UNUSED(m), PyObject *arg)
{
    PyArrayObject *a;
    PyObject *out;
    if (map_arrays(arg, NPY_FLOAT64, MAP_CAST, NPY_INT32, "bucket needs win probabilities", &a, &out) < 0)
        return NULL;
    npy_intp n = PyArray_SIZE(a);
    const double *x = PyArray_DATA(a);
    int32_t *y = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp i = 0; i < n; i++) {
        if (!(x[i] >= 0.0 && x[i] <= 1.0)) {
            char v[40];
            snprintf(v, sizeof v, "%g", x[i]);
            PyErr_Format(PyExc_ValueError, "win probability %s is not in [0, 1] (at flat index %zd)", v,
                         (Py_ssize_t)i);
            Py_DECREF(a);
            Py_DECREF(out);
            return NULL;
        }
        y[i] = mg_mav_bucket(x[i]);
    }
    Py_DECREF(a);
    return out;
}

static PyObject *py_bucket_value(PyObject *Py_UNUSED(m), PyObject *arg)
{
    PyArrayObject *a;
    PyObject *out;
    if (map_arrays(arg, NPY_INT64, NPY_ARRAY_IN_ARRAY, NPY_FLOAT64, "bucket_value needs integer bucket indices", &a,
                   &out) < 0)
        return NULL;
    npy_intp n = PyArray_SIZE(a);
    const int64_t *x = PyArray_DATA(a);
    double *y = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp i = 0; i < n; i++) {
        if (x[i] < 0 || x[i] >= MG_MAV_BUCKETS) {
            PyErr_Format(PyExc_ValueError, "bucket %lld is not in 0..63", (long long)x[i]);
            Py_DECREF(a);
            Py_DECREF(out);
            return NULL;
        }
        y[i] = mg_mav_bucket_value((int)x[i]);
    }
    Py_DECREF(a);
    return out;
}

/* mav_score(dist[..., 64], method, logits) -> values[...] */
static PyObject *py_score(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *arg, *method_o;
    int logits = 0;
    if (!PyArg_ParseTuple(args, "OO|p:mav_score", &arg, &method_o, &logits))
        return NULL;
    const char *method = mg_py_text_arg(method_o, "method");
    if (!method)
        return NULL;
    int meth;
    if (strcmp(method, "max") == 0)
        meth = MG_MAV_SCORE_MAX;
    else if (strcmp(method, "mean") == 0)
        meth = MG_MAV_SCORE_MEAN;
    else {
        PyErr_Format(PyExc_ValueError, "scoring method must be 'max' or 'mean', not '%s'", method);
        return NULL;
    }
    int f32 = PyArray_Check(arg) && PyArray_TYPE((PyArrayObject *)arg) == NPY_FLOAT32;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(arg, f32 ? NPY_FLOAT32 : NPY_FLOAT64, 1, 0,
                                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST);
    if (!a)
        return NULL;
    int nd = PyArray_NDIM(a);
    if (PyArray_DIM(a, nd - 1) != MG_MAV_BUCKETS) {
        PyErr_Format(PyExc_ValueError, "distributions need a last axis of 64 buckets, got %zd",
                     (Py_ssize_t)PyArray_DIM(a, nd - 1));
        Py_DECREF(a);
        return NULL;
    }
    npy_intp dims[NPY_MAXDIMS];
    size_t rows = 1;
    for (int i = 0; i < nd - 1; i++) {
        dims[i] = PyArray_DIM(a, i);
        rows *= (size_t)dims[i];
    }
    PyObject *out = PyArray_SimpleNew(nd - 1, dims, NPY_FLOAT64);
    if (!out) {
        Py_DECREF(a);
        return NULL;
    }
    char err[MG_ERRLEN] = "";
    long rc;
    double *y = PyArray_DATA((PyArrayObject *)out);
    Py_BEGIN_ALLOW_THREADS
    rc = f32 ? mg_mav_score_f32(PyArray_DATA(a), rows, 64, meth, logits, y, err, sizeof err)
             : mg_mav_score(PyArray_DATA(a), rows, 64, meth, logits, y, err, sizeof err);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    if (rc < 0) {
        Py_DECREF(out);
        PyErr_Format(PyExc_ValueError, "bad distribution: %s", err);
        return NULL;
    }
    return out;
}

/* ---- tokenizer -------------------------------------------------------------------------------- */

typedef struct py_tok {
    PyObject_HEAD
    mg_tokenizer *t;
} py_tok;

static void tok_dealloc(py_tok *self)
{
    PyMem_Free(self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int tok_init(py_tok *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"version", NULL};
    int version = MG_TOK_VERSION;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:MavTokenizer", kwlist, &version))
        return -1;
    mg_tokenizer *t = PyMem_Malloc(sizeof *t);
    if (!t) {
        PyErr_NoMemory();
        return -1;
    }
    char err[MG_ERRLEN] = "";
    if (mg_tok_init(t, version, err, sizeof err) != MG_OK) {
        PyMem_Free(t);
        PyErr_SetString(PyExc_ValueError, err);
        return -1;
    }
    PyMem_Free(self->t);
    self->t = t;
    return 0;
}

#define TOK_CHECK(self)                                                                        \
    do {                                                                                       \
        if (!(self)->t) {                                                                      \
            PyErr_SetString(PyExc_ValueError, "tokenizer is not initialised");                 \
            return NULL;                                                                       \
        }                                                                                      \
    } while (0)

static PyObject *tok_encode(py_tok *self, PyObject *arg)
{
    TOK_CHECK(self);
    Py_ssize_t n;
    const char *s = text_arg(arg, &n, "text");
    if (!s)
        return NULL;
    npy_intp dim = n;
    PyObject *arr = PyArray_SimpleNew(1, &dim, NPY_INT32);
    if (!arr)
        return NULL;
    size_t k = mg_tok_encode(self->t, s, (size_t)n, PyArray_DATA((PyArrayObject *)arr), (size_t)n);
    PyArray_Dims nd = {&dim, 1};
    dim = (npy_intp)k;
    PyObject *r = PyArray_Resize((PyArrayObject *)arr, &nd, 0, NPY_CORDER);
    if (!r) {
        Py_DECREF(arr);
        return NULL;
    }
    Py_DECREF(r);
    return arr;
}

/* ids -> bytes (NULL with ValueError naming a bad id). */
static PyObject *decode_ids(const mg_tokenizer *t, const int32_t *ids, size_t n)
{
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * MG_TOK_MAX_LEN));
    if (!b)
        return NULL;
    long k = mg_tok_decode(t, ids, n, PyBytes_AS_STRING(b), n * MG_TOK_MAX_LEN);
    if (k < 0) {
        long i = -1 - k;
        Py_DECREF(b);
        PyErr_Format(PyExc_ValueError, "token id %d at position %ld is not in the vocabulary (0..%d)", (int)ids[i], i,
                     t->n - 1);
        return NULL;
    }
    if (_PyBytes_Resize(&b, k) < 0)
        return NULL;
    return b;
}

static PyArrayObject *ids_arg(PyObject *arg, int nd)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(arg, NPY_INT32, nd, nd, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a) {
        PyErr_Clear();
        a = (PyArrayObject *)PyArray_FROMANY(arg, NPY_INT64, nd, nd, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!a)
            return NULL;
        /* check the range before casting */
        npy_intp n = PyArray_SIZE(a);
        const int64_t *x = PyArray_DATA(a);
        for (npy_intp i = 0; i < n; i++)
            if (x[i] < INT32_MIN || x[i] > INT32_MAX) {
                PyErr_Format(PyExc_ValueError, "token id %lld at flat position %zd is not in the vocabulary",
                             (long long)x[i], (Py_ssize_t)i);
                Py_DECREF(a);
                return NULL;
            }
        PyArrayObject *c = (PyArrayObject *)PyArray_Cast(a, NPY_INT32);
        Py_DECREF(a);
        return c;
    }
    return a;
}

static PyObject *tok_decode_bytes(py_tok *self, PyObject *arg)
{
    TOK_CHECK(self);
    PyArrayObject *a = ids_arg(arg, 1);
    if (!a)
        return NULL;
    PyObject *b = decode_ids(self->t, PyArray_DATA(a), (size_t)PyArray_DIM(a, 0));
    Py_DECREF(a);
    return b;
}

static PyObject *tok_decode(py_tok *self, PyObject *arg)
{
    PyObject *b = tok_decode_bytes(self, arg);
    if (!b)
        return NULL;
    PyObject *s = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), "replace");
    Py_DECREF(b);
    return s;
}

/* encode_batch(texts, max_len=None) -> (ids[B, L] int32 padded with <pad>, lengths[B] int32) */
static PyObject *tok_encode_batch(py_tok *self, PyObject *args, PyObject *kw)
{
    TOK_CHECK(self);
    static char *kwlist[] = {"texts", "max_len", NULL};
    PyObject *texts, *ml = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:encode_batch", kwlist, &texts, &ml))
        return NULL;
    Py_ssize_t max_len;
    if (max_len_arg(ml, 0, &max_len) < 0)
        return NULL;
    tok_rows r;
    PyObject *res = NULL;
    if (rows_init(&r, texts, "texts must be a sequence of str") < 0)
        goto done;
    for (Py_ssize_t i = 0; i < r.B; i++) {
        Py_ssize_t n;
        const char *s = text_arg(PySequence_Fast_GET_ITEM(r.seq, i), &n, item_name("texts", i, NULL).s);
        if (!s)
            goto done;
        int32_t *row = rows_room(&r, (size_t)n);
        if (!row)
            goto done;
        size_t k = mg_tok_encode(self->t, s, (size_t)n, row, (size_t)n);
        if (max_len >= 0 && (Py_ssize_t)k > max_len) {
            PyErr_Format(PyExc_ValueError, "texts[%zd] has %zu tokens, more than max_len=%zd", i, k, max_len);
            goto done;
        }
        if (k > (size_t)INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "texts[%zd] is too long", i);
            goto done;
        }
        rows_end(&r, i, k);
    }
    res = rows_result(&r, max_len);
done:
    rows_free(&r);
    return res;
}

/* decode_batch(ids[B, L], lengths=None) -> list[str] */
static PyObject *tok_decode_batch(py_tok *self, PyObject *args, PyObject *kw)
{
    TOK_CHECK(self);
    static char *kwlist[] = {"ids", "lengths", NULL};
    PyObject *io, *lo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:decode_batch", kwlist, &io, &lo))
        return NULL;
    PyArrayObject *a = ids_arg(io, 2);
    if (!a)
        return NULL;
    npy_intp B = PyArray_DIM(a, 0), Lw = PyArray_DIM(a, 1);
    PyArrayObject *lens = NULL;
    if (lo != Py_None) {
        lens = (PyArrayObject *)PyArray_FROMANY(lo, NPY_INT64, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
        if (!lens || PyArray_DIM(lens, 0) != B) {
            if (lens)
                PyErr_Format(PyExc_ValueError, "lengths has %zd entries for %zd rows", (Py_ssize_t)PyArray_DIM(lens, 0),
                             (Py_ssize_t)B);
            Py_XDECREF(lens);
            Py_DECREF(a);
            return NULL;
        }
    }
    PyObject *out = PyList_New(B);
    const int32_t *D = PyArray_DATA(a);
    for (npy_intp i = 0; out && i < B; i++) {
        npy_intp n = Lw;
        if (lens) {
            n = ((const int64_t *)PyArray_DATA(lens))[i];
            if (n < 0 || n > Lw) {
                PyErr_Format(PyExc_ValueError, "lengths[%zd] = %zd is not in 0..%zd", (Py_ssize_t)i, (Py_ssize_t)n,
                             (Py_ssize_t)Lw);
                Py_CLEAR(out);
                break;
            }
        }
        PyObject *b = decode_ids(self->t, D + i * Lw, (size_t)n);
        PyObject *s = b ? PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), "replace") : NULL;
        Py_XDECREF(b);
        if (!s) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, s);
    }
    Py_XDECREF(lens);
    Py_DECREF(a);
    return out;
}

static PyObject *tok_vocab(py_tok *self, PyObject *Py_UNUSED(ignored))
{
    TOK_CHECK(self);
    PyObject *list = PyList_New(self->t->n);
    for (int i = 0; list && i < self->t->n; i++) {
        size_t l;
        const char *s = mg_tok_text(self->t, i, &l);
        PyObject *u = PyUnicode_DecodeLatin1(s, (Py_ssize_t)l, NULL);
        if (!u) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, u);
    }
    return list;
}

static PyObject *tok_kinds(py_tok *self, PyObject *Py_UNUSED(ignored))
{
    TOK_CHECK(self);
    PyObject *list = PyList_New(self->t->n);
    for (int i = 0; list && i < self->t->n; i++) {
        PyObject *u = PyUnicode_FromString(mg_tok_kind_name(self->t->kind[i]));
        if (!u) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, u);
    }
    return list;
}

static PyObject *tok_lookup(py_tok *self, PyObject *arg)
{
    TOK_CHECK(self);
    Py_ssize_t n;
    const char *s = text_arg(arg, &n, "token");
    if (!s)
        return NULL;
    return PyLong_FromLong(mg_tok_lookup(self->t, s, (size_t)n));
}

static PyObject *tok_get_size(py_tok *self, void *Py_UNUSED(c))
{
    TOK_CHECK(self);
    return PyLong_FromLong(self->t->n);
}

static PyObject *tok_get_version(py_tok *self, void *Py_UNUSED(c))
{
    TOK_CHECK(self);
    return PyLong_FromLong(self->t->version);
}

static PyMethodDef tok_methods[] = {
    {"encode", (PyCFunction)tok_encode, METH_O, "encode(text) -> numpy.ndarray[int32]"},
    {"decode", (PyCFunction)tok_decode, METH_O, "decode(ids) -> str (invalid UTF-8 replaced)"},
    {"decode_bytes", (PyCFunction)tok_decode_bytes, METH_O, "decode_bytes(ids) -> bytes (exact)"},
    {"encode_batch", (PyCFunction)(void (*)(void))tok_encode_batch, METH_VARARGS | METH_KEYWORDS,
     "encode_batch(texts, max_len=None) -> (ids[B, L] int32 padded with <pad> = 0, lengths[B] int32)"},
    {"decode_batch", (PyCFunction)(void (*)(void))tok_decode_batch, METH_VARARGS | METH_KEYWORDS,
     "decode_batch(ids[B, L], lengths=None) -> list[str]"},
    {"vocab", (PyCFunction)tok_vocab, METH_NOARGS, "vocab() -> list[str]: token texts by id (bytes as <0xNN>)"},
    {"kinds", (PyCFunction)tok_kinds, METH_NOARGS, "kinds() -> list[str]: token kinds by id"},
    {"lookup", (PyCFunction)tok_lookup, METH_O, "lookup(text) -> int: id of the token with this text, -1 if none"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tok_getset[] = {
    {"size", (getter)tok_get_size, NULL, "Vocabulary size.", NULL},
    {"version", (getter)tok_get_version, NULL, "Vocabulary version.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_tok_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MavTokenizer",
    .tp_basicsize = sizeof(py_tok),
    .tp_dealloc = (destructor)tok_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "MavTokenizer(version=1)\n\nThe fixed MAV vocabulary (see csrc/format/tokenizer.h).",
    .tp_methods = tok_methods,
    .tp_getset = tok_getset,
    .tp_init = (initproc)tok_init,
    .tp_new = PyType_GenericNew,
};

/* mav_prompt_tokens(tokenizer, states, commands) -> (ids[B, L], lengths[B]): prompts tokenised
 * directly (with <bos>), without Python strings in between. */
static PyObject *py_mav_prompt_tokens(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *to, *states, *cmds;
    if (!PyArg_ParseTuple(args, "O!OO:mav_prompt_tokens", &py_tok_type, &to, &states, &cmds))
        return NULL;
    py_tok *tk = (py_tok *)to;
    TOK_CHECK(tk);
    tok_rows r;
    PyObject *res = NULL;
    if (rows_init(&r, states, "states must be a sequence of game states") < 0)
        goto done;
    const mg_game *g = NULL;
    mg_mav_spec spec;
    char text[8192];
    for (Py_ssize_t i = 0; i < r.B; i++) {
        long len = state_prompt(r.seq, i, cmds, &g, &spec, text, sizeof text);
        if (len < 0)
            goto done;
        int32_t *row = rows_room(&r, (size_t)len + 1);
        if (!row)
            goto done;
        row[0] = MG_TOK_BOS;
        rows_end(&r, i, 1 + mg_tok_encode(tk->t, text, (size_t)len, row + 1, (size_t)len));
    }
    res = rows_result(&r, -1);
done:
    rows_free(&r);
    return res;
}

/* ---- example builder ------------------------------------------------------------------------- */

typedef struct py_exb {
    PyObject_HEAD
    py_tok *tok;
    mg_rng rng;
    mg_mav_example_opts opts;
} py_exb;

static void exb_dealloc(py_exb *self)
{
    Py_XDECREF(self->tok);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int exb_init(py_exb *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tokenizer", "seed", "p_transition", "p_top", "p_top_all", "k_slack", "p_best",
                             "p_after", "p_shuffle", "p_state_only", "p_fen_only", "add_bos", "add_eos", NULL};
    PyObject *to;
    unsigned long long seed = 0;
    mg_mav_example_opts o;
    mg_mav_example_opts_default(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|Kdddidddddpp:MavExampleBuilder", kwlist, &py_tok_type, &to,
                                     &seed, &o.p_transition, &o.p_top, &o.p_top_all, &o.k_slack, &o.p_best,
                                     &o.p_after, &o.p_shuffle, &o.p_state_only, &o.p_fen_only, &o.add_bos,
                                     &o.add_eos))
        return -1;
    char err[MG_ERRLEN];
    if (mg_mav_example_opts_check(&o, err, sizeof err) != MG_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        return -1;
    }
    Py_INCREF(to);
    Py_XDECREF(self->tok);
    self->tok = (py_tok *)to;
    self->opts = o;
    mg_rng_seed(&self->rng, seed);
    return 0;
}

/* build(items, max_len=None, return_text=False) with items of
 * (state, actions, values, best, prev_state, prev_action, use_history). */
static PyObject *exb_build(py_exb *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"items", "max_len", "return_text", NULL};
    PyObject *items, *ml = Py_None;
    int return_text = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Op:build", kwlist, &items, &ml, &return_text))
        return NULL;
    if (!self->tok || !self->tok->t) {
        PyErr_SetString(PyExc_ValueError, "example builder is not initialised");
        return NULL;
    }
    Py_ssize_t max_len;
    if (max_len_arg(ml, 1, &max_len) < 0)
        return NULL;
    tok_rows r;
    if (rows_init(&r, items, "items must be a sequence") < 0) {
        rows_free(&r);
        return NULL;
    }
    Py_ssize_t B = r.B;
    const size_t CAP = 32768, TEXT = 262144;
    int32_t *tmp_ids = PyMem_Malloc(CAP * sizeof(int32_t));
    uint8_t *mask = NULL, *tmp_mask = PyMem_Malloc(CAP);
    char *text = PyMem_Malloc(TEXT);
    size_t cap_mask = 0;
    PyObject *texts = return_text ? PyList_New(B) : NULL;
    PyObject *res = NULL;
    if (!tmp_ids || !tmp_mask || !text || (return_text && !texts)) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < B; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(r.seq, i);
        PyObject *so, *acts, *vals, *po;
        int best, prev_action, use_history;
        if (!PyTuple_Check(it) ||
            !PyArg_ParseTuple(it, "OOOiOip:items[i]", &so, &acts, &vals, &best, &po, &prev_action, &use_history)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "items[%zd] must be a tuple (state, actions, values, best, prev_state, "
                             "prev_action, use_history)", i);
            goto done;
        }
        mg_py_state *s = mg_py_state_arg(so, item_name("items", i, "state").s);
        if (!s)
            goto done;
        const mg_game *g = s->game;
        _Alignas(16) unsigned char prevbuf[MG_MAX_STATE];
        mg_mav_input in = {s->state, NULL, -1, 0, NULL, NULL, best, NULL, 0};
        if (po != Py_None) {
            mg_py_state *p = game_state_arg(po, g, item_name("items", i, "prev_state").s, "state");
            if (!p)
                goto done;
            in.prev = p->state;
            in.prev_action = prev_action;
        } else if (use_history && prev_from_history(s, prevbuf, &in.prev_action) == 0) {
            in.prev = prevbuf;
        }
        py_ann ann;
        if (ann_arg(acts, vals, &ann) < 0)
            goto done;
        in.n = ann.n;
        in.actions = ann.acts ? PyArray_DATA(ann.acts) : NULL;
        in.values = ann.vals ? PyArray_DATA(ann.vals) : NULL;
        char err[MG_ERRLEN] = "";
        size_t pl = 0;
        long k = mg_mav_example_build(self->tok->t, g, &in, &self->opts, &self->rng, tmp_ids, tmp_mask, CAP, text,
                                      TEXT, &pl, NULL, err, sizeof err);
        ann_clear(&ann);
        if (k < 0) {
            PyErr_Format(PyExc_ValueError, "items[%zd]: %s", i, err);
            goto done;
        }
        if (max_len >= 0 && k > max_len) {
            PyErr_Format(PyExc_ValueError, "items[%zd]: the example has %ld tokens, more than max_len=%zd", i, k,
                         max_len);
            goto done;
        }
        if (return_text) {
            size_t tl = strlen(text);
            PyObject *t = Py_BuildValue("(s#s#)", text, (Py_ssize_t)pl, text + pl, (Py_ssize_t)(tl - pl));
            if (!t)
                goto done;
            PyList_SET_ITEM(texts, i, t);
        }
        int32_t *row = rows_room(&r, (size_t)k);
        if (!row)
            goto done;
        uint8_t *nm = reserve(mask, &cap_mask, r.used + (size_t)k, sizeof *mask);
        if (!nm)
            goto done;
        mask = nm;
        memcpy(row, tmp_ids, (size_t)k * sizeof(int32_t));
        memcpy(mask + r.used, tmp_mask, (size_t)k);
        rows_end(&r, i, (size_t)k);
    }
    {
        const int32_t *L = r.L;
        npy_intp dims[2] = {B, max_len >= 0 ? max_len : (npy_intp)r.longest};
        PyObject *IA = rows_array(&r, dims[1]);
        PyObject *MA = PyArray_ZEROS(2, dims, NPY_BOOL, 0);
        if (!IA || !MA) {
            Py_XDECREF(IA);
            Py_XDECREF(MA);
            goto done;
        }
        npy_bool *DM = PyArray_DATA((PyArrayObject *)MA);
        size_t off = 0;
        for (Py_ssize_t i = 0; i < B; i++) {
            for (int32_t j = 0; j < L[i]; j++)
                DM[(size_t)i * (size_t)dims[1] + (size_t)j] = mask[off + (size_t)j] != 0;
            off += (size_t)L[i];
        }
        if (return_text)
            res = Py_BuildValue("(NNON)", IA, MA, r.lens, texts);
        else
            res = Py_BuildValue("(NNO)", IA, MA, r.lens);
        texts = NULL;
    }
done:
    rows_free(&r);
    PyMem_Free(mask);
    PyMem_Free(tmp_ids);
    PyMem_Free(tmp_mask);
    PyMem_Free(text);
    Py_XDECREF(texts);
    return res;
}

/* Generator state as 4 ints (for checkpointing), and restoring it. */
static PyObject *exb_get_rng_state(py_exb *self, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(KKKK)", (unsigned long long)self->rng.s[0], (unsigned long long)self->rng.s[1],
                         (unsigned long long)self->rng.s[2], (unsigned long long)self->rng.s[3]);
}

static PyObject *exb_set_rng_state(py_exb *self, PyObject *arg)
{
    unsigned long long s[4];
    if (!PyArg_ParseTuple(arg, "KKKK:set_rng_state", &s[0], &s[1], &s[2], &s[3]))
        return NULL;
    if (!(s[0] | s[1] | s[2] | s[3])) {
        PyErr_SetString(PyExc_ValueError, "generator state must not be all zero");
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        self->rng.s[i] = s[i];
    Py_RETURN_NONE;
}

static PyMethodDef exb_methods[] = {
    {"build", (PyCFunction)(void (*)(void))exb_build, METH_VARARGS | METH_KEYWORDS,
     "build(items, max_len=None, return_text=False) -> (ids[B, L] int32, loss_mask[B, L] bool, lengths[B] "
     "int32[, texts])\n\nitems: tuples (state, actions, values, best, prev_state, prev_action, use_history)."},
    {"get_rng_state", (PyCFunction)exb_get_rng_state, METH_NOARGS, "get_rng_state() -> (int, int, int, int)"},
    {"set_rng_state", (PyCFunction)exb_set_rng_state, METH_O, "set_rng_state(state)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject py_exb_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MavExampleBuilder",
    .tp_basicsize = sizeof(py_exb),
    .tp_dealloc = (destructor)exb_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "MavExampleBuilder(tokenizer, seed=0, p_transition=0.5, p_top=1, p_top_all=0.25, k_slack=4, p_best=1,\n"
              "                  p_after=0, p_shuffle=1, p_state_only=1/3, p_fen_only=1/3, add_bos=True, add_eos=True)",
    .tp_methods = exb_methods,
    .tp_init = (initproc)exb_init,
    .tp_new = PyType_GenericNew,
};

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef mav_functions[] = {
    {"mav_write", (PyCFunction)(void (*)(void))py_mav_write, METH_VARARGS | METH_KEYWORDS,
     "mav_write(state, commands, part='all', prev_state=None, prev_action=-1, actions=None, values=None, best=-1, "
     "order=None) -> str"},
    {"mav_prompts", py_mav_prompts, METH_VARARGS, "mav_prompts(states, commands) -> list[str]"},
    {"mav_prompt_tokens", py_mav_prompt_tokens, METH_VARARGS,
     "mav_prompt_tokens(tokenizer, states, commands) -> (ids[B, L] int32, lengths[B] int32)"},
    {"mav_state_text", py_mav_state_text, METH_O, "mav_state_text(state) -> str: the %state value"},
    {"mav_state_to_game_text", (PyCFunction)(void (*)(void))py_mav_state_to_game_text, METH_VARARGS | METH_KEYWORDS,
     "mav_state_to_game_text(game, text, board_size=0, flags=0) -> str: the game's own text"},
    {"mav_spec", py_mav_spec, METH_VARARGS, "mav_spec(game, commands) -> dict (header, n_inputs, ...)"},
    {"mav_move_tokens", py_mav_move_tokens, METH_O, "mav_move_tokens(game) -> list[str]"},
    {"mav_parse", (PyCFunction)(void (*)(void))py_mav_parse, METH_VARARGS | METH_KEYWORDS,
     "mav_parse(game, text, true_state=None, board_size=0, flags=0) -> tuple (see mavgame.mav.ParseResult)"},
    {"mav_metrics", py_mav_metrics, METH_VARARGS, "mav_metrics(game, texts, true_states=None) -> dict of counts"},
    {"mav_win_prob_cp", py_win_prob_cp, METH_O, "mav_win_prob_cp(cp) -> float64 array"},
    {"mav_bucket", py_bucket, METH_O, "mav_bucket(p) -> int32 array"},
    {"mav_bucket_value", py_bucket_value, METH_O, "mav_bucket_value(b) -> float64 array"},
    {"mav_score", py_score, METH_VARARGS, "mav_score(dist[..., 64], method, logits=False) -> float64 array"},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mav(PyObject *m)
{
    if (PyModule_AddFunctions(m, mav_functions) < 0)
        return -1;
    if (PyType_Ready(&py_tok_type) < 0 || PyType_Ready(&py_exb_type) < 0)
        return -1;
    Py_INCREF(&py_tok_type);
    if (PyModule_AddObject(m, "MavTokenizer", (PyObject *)&py_tok_type) < 0) {
        Py_DECREF(&py_tok_type);
        return -1;
    }
    Py_INCREF(&py_exb_type);
    if (PyModule_AddObject(m, "MavExampleBuilder", (PyObject *)&py_exb_type) < 0) {
        Py_DECREF(&py_exb_type);
        return -1;
    }
    if (PyModule_AddIntConstant(m, "MAV_VOCAB_VERSION", MG_TOK_VERSION) < 0)
        return -1;
    return 0;
}
