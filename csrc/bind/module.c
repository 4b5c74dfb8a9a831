/*
 * module.c - the mavgame._core extension module: registers the State type and the
 * per-module bindings.  Each binding file adds its functions through mg_bind_<name>().
 */
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "state.h"

#include <numpy/arrayobject.h>

PyObject *mg_py_rebuild_state(PyObject *mod, PyObject *args);

/* Per-module binding entry points (one line each, in their own files). */
#include "bindings.h"

static PyObject *core_games(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored))
{
    int n = mg_game_count();
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(mg_game_at(i)->name);
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyObject *core_terminations(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(MG_TERM_COUNT);
    if (!list)
        return NULL;
    for (int i = 0; i < MG_TERM_COUNT; i++) {
        PyObject *s = PyUnicode_FromString(mg_termination_name(i));
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyMethodDef core_methods[] = {
    {"games", core_games, METH_NOARGS, "games() -> list[str]\n\nNames of the games in the C registry."},
    {"terminations", core_terminations, METH_NOARGS,
     "terminations() -> list[str]\n\nNames of the ways a game ends (enum mg_termination, 'none' first)."},
    {"_rebuild_state", mg_py_rebuild_state, METH_VARARGS, "Unpickling helper for game states."},
    {"observation_tensors", mg_py_observation_tensors, METH_O,
     "observation_tensors(states) -> numpy.ndarray[float32] (len(states), planes, rows, cols)\n\n"
     "State.observation_tensor() of each state, filled in C (one game and board size per batch)."},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    mg_games_init();
    PyObject *m = mg_py_core_module_create(); /* core_state.c: the module state, the caches */
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, core_methods) < 0)
        goto fail;
    if (mg_bind_state(m) < 0)
        goto fail;
    for (int i = 0; MG_BINDINGS[i]; i++)
        if (MG_BINDINGS[i](m) < 0)
            goto fail;
    /* 1 if built with MAVGAME_NATIVE=1 (-march=native: only for the build machine). */
#ifdef MG_NATIVE_BUILD
    if (PyModule_AddIntConstant(m, "NATIVE_BUILD", 1) < 0)
        goto fail;
#else
    if (PyModule_AddIntConstant(m, "NATIVE_BUILD", 0) < 0)
        goto fail;
#endif
#ifdef MG_WITH_CUDA
    if (PyModule_AddIntConstant(m, "WITH_CUDA", 1) < 0)
        goto fail;
#else
    if (PyModule_AddIntConstant(m, "WITH_CUDA", 0) < 0)
        goto fail;
#endif
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
