/*
 * py_mcts_result.c - mavgame._core.MCTSResult: what an MCTS search left at its tree's root, copied in one call
 * (MCTSTree.snapshot(), py_mcts.c), so that mavgame.search.results.SearchResult can build each field (NumPy
 * arrays, move lists, the stats dict) only when it is first read, and still see this search's values after the
 * tree has searched again.
 *
 *   MCTSTree.snapshot(root=None, timed_out=False, max_pv=64) -> MCTSResult
 *   .root_edges() -> (actions int32, visits int64, q float64, prior float32, values float32, hallucinated bool)
 *   .root_u() -> float64 (n,)      .pv_actions() -> int32 (len,)      .action_list() / .pv_list() -> list[int]
 *   .root_moves() / .pv_moves() -> list[str] (state tracking; None in engine mode)   .stats() -> dict
 *   .best_edge (-1: none), .best_action (engine mode; None if none), .root_value, .root_visits, .timed_out,
 *   .num_edges, .state_tracking, .root (the object given to snapshot())
 *
 * Each method returns new objects with the values of MCTSTree's method of the same name at the time of the
 * snapshot (the same dtypes).  One allocation holds every array (the edges' and the pv's).
 *
 *   MCTSResultField(name): SearchResult's fields on its class (mavgame/search/results.py): a non-data descriptor
 *   that builds a field missing from the instance dict from the instance's _snapshot, and keeps it there.
 */
#include "py_mcts_result.h"
#include "py_mcts_eval.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

typedef struct py_mcts_result {
    PyObject_VAR_HEAD
    int n;              /* root edges */
    int pv_len;
    int best_edge;      /* -1: none */
    int timed_out;
    int state_tracking;
    uint32_t root_visits;
    double root_value;
    mg_mcts_stats stats;
    PyObject *root;     /* a strong reference (None if none) */
    PyObject *moves;    /* state tracking: the root edges' move strs (a list); NULL in engine mode */
    PyObject *pv_moves; /* state tracking: the pv's move strs (a list); NULL in engine mode */
    /* q[n], u[n] (double); actions[n], visits[n], prior[n], values[n], pv[pv_len] (4 bytes each); hal[n] */
    double data[];
} py_mcts_result;

/* The items (doubles) of the data of n edges and a pv of len moves. */
static Py_ssize_t data_items(int n, int len)
{
    size_t bytes = (size_t)n * (2 * sizeof(double) + 4 * 4 + 1) + (size_t)len * 4;
    return (Py_ssize_t)((bytes + sizeof(double) - 1) / sizeof(double));
}

#define R_Q(r) ((r)->data)
#define R_U(r) ((r)->data + (r)->n)
#define R_ACTIONS(r) ((int32_t *)((r)->data + 2 * (r)->n))
#define R_VISITS(r) ((uint32_t *)(R_ACTIONS(r) + (r)->n))
#define R_PRIOR(r) ((float *)(R_VISITS(r) + (r)->n))
#define R_VALUES(r) (R_PRIOR(r) + (r)->n)
#define R_PV(r) ((int32_t *)(R_VALUES(r) + (r)->n))
#define R_HAL(r) ((uint8_t *)(R_PV(r) + (r)->pv_len))

static PyTypeObject py_mcts_result_type;

/* ---- shared builders (also MCTSTree's methods, py_mcts.c) -------------------------------------------------- */

PyObject *mg_py_float64_array(const double *a, int n)
{
    npy_intp dims[1] = {n};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_FLOAT64);
    if (arr && n > 0)
        memcpy(PyArray_DATA((PyArrayObject *)arr), a, (size_t)n * sizeof(double));
    return arr;
}

PyObject *mg_py_root_edge_arrays(int n, const int32_t *actions, const uint32_t *visits, const double *q,
                                 const float *prior, const float *values, const uint8_t *hallucinated)
{
    npy_intp dims[1] = {n};
    PyObject *acts = mg_py_int32_array(actions, n);
    PyObject *vis = PyArray_SimpleNew(1, dims, NPY_INT64);
    PyObject *qa = mg_py_float64_array(q, n);
    PyObject *pr = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyObject *vals = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyObject *hal = PyArray_SimpleNew(1, dims, NPY_BOOL);
    PyObject *t = NULL;
    if (acts && vis && qa && pr && vals && hal) {
        int64_t *v64 = PyArray_DATA((PyArrayObject *)vis);
        for (int i = 0; i < n; i++)
            v64[i] = visits[i];
        if (n > 0) {
            memcpy(PyArray_DATA((PyArrayObject *)pr), prior, (size_t)n * sizeof(float));
            memcpy(PyArray_DATA((PyArrayObject *)vals), values, (size_t)n * sizeof(float));
            memcpy(PyArray_DATA((PyArrayObject *)hal), hallucinated, (size_t)n);
        }
        t = PyTuple_Pack(6, acts, vis, qa, pr, vals, hal);
    }
    Py_XDECREF(acts);
    Py_XDECREF(vis);
    Py_XDECREF(qa);
    Py_XDECREF(pr);
    Py_XDECREF(vals);
    Py_XDECREF(hal);
    return t;
}

PyObject *mg_py_mcts_stats_dict(const mg_mcts_stats *s)
{
    /* a copy of a dict with these keys (interned, hashed, sized once: the module state keeps it), then the
     * values: what Py_BuildValue("{sL...}") gave, without making and hashing 15 key strs per call */
    static const int keys[] = {MG_PY_NAME_SIMULATIONS, MG_PY_NAME_EVALUATIONS, MG_PY_NAME_COMPLETED,
                               MG_PY_NAME_TERMINAL_VISITS, MG_PY_NAME_DROPPED, MG_PY_NAME_INVALID,
                               MG_PY_NAME_COLLISIONS, MG_PY_NAME_BATCHES, MG_PY_NAME_DEPTH_CUTOFFS,
                               MG_PY_NAME_MAX_DEPTH, MG_PY_NAME_NODES, MG_PY_NAME_EDGES, MG_PY_NAME_REUSED_NODES,
                               MG_PY_NAME_ELAPSED, MG_PY_NAME_EVAL_SECONDS};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    PyObject *values[NKEYS] = {
        PyLong_FromLongLong((long long)s->simulations), PyLong_FromLongLong((long long)s->evaluations),
        PyLong_FromLongLong((long long)s->completed), PyLong_FromLongLong((long long)s->terminal_visits),
        PyLong_FromLongLong((long long)s->dropped), PyLong_FromLongLong((long long)s->invalid),
        PyLong_FromLongLong((long long)s->collisions), PyLong_FromLongLong((long long)s->batches),
        PyLong_FromLongLong((long long)s->depth_cutoffs), PyLong_FromLong(s->max_depth), PyLong_FromLong(s->nodes),
        PyLong_FromLongLong((long long)s->edges), PyLong_FromLong(s->reused_nodes), PyFloat_FromDouble(s->elapsed),
        PyFloat_FromDouble(s->eval_seconds)};
    PyObject *d = mg_py_dict_from_template(MG_PY_DICT_MCTS_STATS, keys, NKEYS);
    PyObject *const *names = d ? mg_py_names() : NULL;
    for (int i = 0; i < NKEYS; i++) {
        if (d && (!values[i] || PyDict_SetItem(d, names[keys[i]], values[i]) < 0))
            Py_CLEAR(d);
        Py_XDECREF(values[i]);
    }
    return d;
}

/* ---- MCTSResult ------------------------------------------------------------------------------------------- */

/* A list of the strs (None for NULL) that get(m, i) gives for i in [0, n). */
static PyObject *str_list(const mg_mcts *m, int n, const char *(*get)(const mg_mcts *, int))
{
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *s = mg_py_str_or_none(get(m, i));
        if (!s)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, s);
    }
    return list;
}

PyObject *mg_py_mcts_result_new(const mg_mcts *m, int state_tracking, int timed_out, PyObject *root, int max_pv)
{
    int32_t pv[4096], pv_edges[4096];
    if (max_pv < 0)
        max_pv = 0;
    if (max_pv > 4096)
        max_pv = 4096;
    int len = mg_mcts_pv(m, pv, pv_edges, max_pv);
    int n = mg_mcts_num_root_edges(m);
    py_mcts_result *r = PyObject_NewVar(py_mcts_result, &py_mcts_result_type, data_items(n, len));
    if (!r)
        return NULL;
    r->n = n;
    r->pv_len = len;
    r->best_edge = mg_mcts_best_edge(m);
    r->timed_out = timed_out;
    r->state_tracking = state_tracking;
    r->root_visits = mg_mcts_root_visits(m);
    r->root_value = mg_mcts_root_value(m);
    mg_mcts_get_stats(m, &r->stats);
    r->root = Py_NewRef(root ? root : Py_None);
    r->moves = r->pv_moves = NULL;
    mg_mcts_root_edges(m, R_ACTIONS(r), R_VISITS(r), R_Q(r), R_PRIOR(r), R_VALUES(r), R_HAL(r));
    mg_mcts_root_u(m, R_U(r));
    if (len > 0)
        memcpy(R_PV(r), pv, (size_t)len * sizeof *pv);
    if (state_tracking) {
        if (!(r->moves = str_list(m, n, mg_mcts_root_move))) {
            Py_DECREF(r);
            return NULL;
        }
        r->pv_moves = PyList_New(len);
        for (int i = 0; r->pv_moves && i < len; i++) {
            PyObject *s = mg_py_str_or_none(mg_mcts_pv_move(m, pv_edges, len, i));
            if (!s)
                Py_CLEAR(r->pv_moves);
            else
                PyList_SET_ITEM(r->pv_moves, i, s);
        }
        if (!r->pv_moves) {
            Py_DECREF(r);
            return NULL;
        }
    }
    return (PyObject *)r;
}

static void result_dealloc(py_mcts_result *r)
{
    Py_XDECREF(r->root);
    Py_XDECREF(r->moves);
    Py_XDECREF(r->pv_moves);
    PyObject_Free(r);
}

static PyObject *result_root_edges(py_mcts_result *r, PyObject *Py_UNUSED(ignored))
{
    return mg_py_root_edge_arrays(r->n, R_ACTIONS(r), R_VISITS(r), R_Q(r), R_PRIOR(r), R_VALUES(r), R_HAL(r));
}

static PyObject *result_root_u(py_mcts_result *r, PyObject *Py_UNUSED(ignored)) { return mg_py_float64_array(R_U(r), r->n); }

static PyObject *result_pv_actions(py_mcts_result *r, PyObject *Py_UNUSED(ignored))
{
    return mg_py_int32_array(R_PV(r), r->pv_len);
}

static PyObject *int_list(const int32_t *a, int n)
{
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *v = PyLong_FromLong(a[i]);
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, v);
    }
    return list;
}

static PyObject *result_action_list(py_mcts_result *r, PyObject *Py_UNUSED(ignored)) { return int_list(R_ACTIONS(r), r->n); }

static PyObject *result_pv_list(py_mcts_result *r, PyObject *Py_UNUSED(ignored)) { return int_list(R_PV(r), r->pv_len); }

/* A new list with the items of `list` (NULL: None). */
static PyObject *list_copy_or_none(PyObject *list)
{
    if (!list)
        Py_RETURN_NONE;
    return PyList_GetSlice(list, 0, PyList_GET_SIZE(list));
}

static PyObject *result_root_moves(py_mcts_result *r, PyObject *Py_UNUSED(ignored)) { return list_copy_or_none(r->moves); }

static PyObject *result_pv_moves(py_mcts_result *r, PyObject *Py_UNUSED(ignored)) { return list_copy_or_none(r->pv_moves); }

static PyObject *result_stats(py_mcts_result *r, PyObject *Py_UNUSED(ignored)) { return mg_py_mcts_stats_dict(&r->stats); }

static PyObject *result_get_best_edge(py_mcts_result *r, void *Py_UNUSED(c)) { return PyLong_FromLong(r->best_edge); }

static PyObject *result_get_best_action(py_mcts_result *r, void *Py_UNUSED(c))
{
    if (r->state_tracking || r->best_edge < 0 || r->best_edge >= r->n)
        Py_RETURN_NONE;
    return PyLong_FromLong(R_ACTIONS(r)[r->best_edge]);
}

static PyObject *result_get_root_value(py_mcts_result *r, void *Py_UNUSED(c)) { return PyFloat_FromDouble(r->root_value); }

static PyObject *result_get_root_visits(py_mcts_result *r, void *Py_UNUSED(c))
{
    return PyLong_FromUnsignedLong(r->root_visits);
}

static PyObject *result_get_timed_out(py_mcts_result *r, void *Py_UNUSED(c)) { return PyBool_FromLong(r->timed_out); }

static PyObject *result_get_num_edges(py_mcts_result *r, void *Py_UNUSED(c)) { return PyLong_FromLong(r->n); }

static PyObject *result_get_state_tracking(py_mcts_result *r, void *Py_UNUSED(c))
{
    return PyBool_FromLong(r->state_tracking);
}

static PyObject *result_get_root(py_mcts_result *r, void *Py_UNUSED(c)) { return Py_NewRef(r->root); }

static PyMethodDef result_methods[] = {
    {"root_edges", (PyCFunction)result_root_edges, METH_NOARGS,
     "root_edges() -> (actions, visits, q, prior, values, hallucinated) arrays, as MCTSTree.root_edges() gave."},
    {"root_u", (PyCFunction)result_root_u, METH_NOARGS, "root_u() -> float64 array, as MCTSTree.root_u() gave."},
    {"pv_actions", (PyCFunction)result_pv_actions, METH_NOARGS, "pv_actions() -> int32 array of the pv's actions."},
    {"action_list", (PyCFunction)result_action_list, METH_NOARGS, "action_list() -> the root edges' actions (ints)."},
    {"pv_list", (PyCFunction)result_pv_list, METH_NOARGS, "pv_list() -> the pv's actions (ints)."},
    {"root_moves", (PyCFunction)result_root_moves, METH_NOARGS,
     "root_moves() -> the root edges' move strs (state tracking; None in engine mode)."},
    {"pv_moves", (PyCFunction)result_pv_moves, METH_NOARGS,
     "pv_moves() -> the pv's move strs (state tracking; None in engine mode)."},
    {"stats", (PyCFunction)result_stats, METH_NOARGS, "stats() -> dict, as MCTSTree.stats() gave."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef result_getset[] = {
    {"best_edge", (getter)result_get_best_edge, NULL, "Index of the robust child among the root edges (-1: none).",
     NULL},
    {"best_action", (getter)result_get_best_action, NULL, "The robust child's action (engine mode), None if none.",
     NULL},
    {"root_value", (getter)result_get_root_value, NULL, "Mean backed-up value at the root.", NULL},
    {"root_visits", (getter)result_get_root_visits, NULL, "Visits of the root.", NULL},
    {"timed_out", (getter)result_get_timed_out, NULL, "Whether the search stopped at its time budget.", NULL},
    {"num_edges", (getter)result_get_num_edges, NULL, "Number of root edges.", NULL},
    {"state_tracking", (getter)result_get_state_tracking, NULL, "True for a state-tracking tree.", NULL},
    {"root", (getter)result_get_root, NULL, "The object given to MCTSTree.snapshot() (the root position).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_mcts_result_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MCTSResult",
    .tp_basicsize = offsetof(py_mcts_result, data),
    .tp_itemsize = sizeof(double),
    .tp_dealloc = (destructor)result_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MCTSResult: a copy of an MCTSTree's root edges, principal variation and counters after a search "
              "(MCTSTree.snapshot()); mavgame.search.results.SearchResult reads its fields from one.",
    .tp_methods = result_methods,
    .tp_getset = result_getset,
};

/* ---- MCTSResultField: a SearchResult field built from its MCTSResult on first read -------------------------- */

enum { NFIELDS = MG_PY_NAME_F_U - MG_PY_NAME_F_BEST_MOVE + 1 };

typedef struct py_result_field {
    PyObject_HEAD
    int field; /* 0..NFIELDS-1: the field's index in SearchResult (MG_PY_NAME_F_* - MG_PY_NAME_F_BEST_MOVE) */
} py_result_field;

/* The str of action `a` in position `st` of game g (board size bs), as State.action_to_str writes it (the same
 * cached str, the same ValueError). */
static PyObject *action_str(const mg_game *g, mg_py_move_strs *cache, const void *st, int32_t a)
{
    char buf[MG_MAX_MOVE_STR];
    size_t n = a >= 0 && a < g->num_actions ? g->action_to_str(st, a, buf, sizeof buf) : 0;
    if (n == 0)
        return PyErr_Format(PyExc_ValueError, "%lld is not a valid %s action", (long long)a, g->name);
    return mg_py_move_str(cache, a, buf, n);
}

/* The engine-mode root position of r, or NULL with a TypeError. */
static mg_py_state *engine_root(py_mcts_result *r)
{
    if (!PyObject_TypeCheck(r->root, &mg_py_state_type) || !((mg_py_state *)r->root)->game) {
        PyErr_Format(PyExc_TypeError, "MCTSResult: the moves of an engine-mode search need its root State, not %.100s",
                     Py_TYPE(r->root)->tp_name);
        return NULL;
    }
    return (mg_py_state *)r->root;
}

/* SearchResult.moves of engine mode: the root edges' actions written in the root position. */
static PyObject *engine_moves(py_mcts_result *r)
{
    mg_py_state *s = engine_root(r);
    if (!s)
        return NULL;
    mg_py_move_strs *cache = mg_py_move_strs_of(s->game, s->cfg.board_size);
    PyObject *list = PyList_New(r->n);
    for (int i = 0; list && i < r->n; i++) {
        PyObject *m = action_str(s->game, cache, s->state, R_ACTIONS(r)[i]);
        if (!m)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, m);
    }
    return list;
}

/* SearchResult.pv of engine mode: each pv action written in the position it is played in (on a copy). */
static PyObject *engine_pv(py_mcts_result *r)
{
    mg_py_state *s = engine_root(r);
    if (!s)
        return NULL;
    const mg_game *g = s->game;
    mg_py_move_strs *cache = mg_py_move_strs_of(g, s->cfg.board_size);
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    memcpy(st, s->state, g->state_size);
    PyObject *list = PyList_New(r->pv_len);
    for (int i = 0; list && i < r->pv_len; i++) {
        int32_t a = R_PV(r)[i];
        PyObject *m = action_str(g, cache, st, a);
        if (m && i + 1 < r->pv_len && !g->is_legal(st, a)) {
            Py_CLEAR(m);
            PyErr_Format(PyExc_ValueError, "MCTSResult: pv action %lld is not legal", (long long)a);
        }
        if (!m) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, m);
        if (i + 1 < r->pv_len)
            g->make(st, a, undo);
    }
    return list;
}

/* The value of field `f` of a SearchResult on r (a new reference; the six edge fields: the tuple of all six). */
static PyObject *field_value(py_mcts_result *r, int f)
{
    int e = r->best_edge >= 0 && r->best_edge < r->n ? r->best_edge : -1;
    switch (f + MG_PY_NAME_F_BEST_MOVE) {
    case MG_PY_NAME_F_BEST_MOVE:
        if (e < 0)
            Py_RETURN_NONE;
        if (r->state_tracking)
            return Py_NewRef(PyList_GET_ITEM(r->moves, e));
        {
            mg_py_state *s = engine_root(r);
            return s ? action_str(s->game, mg_py_move_strs_of(s->game, s->cfg.board_size), s->state,
                                  R_ACTIONS(r)[e])
                     : NULL;
        }
    case MG_PY_NAME_F_BEST_ACTION:
        return result_get_best_action(r, NULL);
    case MG_PY_NAME_F_MOVES:
        return r->state_tracking ? list_copy_or_none(r->moves) : engine_moves(r);
    case MG_PY_NAME_F_PV:
        return r->state_tracking ? list_copy_or_none(r->pv_moves) : engine_pv(r);
    case MG_PY_NAME_F_PV_ACTIONS:
        return result_pv_actions(r, NULL);
    case MG_PY_NAME_F_ROOT_VALUE:
        return result_get_root_value(r, NULL);
    case MG_PY_NAME_F_ROOT_VISITS:
        return result_get_root_visits(r, NULL);
    case MG_PY_NAME_F_STATS: {
        PyObject *d = mg_py_mcts_stats_dict(&r->stats);
        PyObject *const *names = d ? mg_py_names() : NULL;
        if (d && (!names || PyDict_SetItem(d, names[MG_PY_NAME_TIMED_OUT], r->timed_out ? Py_True : Py_False) < 0))
            Py_CLEAR(d);
        return d;
    }
    case MG_PY_NAME_F_U:
        return result_root_u(r, NULL);
    default: /* actions, visits, q, prior, values, hallucinated */
        return result_root_edges(r, NULL);
    }
}

static PyObject *field_get(py_result_field *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    if (!obj || obj == Py_None)
        return Py_NewRef((PyObject *)self);
    PyObject *const *names = mg_py_names();
    if (!names)
        return NULL;
    PyObject *name = names[MG_PY_NAME_F_BEST_MOVE + self->field];
    PyObject *dict = PyObject_GenericGetDict(obj, NULL);
    if (!dict)
        return NULL;
    PyObject *snap = PyDict_GetItemWithError(dict, names[MG_PY_NAME__SNAPSHOT]); /* borrowed */
    PyObject *v = NULL, *out = NULL;
    if (!snap || !PyObject_TypeCheck(snap, &py_mcts_result_type)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%U'", Py_TYPE(obj)->tp_name, name);
        goto done;
    }
    Py_INCREF(snap); /* the dict may change below */
    v = field_value((py_mcts_result *)snap, self->field);
    Py_DECREF(snap);
    if (!v)
        goto done;
    int f = self->field + MG_PY_NAME_F_BEST_MOVE;
    if (f >= MG_PY_NAME_F_ACTIONS && f <= MG_PY_NAME_F_HALLUCINATED) { /* all six at once (each kept if set) */
        for (int i = 0; i < 6; i++)
            if (!PyDict_SetDefault(dict, names[MG_PY_NAME_F_ACTIONS + i], PyTuple_GET_ITEM(v, i)))
                goto done;
        out = PyDict_GetItemWithError(dict, name);
        Py_XINCREF(out);
    } else {
        out = PyDict_SetDefault(dict, name, v); /* borrowed: a value the caller set meanwhile wins */
        Py_XINCREF(out);
    }
done:
    Py_XDECREF(v);
    Py_DECREF(dict);
    return out;
}

static PyObject *field_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *name;
    if (!PyArg_ParseTuple(args, "U:MCTSResultField", &name) || (kwds && PyDict_GET_SIZE(kwds))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "MCTSResultField(name) takes no keyword arguments");
        return NULL;
    }
    PyObject *const *names = mg_py_names();
    if (!names)
        return NULL;
    for (int f = 0; f < NFIELDS; f++) {
        int eq = PyUnicode_Compare(name, names[MG_PY_NAME_F_BEST_MOVE + f]);
        if (eq == -1 && PyErr_Occurred())
            return NULL;
        if (eq == 0) {
            py_result_field *self = (py_result_field *)type->tp_alloc(type, 0);
            if (self)
                self->field = f;
            return (PyObject *)self;
        }
    }
    return PyErr_Format(PyExc_ValueError, "MCTSResultField: %R is not a field of SearchResult", name);
}

static PyObject *field_get_name(py_result_field *self, void *Py_UNUSED(c))
{
    PyObject *const *names = mg_py_names();
    return names ? Py_NewRef(names[MG_PY_NAME_F_BEST_MOVE + self->field]) : NULL;
}

static PyGetSetDef field_getset[] = {
    {"name", (getter)field_get_name, NULL, "The field's name.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_result_field_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MCTSResultField",
    .tp_basicsize = sizeof(py_result_field),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MCTSResultField(name): a field of SearchResult on its class (a non-data descriptor: a value in the "
              "instance dict wins).  For a result without one, made by MCTSTree.snapshot(..., into=SearchResult), "
              "it builds the value from the instance's _snapshot (an MCTSResult), keeps it in the instance dict "
              "and returns it; the six edge fields are built together.  AttributeError for an instance with "
              "neither.",
    .tp_descr_get = (descrgetfunc)field_get,
    .tp_new = field_new,
    .tp_getset = field_getset,
};

int mg_bind_mcts_result(PyObject *m)
{
    if (mg_py_add_type(m, "MCTSResultField", &py_result_field_type) < 0)
        return -1;
    return mg_py_add_type(m, "MCTSResult", &py_mcts_result_type);
}
