/*
 * py_mcts_eval.c - the evaluators of the MCTS as Python objects (search/evaluator.h): the
 * built-in C evaluators as capsules, and the bridge that makes a Python callable
 * fn(batch, timeout) -> (outputs, seq) an mg_evaluator (its requests as tuples with MAV prompts,
 * its answers, MAV text or canonical dicts, read into results: search/mav_eval_io.h).  It only
 * converts: the prompts, the output reading and the result rules are in the core.
 *
 *   mcts_playout_evaluator(playouts=1, max_plies=0, seed=0), mcts_constant_evaluator(value=0.5),
 *   mcts_c4_solver_evaluator(tt_log2=20, max_nodes=0):
 *   capsules named "mavgame.mcts_evaluator" holding an mg_evaluator.  A native evaluator (the
 *   model engine, py_model.c) plugs in by returning such a capsule.
 */
#include "py_mcts_eval.h"
#include "interrupt.h"
#include "py_args.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <string.h>

#include "../format/mav.h"
#include "../games/connect_four/c4_evaluator.h"
#include "../search/mav_eval_io.h"


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
    static char *kwlist[] = {"playouts", "max_plies", "seed", "specialised", NULL};
    int playouts = 1, max_plies = 0, specialised = 1;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O&O&O&p:mcts_playout_evaluator", kwlist,
                                     MG_PY_C_INT("playouts", &playouts), MG_PY_C_INT("max_plies", &max_plies),
                                     MG_PY_SEED(&seed), &specialised))
        return NULL;
    mg_evaluator ev;
    char err[MG_ERRLEN];
    if (mg_eval_playout_create(&ev, playouts, max_plies, seed, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    mg_eval_playout_set_specialised(&ev, specialised);
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
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O&O&:mcts_c4_solver_evaluator", kwlist,
                                     MG_PY_C_INT("tt_log2", &tt_log2), MG_PY_U64("max_nodes", &max_nodes)))
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

PyObject *mg_py_str_or_none(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject *mg_py_int32_array(const int32_t *a, int n)
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
    PyObject *path = mg_py_int32_array(q->path, q->depth);
    PyObject *legal = q->mode == MG_EVAL_ENGINE ? mg_py_int32_array(q->legal, q->num_legal) : (Py_INCREF(Py_None), Py_None);
    PyObject *t = NULL;
    size_t pl = mg_eval_prompt(&c->f, q, c->buf, MG_EVAL_PROMPT_CAP);
    if (path && legal)
        t = Py_BuildValue("(iOOiiiNNNN)", q->index, path, legal, q->to_move, q->ply, q->depth, mg_py_str_or_none(q->text),
                          mg_py_str_or_none(q->parent_text), mg_py_str_or_none(q->move), mg_py_str_or_none(pl ? c->buf : NULL));
    Py_XDECREF(path);
    Py_XDECREF(legal);
    return t;
}

/* A float from a Python number, None -> NaN; -1 (no exception left set) if not a number, -2 with a
 * TypeError naming `what` for a complex number or array (its imaginary part would be dropped silently). */
static int float_arg(PyObject *o, double *out, const char *what)
{
    if (o == Py_None) {
        *out = NAN;
        return 0;
    }
    if (mg_py_is_complex(o)) {
        PyErr_Format(PyExc_TypeError, "mcts evaluator output: %s is complex (%R): values must be real", what, o);
        return -2;
    }
    double x = PyFloat_AsDouble(o);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    *out = x;
    return 0;
}

/* A float sequence of length n (or any length if n < 0: returned in *len) into dst; 0, -1, or -2
 * with an exception (complex values, see float_arg). */
static int float_seq(PyObject *o, float *dst, int n, int *len, const char *what)
{
    if (mg_py_is_complex(o)) {
        PyErr_Format(PyExc_TypeError, "mcts evaluator output: %s is complex (%S): values must be real", what,
                     PyArray_Check(o) ? (PyObject *)PyArray_DESCR((PyArrayObject *)o) : o);
        return -2;
    }
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
        char item[48];
        snprintf(item, sizeof item, "%s[%zd]", what, i);
        int rc = float_arg(PySequence_Fast_GET_ITEM(seq, i), &x, item);
        if (rc < 0) {
            Py_DECREF(seq);
            return rc;
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

/* Fill `r` from a canonical output dict; 0, -1 for malformed output (the leaf is invalid), or -2
 * with an exception (complex values: no evaluator could mean them). */
static int result_from_dict(const mg_eval_request *q, PyObject *d, mg_eval_result *r)
{
    PyObject *o;
    int tracking = q->mode == MG_EVAL_STATE_TRACKING, rc;
    if ((o = PyDict_GetItemString(d, "value")) && (rc = float_arg(o, &r->value, "'value'")) < 0)
        return rc;
    if (tracking) {
        if ((o = PyDict_GetItemString(d, "state")) && str_into(o, r->text, r->text_cap) < 0)
            return -1;
        if ((o = PyDict_GetItemString(d, "result"))) {
            long v = PyLong_AsLong(o);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return -1;
            }
            mg_eval_set_result(r, v);
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
    if ((o = PyDict_GetItemString(d, "values")) && o != Py_None && (rc = float_seq(o, r->values, n, NULL, "'values'")) < 0)
        return rc;
    if ((o = PyDict_GetItemString(d, "policy")) && o != Py_None && (rc = float_seq(o, r->policy, n, NULL, "'policy'")) < 0)
        return rc;
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
            long s;
            if (!MG_PY_INT_ARG(PySequence_Fast_GET_ITEM(seqs, i), "mcts evaluator arrival rank", LONG_MIN, LONG_MAX, &s))
                goto done;
            mg_eval_set_seq(r, s);
        }
        if (o == Py_None)
            r->status = MG_EVAL_DROPPED;
        else if (PyDict_Check(o)) {
            int drc = result_from_dict(&req[i], o, r);
            if (drc == -2)
                goto done;
            r->status = drc == 0 ? MG_EVAL_OK : MG_EVAL_INVALID;
        } else if (mg_py_is_complex(o)) {
            PyErr_Format(PyExc_TypeError, "mcts evaluator output %d is complex (%R): values must be real", i, o);
            goto done;
        }
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

/* ---- running a search with an evaluator object ------------------------------------------- */

/* MAV prompts/parsing for a Python evaluator: `spec` (NULL: the default for the mode) in the
 * state form (engine mode) or the transition form (state tracking).  -1 with an exception. */
static int setup_format(py_eval_ctx *c, const mg_game *g, const mg_config *cfg, int state_tracking, const char *spec)
{
    char err[MG_ERRLEN];
    if (mg_eval_format_init(&c->f, g, cfg, state_tracking, spec, err, sizeof err) != MG_OK) {
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

int mg_py_with_evaluator(PyObject *evo, const mg_game *g, const mg_config *cfg, int state_tracking, const char *spec,
                         double max_seconds, mg_py_eval_work work, void *work_ctx, int *timed_out, char *err,
                         size_t errlen)
{
    mg_evaluator *ev = NULL, bridge;
    py_eval_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    if (PyCapsule_CheckExact(evo)) {
        ev = PyCapsule_GetPointer(evo, MG_EVAL_CAPSULE);
        if (!ev)
            return MG_ERR;
        if (ev->busy) { /* its context (generator, solver table) is not shared between threads */
            PyErr_Format(PyExc_RuntimeError, "evaluator '%s' is in use by another thread's search (give each "
                         "concurrent search its own evaluator)", ev->name ? ev->name : "?");
            return MG_ERR;
        }
        ev->busy = 1;
    } else if (PyCallable_Check(evo)) {
        ctx.fn = evo;
        if (setup_format(&ctx, g, cfg, state_tracking, spec) < 0) {
            PyMem_Free(ctx.parsed);
            PyMem_Free(ctx.buf);
            return MG_ERR;
        }
        memset(&bridge, 0, sizeof bridge);
        bridge.name = "python";
        bridge.ctx = &ctx;
        bridge.modes = (1u << MG_EVAL_ENGINE) | (1u << MG_EVAL_STATE_TRACKING);
        bridge.evaluate = py_evaluate;
    } else {
        PyErr_Format(PyExc_TypeError, "evaluator must be an evaluator capsule or a callable, not %.100s",
                     Py_TYPE(evo)->tp_name);
        return MG_ERR;
    }
    Py_INCREF(evo);
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_py_interrupt_set_deadline(&pi, max_seconds);
    int rc;
    if (ev) { /* a C evaluator: the GIL released for the whole search */
        Py_BEGIN_ALLOW_THREADS
        rc = work(work_ctx, ev, &pi.cancel, err, errlen);
        Py_END_ALLOW_THREADS
        ev->busy = 0;
    } else { /* the Python bridge re-acquires the GIL for each batch (py_evaluate) */
        ctx.ts = PyEval_SaveThread();
        rc = work(work_ctx, &bridge, &pi.cancel, err, errlen);
        PyEval_RestoreThread(ctx.ts);
        PyMem_Free(ctx.parsed);
        PyMem_Free(ctx.buf);
    }
    Py_DECREF(evo);
    if (mg_py_interrupted(&pi))
        return MG_ERR;
    if (pi.timed_out) {
        *timed_out = 1;
        return MG_OK; /* stopped between batches: the work keeps what was done */
    }
    return rc;
}

static PyMethodDef eval_module_methods[] = {
    {"mcts_playout_evaluator", (PyCFunction)(void (*)(void))py_playout_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_playout_evaluator(playouts=1, max_plies=0, seed=0, specialised=True): uniform prior + random "
     "playouts (C); specialised=False plays the generic move-by-move playout even where the game has a faster one."},
    {"mcts_c4_solver_evaluator", (PyCFunction)(void (*)(void))py_c4_solver_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_c4_solver_evaluator(tt_log2=20, max_nodes=0): the perfect Connect Four oracle (C)."},
    {"mcts_constant_evaluator", (PyCFunction)(void (*)(void))py_constant_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_constant_evaluator(value=0.5): every action valued `value` (C; for timing the tree)."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mcts_eval(PyObject *m)
{
    if (PyModule_AddFunctions(m, eval_module_methods) < 0)
        return -1;
    return PyModule_AddStringConstant(m, "MCTS_EVALUATOR_CAPSULE", MG_EVAL_CAPSULE);
}
