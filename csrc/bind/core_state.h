/*
 * core_state.h - the module state of mavgame._core (core_state.c; there are no C globals): the binding's caches, the
 * move strings (move_cache.h), the interned attribute and key names and the dict templates.
 */
#ifndef MG_BIND_CORE_STATE_H
#define MG_BIND_CORE_STATE_H

#include "move_cache.h"

/* Interned attribute and key names of the binding (mg_py_names; the texts are in core_state.c). */
enum mg_py_name_id {
    MG_PY_NAME_SCORE,          /* the fields of ConnectFour.solve's SolveResult (py_connect_four.c) */
    MG_PY_NAME_MOVE_SCORES,
    MG_PY_NAME_NODES,          /* (also a key of MCTSTree.stats()) */
    MG_PY_NAME_COMPLETE,
    MG_PY_NAME_BEST,
    MG_PY_NAME_C4_DEFAULT_SOLVER, /* the module attribute of the default C4Solver */
    MG_PY_NAME_SIMULATIONS,    /* the keys of MCTSTree.stats() (py_mcts.c), in its order */
    MG_PY_NAME_EVALUATIONS,
    MG_PY_NAME_COMPLETED,
    MG_PY_NAME_TERMINAL_VISITS,
    MG_PY_NAME_DROPPED,
    MG_PY_NAME_INVALID,
    MG_PY_NAME_COLLISIONS,
    MG_PY_NAME_BATCHES,
    MG_PY_NAME_DEPTH_CUTOFFS,
    MG_PY_NAME_MAX_DEPTH,
    MG_PY_NAME_EDGES,
    MG_PY_NAME_REUSED_NODES,
    MG_PY_NAME_ELAPSED,
    MG_PY_NAME_EVAL_SECONDS,
    MG_PY_NAME__SNAPSHOT,      /* SearchResult's attribute holding its MCTSResult (py_mcts.c, MCTSTree.snapshot) */
    MG_PY_NAME_TIMED_OUT,      /* the key SearchResult.stats adds to MCTSTree.stats() */
    MG_PY_NAME_F_BEST_MOVE,     /* the fields of mavgame.search.results.SearchResult, in its order (py_mcts_result.c) */
    MG_PY_NAME_F_BEST_ACTION,
    MG_PY_NAME_F_MOVES,
    MG_PY_NAME_F_ACTIONS,
    MG_PY_NAME_F_VISITS,
    MG_PY_NAME_F_Q,
    MG_PY_NAME_F_PRIOR,
    MG_PY_NAME_F_VALUES,
    MG_PY_NAME_F_HALLUCINATED,
    MG_PY_NAME_F_PV,
    MG_PY_NAME_F_PV_ACTIONS,
    MG_PY_NAME_F_ROOT_VALUE,
    MG_PY_NAME_F_ROOT_VISITS,
    MG_PY_NAME_F_STATS,
    MG_PY_NAME_F_U,
    MG_PY_NAME_COUNT
};

/* Dicts made often with the same keys (mg_py_dict_from_template). */
enum mg_py_dict_id { MG_PY_DICT_MCTS_STATS, MG_PY_DICT_COUNT };

/* The module state of mavgame._core (there are no C globals): the caches of the binding. */
typedef struct mg_py_core_state {
    mg_py_move_strs move_strs[MG_PY_MOVE_STR_SLOTS];
    PyObject *names[MG_PY_NAME_COUNT];          /* interned, all made on first use */
    PyObject *dict_templates[MG_PY_DICT_COUNT]; /* each key None, made on first use */
} mg_py_core_state;

/* The interned names (borrowed references: the module state keeps them), indexed by enum mg_py_name_id; NULL
 * with an exception (no memory; RuntimeError before the module exists). */
PyObject *const *mg_py_names(void);
/* A new dict with the keys names[ids[0..n)] in that order, each None: a copy of the template `id` (made on first
 * use with those keys), so that filling it (PyDict_SetItem of each key) needs no key str, no hashing and no
 * resize.  NULL with an exception. */
PyObject *mg_py_dict_from_template(int id, const int *ids, int n);

/* A new mavgame._core module with its (zeroed) state and no functions yet (module.c's PyInit__core adds them);
 * NULL with an exception. */
PyObject *mg_py_core_module_create(void);
/* The module state of this interpreter's mavgame._core, NULL (no exception) before the module exists. */
mg_py_core_state *mg_py_core(void);
/* The move string cache of game `g` at `board_size` in the module state (mg_py_move_strs_find), NULL (no exception)
 * where there is none: mg_py_move_str then makes a new str each time. */
mg_py_move_strs *mg_py_move_strs_of(const mg_game *g, int board_size);
/* State.game: a new reference to the interned str of g->name (cached beside the move strings of g at board_size;
 * made each call where there is no cache).  NULL with an exception. */
PyObject *mg_py_game_name(const mg_game *g, int board_size);
/* Release what the module state holds (the module's m_free). */
void mg_py_core_state_free(mg_py_core_state *cs);

#endif
