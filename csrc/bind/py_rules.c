/*
 * py_rules.c - bindings that let the Python layer read rules the core owns instead of keeping
 * copies of them: the MCTS configuration defaults (mg_mcts_config_default, which
 * mavgame/search/mcts.py uses as its signature defaults) and the game a MAV header names (the
 * parser's header reader, for mavgame.model.inference.game_of_prompt).
 */
#include "state.h"

#include <math.h>
#include <string.h>

#include "../format/mav.h"
#include "../search/mcts.h"

/* mcts_defaults() -> dict: mg_mcts_config_default's fields (tau: the first step's value; fpu,
 * c_puct and timeout: None for the automatic NaN, AlphaZero's c(s) and no timeout; virtual_count,
 * prior and invalid as the core's enum values, which mavgame/search/mcts.py names). */
static PyObject *py_mcts_defaults(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    PyObject *fpu = isnan(c.fpu) ? Py_NewRef(Py_None) : PyFloat_FromDouble(c.fpu);
    PyObject *c_puct = c.c_base > 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(c.c_puct);
    PyObject *timeout = c.timeout > 0 ? PyFloat_FromDouble(c.timeout) : Py_NewRef(Py_None);
    if (!fpu || !c_puct || !timeout) {
        Py_XDECREF(fpu);
        Py_XDECREF(c_puct);
        Py_XDECREF(timeout);
        return NULL;
    }
    return Py_BuildValue("{s:i,s:N,s:i,s:i,s:i,s:i,s:N,s:d,s:d,s:i,s:i,s:d,s:d,s:N,s:i,s:K}", "batch_size",
                         c.batch_size, "timeout", timeout, "virtual_count", c.virtual_count, "n_max", c.n_max,
                         "n_min", c.n_min, "virtual_loss", c.virtual_loss, "c_puct", c_puct, "c_base", c.c_base,
                         "c_init", c.c_init, "prior", c.prior, "k", c.k, "eps", c.eps, "tau", c.tau[0], "fpu", fpu,
                         "invalid", c.invalid, "seed", (unsigned long long)c.seed);
}

/* mav_header_game(text) -> str: the game named by the header line of a MAV text, read by the
 * parser (mg_mav_parse with no expected game); ValueError with the parser's message otherwise. */
static PyObject *py_mav_header_game(PyObject *Py_UNUSED(m), PyObject *arg)
{
    Py_ssize_t n;
    const char *t;
    if (PyUnicode_Check(arg)) {
        t = PyUnicode_AsUTF8AndSize(arg, &n);
        if (!t)
            return NULL;
    } else if (PyBytes_Check(arg)) {
        t = PyBytes_AS_STRING(arg);
        n = PyBytes_GET_SIZE(arg);
    } else {
        return PyErr_Format(PyExc_TypeError, "text must be a str or bytes, not %.100s", Py_TYPE(arg)->tp_name);
    }
    /* the header is the first line: parse only that (the rest may be any prompt or output) */
    const char *nl = memchr(t, '\n', (size_t)n);
    size_t len = nl ? (size_t)(nl - t) + 1 : (size_t)n;
    mg_mav_result *r = PyMem_Malloc(sizeof *r);
    if (!r)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    mg_mav_parse(NULL, NULL, t, len, NULL, r);
    Py_END_ALLOW_THREADS
    PyObject *res;
    if (r->game)
        res = PyUnicode_FromString(r->game->name);
    else if (r->n_issues > 0)
        res = PyErr_Format(PyExc_ValueError, "no game in the MAV header: %s", r->issues[0].msg);
    else
        res = PyErr_Format(PyExc_ValueError, "no game in the MAV header");
    PyMem_Free(r);
    return res;
}

static PyMethodDef rules_functions[] = {
    {"mcts_defaults", py_mcts_defaults, METH_NOARGS,
     "mcts_defaults() -> dict\n\nThe core's MCTS configuration defaults (mg_mcts_config_default)."},
    {"mav_header_game", py_mav_header_game, METH_O,
     "mav_header_game(text) -> str\n\nThe game a MAV text's header line names (ValueError if it names none)."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_rules(PyObject *m) { return PyModule_AddFunctions(m, rules_functions); }
