/*
 * py_alphabeta.c - Python functions for the IDP report's alpha-beta searches (csrc/games/chess/chess_alphabeta.h).
 *
 *   alphabeta(state, depth=4, *, max_nodes=0, max_seconds=0.0, tt=True) -> AlphaBetaResult
 *   guided_alphabeta(state, policy=None, *, threshold=0.001, max_depth=8, batch=32, max_nodes=0,
 *                    max_seconds=0.0, fens=False) -> AlphaBetaResult
 *
 * policy: None (uniform), a float array of 1968 weights over the move index (one fixed
 * preference, masked and renormalised in every position; run without the GIL), a
 * mavgame._core.PolicyNet (the native network, called from the search without the GIL), or a callable
 * policy(planes, mask[, fens]) -> array (n, 1968) called with batches of positions: planes float32
 * (n, 41, 8, 8), mask bool (n, 1968), fens (with fens=True) a list of FEN strings.  The search runs
 * with the GIL released (a callable policy takes it for its call); Ctrl-C stops it (KeyboardInterrupt);
 * max_seconds / max_nodes stop it with the best move of the last completed iteration.
 */
#include "policy_bind.h"
#include "interrupt.h"
#include "py_args.h"
#include "../games/chess/chess_alphabeta.h"
#include "../games/chess/chess_pst.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

static PyTypeObject *result_type;

static PyStructSequence_Field result_fields[] = {
    {"best_move", "the best root action (int), -1 if the root has no legal move"},
    {"move", "its UCI string (None if no move)"},
    {"score", "centipawns for the side to move; a mate in k plies is +-(30000 - k)"},
    {"nodes", "positions visited"},
    {"pv", "principal variation (tuple of UCI strings)"},
    {"iterations", "completed iterations (baseline: the depth reached; guided: thresholds done)"},
    {"complete", "True if the full search finished"},
    {"stop", "why it stopped early: '' (it did not), 'time', 'interrupt', 'nodes'"},
    {"seconds", "search time"},
    {"policy_calls", "policy calls (guided)"},
    {"policy_positions", "positions sent to the policy"},
    {"policy_seconds", "time spent in the policy"},
    {NULL, NULL},
};

static PyStructSequence_Desc result_desc = {
    "mavgame._core.AlphaBetaResult", "Result of alphabeta() / guided_alphabeta().", result_fields, 12,
};

typedef struct py_policy_ctx {
    const float *weights;   /* a fixed preference (array policy) */
    PyObject *fn;           /* a callable policy */
    int fens;
} py_policy_ctx;

static int array_policy(void *ctx, const mg_ab_query *q, int n, float *out)
{
    (void)q;
    const py_policy_ctx *c = ctx;
    for (int i = 0; i < n; i++)
        memcpy(out + (size_t)i * MG_POLICY_MOVES, c->weights, MG_POLICY_MOVES * sizeof(float));
    return 0;
}

static int call_policy(py_policy_ctx *c, const mg_ab_query *q, int n, float *out)
{
    npy_intp dp[4] = {n, MG_POLICY_PLANES, 8, 8}, dm[2] = {n, MG_POLICY_MOVES};
    PyObject *planes = PyArray_SimpleNew(4, dp, NPY_FLOAT32), *mask = PyArray_SimpleNew(2, dm, NPY_BOOL);
    PyObject *fens = c->fens ? PyList_New(n) : NULL, *res = NULL, *arr = NULL;
    int rc = -1;
    if (!planes || !mask || (c->fens && !fens))
        goto done;
    float *pl = PyArray_DATA((PyArrayObject *)planes);
    npy_bool *mk = PyArray_DATA((PyArrayObject *)mask);
    memset(mk, 0, (size_t)n * MG_POLICY_MOVES);
    for (int i = 0; i < n; i++) {
        const mg_chess_state *s = q[i].state;
        mg_policy_planes(s->board, q[i].prev1, q[i].prev2, s->stm, s->fullmove, pl + (size_t)i * MG_POLICY_INPUT_SIZE);
        int32_t acts[MG_CHESS_MAX_MOVES];
        int16_t idx[MG_CHESS_MAX_MOVES];
        int k = mg_policy_legal(s, acts, idx);
        for (int m = 0; m < k; m++)
            mk[(size_t)i * MG_POLICY_MOVES + idx[m]] = 1;
        if (fens) {
            char buf[MG_MAX_TEXT];
            size_t len = mg_chess_to_fen(s, buf, sizeof buf);
            PyObject *f = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
            if (!f)
                goto done;
            PyList_SET_ITEM(fens, i, f);
        }
    }
    res = fens ? PyObject_CallFunctionObjArgs(c->fn, planes, mask, fens, NULL)
               : PyObject_CallFunctionObjArgs(c->fn, planes, mask, NULL);
    if (!res)
        goto done;
    arr = mg_py_real_array(res, NPY_FLOAT32, 0, 0, "the policy's answer");
    if (!arr)
        goto done;
    if (PyArray_NDIM((PyArrayObject *)arr) != 2 || PyArray_DIM((PyArrayObject *)arr, 0) != n ||
        PyArray_DIM((PyArrayObject *)arr, 1) != MG_POLICY_MOVES) {
        PyObject *shape = PyObject_GetAttrString(arr, "shape");
        if (shape)
            PyErr_Format(PyExc_ValueError, "the policy returned an array of shape %R for %d positions; expected (%d, %d)",
                         shape, n, n, MG_POLICY_MOVES);
        Py_XDECREF(shape);
        goto done;
    }
    memcpy(out, PyArray_DATA((PyArrayObject *)arr), (size_t)n * MG_POLICY_MOVES * sizeof(float));
    rc = 0;
done:
    Py_XDECREF(planes);
    Py_XDECREF(mask);
    Py_XDECREF(fens);
    Py_XDECREF(res);
    Py_XDECREF(arr);
    return rc;
}

static int callable_policy(void *ctx, const mg_ab_query *q, int n, float *out)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = call_policy(ctx, q, n, out);
    PyGILState_Release(g);
    return rc;
}

static PyObject *pv_tuple(const mg_chess_state *root, const mg_ab_result *r)
{
    PyObject *t = PyTuple_New(r->pv_len);
    if (!t)
        return NULL;
    mg_chess_state s;
    memcpy(&s, root, sizeof s);
    unsigned char undo[MG_MAX_UNDO];
    for (int i = 0; i < r->pv_len; i++) {
        char buf[MG_MAX_MOVE_STR];
        size_t len = mg_chess.action_to_str(&s, r->pv[i], buf, sizeof buf);
        PyObject *u = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
        if (!u) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, u);
        mg_chess.make(&s, r->pv[i], undo);
    }
    return t;
}

static PyObject *run_search(mg_py_state *ps, mg_ab_params *p, int tt_bits, double max_seconds)
{
    const mg_chess_state *root = (const mg_chess_state *)ps->state;
    if (!(max_seconds >= 0.0))
        return PyErr_Format(PyExc_ValueError, "max_seconds must be >= 0, got %g", max_seconds);
    char err[MG_ERRLEN] = "";
    if (mg_ab_params_check(p, err, sizeof err) != 0)
        return mg_py_value_error(err);
    mg_ab_workspace *ws = mg_ab_workspace_new(tt_bits);
    if (!ws)
        return PyErr_NoMemory();
    uint8_t prev1[64], prev2[64];
    mg_py_chess_prev_board(ps, 1, prev1);
    mg_py_chess_prev_board(ps, 2, prev2);
    mg_ab_result r;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_py_interrupt_set_deadline(&pi, max_seconds);
    Py_BEGIN_ALLOW_THREADS
    mg_ab_search(root, prev1, prev2, p, ws, &pi.cancel, &r, err, sizeof err);
    Py_END_ALLOW_THREADS
    mg_ab_workspace_free(ws);
    if (r.stop == MG_AB_STOP_POLICY) /* the policy's exception is set */
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_RuntimeError, "the policy failed");
    if (mg_py_interrupted(&pi))
        return NULL;
    const char *stop = r.stop == MG_AB_STOP_NONE ? "" : r.stop == MG_AB_STOP_NODES ? "nodes"
                       : pi.timed_out                ? "time"
                                                     : "interrupt";
    PyObject *res = PyStructSequence_New(result_type);
    if (!res)
        return NULL;
    PyObject *move = Py_None;
    char buf[MG_MAX_MOVE_STR];
    if (r.best >= 0) {
        size_t len = mg_chess.action_to_str(root, r.best, buf, sizeof buf);
        move = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
    } else
        Py_INCREF(move);
    PyObject *items[12] = {
        PyLong_FromLong(r.best), move, PyLong_FromLong(r.score), PyLong_FromUnsignedLongLong(r.nodes),
        pv_tuple(root, &r), PyLong_FromLong(r.iterations), PyBool_FromLong(r.complete), PyUnicode_FromString(stop),
        PyFloat_FromDouble(r.seconds), PyLong_FromUnsignedLongLong(r.policy_calls),
        PyLong_FromUnsignedLongLong(r.policy_positions), PyFloat_FromDouble(r.policy_seconds),
    };
    int ok = 1;
    for (int i = 0; i < 12; i++) {
        if (!items[i])
            ok = 0;
        PyStructSequence_SET_ITEM(res, i, items[i] ? items[i] : (Py_INCREF(Py_None), Py_None));
    }
    if (!ok) {
        Py_DECREF(res);
        return NULL;
    }
    return res;
}

static int budget_args(long long max_nodes, uint64_t *out)
{
    if (max_nodes < 0) {
        PyErr_Format(PyExc_ValueError, "max_nodes must be >= 0 (0: no budget), got %lld", max_nodes);
        return -1;
    }
    *out = (uint64_t)max_nodes;
    return 0;
}

static PyObject *py_alphabeta(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "depth", "max_nodes", "max_seconds", "tt", NULL};
    PyObject *st;
    int depth = 4, tt = 1;
    long long max_nodes = 0;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&$O&dp:alphabeta", kwlist, &st, MG_PY_C_INT("depth", &depth),
                                     MG_PY_INT("max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes), &max_seconds, &tt))
        return NULL;
    mg_py_state *ps;
    if (!mg_py_chess_state(st, "alphabeta: state", &ps))
        return NULL;
    mg_ab_params p = {.depth = depth, .use_tt = tt, .batch = 1};
    if (budget_args(max_nodes, &p.max_nodes) < 0)
        return NULL;
    return run_search(ps, &p, tt ? 18 : 0, max_seconds);
}

static PyObject *py_guided_alphabeta(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "policy", "threshold", "max_depth", "batch", "max_nodes", "max_seconds",
                             "fens", NULL};
    PyObject *st, *pol = Py_None;
    double threshold = 0.001, max_seconds = 0.0;
    int max_depth = 8, batch = 32, fens = 0;
    long long max_nodes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$dO&O&O&dp:guided_alphabeta", kwlist, &st, &pol, &threshold,
                                     MG_PY_C_INT("max_depth", &max_depth), MG_PY_C_INT("batch", &batch),
                                     MG_PY_INT("max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes), &max_seconds, &fens))
        return NULL;
    mg_py_state *ps;
    if (!mg_py_chess_state(st, "guided_alphabeta: state", &ps))
        return NULL;
    if (!(threshold > 0.0))
        return PyErr_Format(PyExc_ValueError, "threshold must be in (0, 1), got %g", threshold);
    mg_ab_params p = {.depth = max_depth, .threshold = threshold, .batch = batch};
    if (budget_args(max_nodes, &p.max_nodes) < 0)
        return NULL;
    py_policy_ctx ctx = {NULL, NULL, fens};
    PyObject *weights = NULL;
    int native = pol == Py_None ? 0 : mg_py_policy_net_ab(pol, &p.policy, &p.policy_ctx);
    if (native < 0)
        return NULL;
    if (pol != Py_None && !native) {
        if (PyCallable_Check(pol)) {
            ctx.fn = pol;
            p.policy = callable_policy;
        } else {
            weights = mg_py_real_array(pol, NPY_FLOAT32, 0, 0, "policy");
            if (!weights)
                return NULL;
            if (PyArray_NDIM((PyArrayObject *)weights) != 1 || PyArray_DIM((PyArrayObject *)weights, 0) != MG_POLICY_MOVES) {
                PyObject *shape = PyObject_GetAttrString(weights, "shape");
                if (shape)
                    PyErr_Format(PyExc_ValueError, "policy: an array policy needs shape (%d,), got %R", MG_POLICY_MOVES,
                                 shape);
                Py_XDECREF(shape);
                Py_DECREF(weights);
                return NULL;
            }
            ctx.weights = PyArray_DATA((PyArrayObject *)weights);
            p.policy = array_policy;
        }
        p.policy_ctx = &ctx;
    }
    PyObject *res = run_search(ps, &p, 0, max_seconds);
    Py_XDECREF(weights);
    return res;
}

static PyObject *py_pst_tables(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored))
{
    npy_intp dims[2] = {7, 64};
    PyObject *arr = PyArray_ZEROS(2, dims, NPY_INT32, 0);
    if (!arr)
        return NULL;
    int32_t *out = PyArray_DATA((PyArrayObject *)arr);
    for (int t = MG_CH_PAWN; t <= MG_CH_KING; t++)
        for (int sq = 0; sq < 64; sq++)
            out[t * 64 + sq] = mg_pst_square(t, sq);
    return arr;
}

static PyObject *py_pst_eval(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    const mg_chess_state *s = mg_py_chess_state(arg, "pst_eval: state", NULL);
    return s ? PyLong_FromLong(mg_pst_eval(s)) : NULL;
}

static PyMethodDef ab_methods[] = {
    {"pst_tables", py_pst_tables, METH_NOARGS,
     "pst_tables() -> numpy.ndarray[int32] (7, 64)\n\nThe baseline's evaluation: piece value + table entry of a "
     "White piece of type 1..6 (pawn..king) on each square (a1 = 0); Black's are mirrored (sq ^ 56)."},
    {"pst_eval", py_pst_eval, METH_O,
     "pst_eval(state) -> int\n\nThe baseline's static evaluation (centipawns for the side to move)."},
    {"alphabeta", (PyCFunction)(void (*)(void))py_alphabeta, METH_VARARGS | METH_KEYWORDS,
     "alphabeta(state, depth=4, *, max_nodes=0, max_seconds=0.0, tt=True) -> AlphaBetaResult\n\n"
     "The IDP report's baseline: alpha-beta to `depth` with piece values and piece-square tables (chess)."},
    {"guided_alphabeta", (PyCFunction)(void (*)(void))py_guided_alphabeta, METH_VARARGS | METH_KEYWORDS,
     "guided_alphabeta(state, policy=None, *, threshold=0.001, max_depth=8, batch=32, max_nodes=0, "
     "max_seconds=0.0, fens=False) -> AlphaBetaResult\n\n"
     "Probability-threshold alpha-beta guided by a policy: None (uniform), an array of 1968 weights, a "
     "PolicyNet (the native network, run inside the search), or "
     "policy(planes, mask[, fens]) -> (n, 1968) called with batches of positions."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_alphabeta(PyObject *m)
{
    result_type = PyStructSequence_NewType(&result_desc);
    if (!result_type || PyModule_AddObjectRef(m, "AlphaBetaResult", (PyObject *)result_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, ab_methods);
}
