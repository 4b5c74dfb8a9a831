/*
 * py_hex.c - Python bindings of the Hex solver and the Hex fill playouts (the generic playout
 * searches are bound in py_playout.c).
 *
 *   hex_solve(state, max_nodes=0, max_seconds=0.0) -> (value, move_values, complete)
 *       Exact solve of a Hex state (board size <= 7; 5x5 from the empty board takes tens
 *       of seconds, 4x4 milliseconds).  value: +1 the player to move wins, -1 it loses,
 *       None if the node budget ran out before it was known.  move_values: int8 array
 *       indexed by action id (n*n entries, plus one for "swap" at index n*n when the swap
 *       rule is on): +1 winning move, -1 losing move, 0 illegal or not solved (only when
 *       complete is False).  max_seconds (> 0) is a time budget: once spent the solve stops
 *       like a spent max_nodes (complete False, the moves proven so far).
 *
 *   hex_random_playouts(state, n, seed=0) -> (first_wins, second_wins, draws, plies)
 *       n uniformly random playouts of a Hex state by filling (mg_hex_fill_playout); the
 *       same result tuple as random_playouts() (draws is always 0, plies counts the cells
 *       filled, i.e. games played to a full board).
 *
 * Both copy the position and run without the GIL.
 */
#include "interrupt.h"
#include "py_playout.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <string.h>

#include "../games/hex/hex.h"
#include "../games/hex/hex_solver.h"

static PyObject *py_hex_solve(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "max_nodes", "max_seconds", NULL};
    PyObject *state;
    long long max_nodes = 0;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&d:hex_solve", kwlist, &state,
                                     MG_PY_INT("max_nodes", LLONG_MIN, LLONG_MAX, &max_nodes), &max_seconds))
        return NULL;
    if (!mg_py_max_seconds_arg("hex_solve", max_seconds))
        return NULL;
    mg_py_state *s = mg_py_state_arg(state, "state");
    if (!s)
        return NULL;
    if (s->game != &mg_hex) {
        PyErr_Format(PyExc_ValueError, "hex_solve needs a hex state, got a %s state", s->game->name);
        return NULL;
    }
    if (max_nodes < 0) {
        PyErr_Format(PyExc_ValueError, "hex_solve: max_nodes must be >= 0, got %lld", max_nodes);
        return NULL;
    }
    mg_hex_state pos;
    memcpy(&pos, s->state, sizeof pos);
    mg_hex_solution *sol = PyMem_Malloc(sizeof *sol);
    if (!sol)
        return PyErr_NoMemory();
    char err[MG_ERRLEN] = "";
    int rc;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_py_interrupt_set_deadline(&pi, max_seconds); /* a spent budget reads like max_nodes: complete = False */
    Py_BEGIN_ALLOW_THREADS
    rc = mg_hex_solve(&pos, (uint64_t)max_nodes, &pi.cancel, sol, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi)) {
        PyMem_Free(sol);
        return NULL;
    }
    if (rc != MG_OK) {
        PyMem_Free(sol);
        return mg_py_value_error(err);
    }
    npy_intp len = pos.n * pos.n + (pos.swap_rule ? 1 : 0);
    PyObject *arr = PyArray_SimpleNew(1, &len, NPY_INT8);
    if (!arr) {
        PyMem_Free(sol);
        return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)arr), sol->move_value, (size_t)len);
    PyObject *value;
    if (sol->value) {
        value = PyLong_FromLong(sol->value);
    } else {
        Py_INCREF(Py_None);
        value = Py_None;
    }
    int complete = sol->complete;
    PyMem_Free(sol);
    if (!value) {
        Py_DECREF(arr);
        return NULL;
    }
    return Py_BuildValue("(NNO)", value, arr, complete ? Py_True : Py_False);
}

static PyObject *py_hex_random_playouts(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "n", "seed", NULL};
    PyObject *state;
    long long n;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|O&:hex_random_playouts", kwlist, &state,
                                     MG_PY_INT("n", LLONG_MIN, LLONG_MAX, &n), MG_PY_SEED(&seed)))
        return NULL;
    mg_py_state *s = mg_py_state_arg(state, "state");
    if (!s)
        return NULL;
    if (s->game != &mg_hex) {
        PyErr_Format(PyExc_ValueError, "hex_random_playouts needs a hex state, got a %s state", s->game->name);
        return NULL;
    }
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "hex_random_playouts: n must be >= 0, got %lld", n);
        return NULL;
    }
    return mg_py_playout_counts(s, n, seed, 0, mg_hex_fill_playout);
}

static PyMethodDef hex_methods[] = {
    {"hex_solve", (PyCFunction)(void (*)(void))py_hex_solve, METH_VARARGS | METH_KEYWORDS,
     "hex_solve(state, max_nodes=0, max_seconds=0.0) -> (value, move_values, complete)\n\n"
     "Exact solve of a Hex state (board size <= 7), without the GIL.  value: +1 the player to move "
     "wins, -1 it loses, None if unknown within max_nodes (0 = no limit).  move_values: int8 array "
     "indexed by action (n*n cells, plus index n*n for 'swap' with the swap rule): +1 win, -1 loss, "
     "0 illegal or unsolved.  max_seconds (> 0): a time budget; when spent, complete is False."},
    {"hex_random_playouts", (PyCFunction)(void (*)(void))py_hex_random_playouts, METH_VARARGS | METH_KEYWORDS,
     "hex_random_playouts(state, n, seed=0) -> (first_wins, second_wins, draws, plies)\n\n"
     "n uniformly random playouts of a Hex state by filling the board (the outcome distribution of "
     "move-by-move random play), in C without the GIL; plies counts the cells filled."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_hex(PyObject *m) { return PyModule_AddFunctions(m, hex_methods); }
