/*
 * py_playout.c - Python bindings of the generic random-playout searches (any game of the registry):
 *
 *   playout_mcts(state, simulations, seed=0, c=sqrt(2), max_playout_plies=0,
 *                fast_playout=True, max_seconds=0.0) -> dict
 *       UCT with uniformly random playouts from a state of any game (csrc/search/
 *       playout_mcts.h); with fast_playout the game's own playout where it has one (Hex fills
 *       the board, mg_hex_fill_playout: the same outcome distribution, about 10x faster).
 *       Keys: "actions" (int32, legal_actions() order), "visits" (int64),
 *       "q" (float64, mean score in [0, 1] for the player to move, NaN if unvisited),
 *       "value" (float, mean score of all simulations), "best_action" (int, most visited),
 *       "nodes" (tree nodes), "playout_plies" (moves played in playouts), "simulations"
 *       (run), "timed_out" (True if the max_seconds budget stopped the search early; the
 *       statistics are then those of the simulations run).
 *
 *   random_playouts(state, n, seed=0, max_plies=0, specialised=False)
 *       -> (first_wins, second_wins, draws, plies)
 *       n uniformly random playouts from `state` (the state is not changed), counted in C
 *       (csrc/search/playouts.h).
 *
 * Both copy the position and run without the GIL.
 */
#include "py_playout.h"

#include "interrupt.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

#include "../search/playout_mcts.h"
#include "../search/playouts.h"

PyObject *mg_py_playout_counts(const mg_py_state *s, long long n, unsigned long long seed, int max_plies,
                               mg_py_playout_fn playout)
{
    const mg_game *g = s->game;
    _Alignas(16) unsigned char root[MG_MAX_STATE];
    memcpy(root, s->state, g->state_size);
    mg_playout_counts c;
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    Py_BEGIN_ALLOW_THREADS
    mg_playout_counts_run(g, root, n, seed, max_plies, playout, &pi.cancel, &c);
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi))
        return NULL;
    return Py_BuildValue("(KKKK)", (unsigned long long)c.p0_wins, (unsigned long long)c.p1_wins,
                         (unsigned long long)c.draws, (unsigned long long)c.plies);
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
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|O&dO&pd:playout_mcts", kwlist, &state,
                                     MG_PY_INT("simulations", LLONG_MIN, LLONG_MAX, &sims), MG_PY_SEED(&seed), &c,
                                     MG_PY_C_INT("max_playout_plies", &max_plies), &fast, &max_seconds))
        return NULL;
    if (!mg_py_max_seconds_arg("playout_mcts", max_seconds))
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

static PyObject *py_random_playouts(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "n", "seed", "max_plies", "specialised", NULL};
    PyObject *state;
    long long n;
    unsigned long long seed = 0;
    int max_plies = 0, specialised = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|O&O&p:random_playouts", kwlist, &state,
                                     MG_PY_INT("n", LLONG_MIN, LLONG_MAX, &n), MG_PY_SEED(&seed),
                                     MG_PY_C_INT("max_plies", &max_plies), &specialised))
        return NULL;
    mg_py_state *s = mg_py_state_arg(state, "state");
    if (!s)
        return NULL;
    if (n < 0 || max_plies < 0) {
        PyErr_Format(PyExc_ValueError, "random_playouts: n and max_plies must be >= 0, got n=%lld, max_plies=%d", n,
                     max_plies);
        return NULL;
    }
    return mg_py_playout_counts(s, n, seed, max_plies, specialised ? mg_random_playout : mg_random_playout_moves);
}

static PyMethodDef playout_methods[] = {
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
    {"random_playouts", (PyCFunction)(void (*)(void))py_random_playouts, METH_VARARGS | METH_KEYWORDS,
     "random_playouts(state, n, seed=0, max_plies=0, specialised=False) -> (first_wins, second_wins, draws, "
     "plies)\n\n"
     "n uniformly random playouts from a state of any game, in C without the GIL (the state is not "
     "changed); plies is the total number of moves played.  Move by move over legal_actions, or with "
     "specialised=True the game's own playout where it has one (same outcome distribution, faster)."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_playout(PyObject *m)
{
    if (PyModule_AddIntConstant(m, "PLAYOUT_MAX_SIMULATIONS", MG_PMCTS_MAX_SIMULATIONS) < 0)
        return -1;
    return PyModule_AddFunctions(m, playout_methods);
}
