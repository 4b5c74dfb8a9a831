/*
 * py_mcts.c - Python binding of the MAV-guided MCTS (search/mcts.h): mavgame._core.MCTSTree
 * (the evaluator objects it searches with are in py_mcts_eval.c).  mavgame/search/mcts.py builds the
 * user API on top.
 *
 *   MCTSTree(game=None, *, board_size=0, flags=0, state_tracking=False, batch_size=1, timeout=0.0,
 *            virtual_count=0, n_max=8, n_min=2, virtual_loss=3, c_puct=1.25, c_base=19652.0,
 *            c_init=1.25, prior=0, k=5, eps=0.1, tau=0.1, fpu=nan, seed=0, invalid=1)
 *       invalid: 1 (exclude: the paper's minus infinity, the default) or 0 (loss: one visit valued -1).
 *       tau: a number, or a sequence of (from_ply, tau) pairs (the first from ply 0).
 *   .set_root(state, ply=None)          engine mode; ply defaults to len(state.history())
 *   .set_root_text(text, to_move, ply=0) state-tracking mode
 *   .advance(action) / .advance_move(move)   keep the played move's subtree
 *   .search(evaluator, num_simulations, spec=None, max_seconds=0.0) -> bool   evaluator: a capsule
 *       from mcts_*_evaluator (the GIL is released for the whole search), or a callable
 *       fn(batch, timeout) -> (outputs, seq) called once per batch (the GIL is released between
 *       calls).  See mavgame/search/mcts.py for the request tuples and the output forms.  max_seconds
 *       (> 0) is a time budget checked between batches (the first batch always runs): the search
 *       stops there keeping the simulations done, and search() returns True (False: it ran all
 *       num_simulations or reached a proven root).
 *   .root_u() -> float64 (n,): PUCT's exploration term of each root edge (AZdb's LCB / Gap).
 *   .root_edges() -> (actions int32, visits int64, q float64, prior float32, values float32,
 *       hallucinated bool)      .root_moves() -> list[str] (state tracking)
 *   .best_edge(), .best_action(), .pv() -> (actions int32, edges int32, moves list|None)
 *   .snapshot(root=None, timed_out=False, max_pv=64, into=None) -> MCTSResult (py_mcts_result.c): all of the
 *       above, copied; into: a class, whose new instance holding it as `_snapshot` is returned instead
 *   .stats() -> dict, .check() (ValueError on a broken invariant), .root_visits, .root_value,
 *   .root_text, .root_to_move, .root_result
 *
 */
#include "py_mcts_eval.h"
#include "py_mcts_tree.h"
#include "py_mcts_result.h"
#include "interrupt.h"
#include "py_args.h"
#include <pythread.h>

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <string.h>

#include "../format/mav.h"
#include "../format/values.h"
#include "../search/evaluator.h"
#include "../search/mav_eval_io.h"
#include "../search/mcts.h"

/* ---- MCTSTree ------------------------------------------------------------------------------ */

typedef struct py_mcts {
    PyObject_HEAD
    mg_mcts *m;
    const mg_game *g;
    mg_config cfg;
    int state_tracking;     /* the tree's mode (mg_mcts_config.mode is MG_EVAL_STATE_TRACKING) */
    int busy;               /* a search is running (the evaluator may call back into Python) */
    unsigned long owner;    /* the thread running it (PyThread_get_thread_ident) */
} py_mcts;

/* The RuntimeError for a tree used while it searches: from another thread (the GIL is released
 * during the search), or from the search's own evaluator.  Returns -1. */
static int tree_busy_error(const py_mcts *self)
{
    if (PyThread_get_thread_ident() == self->owner)
        PyErr_SetString(PyExc_RuntimeError, "MCTSTree is searching: its evaluator called back into the tree "
                                            "(an evaluator must not use the tree it evaluates for)");
    else
        PyErr_SetString(PyExc_RuntimeError, "MCTSTree is in use by another thread (a search is running there; "
                                            "give each thread its own tree, or serialise the calls)");
    return -1;
}

#define CHECK_TREE(self)                                                                           \
    do {                                                                                           \
        if (!(self)->m) {                                                                          \
            PyErr_SetString(PyExc_ValueError, "MCTSTree is not initialised");                      \
            return NULL;                                                                           \
        }                                                                                          \
        if ((self)->busy) {                                                                        \
            tree_busy_error(self);                                                                 \
            return NULL;                                                                           \
        }                                                                                          \
    } while (0)

static void mcts_dealloc(py_mcts *self)
{
    mg_mcts_free(self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int parse_tau(PyObject *o, mg_mcts_config *c)
{
    if (PyNumber_Check(o) && !PySequence_Check(o)) {
        double t = PyFloat_AsDouble(o);
        if (t == -1.0 && PyErr_Occurred())
            return -1;
        c->num_tau = 1;
        c->tau[0] = t;
        c->tau_from_ply[0] = 0;
        return 0;
    }
    PyObject *seq = PySequence_Fast(o, "tau must be a number or a sequence of (from_ply, tau) pairs");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > MG_MCTS_MAX_TAU_STEPS) {
        PyErr_Format(PyExc_ValueError, "tau schedule has %zd steps (1..%d allowed)", n, MG_MCTS_MAX_TAU_STEPS);
        Py_DECREF(seq);
        return -1;
    }
    c->num_tau = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        int ply;
        double t;
        PyObject *step = PySequence_Fast_GET_ITEM(seq, i), *ply_o;
        if (!PyArg_ParseTuple(step, "Od", &ply_o, &t)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "tau schedule step %zd must be a (from_ply, tau) pair", i);
            Py_DECREF(seq);
            return -1;
        }
        if (!MG_PY_INT_ARG(ply_o, "tau schedule from_ply", 0, INT_MAX, &ply)) {
            Py_DECREF(seq);
            return -1;
        }
        if (i == 0 && ply != 0) {
            PyErr_Format(PyExc_ValueError, "tau schedule must start at ply 0, not %d", ply);
            Py_DECREF(seq);
            return -1;
        }
        c->tau_from_ply[i] = ply;
        c->tau[i] = t;
    }
    Py_DECREF(seq);
    return 0;
}

static int mcts_init(py_mcts *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"game", "board_size", "flags", "state_tracking", "batch_size", "timeout",
                             "virtual_count", "n_max", "n_min", "virtual_loss", "c_puct", "c_base", "c_init",
                             "prior", "k", "eps", "tau", "fpu", "seed", "invalid", NULL};
    const char *game = NULL;
    PyObject *game_o = Py_None;
    int board_size = 0, state_tracking = 0;
    unsigned int flags = 0;
    unsigned long long seed = 0;
    PyObject *tau = NULL;
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$O&O&pO&dO&O&O&O&dddO&O&dOdO&O&:MCTSTree", kwlist, &game_o,
                                     MG_PY_C_INT("board_size", &board_size), MG_PY_INT("flags", 0, UINT_MAX, &flags),
                                     &state_tracking, MG_PY_C_INT("batch_size", &c.batch_size), &c.timeout,
                                     MG_PY_C_INT("virtual_count", &c.virtual_count), MG_PY_C_INT("n_max", &c.n_max),
                                     MG_PY_C_INT("n_min", &c.n_min), MG_PY_C_INT("virtual_loss", &c.virtual_loss),
                                     &c.c_puct, &c.c_base, &c.c_init, MG_PY_C_INT("prior", &c.prior),
                                     MG_PY_C_INT("k", &c.k), &c.eps, &tau, &c.fpu, MG_PY_SEED(&seed),
                                     MG_PY_C_INT("invalid", &c.invalid)))
        return -1;
    if (game_o != Py_None && !(game = mg_py_text_arg(game_o, "game")))
        return -1;
    if (self->busy)
        return tree_busy_error(self);
    c.seed = seed;
    c.mode = state_tracking ? MG_EVAL_STATE_TRACKING : MG_EVAL_ENGINE;
    if (tau && parse_tau(tau, &c) < 0)
        return -1;
    const mg_game *g = NULL;
    if (game) {
        g = mg_game_by_name(game);
        if (!g) {
            PyErr_Format(PyExc_ValueError, "unknown game '%s'", game);
            return -1;
        }
    }
    char err[MG_ERRLEN];
    mg_config cfg = {board_size, flags};
    if (g && mg_config_check(g, &cfg, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    mg_mcts *m = mg_mcts_create(g, &c, err, sizeof err);
    if (!m) {
        mg_py_value_error(err);
        return -1;
    }
    mg_mcts_free(self->m);
    self->m = m;
    self->g = g;
    self->cfg.board_size = board_size;
    self->cfg.flags = flags;
    self->state_tracking = state_tracking;
    return 0;
}

/* The hot methods (set_root, search, pv: once per search of mavgame.MCTS) take their arguments by the vectorcall
 * convention (METH_FASTCALL | METH_KEYWORDS, parsed by mg_py_fast_args): no argument tuple or keyword dict is
 * built, no format string interpreted. */
static PyObject *mcts_set_root(py_mcts *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"state", "ply"};
    PyObject *v[2];
    if (mg_py_fast_args("set_root", args, nargs, kwnames, names, 2, 2, 1, v) < 0)
        return NULL;
    PyObject *so = v[0], *plyo = v[1] ? v[1] : Py_None;
    CHECK_TREE(self);
    mg_py_state *s = mg_py_state_arg(so, "state");
    if (!s)
        return NULL;
    if (s->game != self->g) {
        PyErr_Format(PyExc_ValueError, "state is a %s position but this tree searches %s", s->game->name,
                     self->g ? self->g->name : "(no game: state tracking)");
        return NULL;
    }
    int ply = s->ply > INT_MAX ? INT_MAX : (int)s->ply;
    if (plyo != Py_None && !MG_PY_INT_ARG(plyo, "ply", 0, INT_MAX, &ply))
        return NULL;
    char err[MG_ERRLEN];
    if (mg_mcts_set_root(self->m, s->state, ply, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    self->cfg = s->cfg;
    Py_RETURN_NONE;
}

static PyObject *mcts_set_root_text(py_mcts *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"text", "to_move", "ply"};
    PyObject *v[3];
    int to_move, ply = 0;
    if (mg_py_fast_args("set_root_text", args, nargs, kwnames, names, 3, 3, 2, v) < 0 ||
        !MG_PY_C_INT_ARG(v[1], "to_move", &to_move) || (v[2] && !MG_PY_INT_ARG(v[2], "ply", 0, INT_MAX, &ply)))
        return NULL;
    const char *text = mg_py_text_arg(v[0], "text");
    if (!text)
        return NULL;
    CHECK_TREE(self);
    char err[MG_ERRLEN];
    if (mg_mcts_set_root_text(self->m, text, to_move, ply, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    Py_RETURN_NONE;
}

static PyObject *mcts_advance(py_mcts *self, PyObject *arg)
{
    CHECK_TREE(self);
    int a;
    if (!MG_PY_C_INT_ARG(arg, "action", &a))
        return NULL;
    char err[MG_ERRLEN];
    if (mg_mcts_advance(self->m, (int32_t)a, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    Py_RETURN_NONE;
}

static PyObject *mcts_advance_move(py_mcts *self, PyObject *arg)
{
    CHECK_TREE(self);
    const char *s = mg_py_text_arg(arg, "move");
    if (!s)
        return NULL;
    char err[MG_ERRLEN];
    if (mg_mcts_advance_move(self->m, s, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    Py_RETURN_NONE;
}

/* The search of one MCTSTree.search call, run by mg_py_with_evaluator. */
typedef struct tree_work {
    mg_mcts *m;
    int nsims;
} tree_work;

static int tree_search(void *ctx, const mg_evaluator *ev, mg_cancel *cancel, char *err, size_t errlen)
{
    tree_work *w = ctx;
    return mg_mcts_search_cancel(w->m, ev, w->nsims, cancel, err, errlen);
}

static PyObject *mcts_search(py_mcts *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"evaluator", "num_simulations", "spec", "max_seconds"};
    PyObject *v[4];
    int nsims;
    double max_seconds = 0.0;
    if (mg_py_fast_args("search", args, nargs, kwnames, names, 4, 4, 2, v) < 0 ||
        !MG_PY_INT_ARG(v[1], "num_simulations", 0, INT_MAX, &nsims) ||
        (v[3] && !mg_py_double_arg(v[3], "search", "max_seconds", &max_seconds)))
        return NULL;
    PyObject *evo = v[0], *speco = v[2] ? v[2] : Py_None;
    const char *spec = NULL;
    if (speco != Py_None && !(spec = mg_py_text_arg(speco, "spec")))
        return NULL;
    if (!mg_py_max_seconds_arg(NULL, max_seconds))
        return NULL;
    CHECK_TREE(self);
    int timed_out = 0;
    char err[MG_ERRLEN] = "";
    tree_work w = {self->m, nsims};
    self->busy = 1;
    self->owner = PyThread_get_thread_ident();
    int rc = mg_py_with_evaluator(evo, self->g, &self->cfg, self->state_tracking, spec, max_seconds, tree_search, &w,
                                  &timed_out, err, sizeof err);
    self->busy = 0;
    if (rc != MG_OK) {
        if (PyErr_Occurred())
            return NULL;
        return mg_py_value_error(err);
    }
    return PyBool_FromLong(timed_out);
}

static PyObject *mcts_root_edges(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    int n = mg_mcts_num_root_edges(self->m);
    size_t each = 4 * 4 + sizeof(double) + 1; /* actions, visits, prior, values; q; hallucinated */
    unsigned char *buf = PyMem_Malloc((size_t)n * each + 1);
    if (!buf)
        return PyErr_NoMemory();
    double *q = (double *)buf;
    int32_t *acts = (int32_t *)(q + n);
    uint32_t *v32 = (uint32_t *)(acts + n);
    float *prior = (float *)(v32 + n), *vals = prior + n;
    uint8_t *hal = (uint8_t *)(vals + n);
    mg_mcts_root_edges(self->m, acts, v32, q, prior, vals, hal);
    PyObject *t = mg_py_root_edge_arrays(n, acts, v32, q, prior, vals, hal);
    PyMem_Free(buf);
    return t;
}

static PyObject *mcts_root_u(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    npy_intp dims[1] = {mg_mcts_num_root_edges(self->m)};
    PyObject *u = PyArray_SimpleNew(1, dims, NPY_FLOAT64);
    if (!u)
        return NULL;
    mg_mcts_root_u(self->m, PyArray_DATA((PyArrayObject *)u));
    return u;
}

static PyObject *mcts_root_moves(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    if (!self->state_tracking)
        return PyErr_Format(PyExc_ValueError, "root_moves() is for state tracking; engine mode has actions");
    int n = mg_mcts_num_root_edges(self->m);
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *s = mg_py_str_or_none(mg_mcts_root_move(self->m, i));
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyObject *mcts_best_edge(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    return PyLong_FromLong(mg_mcts_best_edge(self->m));
}

static PyObject *mcts_best_action(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    return PyLong_FromLong(mg_mcts_best_action(self->m));
}

static PyObject *mcts_pv(py_mcts *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"max_len"};
    PyObject *v[1];
    int maxlen = 64;
    if (mg_py_fast_args("pv", args, nargs, kwnames, names, 1, 1, 0, v) < 0 ||
        (v[0] && !MG_PY_INT_ARG(v[0], "max_len", 0, 4096, &maxlen)))
        return NULL;
    CHECK_TREE(self);
    int32_t acts[4096], edges[4096];
    int len = mg_mcts_pv(self->m, acts, edges, maxlen);
    PyObject *moves = Py_None;
    Py_INCREF(Py_None);
    if (self->state_tracking) {
        Py_DECREF(Py_None);
        moves = PyList_New(len);
        if (!moves)
            return NULL;
        for (int i = 0; i < len; i++) {
            PyObject *s = mg_py_str_or_none(mg_mcts_pv_move(self->m, edges, len, i));
            if (!s) {
                Py_DECREF(moves);
                return NULL;
            }
            PyList_SET_ITEM(moves, i, s);
        }
    }
    PyObject *a = mg_py_int32_array(acts, len), *e = mg_py_int32_array(edges, len);
    if (!a || !e) {
        Py_XDECREF(a);
        Py_XDECREF(e);
        Py_DECREF(moves);
        return NULL;
    }
    return Py_BuildValue("(NNN)", a, e, moves);
}

static PyObject *mcts_stats(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    mg_mcts_stats s;
    mg_mcts_get_stats(self->m, &s);
    return mg_py_mcts_stats_dict(&s);
}

/* snapshot(root=None, timed_out=False, max_pv=64, into=None) -> MCTSResult: the root's edges, pv and counters as
 * they are now, copied (py_mcts_result.c).  into: a class; then the result is a new instance of it, made as
 * object.__new__(into) makes one (no __init__), with the MCTSResult as its attribute _snapshot (what
 * mavgame.search.mcts returns: a SearchResult whose fields are built from it when read). */
static PyObject *mcts_snapshot(py_mcts *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"root", "timed_out", "max_pv", "into"};
    PyObject *v[4];
    int max_pv = 64, timed_out = 0;
    if (mg_py_fast_args("snapshot", args, nargs, kwnames, names, 4, 4, 0, v) < 0 ||
        (v[2] && !MG_PY_INT_ARG(v[2], "max_pv", 0, 4096, &max_pv)))
        return NULL;
    if (v[1] && (timed_out = PyObject_IsTrue(v[1])) < 0)
        return NULL;
    PyObject *into = v[3] && v[3] != Py_None ? v[3] : NULL;
    if (into && !PyType_Check(into))
        return PyErr_Format(PyExc_TypeError, "snapshot(): into must be a class, not %.100s", Py_TYPE(into)->tp_name);
    CHECK_TREE(self);
    PyObject *snap = mg_py_mcts_result_new(self->m, self->state_tracking, timed_out, v[0], max_pv);
    if (!snap || !into)
        return snap;
    PyTypeObject *tp = (PyTypeObject *)into;
    PyObject *const *nm = mg_py_names();
    PyObject *empty = nm ? PyTuple_New(0) : NULL;
    PyObject *r = empty && tp->tp_new ? tp->tp_new(tp, empty, NULL) : NULL;
    if (empty && !tp->tp_new)
        PyErr_Format(PyExc_TypeError, "snapshot(): cannot make %.100s objects", tp->tp_name);
    Py_XDECREF(empty);
    if (r && PyObject_SetAttr(r, nm[MG_PY_NAME__SNAPSHOT], snap) < 0)
        Py_CLEAR(r);
    Py_DECREF(snap);
    return r;
}

static PyObject *mcts_check(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    char err[MG_ERRLEN];
    if (mg_mcts_check(self->m, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    Py_RETURN_NONE;
}

static PyObject *mcts_get_root_visits(py_mcts *self, void *Py_UNUSED(c))
{
    CHECK_TREE(self);
    return PyLong_FromUnsignedLong(mg_mcts_root_visits(self->m));
}

static PyObject *mcts_get_root_value(py_mcts *self, void *Py_UNUSED(c))
{
    CHECK_TREE(self);
    return PyFloat_FromDouble(mg_mcts_root_value(self->m));
}

static PyObject *mcts_get_root_text(py_mcts *self, void *Py_UNUSED(c))
{
    CHECK_TREE(self);
    return mg_py_str_or_none(mg_mcts_root_text(self->m));
}

static PyObject *mcts_get_root_to_move(py_mcts *self, void *Py_UNUSED(c))
{
    CHECK_TREE(self);
    return PyLong_FromLong(mg_mcts_root_to_move(self->m));
}

static PyObject *mcts_get_root_result(py_mcts *self, void *Py_UNUSED(c))
{
    CHECK_TREE(self);
    return PyLong_FromLong(mg_mcts_root_result(self->m));
}

static PyObject *mcts_get_state_tracking(py_mcts *self, void *Py_UNUSED(c)) { return PyBool_FromLong(self->state_tracking); }

static PyMethodDef mcts_methods[] = {
    {"set_root", (PyCFunction)(void (*)(void))mcts_set_root, METH_FASTCALL | METH_KEYWORDS,
     "set_root(state, ply=None): a fresh tree at an engine state."},
    {"set_root_text", (PyCFunction)(void (*)(void))mcts_set_root_text, METH_FASTCALL | METH_KEYWORDS,
     "set_root_text(text, to_move, ply=0): a fresh state-tracking tree."},
    {"advance", (PyCFunction)mcts_advance, METH_O, "advance(action): re-root at the child, keeping its subtree."},
    {"advance_move", (PyCFunction)mcts_advance_move, METH_O,
     "advance_move(move): re-root at the child reached by a move string."},
    {"search", (PyCFunction)(void (*)(void))mcts_search, METH_FASTCALL | METH_KEYWORDS,
     "search(evaluator, num_simulations): run simulations with a capsule or a batch callable."},
    {"root_edges", (PyCFunction)mcts_root_edges, METH_NOARGS,
     "root_edges() -> (actions, visits, q, prior, values, hallucinated) arrays."},
    {"root_u", (PyCFunction)mcts_root_u, METH_NOARGS,
     "root_u() -> float64 array: PUCT's exploration term U(s, a) = c(s) P(s, a) sqrt(N(s)) / (1 + N(s, a)) "
     "of each root edge (the score is Q + U)."},
    {"root_moves", (PyCFunction)mcts_root_moves, METH_NOARGS, "root_moves() -> list of move strings (state tracking)."},
    {"best_edge", (PyCFunction)mcts_best_edge, METH_NOARGS, "Index of the robust child among the root edges."},
    {"best_action", (PyCFunction)mcts_best_action, METH_NOARGS, "The robust child's action (engine mode), -1 if none."},
    {"pv", (PyCFunction)(void (*)(void))mcts_pv, METH_FASTCALL | METH_KEYWORDS,
     "pv(max_len=64) -> (actions, edge indices, moves or None)."},
    {"stats", (PyCFunction)mcts_stats, METH_NOARGS, "Statistics of the last search."},
    {"snapshot", (PyCFunction)(void (*)(void))mcts_snapshot, METH_FASTCALL | METH_KEYWORDS,
     "snapshot(root=None, timed_out=False, max_pv=64, into=None) -> MCTSResult: a copy of the root's edges, "
     "principal variation and counters (root: an object the result keeps, e.g. the root position); into: a class, "
     "whose new instance (no __init__) is returned instead, with the MCTSResult as its attribute _snapshot."},
    {"check", (PyCFunction)mcts_check, METH_NOARGS, "Check the tree invariants (ValueError on a violation)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef mcts_getset[] = {
    {"root_visits", (getter)mcts_get_root_visits, NULL, "Visits of the root.", NULL},
    {"root_value", (getter)mcts_get_root_value, NULL, "Mean backed-up value at the root (root mover's view).", NULL},
    {"root_text", (getter)mcts_get_root_text, NULL, "Root state text (state tracking).", NULL},
    {"root_to_move", (getter)mcts_get_root_to_move, NULL, "Player to move at the root.", NULL},
    {"root_result", (getter)mcts_get_root_result, NULL, "Terminal result of the root (0: not terminal).", NULL},
    {"state_tracking", (getter)mcts_get_state_tracking, NULL, "True in state-tracking mode.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_mcts_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MCTSTree",
    .tp_basicsize = sizeof(py_mcts),
    .tp_dealloc = (destructor)mcts_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MCTSTree(game=None, **config): the C search tree of mavgame.MCTS (see mavgame/search/mcts.py).\n\n"
              "Threads: one thread at a time.  A search releases the GIL; any use of the tree meanwhile raises "
              "RuntimeError ('in use by another thread', or from the search's own evaluator 'its evaluator called "
              "back into the tree').  Every int parameter is range-checked by name; seed lies in [0, 2**64).",
    .tp_methods = mcts_methods,
    .tp_getset = mcts_getset,
    .tp_init = (initproc)mcts_init,
    .tp_new = PyType_GenericNew,
};

int mg_bind_mcts(PyObject *m)
{
    if (mg_bind_mcts_result(m) < 0)
        return -1;
    return mg_py_add_type(m, "MCTSTree", &py_mcts_type);
}

/* ---- the tree for other bindings (py_mcts_tree.h) ------------------------------------------ */

int mg_py_mcts_claim(PyObject *o, const char *what, mg_mcts **m, const mg_game **g)
{
    if (!PyObject_TypeCheck(o, &py_mcts_type)) {
        PyErr_Format(PyExc_TypeError, "%s must be an MCTSTree, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    py_mcts *self = (py_mcts *)o;
    if (!self->m) {
        PyErr_Format(PyExc_ValueError, "%s: MCTSTree is not initialised", what);
        return -1;
    }
    if (self->busy)
        return tree_busy_error(self);
    self->busy = 1;
    self->owner = PyThread_get_thread_ident();
    *m = self->m;
    *g = self->g;
    return 0;
}

void mg_py_mcts_release(PyObject *o) { ((py_mcts *)o)->busy = 0; }
