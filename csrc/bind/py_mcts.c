/*
 * py_mcts.c - Python binding of the MAV-guided MCTS (search/mcts.h): mavgame._core.MCTSTree
 * and the built-in C evaluators as capsules.  mavgame/mcts.py builds the user API on top.
 *
 *   MCTSTree(game=None, *, board_size=0, flags=0, state_tracking=False, batch_size=1, timeout=0.0,
 *            virtual_count=0, n_max=8, n_min=2, virtual_loss=3, c_puct=1.25, c_base=19652.0,
 *            c_init=1.25, prior=0, k=5, eps=0.1, tau=0.1, fpu=nan, seed=0, invalid=0)
 *       tau: a number, or a sequence of (from_ply, tau) pairs (the first from ply 0).
 *   .set_root(state, ply=None)          engine mode; ply defaults to len(state.history())
 *   .set_root_text(text, to_move, ply=0) state-tracking mode
 *   .advance(action) / .advance_move(move)   keep the played move's subtree
 *   .search(evaluator, num_simulations, spec=None, max_seconds=0.0) -> bool   evaluator: a capsule
 *       from mcts_*_evaluator (the GIL is released for the whole search), or a callable
 *       fn(batch, timeout) -> (outputs, seq) called once per batch (the GIL is released between
 *       calls).  See mavgame/mcts.py for the request tuples and the output forms.  max_seconds
 *       (> 0) is a time budget checked between batches (the first batch always runs): the search
 *       stops there keeping the simulations done, and search() returns True (False: it ran all
 *       num_simulations or reached a proven root).
 *   .root_edges() -> (actions int32, visits int64, q float64, prior float32, values float32,
 *       hallucinated bool)      .root_moves() -> list[str] (state tracking)
 *   .best_edge(), .best_action(), .pv() -> (actions int32, edges int32, moves list|None)
 *   .stats() -> dict, .check() (ValueError on a broken invariant), .root_visits, .root_value,
 *   .root_text, .root_to_move, .root_result
 *
 *   mcts_playout_evaluator(playouts=1, max_plies=0, seed=0), mcts_constant_evaluator(value=0.5),
 *   mcts_c4_solver_evaluator(tt_log2=20, max_nodes=0):
 *   capsules named "mavgame.mcts_evaluator" holding an mg_evaluator (search/evaluator.h).  A
 *   native evaluator (the model engine) plugs in by returning such a capsule.
 */
#include "state.h"
#include "interrupt.h"

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

#define MG_EVAL_CAPSULE "mavgame.mcts_evaluator"

/* ---- evaluator capsules ------------------------------------------------------------------- */

static void capsule_destroy(PyObject *cap)
{
    mg_evaluator *ev = PyCapsule_GetPointer(cap, MG_EVAL_CAPSULE);
    if (ev) {
        mg_evaluator_free(ev);
        PyMem_RawFree(ev);
    }
}

static PyObject *capsule_from(mg_evaluator *tmp)
{
    mg_evaluator *ev = PyMem_RawMalloc(sizeof *ev);
    if (!ev) {
        mg_evaluator_free(tmp);
        return PyErr_NoMemory();
    }
    *ev = *tmp;
    PyObject *cap = PyCapsule_New(ev, MG_EVAL_CAPSULE, capsule_destroy);
    if (!cap) {
        mg_evaluator_free(ev);
        PyMem_RawFree(ev);
    }
    return cap;
}

static PyObject *py_playout_evaluator(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"playouts", "max_plies", "seed", NULL};
    int playouts = 1, max_plies = 0;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|iiK:mcts_playout_evaluator", kwlist, &playouts, &max_plies,
                                     &seed))
        return NULL;
    mg_evaluator ev;
    char err[MG_ERRLEN];
    if (mg_eval_playout_create(&ev, playouts, max_plies, seed, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    return capsule_from(&ev);
}

static PyObject *py_constant_evaluator(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"value", NULL};
    double value = 0.5;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|d:mcts_constant_evaluator", kwlist, &value))
        return NULL;
    mg_evaluator ev;
    char err[MG_ERRLEN];
    if (mg_eval_constant_create(&ev, value, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    return capsule_from(&ev);
}

static PyObject *py_c4_solver_evaluator(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"tt_log2", "max_nodes", NULL};
    int tt_log2 = 20;
    unsigned long long max_nodes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|iK:mcts_c4_solver_evaluator", kwlist, &tt_log2, &max_nodes))
        return NULL;
    mg_evaluator ev;
    char err[MG_ERRLEN];
    if (mg_eval_c4_solver_create(&ev, tt_log2, max_nodes, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    return capsule_from(&ev);
}

/* ---- the Python-callable evaluator -------------------------------------------------------- */

typedef struct py_eval_ctx {
    PyObject *fn;
    PyThreadState *ts;       /* saved thread state while the search runs without the GIL */
    mg_eval_format f;        /* prompts and output reading (search/mav_eval_io.h) */
    mg_mav_result *parsed;   /* scratch for the parser */
    char *buf;               /* scratch: MG_EVAL_PROMPT_CAP + MG_EVAL_OUTPUT_CAP + 1 */
} py_eval_ctx;

/* Fill `r` from a str output (see mg_eval_read_output); 0, or -1 if it is unusable. */
static int result_from_text(py_eval_ctx *c, const mg_eval_request *q, PyObject *o, mg_eval_result *r)
{
    Py_ssize_t olen;
    const char *os = PyUnicode_AsUTF8AndSize(o, &olen);
    if (!os) {
        PyErr_Clear();
        return -1;
    }
    return mg_eval_read_output(&c->f, q, os, (size_t)olen, r, c->buf, c->parsed);
}

static PyObject *str_or_none(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static PyObject *int32_array(const int32_t *a, int n)
{
    npy_intp dims[1] = {n};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_INT32);
    if (arr && n > 0)
        memcpy(PyArray_DATA((PyArrayObject *)arr), a, (size_t)n * sizeof(int32_t));
    return arr;
}

/* (index, path, legal, to_move, ply, depth, text, parent_text, move, prompt) */
static PyObject *request_tuple(py_eval_ctx *c, const mg_eval_request *q)
{
    PyObject *path = int32_array(q->path, q->depth);
    PyObject *legal = q->mode == MG_EVAL_ENGINE ? int32_array(q->legal, q->num_legal) : (Py_INCREF(Py_None), Py_None);
    PyObject *t = NULL;
    size_t pl = mg_eval_prompt(&c->f, q, c->buf, MG_EVAL_PROMPT_CAP);
    if (path && legal)
        t = Py_BuildValue("(iOOiiiNNNN)", q->index, path, legal, q->to_move, q->ply, q->depth, str_or_none(q->text),
                          str_or_none(q->parent_text), str_or_none(q->move), str_or_none(pl ? c->buf : NULL));
    Py_XDECREF(path);
    Py_XDECREF(legal);
    return t;
}

/* A float from a Python number, None -> NaN; -1 (no exception left set) if not a number. */
static int float_arg(PyObject *o, double *out)
{
    if (o == Py_None) {
        *out = NAN;
        return 0;
    }
    double x = PyFloat_AsDouble(o);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    *out = x;
    return 0;
}

/* A float sequence of length n (or any length if n < 0: returned in *len) into dst; 0 or -1. */
static int float_seq(PyObject *o, float *dst, int n, int *len)
{
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    if ((n >= 0 && m != n) || m > MG_MAX_MOVES) {
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        double x;
        if (float_arg(PySequence_Fast_GET_ITEM(seq, i), &x) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        dst[i] = (float)x;
    }
    Py_DECREF(seq);
    if (len)
        *len = (int)m;
    return 0;
}

/* Copy a str into a fixed buffer; -1 if not a str or too long. */
static int str_into(PyObject *o, char *dst, size_t cap)
{
    if (!PyUnicode_Check(o))
        return -1;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) {
        PyErr_Clear();
        return -1;
    }
    if ((size_t)n >= cap || memchr(s, '\0', (size_t)n))
        return -1;
    memcpy(dst, s, (size_t)n + 1);
    return 0;
}

/* Fill `r` from a canonical output dict; 0, or -1 for malformed output (the leaf is invalid). */
static int result_from_dict(const mg_eval_request *q, PyObject *d, mg_eval_result *r)
{
    PyObject *o;
    int st = q->mode == MG_EVAL_STATE_TRACKING;
    if ((o = PyDict_GetItemString(d, "value")) && float_arg(o, &r->value) < 0)
        return -1;
    if (st) {
        if ((o = PyDict_GetItemString(d, "state")) && str_into(o, r->text, r->text_cap) < 0)
            return -1;
        if ((o = PyDict_GetItemString(d, "result"))) {
            long v = PyLong_AsLong(o);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return -1;
            }
            r->result = v < -1000 || v > 1000 ? 99 : (int)v;
        }
        int nm = 0;
        if ((o = PyDict_GetItemString(d, "moves"))) {
            PyObject *seq = PySequence_Fast(o, "");
            if (!seq) {
                PyErr_Clear();
                return -1;
            }
            Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
            if (m > MG_MAX_MOVES) {
                Py_DECREF(seq);
                return -1;
            }
            for (Py_ssize_t i = 0; i < m; i++)
                if (str_into(PySequence_Fast_GET_ITEM(seq, i), r->moves[i], MG_MAX_MOVE_STR) < 0) {
                    Py_DECREF(seq);
                    return -1;
                }
            Py_DECREF(seq);
            nm = (int)m;
        }
        r->num_moves = nm;
    }
    int n = r->num_moves;
    if ((o = PyDict_GetItemString(d, "values")) && o != Py_None && float_seq(o, r->values, n, NULL) < 0)
        return -1;
    if ((o = PyDict_GetItemString(d, "policy")) && o != Py_None && float_seq(o, r->policy, n, NULL) < 0)
        return -1;
    return 0;
}

static int py_evaluate(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                       double timeout, char *err, size_t errlen)
{
    (void)g;
    py_eval_ctx *c = vctx;
    PyEval_RestoreThread(c->ts);
    int rc = MG_ERR;
    PyObject *batch = PyList_New(n), *ret = NULL, *outs = NULL, *seqs = NULL;
    if (!batch)
        goto done;
    for (int i = 0; i < n; i++) {
        PyObject *t = request_tuple(c, &req[i]);
        if (!t)
            goto done;
        PyList_SET_ITEM(batch, i, t);
    }
    ret = PyObject_CallFunction(c->fn, "Od", batch, timeout);
    if (!ret)
        goto done;
    if (!PyTuple_Check(ret) || PyTuple_GET_SIZE(ret) != 2) {
        PyErr_SetString(PyExc_TypeError, "mcts evaluator bridge must return (outputs, seq)");
        goto done;
    }
    outs = PySequence_Fast(PyTuple_GET_ITEM(ret, 0), "mcts evaluator outputs must be a sequence");
    if (!outs)
        goto done;
    if (PySequence_Fast_GET_SIZE(outs) != n) {
        PyErr_Format(PyExc_ValueError, "mcts evaluator returned %zd outputs for a batch of %d",
                     PySequence_Fast_GET_SIZE(outs), n);
        goto done;
    }
    if (PyTuple_GET_ITEM(ret, 1) != Py_None) {
        seqs = PySequence_Fast(PyTuple_GET_ITEM(ret, 1), "mcts evaluator seq must be a sequence");
        if (!seqs)
            goto done;
        if (PySequence_Fast_GET_SIZE(seqs) != n) {
            PyErr_Format(PyExc_ValueError, "mcts evaluator returned %zd arrival ranks for a batch of %d",
                         PySequence_Fast_GET_SIZE(seqs), n);
            goto done;
        }
    }
    for (int i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(outs, i);
        mg_eval_result *r = &res[i];
        if (seqs) {
            long s = PyLong_AsLong(PySequence_Fast_GET_ITEM(seqs, i));
            if (s == -1 && PyErr_Occurred())
                goto done;
            r->seq = s < -1000000000L ? -1000000000 : s > 1000000000L ? 1000000000 : (int)s;
        }
        if (o == Py_None)
            r->status = MG_EVAL_DROPPED;
        else if (PyDict_Check(o))
            r->status = result_from_dict(&req[i], o, r) == 0 ? MG_EVAL_OK : MG_EVAL_INVALID;
        else if (PyUnicode_Check(o))
            r->status = result_from_text(c, &req[i], o, r) == 0 ? MG_EVAL_OK : MG_EVAL_INVALID;
        else
            r->status = MG_EVAL_INVALID;
    }
    rc = MG_OK;
done:
    if (rc != MG_OK)
        snprintf(err, errlen, "the Python evaluator raised an exception");
    Py_XDECREF(batch);
    Py_XDECREF(ret);
    Py_XDECREF(outs);
    Py_XDECREF(seqs);
    c->ts = PyEval_SaveThread();
    return rc;
}

/* ---- MCTSTree ------------------------------------------------------------------------------ */

typedef struct py_mcts {
    PyObject_HEAD
    mg_mcts *m;
    const mg_game *g;
    mg_config cfg;
    int st;
    int busy;               /* a search is running (the evaluator may call back into Python) */
} py_mcts;

#define CHECK_TREE(self)                                                                           \
    do {                                                                                           \
        if (!(self)->m) {                                                                          \
            PyErr_SetString(PyExc_ValueError, "MCTSTree is not initialised");                      \
            return NULL;                                                                           \
        }                                                                                          \
        if ((self)->busy) {                                                                        \
            PyErr_SetString(PyExc_RuntimeError, "MCTSTree is searching (called from its evaluator?)"); \
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
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "id", &ply, &t)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "tau schedule step %zd must be a (from_ply, tau) pair", i);
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
    int board_size = 0, st = 0;
    unsigned int flags = 0;
    unsigned long long seed = 0;
    PyObject *tau = NULL;
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$iIpidiiiidddiidOdKi:MCTSTree", kwlist, &game_o, &board_size,
                                     &flags, &st, &c.batch_size, &c.timeout, &c.virtual_count, &c.n_max, &c.n_min,
                                     &c.virtual_loss, &c.c_puct, &c.c_base, &c.c_init, &c.prior, &c.k, &c.eps, &tau,
                                     &c.fpu, &seed, &c.invalid))
        return -1;
    if (game_o != Py_None && !(game = mg_py_text_arg(game_o, "game")))
        return -1;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "MCTSTree is searching");
        return -1;
    }
    c.seed = seed;
    c.mode = st ? MG_EVAL_STATE_TRACKING : MG_EVAL_ENGINE;
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
    self->st = st;
    return 0;
}

static PyObject *mcts_set_root(py_mcts *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"state", "ply", NULL};
    PyObject *so, *plyo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:set_root", kwlist, &so, &plyo))
        return NULL;
    CHECK_TREE(self);
    mg_py_state *s = mg_py_state_arg(so, "state");
    if (!s)
        return NULL;
    if (s->game != self->g) {
        PyErr_Format(PyExc_ValueError, "state is a %s position but this tree searches %s", s->game->name,
                     self->g ? self->g->name : "(no game: state tracking)");
        return NULL;
    }
    long ply = (long)s->ply;
    if (plyo != Py_None) {
        ply = PyLong_AsLong(plyo);
        if (ply == -1 && PyErr_Occurred())
            return NULL;
    }
    char err[MG_ERRLEN];
    if (mg_mcts_set_root(self->m, s->state, (int)ply, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    self->cfg = s->cfg;
    Py_RETURN_NONE;
}

static PyObject *mcts_set_root_text(py_mcts *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"text", "to_move", "ply", NULL};
    PyObject *text_o;
    int to_move, ply = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oi|i:set_root_text", kwlist, &text_o, &to_move, &ply))
        return NULL;
    const char *text = mg_py_text_arg(text_o, "text");
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
    long a = PyLong_AsLong(arg);
    if (a == -1 && PyErr_Occurred())
        return NULL;
    if (a < INT32_MIN || a > INT32_MAX)
        return PyErr_Format(PyExc_ValueError, "action %ld out of range", a);
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

/* MAV prompts/parsing for a Python evaluator: `spec` (NULL: the default for the mode) in the
 * state form (engine mode) or the transition form (state tracking).  -1 with an exception. */
static int setup_format(py_mcts *self, py_eval_ctx *c, const char *spec)
{
    char err[MG_ERRLEN];
    if (mg_eval_format_init(&c->f, self->g, &self->cfg, self->st, spec, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    if (!c->f.fmt)
        return 0;
    c->parsed = PyMem_Malloc(sizeof *c->parsed);
    c->buf = PyMem_Malloc(MG_EVAL_PROMPT_CAP + MG_EVAL_OUTPUT_CAP + 1);
    if (!c->parsed || !c->buf) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *mcts_search(py_mcts *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"evaluator", "num_simulations", "spec", "max_seconds", NULL};
    PyObject *evo, *speco = Py_None;
    int nsims;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oi|Od:search", kwlist, &evo, &nsims, &speco, &max_seconds))
        return NULL;
    const char *spec = NULL;
    if (speco != Py_None && !(spec = mg_py_text_arg(speco, "spec")))
        return NULL;
    if (!mg_py_max_seconds_arg(NULL, max_seconds))
        return NULL;
    CHECK_TREE(self);
    int timed_out = 0;
    char err[MG_ERRLEN] = "";
    int rc;
    self->busy = 1;
    if (PyCapsule_CheckExact(evo)) {
        mg_evaluator *ev = PyCapsule_GetPointer(evo, MG_EVAL_CAPSULE);
        if (!ev) {
            self->busy = 0;
            return NULL;
        }
        if (ev->busy) { /* its context (generator, solver table) is not shared between threads */
            self->busy = 0;
            return PyErr_Format(PyExc_RuntimeError, "evaluator '%s' is in use by another search (give each "
                                "concurrent search its own evaluator)", ev->name ? ev->name : "?");
        }
        ev->busy = 1;
        Py_INCREF(evo);
        mg_py_interrupt pi;
        mg_py_interrupt_init(&pi);
        mg_py_interrupt_set_deadline(&pi, max_seconds);
        Py_BEGIN_ALLOW_THREADS
        rc = mg_mcts_search_cancel(self->m, ev, nsims, &pi.cancel, err, sizeof err);
        Py_END_ALLOW_THREADS
        if (mg_py_interrupted(&pi))
            rc = MG_ERR;
        else if (pi.timed_out) {
            timed_out = 1;
            rc = MG_OK; /* stopped between batches: the tree keeps what was done */
        }
        ev->busy = 0;
        Py_DECREF(evo);
    } else if (PyCallable_Check(evo)) {
        py_eval_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.fn = evo;
        if (setup_format(self, &ctx, spec) < 0) {
            self->busy = 0;
            PyMem_Free(ctx.parsed);
            PyMem_Free(ctx.buf);
            return NULL;
        }
        mg_evaluator ev;
        memset(&ev, 0, sizeof ev);
        ev.name = "python";
        ev.ctx = &ctx;
        ev.modes = (1u << MG_EVAL_ENGINE) | (1u << MG_EVAL_STATE_TRACKING);
        ev.evaluate = py_evaluate;
        Py_INCREF(evo);
        mg_py_interrupt pi;
        mg_py_interrupt_init(&pi);
        mg_py_interrupt_set_deadline(&pi, max_seconds);
        ctx.ts = PyEval_SaveThread();
        rc = mg_mcts_search_cancel(self->m, &ev, nsims, &pi.cancel, err, sizeof err);
        PyEval_RestoreThread(ctx.ts);
        if (mg_py_interrupted(&pi))
            rc = MG_ERR;
        else if (pi.timed_out) {
            timed_out = 1;
            rc = MG_OK; /* stopped between batches: the tree keeps what was done */
        }
        Py_DECREF(evo);
        PyMem_Free(ctx.parsed);
        PyMem_Free(ctx.buf);
    } else {
        self->busy = 0;
        return PyErr_Format(PyExc_TypeError, "evaluator must be an evaluator capsule or a callable, not %.100s",
                            Py_TYPE(evo)->tp_name);
    }
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
    npy_intp dims[1] = {n};
    PyObject *acts = PyArray_SimpleNew(1, dims, NPY_INT32);
    PyObject *vis = PyArray_SimpleNew(1, dims, NPY_INT64);
    PyObject *q = PyArray_SimpleNew(1, dims, NPY_FLOAT64);
    PyObject *prior = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyObject *vals = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyObject *hal = PyArray_SimpleNew(1, dims, NPY_BOOL);
    uint32_t *v32 = PyMem_Malloc(((size_t)n + 1) * sizeof *v32);
    if (!acts || !vis || !q || !prior || !vals || !hal || !v32) {
        Py_XDECREF(acts);
        Py_XDECREF(vis);
        Py_XDECREF(q);
        Py_XDECREF(prior);
        Py_XDECREF(vals);
        Py_XDECREF(hal);
        PyMem_Free(v32);
        return PyErr_NoMemory();
    }
    mg_mcts_root_edges(self->m, PyArray_DATA((PyArrayObject *)acts), v32, PyArray_DATA((PyArrayObject *)q),
                       PyArray_DATA((PyArrayObject *)prior), PyArray_DATA((PyArrayObject *)vals),
                       PyArray_DATA((PyArrayObject *)hal));
    int64_t *v64 = PyArray_DATA((PyArrayObject *)vis);
    for (int i = 0; i < n; i++)
        v64[i] = v32[i];
    PyMem_Free(v32);
    return Py_BuildValue("(NNNNNN)", acts, vis, q, prior, vals, hal);
}

static PyObject *mcts_root_moves(py_mcts *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_TREE(self);
    if (!self->st)
        return PyErr_Format(PyExc_ValueError, "root_moves() is for state tracking; engine mode has actions");
    int n = mg_mcts_num_root_edges(self->m);
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *s = str_or_none(mg_mcts_root_move(self->m, i));
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

static PyObject *mcts_pv(py_mcts *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"max_len", NULL};
    int maxlen = 64;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:pv", kwlist, &maxlen))
        return NULL;
    CHECK_TREE(self);
    if (maxlen < 0 || maxlen > 4096)
        return PyErr_Format(PyExc_ValueError, "max_len %d is not in [0, 4096]", maxlen);
    int32_t acts[4096], edges[4096];
    int len = mg_mcts_pv(self->m, acts, edges, maxlen);
    PyObject *moves = Py_None;
    Py_INCREF(Py_None);
    if (self->st) {
        Py_DECREF(Py_None);
        moves = PyList_New(len);
        if (!moves)
            return NULL;
        for (int i = 0; i < len; i++) {
            PyObject *s = str_or_none(mg_mcts_pv_move(self->m, edges, len, i));
            if (!s) {
                Py_DECREF(moves);
                return NULL;
            }
            PyList_SET_ITEM(moves, i, s);
        }
    }
    PyObject *a = int32_array(acts, len), *e = int32_array(edges, len);
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
    return Py_BuildValue("{sLsLsLsLsLsLsLsLsLsisisLsisdsd}", "simulations", (long long)s.simulations,
                         "evaluations", (long long)s.evaluations, "completed", (long long)s.completed,
                         "terminal_visits", (long long)s.terminal_visits, "dropped", (long long)s.dropped,
                         "invalid", (long long)s.invalid, "collisions", (long long)s.collisions, "batches",
                         (long long)s.batches, "depth_cutoffs", (long long)s.depth_cutoffs, "max_depth", s.max_depth, "nodes", s.nodes, "edges",
                         (long long)s.edges, "reused_nodes", s.reused_nodes, "elapsed", s.elapsed, "eval_seconds",
                         s.eval_seconds);
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
    return str_or_none(mg_mcts_root_text(self->m));
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

static PyObject *mcts_get_state_tracking(py_mcts *self, void *Py_UNUSED(c)) { return PyBool_FromLong(self->st); }

static PyMethodDef mcts_methods[] = {
    {"set_root", (PyCFunction)(void (*)(void))mcts_set_root, METH_VARARGS | METH_KEYWORDS,
     "set_root(state, ply=None): a fresh tree at an engine state."},
    {"set_root_text", (PyCFunction)(void (*)(void))mcts_set_root_text, METH_VARARGS | METH_KEYWORDS,
     "set_root_text(text, to_move, ply=0): a fresh state-tracking tree."},
    {"advance", (PyCFunction)mcts_advance, METH_O, "advance(action): re-root at the child, keeping its subtree."},
    {"advance_move", (PyCFunction)mcts_advance_move, METH_O,
     "advance_move(move): re-root at the child reached by a move string."},
    {"search", (PyCFunction)(void (*)(void))mcts_search, METH_VARARGS | METH_KEYWORDS,
     "search(evaluator, num_simulations): run simulations with a capsule or a batch callable."},
    {"root_edges", (PyCFunction)mcts_root_edges, METH_NOARGS,
     "root_edges() -> (actions, visits, q, prior, values, hallucinated) arrays."},
    {"root_moves", (PyCFunction)mcts_root_moves, METH_NOARGS, "root_moves() -> list of move strings (state tracking)."},
    {"best_edge", (PyCFunction)mcts_best_edge, METH_NOARGS, "Index of the robust child among the root edges."},
    {"best_action", (PyCFunction)mcts_best_action, METH_NOARGS, "The robust child's action (engine mode), -1 if none."},
    {"pv", (PyCFunction)(void (*)(void))mcts_pv, METH_VARARGS | METH_KEYWORDS,
     "pv(max_len=64) -> (actions, edge indices, moves or None)."},
    {"stats", (PyCFunction)mcts_stats, METH_NOARGS, "Statistics of the last search."},
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
    .tp_doc = "MCTSTree(game=None, **config): the C search tree of mavgame.MCTS (see mavgame/mcts.py).",
    .tp_methods = mcts_methods,
    .tp_getset = mcts_getset,
    .tp_init = (initproc)mcts_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef mcts_module_methods[] = {
    {"mcts_playout_evaluator", (PyCFunction)(void (*)(void))py_playout_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_playout_evaluator(playouts=1, max_plies=0, seed=0): uniform prior + random playouts (C)."},
    {"mcts_c4_solver_evaluator", (PyCFunction)(void (*)(void))py_c4_solver_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_c4_solver_evaluator(tt_log2=20, max_nodes=0): the perfect Connect Four oracle (C)."},
    {"mcts_constant_evaluator", (PyCFunction)(void (*)(void))py_constant_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_constant_evaluator(value=0.5): every action valued `value` (C; for timing the tree)."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mcts(PyObject *m)
{
    if (PyType_Ready(&py_mcts_type) < 0)
        return -1;
    Py_INCREF(&py_mcts_type);
    if (PyModule_AddObject(m, "MCTSTree", (PyObject *)&py_mcts_type) < 0) {
        Py_DECREF(&py_mcts_type);
        return -1;
    }
    if (PyModule_AddFunctions(m, mcts_module_methods) < 0)
        return -1;
    return PyModule_AddStringConstant(m, "MCTS_EVALUATOR_CAPSULE", MG_EVAL_CAPSULE);
}
