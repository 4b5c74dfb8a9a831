/*
 * state.h - the CPython binding of the game interface: mavgame._core.State.
 *
 * Other binding files (py_chess.c, py_connect_four.c, ...) take State objects as
 * arguments; they use these helpers to reach the C game and its state bytes.
 */
#ifndef MG_BIND_STATE_H
#define MG_BIND_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../game.h"
#include "py_args.h"

typedef struct mg_py_state {
    PyObject_HEAD
    const mg_game *game;     /* NULL until __init__ ran */
    mg_config cfg;
    unsigned char *state;    /* game->state_size bytes: the current position */
    unsigned char *root;     /* the position at construction (for pickling and replay) */
    unsigned char *undo;     /* cap * undo_size bytes, one record per pushed action */
    int32_t *actions;        /* the pushed actions */
    Py_ssize_t ply, cap;
} mg_py_state;

extern PyTypeObject mg_py_state_type;

/* The move strings of one game and board size, for State.legal_moves and action_to_str: one interned str per
 * action id, made when the action's text is first asked for, so that a move list makes no new str objects.
 * A move's text can depend on the position as well as the action (standard chess writes a king-takes-rook
 * castling action as the king's two-square move, e1h1 as "e1g1", while the same action id of a rook on e1 is
 * "e1h1"): a cached str is used only when it is the text action_to_str wrote now.  Each action has room for two
 * texts (the second array made when a game first writes an action a second way); a third would be a new str per
 * call. */
typedef struct mg_py_move_strs {
    const mg_game *game;   /* NULL: a free slot */
    int board_size;
    int32_t n;             /* game->num_actions */
    PyObject **s;          /* [n]: the str of each action (a strong reference), NULL until first asked for */
    PyObject **alt;        /* [n] or NULL: the action's other text, where the position changes it */
} mg_py_move_strs;

/* Games x board sizes with a move string cache (more share no cache: their strs are made per call). */
#define MG_PY_MOVE_STR_SLOTS 32

/* Interned attribute and key names of the binding (mg_py_names; the texts are in state.c). */
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
    MG_PY_NAME_COUNT
};

/* Dicts made often with the same keys (mg_py_dict_from_template). */
enum mg_py_dict_id { MG_PY_DICT_MCTS_STATS, MG_PY_DICT_COUNT };

/* The module state of mavgame._core (module.c; there are no C globals): the caches of the binding. */
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

/* The module state of this interpreter's mavgame._core, NULL (no exception) before the module exists. */
mg_py_core_state *mg_py_core(void);
/* Release what the module state holds (the module's m_free). */
void mg_py_core_state_free(mg_py_core_state *cs);


/* _core.legal_move_objects(state, cache) (METH_FASTCALL): cache[text] of each legal move's text, as a list. */
PyObject *mg_py_legal_move_objects(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* Returns the State behind `o`, or NULL with TypeError (not a State) or ValueError
 * (not initialised) set; `what` names the argument in the message. */
mg_py_state *mg_py_state_arg(PyObject *o, const char *what);

/* The legal action for `move` (an int action or a move string) in `s`; 0 on success, -1 with
 * ValueError (malformed or illegal, naming the move and the position) or TypeError set. */
int mg_py_state_parse_move(mg_py_state *s, PyObject *move, int32_t *out);

/* The UTF-8 text of a str argument; NULL with TypeError (not a str) or ValueError (contains a
 * NUL character, which C would silently cut the text at) naming `what` and the value. */
const char *mg_py_text_arg(PyObject *o, const char *what);

/* _core.observation_tensors(states): the observation tensors of a batch of states of one game
 * (and board size) as one float32 array (n, planes, rows, cols), filled in C. */
PyObject *mg_py_observation_tensors(PyObject *mod, PyObject *arg);

/* Raise ValueError with the C error text. Returns NULL. */
PyObject *mg_py_value_error(const char *msg);

/* Raise the python-chess style error (mavgame.errors, all ValueError subclasses) for a move error
 * text, by its first word, which every game's action_from_str and the SAN parser begin with:
 * "illegal ..." IllegalMoveError, "ambiguous ..." AmbiguousMoveError, else InvalidMoveError.
 * Returns NULL. */
PyObject *mg_py_move_error(const char *msg);

/* Add the ready type `t` to module m as `name`: 0, or -1 with an exception (the reference released). */
int mg_py_add_type(PyObject *m, const char *name, PyTypeObject *t);

int mg_bind_state(PyObject *m);

#endif
