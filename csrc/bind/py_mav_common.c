/* py_mav_common.c - argument converters shared by the MAV bindings (see py_mav_common.h). */
#include "py_mav_common.h"

#include <string.h>

/* UTF-8 bytes of a str or bytes object.  A NUL inside is kept (the length goes with the text):
 * these are MAV texts and model outputs, which the parser, the metrics and the tokenizer take
 * as data and report on (a parse issue, an unknown character) rather than refuse as arguments. */
const char *mg_py_data_arg(PyObject *o, Py_ssize_t *n, const char *what)
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

const mg_game *mg_py_mav_game_arg(PyObject *o)
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
mg_py_state *mg_py_game_state_arg(PyObject *o, const mg_game *g, const char *what, const char *other)
{
    mg_py_state *s = mg_py_state_arg(o, what);
    if (s && s->game != g) {
        PyErr_Format(PyExc_ValueError, "%s is a %s state, %s is %s", what, s->game->name, other, g->name);
        return NULL;
    }
    return s;
}

/* Reference state argument: None or a State of game g (its configuration then replaces *cfg). */
int mg_py_ref_arg(PyObject *o, const mg_game *g, const void **ref, mg_config *cfg, const char *what)
{
    *ref = NULL;
    if (o == Py_None)
        return 0;
    mg_py_state *s = mg_py_game_state_arg(o, g, what, "the text");
    if (!s)
        return -1;
    *ref = s->state;
    *cfg = s->cfg;
    return 0;
}


int mg_py_reader_args_parse(PyObject *args, PyObject *kw, int with_ref, mg_py_reader_args *a)
{
    static char *kw_plain[] = {"game", "text", "board_size", "flags", NULL};
    static char *kw_ref[] = {"game", "text", "true_state", "board_size", "flags", NULL};
    PyObject *go, *to, *ro = Py_None;
    int board_size = 0;
    unsigned int flags = 0;
    if (!(with_ref ? PyArg_ParseTupleAndKeywords(args, kw, "OO|OO&O&:mav_parse", kw_ref, &go, &to, &ro,
                                                 MG_PY_C_INT("board_size", &board_size),
                                                 MG_PY_INT("flags", 0, UINT_MAX, &flags))
                   : PyArg_ParseTupleAndKeywords(args, kw, "OO|O&O&:mav_state_to_game_text", kw_plain, &go, &to,
                                                 MG_PY_C_INT("board_size", &board_size),
                                                 MG_PY_INT("flags", 0, UINT_MAX, &flags))))
        return -1;
    a->cfg = (mg_config){board_size, flags};
    a->g = mg_py_mav_game_arg(go);
    if (!a->g)
        return -1;
    char err[MG_ERRLEN];
    if (mg_config_check(a->g, &a->cfg, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    a->text = mg_py_data_arg(to, &a->n, "text");
    if (!a->text)
        return -1;
    return mg_py_ref_arg(ro, a->g, &a->ref, &a->cfg, "true_state");
}


mg_py_arg_name mg_py_item_name(const char *seq, Py_ssize_t i, const char *field)
{
    mg_py_arg_name a;
    snprintf(a.s, sizeof a.s, "%s[%zd]%s%s", seq, i, field ? " " : "", field ? field : "");
    return a;
}

/* max_len argument: None (-1 in *max_len) or an int >= lo; 0, or -1 with an error naming it. */
int mg_py_max_len_arg(PyObject *ml, Py_ssize_t lo, Py_ssize_t *max_len)
{
    *max_len = -1;
    if (ml == Py_None)
        return 0;
    long long v;
    if (!MG_PY_INT_ARG(ml, "max_len", LLONG_MIN, PY_SSIZE_T_MAX, &v))
        return -1;
    *max_len = (Py_ssize_t)v;
    if (*max_len < lo) {
        PyErr_Format(PyExc_ValueError, "max_len must be >= %zd, got %zd", lo, *max_len);
        return -1;
    }
    return 0;
}

/* A PyMem buffer of `size`-byte elements (NULL: none yet) grown, at least doubling, to hold `need`
 * of them: the buffer (buf itself when it is large enough), or NULL with MemoryError, buf and
 * *cap unchanged. */
void *mg_py_reserve(void *buf, size_t *cap, size_t need, size_t size)
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


/* 0, or -1 with a TypeError `not_seq` when items is not a sequence (mg_py_rows_free it either way). */
int mg_py_rows_init(mg_py_rows *r, PyObject *items, const char *not_seq)
{
    *r = (mg_py_rows){.seq = PySequence_Fast(items, not_seq)};
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
int32_t *mg_py_rows_room(mg_py_rows *r, size_t n)
{
    int32_t *nb = mg_py_reserve(r->buf, &r->cap, r->used + n, sizeof *nb);
    if (!nb)
        return NULL;
    r->buf = nb;
    return nb + r->used;
}

/* Row i (written at mg_py_rows_room) has k tokens. */
void mg_py_rows_end(mg_py_rows *r, Py_ssize_t i, size_t k)
{
    r->L[i] = (int32_t)k;
    r->used += k;
    if (k > r->longest)
        r->longest = k;
}

/* The rows as a [B, width] int32 array padded with zeros (<pad>). */
PyObject *mg_py_rows_array(const mg_py_rows *r, npy_intp width)
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
PyObject *mg_py_rows_result(const mg_py_rows *r, npy_intp width)
{
    PyObject *ids = mg_py_rows_array(r, width >= 0 ? width : (npy_intp)r->longest);
    return ids ? Py_BuildValue("(NO)", ids, r->lens) : NULL;
}

void mg_py_rows_free(mg_py_rows *r)
{
    PyMem_Free(r->buf);
    Py_XDECREF(r->lens);
    Py_XDECREF(r->seq);
}

int mg_py_spec_arg(const mg_game *g, PyObject *o, mg_mav_spec *spec)
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
        mg_py_value_error(err);
        return -1;
    }
    return 0;
}

/* The previous state of `s` from its history (copy, then unmake its last move). */
int mg_py_prev_from_history(const mg_py_state *s, unsigned char *prev, int32_t *action)
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


void mg_py_ann_clear(mg_py_ann *a)
{
    Py_XDECREF(a->acts);
    Py_XDECREF(a->vals);
    a->acts = a->vals = NULL;
    a->n = 0;
}

int mg_py_ann_arg(PyObject *acts, PyObject *vals, mg_py_ann *a)
{
    a->acts = a->vals = NULL;
    a->n = 0;
    if (acts == Py_None && vals == Py_None)
        return 0;
    if (acts == Py_None || vals == Py_None) {
        PyErr_SetString(PyExc_ValueError, "an annotation needs both actions and values");
        return -1;
    }
    a->acts = (PyArrayObject *)mg_py_int_array(acts, NPY_INT32, 1, 1, "annotation actions");
    if (!a->acts)
        return -1;
    a->vals = (PyArrayObject *)mg_py_real_array(vals, NPY_FLOAT64, 1, 1, "annotation values");
    if (!a->vals) {
        mg_py_ann_clear(a);
        return -1;
    }
    npy_intp na = PyArray_DIM(a->acts, 0), nv = PyArray_DIM(a->vals, 0);
    if (na != nv) {
        PyErr_Format(PyExc_ValueError, "annotation: %zd actions but %zd values", (Py_ssize_t)na, (Py_ssize_t)nv);
        mg_py_ann_clear(a);
        return -1;
    }
    if (na > MG_MAX_MOVES) {
        PyErr_Format(PyExc_ValueError, "annotation: %zd moves, more than any position has", (Py_ssize_t)na);
        mg_py_ann_clear(a);
        return -1;
    }
    a->n = (int)na;
    return 0;
}

/* The prompt of states[i] for the commands `cmds` into buf, *g and *spec following the state's
 * game (the transition form from the state's last move): its length, or -1 with an error naming
 * states[i]. */
long mg_py_state_prompt(PyObject *seq, Py_ssize_t i, PyObject *cmds, const mg_game **g, mg_mav_spec *spec,
                         char *buf, size_t cap)
{
    mg_py_state *s = mg_py_state_arg(PySequence_Fast_GET_ITEM(seq, i), mg_py_item_name("states", i, NULL).s);
    if (!s)
        return -1;
    if (s->game != *g) {
        *g = s->game;
        if (mg_py_spec_arg(*g, cmds, spec) < 0)
            return -1;
    }
    _Alignas(16) unsigned char prevbuf[MG_MAX_STATE];
    mg_mav_input in = {s->state, NULL, -1, 0, NULL, NULL, -1, NULL, 0};
    if (spec->transition) {
        if (mg_py_prev_from_history(s, prevbuf, &in.prev_action) < 0) {
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

/* ---- weight files ------------------------------------------------------------------------ */

int mg_py_load_weights(PyObject *src, mg_py_load_path_fn from_path, mg_py_load_bytes_fn from_bytes, void *obj)
{
    char err[MG_ERRLEN + 1024]; /* the loader's message behind the path */
    int rc;
    if (from_bytes && PyObject_CheckBuffer(src) && !PyUnicode_Check(src)) {
        Py_buffer view;
        if (PyObject_GetBuffer(src, &view, PyBUF_SIMPLE) < 0)
            return -1;
        Py_BEGIN_ALLOW_THREADS
        rc = from_bytes(obj, view.buf, (size_t)view.len, err, sizeof err);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&view);
    } else {
        PyObject *path_obj;
        if (!PyUnicode_FSConverter(src, &path_obj))
            return -1;
        const char *path = PyBytes_AS_STRING(path_obj);
        Py_BEGIN_ALLOW_THREADS
        rc = from_path(obj, path, err, sizeof err);
        Py_END_ALLOW_THREADS
        Py_DECREF(path_obj);
    }
    if (rc != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    return 0;
}
