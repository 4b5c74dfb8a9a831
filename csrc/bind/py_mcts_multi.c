/*
 * py_mcts_multi.c - Python binding of the multi-tree search (search/mcts_multi.h).
 *
 *   mcts_search_many(trees, evaluators, num_simulations, max_seconds=0.0) -> (timed_out, stats)
 *       trees: a sequence of distinct MCTSTree objects (each with a root); evaluators: one C evaluator
 *       capsule per tree ("mavgame.mcts_evaluator"; trees sharing a capsule are evaluated in one call per
 *       round); num_simulations: one int per tree.  The GIL is released for the whole search; Ctrl-C
 *       stops it between rounds (KeyboardInterrupt) and max_seconds (> 0) is a time budget checked
 *       between rounds (the first always runs): timed_out is then True and every tree keeps what it
 *       did.  stats: {"rounds", "calls", "requests", "max_call", "eval_seconds"}.  A Python callable
 *       evaluator is refused (TypeError): it is called with the GIL, once per tree's batch, so it
 *       gains nothing here (mavgame/search/multi.py says what to do instead).
 */
#include "interrupt.h"
#include "py_args.h"
#include "py_mcts_eval.h"
#include "py_mcts_tree.h"

#include <string.h>

#include "../search/mcts_multi.h"

typedef struct multi_args {
    Py_ssize_t k;
    PyObject **tree_o;        /* [k] borrowed from the sequence */
    mg_mcts **trees;          /* [k] */
    const mg_evaluator **evs; /* [k] */
    int *nsims;               /* [k] */
    int *claimed;             /* [k] trees claimed */
} multi_args;

static void multi_args_free(multi_args *a)
{
    for (Py_ssize_t i = 0; i < a->k; i++)
        if (a->claimed && a->claimed[i])
            mg_py_mcts_release(a->tree_o[i]);
    PyMem_Free(a->tree_o);
    PyMem_Free(a->trees);
    PyMem_Free((void *)a->evs);
    PyMem_Free(a->nsims);
    PyMem_Free(a->claimed);
}

/* The arguments as C arrays, the trees claimed; -1 with an exception. */
static int parse_many(PyObject *trees, PyObject *evals, PyObject *sims, multi_args *a)
{
    Py_ssize_t k = PySequence_Fast_GET_SIZE(trees);
    if (PySequence_Fast_GET_SIZE(evals) != k || PySequence_Fast_GET_SIZE(sims) != k) {
        PyErr_Format(PyExc_ValueError, "mcts_search_many: %zd trees, %zd evaluators and %zd simulation counts: "
                     "give one of each per tree", k, PySequence_Fast_GET_SIZE(evals), PySequence_Fast_GET_SIZE(sims));
        return -1;
    }
    size_t n = k > 0 ? (size_t)k : 1;
    a->tree_o = PyMem_Calloc(n, sizeof *a->tree_o);
    a->trees = PyMem_Calloc(n, sizeof *a->trees);
    a->evs = PyMem_Calloc(n, sizeof *a->evs);
    a->nsims = PyMem_Calloc(n, sizeof *a->nsims);
    a->claimed = PyMem_Calloc(n, sizeof *a->claimed);
    if (!a->tree_o || !a->trees || !a->evs || !a->nsims || !a->claimed) {
        PyErr_NoMemory();
        return -1;
    }
    a->k = k;
    char what[64];
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *ev = PySequence_Fast_GET_ITEM(evals, i);
        if (!PyCapsule_CheckExact(ev)) {
            PyErr_Format(PyExc_TypeError, "mcts_search_many: evaluators[%zd] is %.100s, not a C evaluator capsule "
                         "(a Python evaluator searches one tree at a time: use MCTSTree.search)", i,
                         Py_TYPE(ev)->tp_name);
            return -1;
        }
        a->evs[i] = PyCapsule_GetPointer(ev, MG_EVAL_CAPSULE);
        if (!a->evs[i])
            return -1;
        snprintf(what, sizeof what, "num_simulations[%zd]", i);
        if (!MG_PY_INT_ARG(PySequence_Fast_GET_ITEM(sims, i), what, 0, INT_MAX, &a->nsims[i]))
            return -1;
        a->tree_o[i] = PySequence_Fast_GET_ITEM(trees, i);
        for (Py_ssize_t j = 0; j < i; j++)
            if (a->tree_o[j] == a->tree_o[i]) {
                PyErr_Format(PyExc_ValueError, "mcts_search_many: trees[%zd] and trees[%zd] are the same MCTSTree", j, i);
                return -1;
            }
        const mg_game *g;
        snprintf(what, sizeof what, "trees[%zd]", i);
        if (mg_py_mcts_claim(a->tree_o[i], what, &a->trees[i], &g) < 0)
            return -1;
        a->claimed[i] = 1;
    }
    return 0;
}

static PyObject *py_search_many(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"trees", "evaluators", "num_simulations", "max_seconds", NULL};
    PyObject *trees_o, *evals_o, *sims_o;
    double max_seconds = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|d:mcts_search_many", kwlist, &trees_o, &evals_o, &sims_o,
                                     &max_seconds))
        return NULL;
    if (!mg_py_max_seconds_arg("mcts_search_many", max_seconds))
        return NULL;
    PyObject *trees = PySequence_Fast(trees_o, "mcts_search_many: trees must be a sequence of MCTSTree");
    PyObject *evals = trees ? PySequence_Fast(evals_o, "mcts_search_many: evaluators must be a sequence") : NULL;
    PyObject *sims = evals ? PySequence_Fast(sims_o, "mcts_search_many: num_simulations must be a sequence") : NULL;
    PyObject *ret = NULL;
    multi_args a;
    memset(&a, 0, sizeof a);
    mg_mcts_multi *mm = NULL;
    const mg_evaluator **marked = NULL; /* the distinct evaluators set busy */
    Py_ssize_t nmarked = 0;
    char err[MG_ERRLEN] = "";
    if (!sims || parse_many(trees, evals, sims, &a) < 0)
        goto done;
    marked = PyMem_Calloc(a.k > 0 ? (size_t)a.k : 1, sizeof *marked);
    if (!marked) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < a.k; i++) {
        mg_evaluator *ev = (mg_evaluator *)a.evs[i];
        int seen = 0;
        for (Py_ssize_t j = 0; j < nmarked && !seen; j++)
            seen = marked[j] == ev;
        if (seen)
            continue;
        if (ev->busy) { /* its context is not shared between threads */
            PyErr_Format(PyExc_RuntimeError, "evaluator '%s' is in use by another thread's search (give each "
                         "concurrent search its own evaluator)", ev->name ? ev->name : "?");
            goto done;
        }
        ev->busy = 1;
        marked[nmarked++] = ev;
    }
    mm = mg_mcts_multi_create(err, sizeof err);
    if (!mm) {
        PyErr_NoMemory();
        goto done;
    }
    mg_py_interrupt pi;
    mg_py_interrupt_init(&pi);
    mg_py_interrupt_set_deadline(&pi, max_seconds);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mg_mcts_multi_search(mm, a.trees, a.evs, a.nsims, (int)a.k, &pi.cancel, NULL, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (mg_py_interrupted(&pi))
        goto done;
    if (rc != MG_OK && !pi.timed_out) {
        mg_py_value_error(err);
        goto done;
    }
    mg_mcts_multi_stats s;
    mg_mcts_multi_get_stats(mm, &s);
    ret = Py_BuildValue("(N{sLsLsLsisd})", PyBool_FromLong(pi.timed_out), "rounds", (long long)s.rounds, "calls",
                        (long long)s.calls, "requests", (long long)s.requests, "max_call", s.max_call,
                        "eval_seconds", s.eval_seconds);
done:
    for (Py_ssize_t j = 0; j < nmarked; j++)
        ((mg_evaluator *)marked[j])->busy = 0;
    PyMem_Free((void *)marked);
    mg_mcts_multi_free(mm);
    multi_args_free(&a);
    Py_XDECREF(trees);
    Py_XDECREF(evals);
    Py_XDECREF(sims);
    return ret;
}

static PyMethodDef multi_methods[] = {
    {"mcts_search_many", (PyCFunction)(void (*)(void))py_search_many, METH_VARARGS | METH_KEYWORDS,
     "mcts_search_many(trees, evaluators, num_simulations, max_seconds=0.0) -> (timed_out, stats)\n\n"
     "Search many MCTSTree objects together: each round gathers every searching tree's batch and evaluates "
     "the leaves of the trees sharing an evaluator capsule in one call (search/mcts_multi.h)."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mcts_multi(PyObject *m) { return PyModule_AddFunctions(m, multi_methods); }
