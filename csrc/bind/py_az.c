/*
 * py_az.c - Python binding of AlphaZero self-play (search/az_selfplay.h): mavgame._core.AZSelfPlay.
 * mavgame/az/selfplay.py drives it with a network.
 *
 *   AZSelfPlay(start, *, parallel_games=16, num_games=64, num_simulations=100, temperature_plies=30,
 *              temperature=1.0, max_plies=0, c_base=19652.0, c_init=1.25, dirichlet_alpha=0.3,
 *              dirichlet_frac=0.25, fpu=0.0, batch_size=1, cache_log2=0, seed=0)
 *       start: the State every game starts from.  batch_size: leaves per game and network call
 *       (> 1 uses the MCTS's dynamic virtual counts).  cache_log2 > 0: an evaluation cache of
 *       2^cache_log2 positions shared by the games (cached leaves never reach the network).
 *   .gather() -> float32 array (n, planes, rows, cols): the leaves waiting for the network (a view of
 *       the object's buffer, valid until the next gather; n == 0 when every game is over).
 *   .scatter(logits, values): float32 (n, num_actions) logits (softmaxed over each leaf's legal
 *       actions in C) and (n,) values in [-1, 1] for the player to move at each leaf.
 *   .take_examples() -> (obs float32 (m, planes, rows, cols), pi float32 (m, num_actions),
 *       z float32 (m,), game int64 (m,), ply int32 (m,), obs_after float32 like obs: the position
 *       after the move played): finished games' positions, once.
 *   .set_team(latents, weights=None): AZdb; latents int32 (num_games, 2): the latent of each side of
 *       each game; weights float32 (num_latents, planes, rows, cols) or None: the intrinsic reward of a
 *       move of latent l is weights[l] . observation(after the move).  Before the first gather.
 *   .row_info() -> (game int64 (n,), latent int32 (n,), reward float32 (n,), own bool (n,)) for the rows
 *       of the last gather (before scatter): game number, the root mover's latent, its intrinsic rewards
 *       summed from root to leaf, whether the root mover is to move at the leaf.
 *   .stats() -> dict; .obs_shape, .num_actions, .max_batch, .game
 * The GIL is released inside gather and scatter; one thread at a time may use an object.
 *
 *   az_path_rewards(root, paths, weights) -> float32 (len(paths),): AZdb's intrinsic rewards summed
 *       from the root to each leaf of a play-time search (mg_az_path_reward, as row_info in self-play):
 *       root a State, paths a sequence of action sequences from root, weights float32 (planes, rows,
 *       cols) of the searching player (the reward of a move is weights . observation after it).
 */
#include "state.h"
#include "py_args.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdlib.h>

#include "../search/az_selfplay.h"

typedef struct py_az {
    PyObject_HEAD
    mg_az_selfplay *sp;
    const mg_game *g;
    PyObject *obs;   /* float32 (max_batch, planes, rows, cols) */
    int last_n;      /* rows of the last gather, waiting for scatter */
    long long num_games;
    int busy;
} py_az;

static void az_dealloc(py_az *self)
{
    mg_az_free(self->sp);
    Py_XDECREF(self->obs);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int az_init(py_az *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"start", "parallel_games", "num_games", "num_simulations", "temperature_plies",
                             "temperature", "max_plies", "c_base", "c_init", "dirichlet_alpha", "dirichlet_frac",
                             "fpu", "batch_size", "cache_log2", "seed", NULL};
    PyObject *start_o;
    long long num_games = 64;
    unsigned long long seed = 0;
    mg_az_config c;
    mg_az_config_default(&c);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$O&O&O&O&dO&dddddO&O&O&:AZSelfPlay", kwlist, &start_o,
                                     MG_PY_C_INT("parallel_games", &c.parallel_games),
                                     MG_PY_INT("num_games", LLONG_MIN, LLONG_MAX, &num_games),
                                     MG_PY_C_INT("num_simulations", &c.num_simulations),
                                     MG_PY_C_INT("temperature_plies", &c.temperature_plies), &c.temperature,
                                     MG_PY_C_INT("max_plies", &c.max_plies), &c.mcts.c_base, &c.mcts.c_init,
                                     &c.mcts.dirichlet_alpha, &c.mcts.dirichlet_frac, &c.mcts.fpu,
                                     MG_PY_C_INT("batch_size", &c.mcts.batch_size),
                                     MG_PY_C_INT("cache_log2", &c.cache_log2), MG_PY_SEED(&seed)))
        return -1;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "AZSelfPlay is in use by another thread");
        return -1;
    }
    mg_py_state *st = mg_py_state_arg(start_o, "start");
    if (!st)
        return -1;
    if (!(c.mcts.c_base > 0)) {
        PyErr_Format(PyExc_ValueError, "c_base %g must be > 0 (AlphaZero's c(s))", c.mcts.c_base);
        return -1;
    }
    c.num_games_total = num_games;
    c.seed = seed;
    char err[MG_ERRLEN];
    mg_az_selfplay *sp = mg_az_create(st->game, st->state, &c, err, sizeof err);
    if (!sp)
        return (void)PyErr_SetString(PyExc_ValueError, err), -1;
    int shape[3];
    mg_az_obs_shape(sp, shape);
    npy_intp dims[4] = {mg_az_max_batch(sp), shape[0], shape[1], shape[2]};
    PyObject *obs = PyArray_ZEROS(4, dims, NPY_FLOAT32, 0);
    if (!obs) {
        mg_az_free(sp);
        return -1;
    }
    mg_az_free(self->sp);
    Py_XDECREF(self->obs);
    self->sp = sp;
    self->g = st->game;
    self->obs = obs;
    self->last_n = 0;
    self->num_games = num_games;
    return 0;
}

static int az_ready(py_az *self)
{
    if (!self->sp) {
        PyErr_SetString(PyExc_ValueError, "AZSelfPlay is not initialised");
        return 0;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "AZSelfPlay is in use by another thread");
        return 0;
    }
    return 1;
}

static PyObject *az_gather(py_az *self, PyObject *Py_UNUSED(ignored))
{
    if (!az_ready(self))
        return NULL;
    if (self->last_n > 0) {
        PyErr_Format(PyExc_RuntimeError, "gather() again before scatter() of the %d positions out", self->last_n);
        return NULL;
    }
    char err[MG_ERRLEN];
    float *buf = PyArray_DATA((PyArrayObject *)self->obs);
    int n;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    n = mg_az_gather(self->sp, buf, err, sizeof err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (n < 0)
        return mg_py_value_error(err);
    self->last_n = n;
    PyObject *stop = PyLong_FromLong(n);
    if (!stop)
        return NULL;
    PyObject *idx = PySlice_New(NULL, stop, NULL);
    Py_DECREF(stop);
    if (!idx)
        return NULL;
    PyObject *view = PyObject_GetItem(self->obs, idx);
    Py_DECREF(idx);
    return view;
}

/* A C-contiguous float32 copy (or the array itself) of `o` with the given 2-d / 1-d shape. */
static PyArrayObject *f32_arg(PyObject *o, const char *what, int ndim, npy_intp d0, npy_intp d1)
{
    PyArrayObject *a = (PyArrayObject *)mg_py_real_array(o, NPY_FLOAT32, 0, 0, what);
    if (!a)
        return NULL;
    int ok = PyArray_NDIM(a) == ndim && PyArray_DIM(a, 0) == d0 && (ndim == 1 || PyArray_DIM(a, 1) == d1);
    if (!ok) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
        if (ndim == 2)
            PyErr_Format(PyExc_ValueError, "%s must have shape (%zd, %zd), not %R", what, (Py_ssize_t)d0,
                         (Py_ssize_t)d1, shape);
        else
            PyErr_Format(PyExc_ValueError, "%s must have shape (%zd,), not %R", what, (Py_ssize_t)d0, shape);
        Py_XDECREF(shape);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

static PyObject *az_scatter(py_az *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"logits", "values", NULL};
    PyObject *lo, *vo;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:scatter", kwlist, &lo, &vo))
        return NULL;
    if (!az_ready(self))
        return NULL;
    if (self->last_n <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "scatter() without positions out (call gather() first)");
        return NULL;
    }
    PyArrayObject *la = f32_arg(lo, "logits", 2, self->last_n, self->g->num_actions);
    if (!la)
        return NULL;
    PyArrayObject *va = f32_arg(vo, "values", 1, self->last_n, 0);
    if (!va) {
        Py_DECREF(la);
        return NULL;
    }
    char err[MG_ERRLEN];
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = mg_az_scatter(self->sp, PyArray_DATA(la), PyArray_DATA(va), err, sizeof err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    self->last_n = 0;
    Py_DECREF(la);
    Py_DECREF(va);
    if (rc != MG_OK)
        return mg_py_value_error(err);
    Py_RETURN_NONE;
}

static PyObject *az_set_team(py_az *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"latents", "weights", NULL};
    PyObject *lo, *wo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:set_team", kwlist, &lo, &wo))
        return NULL;
    if (!az_ready(self))
        return NULL;
    PyArrayObject *la = (PyArrayObject *)mg_py_int_array(lo, NPY_INT32, 0, 0, "set_team: latents");
    if (!la)
        return NULL;
    int shape[3];
    mg_az_obs_shape(self->sp, shape);
    npy_intp ng = PyArray_NDIM(la) == 2 ? PyArray_DIM(la, 0) : -1;
    if (PyArray_NDIM(la) != 2 || PyArray_DIM(la, 1) != 2) {
        PyObject *sh = PyObject_GetAttrString((PyObject *)la, "shape");
        PyErr_Format(PyExc_ValueError, "latents must have shape (num_games, 2), not %R", sh);
        Py_XDECREF(sh);
        Py_DECREF(la);
        return NULL;
    }
    int32_t mx = 0;
    const int32_t *lp = PyArray_DATA(la);
    for (npy_intp i = 0; i < 2 * ng; i++)
        mx = lp[i] > mx ? lp[i] : mx;
    int nl = (int)mx + 1;
    PyArrayObject *wa = NULL;
    if (wo != Py_None) {
        wa = (PyArrayObject *)mg_py_real_array(wo, NPY_FLOAT32, 0, 0, "weights");
        if (!wa) {
            Py_DECREF(la);
            return NULL;
        }
        if (PyArray_NDIM(wa) != 4 || PyArray_DIM(wa, 1) != shape[0] || PyArray_DIM(wa, 2) != shape[1] ||
            PyArray_DIM(wa, 3) != shape[2] || PyArray_DIM(wa, 0) < nl) {
            PyObject *sh = PyObject_GetAttrString((PyObject *)wa, "shape");
            PyErr_Format(PyExc_ValueError, "weights must have shape (num_latents >= %d, %d, %d, %d), not %R", nl,
                         shape[0], shape[1], shape[2], sh);
            Py_XDECREF(sh);
            Py_DECREF(la);
            Py_DECREF(wa);
            return NULL;
        }
        nl = (int)PyArray_DIM(wa, 0);
    }
    char err[MG_ERRLEN];
    int rc = MG_OK;
    /* the C side checks the number of games through num_games_total */
    if (ng != (npy_intp)self->num_games) {
        PyErr_Format(PyExc_ValueError, "latents must have one row per game (%lld), not %zd", self->num_games,
                     (Py_ssize_t)ng);
        Py_DECREF(la);
        Py_XDECREF(wa);
        return NULL;
    }
    rc = mg_az_set_team(self->sp, nl, lp, wa ? PyArray_DATA(wa) : NULL, err, sizeof err);
    Py_DECREF(la);
    Py_XDECREF(wa);
    if (rc != MG_OK)
        return mg_py_value_error(err);
    Py_RETURN_NONE;
}

static PyObject *az_row_info(py_az *self, PyObject *Py_UNUSED(ignored))
{
    if (!az_ready(self))
        return NULL;
    npy_intp d1[1] = {self->last_n};
    PyObject *game = PyArray_SimpleNew(1, d1, NPY_INT64), *lat = PyArray_SimpleNew(1, d1, NPY_INT32);
    PyObject *rew = PyArray_SimpleNew(1, d1, NPY_FLOAT32), *own = PyArray_SimpleNew(1, d1, NPY_BOOL);
    if (!game || !lat || !rew || !own) {
        Py_XDECREF(game), Py_XDECREF(lat), Py_XDECREF(rew), Py_XDECREF(own);
        return NULL;
    }
    mg_az_row_info(self->sp, self->last_n, PyArray_DATA((PyArrayObject *)game), PyArray_DATA((PyArrayObject *)lat),
                   PyArray_DATA((PyArrayObject *)rew), PyArray_DATA((PyArrayObject *)own));
    return Py_BuildValue("(NNNN)", game, lat, rew, own);
}

static PyObject *az_take_examples(py_az *self, PyObject *Py_UNUSED(ignored))
{
    if (!az_ready(self))
        return NULL;
    int shape[3];
    mg_az_obs_shape(self->sp, shape);
    npy_intp m = (npy_intp)mg_az_num_examples(self->sp);
    npy_intp d_obs[4] = {m, shape[0], shape[1], shape[2]}, d_pi[2] = {m, self->g->num_actions}, d1[1] = {m};
    PyObject *obs = PyArray_SimpleNew(4, d_obs, NPY_FLOAT32), *pi = PyArray_SimpleNew(2, d_pi, NPY_FLOAT32);
    PyObject *z = PyArray_SimpleNew(1, d1, NPY_FLOAT32), *game = PyArray_SimpleNew(1, d1, NPY_INT64);
    PyObject *ply = PyArray_SimpleNew(1, d1, NPY_INT32), *after = PyArray_SimpleNew(4, d_obs, NPY_FLOAT32);
    if (!obs || !pi || !z || !game || !ply || !after) {
        Py_XDECREF(obs), Py_XDECREF(pi), Py_XDECREF(z), Py_XDECREF(game), Py_XDECREF(ply), Py_XDECREF(after);
        return NULL;
    }
    mg_az_take_examples(self->sp, PyArray_DATA((PyArrayObject *)obs), PyArray_DATA((PyArrayObject *)pi),
                        PyArray_DATA((PyArrayObject *)z), PyArray_DATA((PyArrayObject *)game),
                        PyArray_DATA((PyArrayObject *)ply), PyArray_DATA((PyArrayObject *)after));
    return Py_BuildValue("(NNNNNN)", obs, pi, z, game, ply, after);
}

static PyObject *az_stats(py_az *self, PyObject *Py_UNUSED(ignored))
{
    if (!self->sp)
        return mg_py_value_error("AZSelfPlay is not initialised");
    mg_az_stats s;
    mg_az_get_stats(self->sp, &s);
    return Py_BuildValue("{sLsLsLsLsLsLsLsLsLsLsd}", "cache_hits", (long long)s.cache_hits, "games_started", (long long)s.games_started, "games_finished",
                         (long long)s.games_finished, "p0_wins", (long long)s.p0_wins, "p1_wins",
                         (long long)s.p1_wins, "draws", (long long)s.draws, "cut_draws", (long long)s.cut_draws,
                         "moves", (long long)s.moves, "evaluations", (long long)s.evaluations, "batches",
                         (long long)s.batches, "search_seconds", s.search_seconds);
}

static PyObject *az_get_obs_shape(py_az *self, void *Py_UNUSED(c))
{
    if (!self->sp)
        return mg_py_value_error("AZSelfPlay is not initialised");
    int s[3];
    mg_az_obs_shape(self->sp, s);
    return Py_BuildValue("(iii)", s[0], s[1], s[2]);
}

static PyObject *az_get_num_actions(py_az *self, void *Py_UNUSED(c))
{
    if (!self->g)
        return mg_py_value_error("AZSelfPlay is not initialised");
    return PyLong_FromLong(self->g->num_actions);
}

static PyObject *az_get_max_batch(py_az *self, void *Py_UNUSED(c))
{
    if (!self->sp)
        return mg_py_value_error("AZSelfPlay is not initialised");
    return PyLong_FromLong(mg_az_max_batch(self->sp));
}

static PyObject *az_get_game(py_az *self, void *Py_UNUSED(c))
{
    if (!self->g)
        return mg_py_value_error("AZSelfPlay is not initialised");
    return PyUnicode_FromString(self->g->name);
}

static PyMethodDef az_methods[] = {
    {"gather", (PyCFunction)az_gather, METH_NOARGS,
     "gather() -> float32 (n, planes, rows, cols): observations of the leaves waiting for the network "
     "(a view valid until the next gather; n == 0: every game is over)."},
    {"scatter", (PyCFunction)(void (*)(void))az_scatter, METH_VARARGS | METH_KEYWORDS,
     "scatter(logits, values): the network's (n, num_actions) logits and (n,) values in [-1, 1] (player to move)."},
    {"take_examples", (PyCFunction)az_take_examples, METH_NOARGS,
     "take_examples() -> (obs, pi, z, game, ply, obs_after): the finished games' training positions (each "
     "returned once); obs_after: the position after the move played."},
    {"stats", (PyCFunction)az_stats, METH_NOARGS, "stats() -> dict of counters and search_seconds."},
    {"set_team", (PyCFunction)(void (*)(void))az_set_team, METH_VARARGS | METH_KEYWORDS,
     "set_team(latents, weights=None): AZdb; latents (num_games, 2) int: each side's latent per game; weights "
     "(num_latents, planes, rows, cols) float32 or None: a move's intrinsic reward is weights[latent] . "
     "observation after the move.  Before the first gather; not with the cache."},
    {"row_info", (PyCFunction)az_row_info, METH_NOARGS,
     "row_info() -> (game int64, latent int32, reward float32, own bool) per row of the last gather: the game "
     "number, the root mover's latent, its intrinsic rewards summed from root to leaf, root mover to move."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef az_getset[] = {
    {"obs_shape", (getter)az_get_obs_shape, NULL, "(planes, rows, cols) of an observation.", NULL},
    {"num_actions", (getter)az_get_num_actions, NULL, "Width of the policy (the game's action ids).", NULL},
    {"max_batch", (getter)az_get_max_batch, NULL, "The most positions one gather returns.", NULL},
    {"game", (getter)az_get_game, NULL, "The game's name.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_az_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.AZSelfPlay",
    .tp_basicsize = sizeof(py_az),
    .tp_dealloc = (destructor)az_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "AZSelfPlay(start, **config): AlphaZero self-play with batched network calls (see mavgame/az).  "
              "Threads: one thread at a time; a call while gather()/scatter() runs in another thread raises "
              "RuntimeError 'AZSelfPlay is in use by another thread'.",
    .tp_methods = az_methods,
    .tp_getset = az_getset,
    .tp_init = (initproc)az_init,
    .tp_new = PyType_GenericNew,
};

/* _core.az_path_rewards(root, paths, weights) -> float32 (len(paths),). */
static PyObject *az_path_rewards(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *ro, *po, *wo;
    if (!PyArg_ParseTuple(args, "OOO:az_path_rewards", &ro, &po, &wo))
        return NULL;
    mg_py_state *root = mg_py_state_arg(ro, "root");
    if (!root)
        return NULL;
    const mg_game *g = root->game;
    int shape[3];
    g->obs_shape(root->state, shape);
    int obs_size = shape[0] * shape[1] * shape[2];
    PyArrayObject *wa = (PyArrayObject *)mg_py_real_array(wo, NPY_FLOAT32, 0, 0, "az_path_rewards: weights");
    if (!wa)
        return NULL;
    if (PyArray_NDIM(wa) != 3 || PyArray_DIM(wa, 0) != shape[0] || PyArray_DIM(wa, 1) != shape[1] ||
        PyArray_DIM(wa, 2) != shape[2]) {
        PyObject *sh = PyObject_GetAttrString((PyObject *)wa, "shape");
        PyErr_Format(PyExc_ValueError, "az_path_rewards: weights must have the %s observation's shape (%d, %d, %d), "
                     "not %R", g->name, shape[0], shape[1], shape[2], sh);
        Py_XDECREF(sh);
        Py_DECREF(wa);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(po, "az_path_rewards: paths must be a sequence of action sequences");
    if (!seq) {
        Py_DECREF(wa);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    npy_intp dims[1] = {n};
    PyObject *out = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    void *tmp_state = malloc(g->state_size), *tmp_undo = malloc(g->undo_size ? g->undo_size : 1);
    float *tmp_obs = malloc((size_t)obs_size * sizeof *tmp_obs);
    if (!out || !tmp_state || !tmp_undo || !tmp_obs) {
        if (out)
            PyErr_NoMemory();
        goto fail;
    }
    float *res = PyArray_DATA((PyArrayObject *)out);
    for (Py_ssize_t i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "az_path_rewards: paths[%zd]", i);
        PyArrayObject *pa = (PyArrayObject *)mg_py_int_array(PySequence_Fast_GET_ITEM(seq, i), NPY_INT32, 1, 1, what);
        if (!pa) {
            /* floats, strings, ints that do not fit: the helper's TypeError / OverflowError says so */
            if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_OverflowError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError, "az_path_rewards: paths[%zd] is not a sequence of int actions", i);
            }
            goto fail;
        }
        char err[MG_ERRLEN];
        double sum = 0.0;
        int rc = mg_az_path_reward(g, root->state, PyArray_DATA(pa), (int)PyArray_DIM(pa, 0), PyArray_DATA(wa),
                                   obs_size, tmp_state, tmp_undo, tmp_obs, &sum, err, sizeof err);
        Py_DECREF(pa);
        if (rc != MG_OK) {
            PyErr_Format(PyExc_ValueError, "paths[%zd]: %s", i, err);
            goto fail;
        }
        res[i] = (float)sum;
    }
    free(tmp_state), free(tmp_undo), free(tmp_obs);
    Py_DECREF(seq);
    Py_DECREF(wa);
    return out;
fail:
    free(tmp_state), free(tmp_undo), free(tmp_obs);
    Py_XDECREF(out);
    Py_DECREF(seq);
    Py_DECREF(wa);
    return NULL;
}

static PyMethodDef az_functions[] = {
    {"az_path_rewards", az_path_rewards, METH_VARARGS,
     "az_path_rewards(root, paths, weights) -> float32 (len(paths),): AZdb's intrinsic rewards summed from the root "
     "to each leaf: over the root mover's moves of each path, weights . observation(after the move); weights "
     "(planes, rows, cols) float32."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_az(PyObject *m)
{
    if (mg_py_add_type(m, "AZSelfPlay", &py_az_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, az_functions);
}
