/*
 * py_mav_search.c - Python bindings of the internal-search traces (csrc/format/mav_search.h):
 * mav_trace_write and mav_trace_parse.  The typed Python API on top is mavgame/mav/search_trace.py
 * (write_trace, parse_trace, TraceResult, TraceNode).
 */
#include "state.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

#include "../format/mav_search.h"

#define TRACE_BUF (1 << 20)

/* A tree in packed arrays (mavgame.mav.search_trace.SearchTree.packed()): parent[n], action[n], offset[n + 1],
 * actions[m], values[m], best[n]; node i's annotation is actions/values[offset[i] .. offset[i + 1]). */
typedef struct tree_arg {
    int n;
    mg_trace_tree_node *nodes;
    PyArrayObject *arr[6];
} tree_arg;

static void tree_free(tree_arg *t)
{
    for (int i = 0; i < 6; i++)
        Py_XDECREF(t->arr[i]);
    PyMem_Free(t->nodes);
    memset(t, 0, sizeof *t);
}

static int tree_parse(PyObject *o, tree_arg *t)
{
    static const char *const names[6] = {"parent", "action", "offset", "actions", "values", "best"};
    memset(t, 0, sizeof *t);
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "tree must be a tuple of 6 arrays (parent, action, offset, actions, values, best): "
                        "SearchTree.packed()");
        return -1;
    }
    for (int i = 0; i < 6; i++) {
        char what[32];
        snprintf(what, sizeof what, "tree %s", names[i]);
        t->arr[i] = (PyArrayObject *)(i == 4 ? mg_py_real_array(PyTuple_GET_ITEM(o, i), NPY_FLOAT64, 1, 1, what)
                                             : mg_py_int_array(PyTuple_GET_ITEM(o, i), NPY_INT32, 1, 1, what));
        if (!t->arr[i]) {
            tree_free(t);
            return -1;
        }
    }
    npy_intp n = PyArray_DIM(t->arr[0], 0), m = PyArray_DIM(t->arr[3], 0);
    const char *bad = NULL;
    if (n < 1 || n > 1000000)
        bad = names[0];
    else if (PyArray_DIM(t->arr[1], 0) != n)
        bad = names[1];
    else if (PyArray_DIM(t->arr[2], 0) != n + 1)
        bad = names[2];
    else if (PyArray_DIM(t->arr[4], 0) != m)
        bad = names[4];
    else if (PyArray_DIM(t->arr[5], 0) != n)
        bad = names[5];
    if (bad) {
        PyErr_Format(PyExc_ValueError, "tree: array '%s' has the wrong length (%zd nodes, %zd annotated moves)", bad,
                     (Py_ssize_t)n, (Py_ssize_t)m);
        tree_free(t);
        return -1;
    }
    const int32_t *parent = PyArray_DATA(t->arr[0]), *action = PyArray_DATA(t->arr[1]);
    const int32_t *off = PyArray_DATA(t->arr[2]), *acts = PyArray_DATA(t->arr[3]), *best = PyArray_DATA(t->arr[5]);
    const double *vals = PyArray_DATA(t->arr[4]);
    t->n = (int)n;
    t->nodes = PyMem_Calloc((size_t)n, sizeof *t->nodes);
    if (!t->nodes) {
        tree_free(t);
        PyErr_NoMemory();
        return -1;
    }
    for (npy_intp i = 0; i < n; i++) {
        if (off[i] < 0 || off[i + 1] < off[i] || off[i + 1] > m || off[i + 1] - off[i] > MG_MAX_MOVES) {
            PyErr_Format(PyExc_ValueError, "tree: offset[%zd..%zd] = %d..%d is not a range of the %zd annotated moves",
                         (Py_ssize_t)i, (Py_ssize_t)i + 1, (int)off[i], (int)off[i + 1], (Py_ssize_t)m);
            tree_free(t);
            return -1;
        }
        mg_trace_tree_node *nd = &t->nodes[i];
        nd->parent = parent[i];
        nd->action = action[i];
        nd->n = off[i + 1] - off[i];
        nd->actions = acts + off[i];
        nd->values = vals + off[i];
        nd->best = best[i];
    }
    return 0;
}

static PyObject *choice_tuple(const mg_trace_choice *c)
{
    PyObject *acts = PyList_New(c->n);
    for (int i = 0; acts && i < c->n; i++)
        PyList_SET_ITEM(acts, i, PyLong_FromLong(c->actions[i]));
    return acts ? Py_BuildValue("(iN)", c->value, acts) : NULL;
}

/* The child form of a trace by name ("short" or "full"); -1 with a ValueError. */
static int trace_form_arg(const char *form)
{
    if (strcmp(form, "short") == 0)
        return MG_TRACE_FORM_SHORT;
    if (strcmp(form, "full") == 0)
        return MG_TRACE_FORM_FULL;
    PyErr_Format(PyExc_ValueError, "trace form must be 'short' or 'full', not '%s'", form);
    return -1;
}

/* mav_trace_write(state, tree, breadth, depth, part="all", form="short") -> (text, prompt length,
 * (value, [root actions])) with tree = SearchTree.packed() */
static PyObject *py_trace_write(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "tree", "breadth", "depth", "part", "form", NULL};
    PyObject *so, *nodes;
    int breadth, depth;
    const char *part = "all", *form_name = "short";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO&O&|ss:mav_trace_write", kwlist, &so, &nodes,
                                     MG_PY_C_INT("breadth", &breadth), MG_PY_C_INT("depth", &depth), &part,
                                     &form_name))
        return NULL;
    int form = trace_form_arg(form_name);
    if (form < 0)
        return NULL;
    mg_py_state *s = mg_py_state_arg(so, "state");
    if (!s)
        return NULL;
    int parts = strcmp(part, "prompt") == 0 ? MG_MAV_PART_PROMPT
                : strcmp(part, "target") == 0 ? MG_MAV_PART_TARGET
                : strcmp(part, "all") == 0    ? MG_MAV_PART_ALL
                                              : 0;
    if (!parts) {
        PyErr_Format(PyExc_ValueError, "part must be 'prompt', 'target' or 'all', not '%s'", part);
        return NULL;
    }
    tree_arg t;
    if (tree_parse(nodes, &t) < 0)
        return NULL;
    char *buf = PyMem_Malloc(TRACE_BUF);
    if (!buf) {
        tree_free(&t);
        return PyErr_NoMemory();
    }
    char err[MG_ERRLEN] = "";
    mg_trace_choice choice;
    memset(&choice, 0, sizeof choice);
    long n;
    size_t prompt_len = 0;
    /* a private copy of the position: another thread may push or pop the state while the GIL is released */
    _Alignas(16) unsigned char pos[MG_MAX_STATE];
    memcpy(pos, s->state, s->game->state_size);
    Py_BEGIN_ALLOW_THREADS
    n = mg_trace_write(s->game, pos, t.nodes, t.n, breadth, depth, form, parts, buf, TRACE_BUF, &choice, err,
                       sizeof err);
    if (n >= 0 && (parts & MG_MAV_PART_PROMPT)) {
        /* the prompt is the preamble, the header and the state line */
        for (int lines = 0; prompt_len < (size_t)n && lines < 3; prompt_len++)
            lines += buf[prompt_len] == '\n';
    }
    Py_END_ALLOW_THREADS
    tree_free(&t);
    PyObject *res = n < 0 ? mg_py_value_error(err)
                          : Py_BuildValue("(s#nN)", buf, (Py_ssize_t)n, (Py_ssize_t)prompt_len, choice_tuple(&choice));
    PyMem_Free(buf);
    return res;
}

/* Text of the model (any bytes) as str, invalid UTF-8 replaced. */
static PyObject *ustr(const char *s) { return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace"); }

static PyObject *tri(int v)
{
    if (v < 0)
        Py_RETURN_NONE;
    return PyBool_FromLong(v);
}

static PyObject *node_tuple(const mg_trace_result *r, const mg_trace_node *nd)
{
    PyObject *top = PyList_New(nd->n_top);
    for (int i = 0; top && i < nd->n_top; i++) {
        const mg_trace_entry *e = &r->entries[nd->top_off + i];
        static const char *const st[] = {"legal", "illegal", "malformed", "unchecked"};
        PyObject *x = Py_BuildValue("(Niis)", ustr(e->move), (int)e->action, (int)e->bucket, st[e->status & 3]);
        if (!x) {
            Py_CLEAR(top);
            break;
        }
        PyList_SET_ITEM(top, i, x);
    }
    PyObject *kids = PyList_New(nd->n_children);
    for (int i = 0; kids && i < nd->n_children; i++)
        PyList_SET_ITEM(kids, i, PyLong_FromLong(nd->child[i]));
    PyObject *dec = PyList_New(nd->dec_n);
    for (int i = 0; dec && i < nd->dec_n; i++) {
        PyObject *x = Py_BuildValue("(Ni)", ustr(nd->dec_move[i]), nd->dec_bucket[i]);
        if (!x) {
            Py_CLEAR(dec);
            break;
        }
        PyList_SET_ITEM(dec, i, x);
    }
    if (!top || !kids || !dec) {
        Py_XDECREF(top);
        Py_XDECREF(kids);
        Py_XDECREF(dec);
        return NULL;
    }
    return Py_BuildValue("(iiNiiNNNNiNNsNNNNiiNNN)", nd->parent, nd->depth, ustr(nd->move), (int)nd->action, nd->line,
                         PyBool_FromLong(nd->has_true), PyBool_FromLong(nd->state_valid), tri(nd->state_correct),
                         ustr(nd->state_valid ? nd->state_text : ""), nd->n_legal, PyBool_FromLong(nd->true_terminal),
                         PyBool_FromLong(nd->terminal), nd->terminal ? mg_result_string(nd->outcome) : "", top,
                         PyBool_FromLong(nd->mav_ok), kids, ustr(nd->best), nd->selected_bucket, nd->value, dec,
                         PyBool_FromLong(nd->consistent), tri(nd->prev_agrees));
}

/* mav_trace_parse(game, text, true_state=None, choice=None, form="short") -> tuple (see
 * mavgame.mav.TraceResult) */
static PyObject *py_trace_parse(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"game", "text", "true_state", "choice", "form", NULL};
    PyObject *go, *to, *ro = Py_None, *co = Py_None;
    const char *form_name = "short";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOs:mav_trace_parse", kwlist, &go, &to, &ro, &co, &form_name))
        return NULL;
    int form = trace_form_arg(form_name);
    if (form < 0)
        return NULL;
    const mg_game *g = NULL;
    mg_config cfg = {0, 0};
    const void *ref = NULL;
    if (PyObject_TypeCheck(go, &mg_py_state_type)) {
        g = ((mg_py_state *)go)->game;
    } else if (PyUnicode_Check(go)) {
        const char *name = PyUnicode_AsUTF8(go);
        if (!name)
            return NULL;
        g = mg_game_by_name(name);
        if (!g || !mg_mav_game_supported(g, NULL))
            return PyErr_Format(PyExc_ValueError, "unknown game or a game without a MAV format: '%s'", name);
    } else {
        return PyErr_Format(PyExc_TypeError, "game must be a game name or a state, not %.100s", Py_TYPE(go)->tp_name);
    }
    if (ro != Py_None) {
        mg_py_state *s = mg_py_state_arg(ro, "true_state");
        if (!s)
            return NULL;
        if (s->game != g)
            return PyErr_Format(PyExc_ValueError, "true_state is a %s state, the trace is %s", s->game->name,
                                g->name);
        ref = s->state;
        cfg = s->cfg;
    }
    mg_trace_choice choice;
    const mg_trace_choice *cp = NULL;
    if (co != Py_None) {
        PyObject *seq = PySequence_Fast(co, "choice must be a sequence of root actions");
        if (!seq)
            return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n > MG_TRACE_MAX_BREADTH) {
            Py_DECREF(seq);
            return PyErr_Format(PyExc_ValueError, "choice: at most %d root actions, got %zd", MG_TRACE_MAX_BREADTH, n);
        }
        choice.n = (int)n;
        choice.value = -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            int a;
            if (!MG_PY_C_INT_ARG(PySequence_Fast_GET_ITEM(seq, i), "choice action", &a)) {
                Py_DECREF(seq);
                return NULL;
            }
            choice.actions[i] = (int32_t)a;
        }
        Py_DECREF(seq);
        cp = &choice;
    }
    Py_ssize_t n;
    const char *text;
    if (PyUnicode_Check(to)) {
        text = PyUnicode_AsUTF8AndSize(to, &n);
    } else if (PyBytes_Check(to)) {
        text = PyBytes_AS_STRING(to);
        n = PyBytes_GET_SIZE(to);
    } else {
        return PyErr_Format(PyExc_TypeError, "text must be a str or bytes, not %.100s", Py_TYPE(to)->tp_name);
    }
    if (!text)
        return NULL;
    mg_trace_result *r = PyMem_Malloc(sizeof *r);
    if (!r)
        return PyErr_NoMemory();
    mg_trace_parse(g, &cfg, form, text, (size_t)n, ref, cp, r);
    PyObject *issues = PyList_New(0);
    for (int i = 0; issues && i < r->n_issues && i < MG_TRACE_MAX_ISSUES; i++) {
        PyObject *x = Py_BuildValue("(iiN)", r->issues[i].line, r->issues[i].col, ustr(r->issues[i].msg));
        if (!x || PyList_Append(issues, x) < 0) {
            Py_XDECREF(x);
            Py_CLEAR(issues);
        } else {
            Py_DECREF(x);
        }
    }
    PyObject *nodes = PyList_New(r->n_nodes);
    for (int i = 0; nodes && i < r->n_nodes; i++) {
        PyObject *x = node_tuple(r, &r->nodes[i]);
        if (!x) {
            Py_CLEAR(nodes);
            break;
        }
        PyList_SET_ITEM(nodes, i, x);
    }
    PyObject *res = NULL;
    if (issues && nodes)
        res = Py_BuildValue("(sNiiNiNiNNNNNNNNN)", g->name, PyBool_FromLong(r->ok), r->breadth, r->depth,
                            PyBool_FromLong(r->complete), r->n_issues, ustr(r->final_move), (int)r->final_action,
                            PyBool_FromLong(r->shape_ok), PyBool_FromLong(r->moves_legal),
                            PyBool_FromLong(r->states_correct), PyBool_FromLong(r->values_consistent),
                            PyBool_FromLong(r->expand_consistent), PyBool_FromLong(r->final_legal),
                            tri(r->final_minimax), issues, nodes);
    else {
        Py_XDECREF(issues);
        Py_XDECREF(nodes);
    }
    PyMem_Free(r);
    return res;
}

/* mav_reference_order(state, actions, values, best=-1) -> list[int]: indices of the annotation in
 * the reference order of %top lines */
static PyObject *py_reference_order(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "actions", "values", "best", NULL};
    PyObject *so, *acts, *vals;
    int best = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|O&:mav_reference_order", kwlist, &so, &acts, &vals,
                                     MG_PY_C_INT("best", &best)))
        return NULL;
    mg_py_state *s = mg_py_state_arg(so, "state");
    if (!s)
        return NULL;
    PyArrayObject *a = (PyArrayObject *)mg_py_int_array(acts, NPY_INT32, 1, 1, "actions");
    PyArrayObject *v = a ? (PyArrayObject *)mg_py_real_array(vals, NPY_FLOAT64, 1, 1, "values") : NULL;
    PyObject *res = NULL;
    if (a && v) {
        if (PyArray_DIM(a, 0) != PyArray_DIM(v, 0) || PyArray_DIM(a, 0) > MG_MAX_MOVES) {
            PyErr_Format(PyExc_ValueError, "annotation: %zd actions but %zd values", (Py_ssize_t)PyArray_DIM(a, 0),
                         (Py_ssize_t)PyArray_DIM(v, 0));
        } else {
            mg_mav_input in = {s->state, NULL, -1, (int)PyArray_DIM(a, 0), PyArray_DATA(a), PyArray_DATA(v), best,
                               NULL, 0};
            int32_t idx[MG_MAX_MOVES];
            char err[MG_ERRLEN] = "";
            int n = mg_mav_reference_order(s->game, &in, idx, err, sizeof err);
            if (n < 0) {
                mg_py_value_error(err);
            } else {
                res = PyList_New(n);
                for (int i = 0; res && i < n; i++)
                    PyList_SET_ITEM(res, i, PyLong_FromLong(idx[i]));
            }
        }
    }
    Py_XDECREF(a);
    Py_XDECREF(v);
    return res;
}

static PyMethodDef trace_functions[] = {
    {"mav_reference_order", (PyCFunction)(void (*)(void))py_reference_order, METH_VARARGS | METH_KEYWORDS,
     "mav_reference_order(state, actions, values, best=-1) -> list[int]"},
    {"mav_trace_write", (PyCFunction)(void (*)(void))py_trace_write, METH_VARARGS | METH_KEYWORDS,
     "mav_trace_write(state, tree, breadth, depth, part='all') -> (text, prompt length, (value, root actions))"},
    {"mav_trace_parse", (PyCFunction)(void (*)(void))py_trace_parse, METH_VARARGS | METH_KEYWORDS,
     "mav_trace_parse(game, text, true_state=None, choice=None) -> tuple (see mavgame.mav.TraceResult)"},
    {NULL, NULL, 0, NULL},
};

/* the trace keywords as module constants (TRACE_EVAL ...), so that Python reads a trace by the writer's own text */
int mg_bind_mav_search(PyObject *m) {
    if (PyModule_AddStringConstant(m, "TRACE_PREAMBLE", MG_TRACE_PREAMBLE) < 0 ||
        PyModule_AddStringConstant(m, "TRACE_EVAL", MG_TRACE_EVAL) < 0 ||
        PyModule_AddStringConstant(m, "TRACE_EXPAND", MG_TRACE_EXPAND) < 0 ||
        PyModule_AddStringConstant(m, "TRACE_DECISION", MG_TRACE_DECISION) < 0 ||
        PyModule_AddStringConstant(m, "TRACE_SELECT", MG_TRACE_SELECT) < 0 ||
        PyModule_AddStringConstant(m, "TRACE_PLAY", MG_TRACE_PLAY) < 0 ||
        PyModule_AddStringConstant(m, "TRACE_ROOT", MG_TRACE_ROOT) < 0)
        return -1;
    return PyModule_AddFunctions(m, trace_functions);
}
