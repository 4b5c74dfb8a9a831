/*
 * py_connect_four.c - Python functions for Connect Four and its perfect solver (the generic
 * random-playout counter is in py_playout.c).
 *
 *   C4Solver(tt_log2=0)                        a solver with its own transposition table of
 *                                              2^tt_log2 8-byte entries (0: 2^23 = 64 MiB),
 *                                              allocated once and kept across calls
 *   C4Solver.solve(state, max_nodes=0, max_seconds=0.0, weak=False, moves=True)
 *       -> (score, move_scores, nodes, complete)
 *   C4Solver.clear()                           empty the table (for cold timings)
 *   C4Solver.solve_sequences(seqs, clear=True, weak=False) -> (scores, nodes, seconds)
 *                                              benchmark helper: score-only solves of move
 *                                              sequences, each timed in C (thread CPU time)
 *   C4Solver.tt_bytes                          size of the table
 *   c4_solve(state, max_nodes=0, max_seconds=0.0, weak=False, moves=True, solver=None)
 *       the same with `solver` or the module's default solver (created on first use as the
 *       module attribute _c4_default_solver)
 *   c4_from_moves(moves) -> str                board text of a move sequence such as "4453"
 *
 * score: the exact score (csrc/search/c4_solver.h: positive = the side to move wins,
 * 22 - its stones at the win; 0 draw; negative = loss), or None when the budget ran out
 * (complete False).  move_scores: float64 array of 7, the score of each column (1..7 =
 * index 0..6) for the side to move, NaN for a full column, a column not solved within the
 * budget, or when moves=False.  With weak=True scores are only +1 / 0 / -1.
 * The search runs without the GIL; a solver serves one search at a time (others wait).
 */
#include "state.h"
#include "interrupt.h"
#include "py_args.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <limits.h>
#include <math.h>
#include <pythread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../games/connect_four/connect_four.h"
#include "../rng.h"
#include "../games/connect_four/c4_solver.h"
#include "../clock.h"

typedef struct py_c4_solver {
    PyObject_HEAD
    mg_c4_solver *sv;
    PyThread_type_lock lock;
    PyObject *book_data; /* the bytes the book reads from (kept alive), or NULL */
    mg_c4_book book;
} py_c4_solver;

static PyTypeObject py_c4_solver_type;

static int c4s_init(py_c4_solver *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tt_log2", NULL};
    int tt_log2 = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&:C4Solver", kwlist, MG_PY_C_INT("tt_log2", &tt_log2)))
        return -1;
    if (self->sv) {
        PyErr_SetString(PyExc_RuntimeError, "C4Solver is already initialised");
        return -1;
    }
    char err[MG_ERRLEN] = "";
    mg_c4_solver *sv;
    Py_BEGIN_ALLOW_THREADS
    sv = mg_c4_solver_new(tt_log2, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (!sv) {
        PyErr_SetString(tt_log2 >= 10 && tt_log2 <= 30 ? PyExc_MemoryError : PyExc_ValueError, err);
        return -1;
    }
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        mg_c4_solver_free(sv);
        PyErr_NoMemory();
        return -1;
    }
    self->sv = sv;
    return 0;
}

static void c4s_dealloc(py_c4_solver *self)
{
    mg_c4_solver_free(self->sv);
    Py_CLEAR(self->book_data);
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int c4s_ready(py_c4_solver *self)
{
    if (!self->sv) {
        PyErr_SetString(PyExc_ValueError, "C4Solver is not initialised");
        return 0;
    }
    return 1;
}

/* The Connect Four position behind a State argument, copied (the search runs without the GIL). */
static int c4_state_arg(PyObject *o, mg_c4_state *out)
{
    mg_py_state *s = mg_py_state_arg(o, "state");
    if (!s)
        return 0;
    if (s->game != &mg_connect_four) {
        PyErr_Format(PyExc_TypeError, "the Connect Four solver needs a connect_four state, not '%s'", s->game->name);
        return 0;
    }
    memcpy(out, s->state, sizeof *out);
    return 1;
}

/* The search behind every solve call: 1 and *res on success, 0 with an exception. */
static int solve_into(py_c4_solver *solver, PyObject *state, long long max_nodes, double max_seconds, int weak,
                      int moves, int exact_best, mg_c4_solution *res)
{
    if (!c4s_ready(solver))
        return 0;
    mg_c4_state pos;
    if (!c4_state_arg(state, &pos))
        return 0;
    if (max_nodes < 0) {
        PyErr_Format(PyExc_ValueError, "max_nodes must be >= 0 (0: no limit), got %lld", max_nodes);
        return 0;
    }
    if (!(max_seconds >= 0.0)) {
        char msg[96];
        snprintf(msg, sizeof msg, "max_seconds must be >= 0 (0: no limit), got %g", max_seconds);
        PyErr_SetString(PyExc_ValueError, msg);
        return 0;
    }
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_c4_limits lim = {(uint64_t)max_nodes, max_seconds, weak, &pi.cancel};
    Py_INCREF(solver);
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(solver->lock, WAIT_LOCK);
    if (moves && weak && exact_best)
        mg_c4_solve_moves_wdl(solver->sv, &pos, &lim, res);
    else if (moves)
        mg_c4_solve_moves(solver->sv, &pos, &lim, res);
    else
        mg_c4_solve(solver->sv, &pos, &lim, res);
    PyThread_release_lock(solver->lock);
    Py_END_ALLOW_THREADS
    Py_DECREF(solver);
    return !mg_py_interrupted(&pi);
}

static PyObject *score_object(const mg_c4_solution *res)
{
    if (res->complete)
        return PyLong_FromLong(res->score);
    Py_RETURN_NONE;
}

static PyObject *run_solve(py_c4_solver *solver, PyObject *state, long long max_nodes, double max_seconds,
                           int weak, int moves)
{
    mg_c4_solution res;
    if (!solve_into(solver, state, max_nodes, max_seconds, weak, moves, 0, &res))
        return NULL;
    npy_intp dim = MG_C4_WIDTH;
    PyObject *arr = PyArray_SimpleNew(1, &dim, NPY_FLOAT64);
    if (!arr)
        return NULL;
    double *d = (double *)PyArray_DATA((PyArrayObject *)arr);
    for (int c = 0; c < MG_C4_WIDTH; c++)
        d[c] = (moves && res.move_score[c] != MG_C4_NO_SCORE) ? (double)res.move_score[c] : NAN;
    PyObject *score = score_object(&res);
    if (!score) {
        Py_DECREF(arr);
        return NULL;
    }
    return Py_BuildValue("(NNKO)", score, arr, (unsigned long long)res.nodes, res.complete ? Py_True : Py_False);
}

static PyObject *c4s_solve(py_c4_solver *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "max_nodes", "max_seconds", "weak", "moves", NULL};
    PyObject *state;
    long long max_nodes = 0;
    double max_seconds = 0.0;
    int weak = 0, moves = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&dpp:solve", kwlist, &state,
                                     MG_PY_INT("max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes), &max_seconds, &weak,
                                     &moves))
        return NULL;
    return run_solve(self, state, max_nodes, max_seconds, weak, moves);
}

/* Benchmark helper: solve move sequences one by one (score only), timing each solve in C. */
static PyObject *c4s_solve_sequences(py_c4_solver *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"sequences", "clear", "weak", NULL};
    PyObject *seqs;
    int clear = 1, weak = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|pp:solve_sequences", kwlist, &seqs, &clear, &weak))
        return NULL;
    if (!c4s_ready(self))
        return NULL;
    PyObject *fast = PySequence_Fast(seqs, "sequences must be a list of move strings such as '4453'");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    mg_c4_state *pos = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *pos);
    npy_intp dim = n;
    PyObject *scores = PyArray_SimpleNew(1, &dim, NPY_INT32);
    PyObject *nodes = PyArray_SimpleNew(1, &dim, NPY_UINT64);
    PyObject *secs = PyArray_SimpleNew(1, &dim, NPY_FLOAT64);
    if (!pos || !scores || !nodes || !secs) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        char what[48];
        snprintf(what, sizeof what, "sequences[%zd]", i);
        const char *mv = mg_py_text_arg(item, what);
        if (!mv)
            goto fail;
        char err[MG_ERRLEN] = "";
        if (mg_c4_from_moves(&pos[i], mv, err, sizeof err) != MG_OK) {
            PyErr_Format(PyExc_ValueError, "sequences[%zd]: %s", i, err);
            goto fail;
        }
    }
    int32_t *sc = PyArray_DATA((PyArrayObject *)scores);
    uint64_t *nd = PyArray_DATA((PyArrayObject *)nodes);
    double *tm = PyArray_DATA((PyArrayObject *)secs);
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    mg_c4_limits lim = {0, 0.0, weak, &pi.cancel};
    for (Py_ssize_t i = 0; i < n && !pi.cancel.stopped; i++) {
        if (clear)
            mg_c4_solver_clear(self->sv);
        mg_c4_solution r;
        double t0 = mg_thread_cpu_seconds();
        mg_c4_solve(self->sv, &pos[i], &lim, &r);
        tm[i] = mg_thread_cpu_seconds() - t0;
        sc[i] = r.score;
        nd[i] = r.nodes;
    }
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi))
        goto fail;
    PyMem_Free(pos);
    Py_DECREF(fast);
    return Py_BuildValue("(NNN)", scores, nodes, secs);
fail:
    PyMem_Free(pos);
    Py_DECREF(fast);
    Py_XDECREF(scores);
    Py_XDECREF(nodes);
    Py_XDECREF(secs);
    return NULL;
}

static PyObject *c4s_clear(py_c4_solver *self, PyObject *Py_UNUSED(ignored))
{
    if (!c4s_ready(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    mg_c4_solver_clear(self->sv);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *c4s_tt_bytes(py_c4_solver *self, void *Py_UNUSED(closure))
{
    if (!c4s_ready(self))
        return NULL;
    return PyLong_FromSize_t(mg_c4_solver_tt_bytes(self->sv));
}

/* set_book(data): bytes of a book file (checked), or None. */
static PyObject *c4s_set_book(py_c4_solver *self, PyObject *data)
{
    if (!c4s_ready(self))
        return NULL;
    mg_c4_book b;
    memset(&b, 0, sizeof b);
    if (data != Py_None) {
        if (!PyBytes_Check(data)) {
            PyErr_Format(PyExc_TypeError, "set_book takes the bytes of a book file or None, not %s",
                         Py_TYPE(data)->tp_name);
            return NULL;
        }
        char err[MG_ERRLEN];
        int rc;
        const char *buf = PyBytes_AS_STRING(data);
        size_t len = (size_t)PyBytes_GET_SIZE(data);
        Py_BEGIN_ALLOW_THREADS
        rc = mg_c4_book_open(&b, buf, len, err, sizeof err);
        Py_END_ALLOW_THREADS
        if (rc != MG_OK) {
            mg_py_value_error(err);
            return NULL;
        }
    }
    PyObject *old = self->book_data;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK); /* not while a search reads the old book */
    Py_END_ALLOW_THREADS
    self->book = b;
    if (data == Py_None) {
        self->book_data = NULL;
        mg_c4_solver_set_book(self->sv, NULL);
    } else {
        Py_INCREF(data);
        self->book_data = data;
        mg_c4_solver_set_book(self->sv, &self->book);
    }
    PyThread_release_lock(self->lock);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyObject *c4s_book(py_c4_solver *self, void *Py_UNUSED(closure))
{
    if (!c4s_ready(self))
        return NULL;
    if (!self->book_data)
        Py_RETURN_NONE;
    return Py_BuildValue("(iiK)", self->book.min_ply, self->book.max_ply, (unsigned long long)self->book.count);
}

static PyMethodDef c4s_methods[] = {
    {"set_book", (PyCFunction)c4s_set_book, METH_O,
     "set_book(data)\n\nUse an opening book (the bytes of a file written by `mavgame book build`, checked; "
     "None: no book) from the next solve on: positions it holds are not searched."},
    {"solve", (PyCFunction)(void (*)(void))c4s_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(state, max_nodes=0, max_seconds=0.0, weak=False, moves=True) -> (score, move_scores, nodes, complete)\n\n"
     "Exact score of a Connect Four state and of each column (see mavgame._core.c4_solve)."},
    {"clear", (PyCFunction)c4s_clear, METH_NOARGS, "clear()\n\nEmpty the transposition table."},
    {"solve_sequences", (PyCFunction)(void (*)(void))c4s_solve_sequences, METH_VARARGS | METH_KEYWORDS,
     "solve_sequences(sequences, clear=True, weak=False) -> (scores, nodes, seconds)\n\n"
     "Benchmark helper: solve each move sequence (score only, no budget), timing each solve in C; "
     "clear=True empties the table before each position (outside the timing)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef c4s_getset[] = {
    {"tt_bytes", (getter)c4s_tt_bytes, NULL, "Size of the transposition table in bytes.", NULL},
    {"book", (getter)c4s_book, NULL, "(min_ply, max_ply, entries) of the book in use, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_c4_solver_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mavgame._core.C4Solver",
    .tp_basicsize = sizeof(py_c4_solver),
    .tp_dealloc = (destructor)c4s_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "C4Solver(tt_log2=0)\n\nPerfect Connect Four solver with a transposition table of 2^tt_log2 "
              "8-byte entries (0: 2^23, 64 MiB), allocated once and reused across solves.  Threads: may be "
              "shared; solves run without the GIL under the solver's lock, one at a time (others wait).",
    .tp_methods = c4s_methods,
    .tp_getset = c4s_getset,
    .tp_init = (initproc)c4s_init,
    .tp_new = PyType_GenericNew,
};

/* `solver` (borrowed) or, for None, the module's default solver; a new reference or NULL. */
static PyObject *solver_or_default(PyObject *mod, PyObject *solver)
{
    if (solver == Py_None) {
        PyObject *const *names = mg_py_names();
        if (!names)
            return NULL;
        PyObject *name = names[MG_PY_NAME_C4_DEFAULT_SOLVER];
        PyObject *owned = PyObject_GetAttr(mod, name);
        if (!owned) {
            PyErr_Clear();
            owned = PyObject_CallNoArgs((PyObject *)&py_c4_solver_type);
            if (!owned || PyObject_SetAttr(mod, name, owned) < 0) {
                Py_XDECREF(owned);
                return NULL;
            }
        }
        solver = owned;
    } else {
        Py_INCREF(solver);
    }
    if (!PyObject_TypeCheck(solver, &py_c4_solver_type)) {
        PyErr_Format(PyExc_TypeError, "solver must be a mavgame._core.C4Solver, not %.100s", Py_TYPE(solver)->tp_name);
        Py_DECREF(solver);
        return NULL;
    }
    return solver;
}

static PyObject *py_c4_solve(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "max_nodes", "max_seconds", "weak", "moves", "solver", NULL};
    PyObject *state, *solver = Py_None;
    long long max_nodes = 0;
    double max_seconds = 0.0;
    int weak = 0, moves = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&dppO:c4_solve", kwlist, &state,
                                     MG_PY_INT("max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes), &max_seconds, &weak,
                                     &moves, &solver))
        return NULL;
    PyObject *sv = solver_or_default(mod, solver);
    if (!sv)
        return NULL;
    PyObject *r = run_solve((py_c4_solver *)sv, state, max_nodes, max_seconds, weak, moves);
    Py_DECREF(sv);
    return r;
}

/* c4_solve_result(result_type, state, max_nodes, max_seconds, weak, moves, solver, exact_best):
 * ConnectFour.solve's path, positional arguments only (no keyword parsing), returning a `result_type`
 * instance whose fields score, move_scores ({"1".."7": int} of the solved columns), nodes, complete and
 * best (the column "1".."7" of the highest score, ties to the most central; None when incomplete or
 * finished) are set with the generic object.__setattr__ (as the __init__ of a frozen dataclass does): a
 * Python-side conversion of c4_solve's tuple cost 4x the solve itself on easy positions
 * (docs/benchmarks.md).  exact_best with weak and moves: mg_c4_solve_moves_wdl (win/draw/loss columns,
 * exact score and perfect play's column). */
static PyObject *py_c4_solve_result(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "c4_solve_result takes 8 positional arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *cls = args[0];
    if (!PyType_Check(cls)) {
        PyErr_Format(PyExc_TypeError, "c4_solve_result: result_type must be a class, not %.100s",
                     Py_TYPE(cls)->tp_name);
        return NULL;
    }
    long long max_nodes;
    PyObject *n = PyNumber_Long(args[2]); /* int(max_nodes), as the Python signature promised */
    if (!n)
        return NULL;
    int ok_nodes = MG_PY_INT_ARG(n, "max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes);
    Py_DECREF(n);
    if (!ok_nodes)
        return NULL;
    double max_seconds = PyFloat_AsDouble(args[3]);
    if (max_seconds == -1.0 && PyErr_Occurred())
        return NULL;
    int weak = PyObject_IsTrue(args[4]), moves = PyObject_IsTrue(args[5]), exact_best = PyObject_IsTrue(args[7]);
    if (weak < 0 || moves < 0 || exact_best < 0)
        return NULL;
    PyObject *sv = solver_or_default(mod, args[6]);
    if (!sv)
        return NULL;
    mg_c4_solution res;
    int ok = solve_into((py_c4_solver *)sv, args[1], max_nodes, max_seconds, weak, moves, exact_best, &res);
    Py_DECREF(sv);
    if (!ok)
        return NULL;
    PyObject *scores = PyDict_New(), *score = score_object(&res), *nodes = PyLong_FromUnsignedLongLong(res.nodes);
    PyObject *best = NULL, *obj = NULL;
    if (moves && res.complete && res.best_col >= 0) {
        char key[2] = {(char)('1' + res.best_col), 0};
        best = PyUnicode_FromStringAndSize(key, 1);
    } else {
        best = Py_NewRef(Py_None);
    }
    if (!scores || !score || !nodes || !best)
        goto done;
    for (int c = 0; moves && c < MG_C4_WIDTH; c++) {
        if (res.move_score[c] == MG_C4_NO_SCORE)
            continue;
        char key[2] = {(char)('1' + c), 0};
        PyObject *k = PyUnicode_FromStringAndSize(key, 1), *v = PyLong_FromLong(res.move_score[c]);
        int rc = (k && v) ? PyDict_SetItem(scores, k, v) : -1;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (rc < 0)
            goto done;
    }
    PyObject *empty = PyTuple_New(0);
    if (!empty)
        goto done;
    obj = PyBaseObject_Type.tp_new((PyTypeObject *)cls, empty, NULL);
    Py_DECREF(empty);
    if (!obj)
        goto done;
    /* the field names are interned once (the module state), not made per call */
    static const int fields[] = {MG_PY_NAME_SCORE, MG_PY_NAME_MOVE_SCORES, MG_PY_NAME_NODES, MG_PY_NAME_COMPLETE,
                                 MG_PY_NAME_BEST};
    PyObject *values[] = {score, scores, nodes, res.complete ? Py_True : Py_False, best};
    PyObject *const *names = mg_py_names();
    if (!names)
        Py_CLEAR(obj);
    for (int i = 0; i < 5 && obj; i++)
        if (PyObject_GenericSetAttr(obj, names[fields[i]], values[i]) < 0)
            Py_CLEAR(obj);
done:
    Py_XDECREF(scores);
    Py_XDECREF(score);
    Py_XDECREF(nodes);
    Py_XDECREF(best);
    return obj;
}

static PyObject *py_c4_from_moves(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    const char *moves = mg_py_text_arg(arg, "Connect Four moves");
    if (!moves)
        return NULL;
    mg_c4_state s;
    char err[MG_ERRLEN] = "";
    if (mg_c4_from_moves(&s, moves, err, sizeof err) != MG_OK)
        return mg_py_value_error(err);
    char buf[MG_MAX_TEXT];
    size_t n = mg_connect_four.to_text(&s, buf, sizeof buf);
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
}

/* c4_book_key(state) -> int: the canonical key the book stores for a position. */
static PyObject *py_c4_book_key(PyObject *Py_UNUSED(mod), PyObject *state)
{
    mg_c4_state s;
    if (!c4_state_arg(state, &s))
        return NULL;
    return PyLong_FromUnsignedLongLong(mg_c4_book_key(&s));
}

/* c4_book_info(data) -> (min_ply, max_ply, entries): checks the bytes of a book file. */
static PyObject *py_c4_book_info(PyObject *Py_UNUSED(mod), PyObject *data)
{
    if (!PyBytes_Check(data)) {
        PyErr_Format(PyExc_TypeError, "c4_book_info takes bytes, not %s", Py_TYPE(data)->tp_name);
        return NULL;
    }
    mg_c4_book b;
    char err[MG_ERRLEN];
    if (mg_c4_book_open(&b, PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data), err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return NULL;
    }
    return Py_BuildValue("(iiK)", b.min_ply, b.max_ply, (unsigned long long)b.count);
}

static PyMethodDef c4_methods[] = {
    {"c4_book_key", py_c4_book_key, METH_O,
     "c4_book_key(state) -> int\n\nThe key an opening book stores for a Connect Four state (the smaller of the "
     "position's and its mirror image's solver keys)."},
    {"c4_book_info", py_c4_book_info, METH_O,
     "c4_book_info(data) -> (min_ply, max_ply, entries)\n\nCheck the bytes of an opening book file "
     "(ValueError naming the defect)."},
    {"c4_solve", (PyCFunction)(void (*)(void))py_c4_solve, METH_VARARGS | METH_KEYWORDS,
     "c4_solve(state, max_nodes=0, max_seconds=0.0, weak=False, moves=True, solver=None)\n"
     "    -> (score, move_scores, nodes, complete)\n\n"
     "Perfect solve of a Connect Four state, without the GIL.  score: positive = the side to move wins "
     "(22 - its stone count at the win), 0 draw, negative = loss; None if the node/time budget ran out "
     "(complete False).  move_scores: float64 array of 7 (columns 1..7), NaN for full or unsolved columns.  "
     "solver: a C4Solver (default: one kept by the module, 64 MiB)."},
    {"c4_solve_result", (PyCFunction)(void (*)(void))py_c4_solve_result, METH_FASTCALL,
     "c4_solve_result(result_type, state, max_nodes, max_seconds, weak, moves, solver) -> result_type\n\n"
     "ConnectFour.solve's fast path (positional arguments): the solve of c4_solve, its fields set on a new "
     "result_type instance (score, move_scores {column: score}, nodes, complete)."},
    {"c4_from_moves", py_c4_from_moves, METH_O,
     "c4_from_moves(moves) -> str\n\nBoard text of a Connect Four move sequence such as \"4453\"."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_connect_four(PyObject *m)
{
    if (mg_py_add_type(m, "C4Solver", &py_c4_solver_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, c4_methods);
}
