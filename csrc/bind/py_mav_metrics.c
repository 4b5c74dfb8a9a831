/*
 * py_mav_metrics.c - Python binding of the MAV batch metrics (mg_mav_metrics_add, the paper's
 * Table 2 counts): mav_metrics(game, texts, true_states=None) -> dict of counts.
 */
#include "py_mav_common.h"

#include <string.h>

static PyObject *metrics_dict(const mg_mav_metrics *m)
{
    return Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l}", "examples", m->examples, "parsed_ok",
                         m->parsed_ok, "best_total", m->best_total, "best_legal", m->best_legal, "top_all_examples",
                         m->top_all_examples, "top_listed", m->top_listed, "top_correct", m->top_correct,
                         "top_legal", m->top_legal, "state_total", m->state_total, "state_correct", m->state_correct,
                         "outcome_total", m->outcome_total, "outcome_correct", m->outcome_correct);
}

/* mav_metrics(game, texts, true_states=None) -> dict of counts */
static PyObject *py_mav_metrics(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *go, *texts, *refs = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O:mav_metrics", &go, &texts, &refs))
        return NULL;
    const mg_game *g = mg_py_mav_game_arg(go);
    if (!g)
        return NULL;
    PyObject *ts = PySequence_Fast(texts, "texts must be a sequence of str");
    if (!ts)
        return NULL;
    PyObject *rs = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(ts);
    if (refs != Py_None) {
        rs = PySequence_Fast(refs, "true_states must be a sequence of game states or None");
        if (!rs) {
            Py_DECREF(ts);
            return NULL;
        }
        if (PySequence_Fast_GET_SIZE(rs) != n) {
            PyErr_Format(PyExc_ValueError, "%zd texts but %zd true states", n, PySequence_Fast_GET_SIZE(rs));
            Py_DECREF(ts);
            Py_DECREF(rs);
            return NULL;
        }
    }
    mg_mav_result *r = PyMem_Malloc(sizeof *r);
    mg_mav_metrics met;
    memset(&met, 0, sizeof met);
    PyObject *res = NULL;
    if (!r) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len;
        const char *t = mg_py_data_arg(PySequence_Fast_GET_ITEM(ts, i), &len, mg_py_item_name("texts", i, NULL).s);
        if (!t)
            goto done;
        mg_config cfg = {0, 0};
        const void *ref = NULL;
        if (rs && mg_py_ref_arg(PySequence_Fast_GET_ITEM(rs, i), g, &ref, &cfg, mg_py_item_name("true_states", i, NULL).s) < 0)
            goto done;
        mg_mav_parse(g, &cfg, t, (size_t)len, ref, r);
        mg_mav_metrics_add(&met, r);
    }
    res = metrics_dict(&met);
done:
    PyMem_Free(r);
    Py_DECREF(ts);
    Py_XDECREF(rs);
    return res;
}

static PyMethodDef metrics_functions[] = {
    {"mav_metrics", py_mav_metrics, METH_VARARGS, "mav_metrics(game, texts, true_states=None) -> dict of counts"},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mav_metrics(PyObject *m) { return PyModule_AddFunctions(m, metrics_functions); }
