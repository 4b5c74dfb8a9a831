/*
 * py_hex.c - Python bindings of the Hex solver and of the generic playout MCTS.
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
 *   playout_mcts(state, simulations, seed=0, c=sqrt(2), max_playout_plies=0,
 *                fast_playout=True, max_seconds=0.0) -> dict
 *       UCT with uniformly random playouts from a state of any game (csrc/search/
 *       playout_mcts.h); for Hex with fast_playout the playouts fill the board
 *       (mg_hex_fill_playout: the same outcome distribution, about 10x faster).
 *       Keys: "actions" (int32, legal_actions() order), "visits" (int64),
 *       "q" (float64, mean score in [0, 1] for the player to move, NaN if unvisited),
 *       "value" (float, mean score of all simulations), "best_action" (int, most visited),
 *       "nodes" (tree nodes), "playout_plies" (moves played in playouts), "simulations"
 *       (run), "timed_out" (True if the max_seconds budget stopped the search early; the
 *       statistics are then those of the simulations run).
 *
 *   hex_random_playouts(state, n, seed=0) -> (first_wins, second_wins, draws, plies)
 *       n uniformly random playouts of a Hex state by filling (mg_hex_fill_playout); the
 *       same result tuple as random_playouts() (draws is always 0, plies counts the cells
 *       filled, i.e. games played to a full board).
 *
 * All copy the position and run without the GIL.
 */
#include "state.h"
#include "interrupt.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <limits.h>
#include <string.h>

#include "../games/hex/hex.h"
#include "../rng.h"
#include "../games/hex/hex_solver.h"
#include "../search/playout_mcts.h"

/* 1 if `v` is a valid time budget (finite, >= 0; 0: none), else 0 with ValueError. */
static int check_max_seconds(const char *fn, double v)
{
    if (v >= 0.0 && isfinite(v))
        return 1;
    char msg[128];
    snprintf(msg, sizeof msg, "%s: max_seconds must be finite and >= 0 (0: no limit), got %g", fn, v);
    PyErr_SetString(PyExc_ValueError, msg);
    return 0;
}

static PyObject *py_hex_solve(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "max_nodes", "max_seconds", NULL};
    PyObject *state;
    long long max_nodes = 0;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Ld:hex_solve", kwlist, &state, &max_nodes, &max_seconds))
        return NULL;
    if (!check_max_seconds("hex_solve", max_seconds))
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

static PyObject *py_playout_mcts(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "simulations", "seed", "c", "max_playout_plies", "fast_playout", "max_seconds",
                             NULL};
    PyObject *state;
    long long sims;
    unsigned long long seed = 0;
    mg_pmcts_config cfg;
    mg_pmcts_config_default(&cfg);
    double c = cfg.c;
    int max_plies = 0, fast = 1;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OL|Kdipd:playout_mcts", kwlist, &state, &sims, &seed, &c, &max_plies,
                                     &fast, &max_seconds))
        return NULL;
    if (!check_max_seconds("playout_mcts", max_seconds))
        return NULL;
    mg_py_state *s = mg_py_state_arg(state, "state");
    if (!s)
        return NULL;
    if (sims < 1 || sims > MG_PMCTS_MAX_SIMULATIONS) {
        PyErr_Format(PyExc_ValueError, "playout_mcts: simulations must be in 1..%d, got %lld",
                     MG_PMCTS_MAX_SIMULATIONS, sims);
        return NULL;
    }
    cfg.simulations = (int)sims;
    cfg.seed = seed;
    cfg.c = c;
    cfg.max_playout_plies = max_plies;
    const mg_game *g = s->game;
    if (!fast)
        cfg.playout = mg_random_playout_moves; /* NULL: mg_random_playout, the game's fastest */
    unsigned char *pos = PyMem_Malloc(g->state_size);
    mg_pmcts_result *r = PyMem_Malloc(sizeof *r);
    if (!pos || !r) {
        PyMem_Free(pos);
        PyMem_Free(r);
        return PyErr_NoMemory();
    }
    memcpy(pos, s->state, g->state_size);
    char err[MG_ERRLEN] = "";
    int rc;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_py_interrupt_set_deadline(&pi, max_seconds);
    cfg.cancel = &pi.cancel;
    Py_BEGIN_ALLOW_THREADS
    rc = mg_playout_mcts(g, pos, &cfg, r, err, sizeof err);
    Py_END_ALLOW_THREADS
    PyMem_Free(pos);
    if (mg_py_interrupted(&pi)) {
        PyMem_Free(r);
        return NULL;
    }
    if (rc != MG_OK) {
        PyMem_Free(r);
        return mg_py_value_error(err);
    }
    npy_intp n = r->nmoves;
    PyObject *acts = PyArray_SimpleNew(1, &n, NPY_INT32);
    PyObject *visits = PyArray_SimpleNew(1, &n, NPY_INT64);
    PyObject *q = PyArray_SimpleNew(1, &n, NPY_FLOAT64);
    PyObject *out = NULL;
    if (acts && visits && q) {
        memcpy(PyArray_DATA((PyArrayObject *)acts), r->actions, (size_t)n * sizeof(int32_t));
        memcpy(PyArray_DATA((PyArrayObject *)q), r->q, (size_t)n * sizeof(double));
        int64_t *v = PyArray_DATA((PyArrayObject *)visits);
        for (npy_intp i = 0; i < n; i++)
            v[i] = r->visits[i];
        out = Py_BuildValue("{sOsOsOsdsisIsKsisO}", "actions", acts, "visits", visits, "q", q, "value", r->value,
                            "best_action", (int)r->actions[r->best], "nodes", (unsigned)r->nodes, "playout_plies",
                            (unsigned long long)r->playout_plies, "simulations", r->simulations, "timed_out",
                            r->stopped ? Py_True : Py_False);
    }
    Py_XDECREF(acts);
    Py_XDECREF(visits);
    Py_XDECREF(q);
    PyMem_Free(r);
    return out;
}

static PyObject *py_hex_random_playouts(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "n", "seed", NULL};
    PyObject *state;
    long long n;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OL|K:hex_random_playouts", kwlist, &state, &n, &seed))
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
    mg_hex_state pos;
    memcpy(&pos, s->state, sizeof pos);
    unsigned long long counts[4] = {0, 0, 0, 0}, plies = 0;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    Py_BEGIN_ALLOW_THREADS
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    for (long long i = 0; i < n && !mg_cancel_tick(&pi.cancel); i++) {
        int p = 0;
        int r = mg_hex_fill_playout(&mg_hex, &pos, &rng, INT_MAX, &p);
        counts[r & 3]++;
        plies += (unsigned long long)p;
    }
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi))
        return NULL;
    return Py_BuildValue("(KKKK)", counts[MG_P0_WINS], counts[MG_P1_WINS], counts[MG_DRAW], plies);
}

static PyMethodDef hex_methods[] = {
    {"hex_solve", (PyCFunction)(void (*)(void))py_hex_solve, METH_VARARGS | METH_KEYWORDS,
     "hex_solve(state, max_nodes=0, max_seconds=0.0) -> (value, move_values, complete)\n\n"
     "Exact solve of a Hex state (board size <= 7), without the GIL.  value: +1 the player to move "
     "wins, -1 it loses, None if unknown within max_nodes (0 = no limit).  move_values: int8 array "
     "indexed by action (n*n cells, plus index n*n for 'swap' with the swap rule): +1 win, -1 loss, "
     "0 illegal or unsolved.  max_seconds (> 0): a time budget; when spent, complete is False."},
    {"playout_mcts", (PyCFunction)(void (*)(void))py_playout_mcts, METH_VARARGS | METH_KEYWORDS,
     "playout_mcts(state, simulations, seed=0, c=sqrt(2), max_playout_plies=0, fast_playout=True, "
     "max_seconds=0.0) -> dict\n\n"
     "UCT with uniformly random playouts from a state of any game, without the GIL (Hex with "
     "fast_playout: playouts by filling the board, the same outcome distribution).  Returns "
     "{'actions': int32 array (legal_actions() order), 'visits': int64 array, 'q': float64 array "
     "(mean score in [0, 1] for the player to move; NaN if unvisited), 'value': mean score of all "
     "simulations, 'best_action': most visited action, 'nodes': tree nodes, 'playout_plies': moves "
     "played in playouts, 'simulations': simulations run, 'timed_out': True if max_seconds (> 0) "
     "stopped it early}.  Scores: win 1, draw 0.5, loss 0 (a playout cut off at max_playout_plies "
     "counts as a draw).  The same seed gives the same result."},
    {"hex_random_playouts", (PyCFunction)(void (*)(void))py_hex_random_playouts, METH_VARARGS | METH_KEYWORDS,
     "hex_random_playouts(state, n, seed=0) -> (first_wins, second_wins, draws, plies)\n\n"
     "n uniformly random playouts of a Hex state by filling the board (the outcome distribution of "
     "move-by-move random play), in C without the GIL; plies counts the cells filled."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_hex(PyObject *m) { return PyModule_AddFunctions(m, hex_methods); }
