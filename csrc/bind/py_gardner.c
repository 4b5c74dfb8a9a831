/*
 * py_gardner.c - the Gardner provers (csrc/games/gardner/gardner_prover.h, gardner_pns.h) for Python.
 *
 *   GardnerProver(tt_log2=0, method="alphabeta")
 *                                  a prover with its own table of 2^tt_log2 entries (0: 2^20; 16 bytes
 *                                  an entry for "alphabeta", the exhaustive prover, 24 for "pns", the
 *                                  depth-bounded proof-number search), allocated once and kept across calls
 *   GardnerProver.prove(state, goal, side, n, max_nodes=0, max_seconds=0.0)
 *       -> (status, stop, mate_plies, depth_done, rule50_safe, nodes, seconds, pv)
 *   GardnerProver.clear()          forget what the table learned
 *   GardnerProver.tt_bytes         size of the table
 *
 * goal 0: "side mates in at most n moves", 1: "side cannot lose within n plies"; side 0 White,
 * 1 Black; status 0 unknown, 1 proven, 2 refuted; stop 0 done, 1 node limit, 2 time limit;
 * pv: the mating line as a list of move strings.  The search runs without the GIL (Ctrl-C
 * stops it with KeyboardInterrupt); a prover serves one search at a time (others wait).
 * mavgame/gardner_prover.py wraps this in typed results.
 */
#include "state.h"
#include "interrupt.h"

#include <pythread.h>
#include <stdio.h>
#include <string.h>

#include "../games/gardner/gardner.h"
#include "../games/gardner/gardner_pns.h"
#include "../games/gardner/gardner_prover.h"

typedef struct py_gprover {
    PyObject_HEAD
    mg_gprover *pv;     /* method "alphabeta" */
    mg_gpns *pns;       /* method "pns" */
    PyThread_type_lock lock;
} py_gprover;

static int gp_init(py_gprover *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tt_log2", "method", NULL};
    int tt_log2 = 0;
    const char *method = "alphabeta";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&s:GardnerProver", kwlist, MG_PY_C_INT("tt_log2", &tt_log2),
                                     &method))
        return -1;
    const int pns = strcmp(method, "pns") == 0;
    if (!pns && strcmp(method, "alphabeta") != 0) {
        PyErr_Format(PyExc_ValueError, "method must be 'alphabeta' or 'pns', not '%s'", method);
        return -1;
    }
    if (self->pv || self->pns) {
        PyErr_SetString(PyExc_RuntimeError, "GardnerProver is already initialised");
        return -1;
    }
    char err[MG_ERRLEN] = "";
    mg_gprover *p = NULL;
    mg_gpns *q = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (pns)
        q = mg_gpns_new(tt_log2, err, sizeof err);
    else
        p = mg_gprover_new(tt_log2, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (!p && !q) {
        int in_range = tt_log2 == 0 || (tt_log2 >= MG_GPROVE_TT_MIN && tt_log2 <= MG_GPROVE_TT_MAX);
        PyErr_SetString(in_range ? PyExc_MemoryError : PyExc_ValueError, err);
        return -1;
    }
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        mg_gprover_free(p);
        mg_gpns_free(q);
        PyErr_NoMemory();
        return -1;
    }
    self->pv = p;
    self->pns = q;
    return 0;
}

static void gp_dealloc(py_gprover *self)
{
    mg_gprover_free(self->pv);
    mg_gpns_free(self->pns);
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int gp_ready(py_gprover *self)
{
    if (!self->pv && !self->pns) {
        PyErr_SetString(PyExc_ValueError, "GardnerProver is not initialised");
        return 0;
    }
    return 1;
}

static PyObject *gp_prove(py_gprover *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "goal", "side", "n", "max_nodes", "max_seconds", NULL};
    PyObject *state;
    int goal, side, n;
    long long max_nodes = 0;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&O&O&|O&d:prove", kwlist, &state, MG_PY_C_INT("goal", &goal),
                                     MG_PY_C_INT("side", &side), MG_PY_C_INT("n", &n),
                                     MG_PY_INT("max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes), &max_seconds))
        return NULL;
    if (!gp_ready(self))
        return NULL;
    mg_py_state *s = mg_py_state_arg(state, "state");
    if (!s)
        return NULL;
    if (s->game != &mg_gardner) {
        PyErr_Format(PyExc_TypeError, "the Gardner prover needs a gardner state, not '%s'", s->game->name);
        return NULL;
    }
    if (max_nodes < 0) {
        PyErr_Format(PyExc_ValueError, "max_nodes must be >= 0 (0: no limit), got %lld", max_nodes);
        return NULL;
    }
    mg_gardner_state root;
    memcpy(&root, s->state, sizeof root);
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_gprove_query q = {goal, side, n, (uint64_t)max_nodes, max_seconds, &pi.cancel};
    mg_gprove_result *res = PyMem_Malloc(sizeof *res);
    if (!res)
        return PyErr_NoMemory();
    char err[MG_ERRLEN] = "";
    int rc;
    Py_INCREF(self);
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    rc = self->pns ? mg_gpns_prove(self->pns, &root, &q, res, err, sizeof err)
                   : mg_gprove(self->pv, &root, &q, res, err, sizeof err);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    Py_DECREF(self);
    if (rc != MG_OK) {
        PyMem_Free(res);
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    if (mg_py_interrupted(&pi)) {
        PyMem_Free(res);
        return NULL;
    }
    PyObject *pv = PyList_New(res->pv_len);
    if (!pv) {
        PyMem_Free(res);
        return NULL;
    }
    mg_gardner_undo u;
    for (int i = 0; i < res->pv_len; i++) {
        char buf[MG_MAX_MOVE_STR];
        mg_gardner.action_to_str(&root, res->pv[i], buf, sizeof buf);
        PyObject *str = PyUnicode_FromString(buf);
        if (!str) {
            Py_DECREF(pv);
            PyMem_Free(res);
            return NULL;
        }
        PyList_SET_ITEM(pv, i, str);
        mg_gardner.make(&root, res->pv[i], &u);
    }
    PyObject *out = Py_BuildValue("(iiiiiKdN)", res->status, res->stop, res->mate_plies, res->depth_done,
                                  res->rule50_safe, (unsigned long long)res->nodes, res->seconds, pv);
    PyMem_Free(res);
    return out;
}

static PyObject *gp_clear(py_gprover *self, PyObject *Py_UNUSED(ignored))
{
    if (!gp_ready(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    if (self->pns)
        mg_gpns_clear(self->pns);
    else
        mg_gprover_clear(self->pv);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *gp_tt_bytes(py_gprover *self, void *Py_UNUSED(closure))
{
    if (!gp_ready(self))
        return NULL;
    return PyLong_FromSize_t(self->pns ? mg_gpns_tt_bytes(self->pns) : mg_gprover_tt_bytes(self->pv));
}

static PyObject *gp_method(py_gprover *self, void *Py_UNUSED(closure))
{
    if (!gp_ready(self))
        return NULL;
    return PyUnicode_FromString(self->pns ? "pns" : "alphabeta");
}

static PyMethodDef gp_methods[] = {
    {"prove", (PyCFunction)(void (*)(void))gp_prove, METH_VARARGS | METH_KEYWORDS,
     "prove(state, goal, side, n, max_nodes=0, max_seconds=0.0)\n"
     "    -> (status, stop, mate_plies, depth_done, rule50_safe, nodes, seconds, pv)\n\n"
     "goal 0: side mates in at most n moves; 1: side cannot lose within n plies (see "
     "csrc/games/gardner/gardner_prover.h). status 0 unknown, 1 proven, 2 refuted."},
    {"clear", (PyCFunction)gp_clear, METH_NOARGS, "clear()\n\nForget what the table learned."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef gp_getset[] = {
    {"tt_bytes", (getter)gp_tt_bytes, NULL, "bytes of the transposition table", NULL},
    {"method", (getter)gp_method, NULL, "'alphabeta' (exhaustive) or 'pns' (depth-bounded df-pn)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_gprover_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mavgame._core.GardnerProver",
    .tp_basicsize = sizeof(py_gprover),
    .tp_dealloc = (destructor)gp_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "GardnerProver(tt_log2=0, method='alphabeta')\n\nBounded mate proofs for Gardner minichess with a "
              "transposition table of 2^tt_log2 entries (0: 2^20; 16 bytes each for 'alphabeta', the exhaustive "
              "prover, 24 for 'pns', depth-bounded proof-number search), allocated once and reused across calls.",
    .tp_methods = gp_methods,
    .tp_getset = gp_getset,
    .tp_init = (initproc)gp_init,
    .tp_new = PyType_GenericNew,
};

int mg_bind_gardner(PyObject *m)
{
    return mg_py_add_type(m, "GardnerProver", &py_gprover_type);
}
