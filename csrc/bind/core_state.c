/*
 * core_state.c - the module state of mavgame._core (core_state.h): the module definition that holds it, the
 * interned names and dict templates, and the way to the move string caches (move_cache.c).
 */
#include "core_state.h"

static void core_free(void *m)
{
    mg_py_core_state *cs = PyModule_GetState((PyObject *)m);
    if (cs)
        mg_py_core_state_free(cs);
}

/* The module state holds the binding's caches: no C global does.  The functions are added by module.c and the
 * binding files (PyModule_AddFunctions). */
static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "mavgame._core", "mavgame's C core: games, search and the MAV text format.",
    sizeof(mg_py_core_state), NULL, NULL, NULL, NULL, core_free,
};

PyObject *mg_py_core_module_create(void) { return PyModule_Create(&core_module); }

mg_py_core_state *mg_py_core(void)
{
    /* single-phase initialisation: the interpreter keeps the module by its definition */
    PyObject *m = PyState_FindModule(&core_module);
    return m ? PyModule_GetState(m) : NULL;
}

mg_py_move_strs *mg_py_move_strs_of(const mg_game *g, int board_size)
{
    mg_py_core_state *cs = mg_py_core();
    return mg_py_move_strs_find(cs ? cs->move_strs : NULL, g, board_size);
}

PyObject *mg_py_game_name(const mg_game *g, int board_size)
{
    return mg_py_move_strs_game_name(mg_py_move_strs_of(g, board_size), g);
}

static const char *const name_text[MG_PY_NAME_COUNT] = {
    [MG_PY_NAME_SCORE] = "score",
    [MG_PY_NAME_MOVE_SCORES] = "move_scores",
    [MG_PY_NAME_NODES] = "nodes",
    [MG_PY_NAME_COMPLETE] = "complete",
    [MG_PY_NAME_BEST] = "best",
    [MG_PY_NAME_C4_DEFAULT_SOLVER] = "_c4_default_solver",
    [MG_PY_NAME_SIMULATIONS] = "simulations",
    [MG_PY_NAME_EVALUATIONS] = "evaluations",
    [MG_PY_NAME_COMPLETED] = "completed",
    [MG_PY_NAME_TERMINAL_VISITS] = "terminal_visits",
    [MG_PY_NAME_DROPPED] = "dropped",
    [MG_PY_NAME_INVALID] = "invalid",
    [MG_PY_NAME_COLLISIONS] = "collisions",
    [MG_PY_NAME_BATCHES] = "batches",
    [MG_PY_NAME_DEPTH_CUTOFFS] = "depth_cutoffs",
    [MG_PY_NAME_MAX_DEPTH] = "max_depth",
    [MG_PY_NAME_EDGES] = "edges",
    [MG_PY_NAME_REUSED_NODES] = "reused_nodes",
    [MG_PY_NAME_ELAPSED] = "elapsed",
    [MG_PY_NAME_EVAL_SECONDS] = "eval_seconds",
    [MG_PY_NAME__SNAPSHOT] = "_snapshot",
    [MG_PY_NAME_TIMED_OUT] = "timed_out",
    [MG_PY_NAME_F_BEST_MOVE] = "best_move",
    [MG_PY_NAME_F_BEST_ACTION] = "best_action",
    [MG_PY_NAME_F_MOVES] = "moves",
    [MG_PY_NAME_F_ACTIONS] = "actions",
    [MG_PY_NAME_F_VISITS] = "visits",
    [MG_PY_NAME_F_Q] = "q",
    [MG_PY_NAME_F_PRIOR] = "prior",
    [MG_PY_NAME_F_VALUES] = "values",
    [MG_PY_NAME_F_HALLUCINATED] = "hallucinated",
    [MG_PY_NAME_F_PV] = "pv",
    [MG_PY_NAME_F_PV_ACTIONS] = "pv_actions",
    [MG_PY_NAME_F_ROOT_VALUE] = "root_value",
    [MG_PY_NAME_F_ROOT_VISITS] = "root_visits",
    [MG_PY_NAME_F_STATS] = "stats",
    [MG_PY_NAME_F_U] = "u",
};

static PyObject *const *core_names(mg_py_core_state *cs)
{
    if (!cs) {
        PyErr_SetString(PyExc_RuntimeError, "mavgame._core is not initialised (no module state)");
        return NULL;
    }
    if (!cs->names[MG_PY_NAME_COUNT - 1]) /* filled in order: the last one made means all are */
        for (int i = 0; i < MG_PY_NAME_COUNT; i++)
            if (!cs->names[i] && !(cs->names[i] = PyUnicode_InternFromString(name_text[i])))
                return NULL;
    return cs->names;
}

PyObject *const *mg_py_names(void) { return core_names(mg_py_core()); }

PyObject *mg_py_dict_from_template(int id, const int *ids, int n)
{
    mg_py_core_state *cs = mg_py_core();
    PyObject *const *names = core_names(cs);
    if (!names)
        return NULL;
    if (!cs->dict_templates[id]) {
        PyObject *t = PyDict_New();
        for (int i = 0; t && i < n; i++)
            if (PyDict_SetItem(t, names[ids[i]], Py_None) < 0)
                Py_CLEAR(t);
        if (!t)
            return NULL;
        cs->dict_templates[id] = t;
    }
    return PyDict_Copy(cs->dict_templates[id]);
}

void mg_py_core_state_free(mg_py_core_state *cs)
{
    for (int i = 0; i < MG_PY_NAME_COUNT; i++)
        Py_CLEAR(cs->names[i]);
    for (int i = 0; i < MG_PY_DICT_COUNT; i++)
        Py_CLEAR(cs->dict_templates[i]);
    for (int i = 0; i < MG_PY_MOVE_STR_SLOTS; i++)
        mg_py_move_strs_free(&cs->move_strs[i]);
}
