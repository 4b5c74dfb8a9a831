/*
 * py_policy_net.c - Python binding of the native chess policy network (csrc/model/policy_net.h):
 * mavgame._core.PolicyNet.  mavgame/model/policy_native.py builds on it.
 *
 *   PolicyNet(source, *, max_batch=64, simd=True, threads=1)   source: the path of an exported file
 *       (mavgame-policy safetensors) or its bytes; ValueError naming the bad field, tensor or shape;
 *       threads: a batch is split over that many threads (a pool of csrc/model/threadpool.h, each
 *       thread with its own scratch); every position's logits are bitwise those of threads=1
 *   .logits(planes) -> float32 (n, 1968)            planes float32 (n, 41, 8, 8)
 *   .policy(planes, mask) -> float32 (n, 1968)      softmax over the legal moves (mask bool (n, 1968)),
 *                                                  0 for the others: the callable guided_alphabeta and
 *                                                  the agents take (also PolicyNet(...)(planes, mask))
 *   .sample(planes, mask, u) -> int64 (n,)         one move index a row drawn from that policy with the
 *                                                  uniform numbers u (n,) in [0, 1) (-1: no legal move)
 *   .channels, .blocks, .head, .n_params, .file_dtype, .kernel, .max_batch, .threads, .calls, .positions
 *
 * Batches larger than max_batch run in chunks of max_batch through scratch buffers made at
 * construction (one a thread): no allocation per call besides the result arrays.  With threads > 1
 * a chunk of n positions is cut into min(threads, n) slices of consecutive positions, one forward
 * pass each; the network's per-position arithmetic does not depend on the batch (matmul.h keeps
 * each output's summation order), so the slicing changes no bit of the result.  The forward pass runs with the
 * GIL released under the object's lock (one forward pass at a time per object).
 * guided_alphabeta(state, net) recognises a PolicyNet (mg_py_policy_net_ab) and calls the forward
 * pass from the search directly, without the GIL or any Python object per call.
 */
#include "policy_bind.h"
#include "py_mav_common.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <pythread.h>

#include <string.h>

#include "../games/chess/chess_alphabeta.h"
#include "../model/policy_net.h"
#include "../model/safetensors.h"
#include "../model/threadpool.h"

_Static_assert(MG_PNET_PLANES == MG_POLICY_PLANES && MG_PNET_MOVES == MG_POLICY_MOVES,
               "policy_net.h and chess_policy.h disagree on the network's shape");

typedef struct py_policy_net {
    PyObject_HEAD
    mg_policy_net net;
    int loaded;
    int max_batch;
    int threads;           /* threads a forward pass (1: the caller alone) */
    mg_pool *pool;         /* NULL when threads == 1 */
    size_t scratch_each;   /* mg_policy_net_scratch_floats(net, max_batch) */
    float *scratch;        /* [threads][scratch_each] */
    float *planes;   /* [max_batch][41 * 64]: the search adapter's inputs */
    float *logits;   /* [max_batch][1968] */
    PyThread_type_lock lock;
    unsigned long long calls, positions;
} py_policy_net;

static PyTypeObject py_policy_net_type;

static void pnet_dealloc(py_policy_net *self)
{
    if (self->loaded)
        mg_policy_net_free(&self->net);
    if (self->pool)
        mg_pool_free(self->pool);
    PyMem_RawFree(self->scratch);
    PyMem_RawFree(self->planes);
    PyMem_RawFree(self->logits);
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The loaders over the object's network, with its simd choice. */
typedef struct load_arg {
    mg_policy_net *net;
    int simd;
} load_arg;

static int load_path(void *a, const char *path, char *err, size_t errlen)
{
    const load_arg *la = a;
    return mg_policy_net_load_file(la->net, path, la->simd, err, errlen);
}

static int load_bytes(void *a, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
    const load_arg *la = a;
    return mg_policy_net_load_buffer(la->net, buf, len, la->simd, err, errlen);
}

static int pnet_init(py_policy_net *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"source", "max_batch", "simd", "threads", NULL};
    PyObject *src;
    int max_batch = 64, simd = 1, threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$O&pO&:PolicyNet", kwlist, &src,
                                     MG_PY_INT("max_batch", 1, 4096, &max_batch), &simd,
                                     MG_PY_INT("threads", 1, MG_POOL_MAX_THREADS, &threads)))
        return -1;
    if (self->loaded) {
        PyErr_SetString(PyExc_RuntimeError, "PolicyNet is already initialised");
        return -1;
    }
    load_arg la = {&self->net, simd};
    if (mg_py_load_weights(src, load_path, load_bytes, &la) < 0)
        return -1;
    self->loaded = 1;
    self->max_batch = max_batch;
    self->threads = threads;
    if (threads > 1) {
        char err[MG_ERRLEN];
        self->pool = mg_pool_create(threads, err, sizeof err);
        if (!self->pool) {
            PyErr_Format(PyExc_RuntimeError, "PolicyNet: cannot start %d threads: %s", threads, err);
            return -1;
        }
    }
    self->scratch_each = mg_policy_net_scratch_floats(&self->net, max_batch);
    self->scratch = PyMem_RawMalloc((size_t)threads * self->scratch_each * sizeof(float));
    self->planes = PyMem_RawMalloc((size_t)max_batch * MG_POLICY_INPUT_SIZE * sizeof(float));
    self->logits = PyMem_RawMalloc((size_t)max_batch * MG_POLICY_MOVES * sizeof(float));
    self->lock = PyThread_allocate_lock();
    if (!self->scratch || !self->planes || !self->logits || !self->lock) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

#define CHECK_NET(self)                                                            \
    do {                                                                           \
        if (!(self)->loaded || !(self)->lock) {                                    \
            PyErr_SetString(PyExc_ValueError, "PolicyNet is not initialised");     \
            return NULL;                                                           \
        }                                                                          \
    } while (0)

/* One chunk (n <= max_batch positions) cut into slices of `per` positions, one task a slice. */
typedef struct {
    py_policy_net *self;
    const float *planes;
    float *logits;
    int n, per;
} slice_job;

static void slice_task(void *ctx, int task, int thread)
{
    const slice_job *j = ctx;
    int s = task * j->per, k = j->n - s < j->per ? j->n - s : j->per;
    mg_policy_net_forward(&j->self->net, j->planes + (size_t)s * MG_POLICY_INPUT_SIZE, k,
                          j->logits + (size_t)s * MG_POLICY_MOVES,
                          j->self->scratch + (size_t)thread * j->self->scratch_each);
}

/* logits[n][1968] of planes[n][41 * 64], n <= max_batch, on the object's threads; caller holds the lock. */
static void forward_chunk(py_policy_net *self, const float *planes, int n, float *logits)
{
    if (!self->pool || n < 2) {
        mg_policy_net_forward(&self->net, planes, n, logits, self->scratch);
        return;
    }
    int parts = n < self->threads ? n : self->threads;
    slice_job j = {self, planes, logits, n, (n + parts - 1) / parts};
    mg_pool_run(self->pool, slice_task, &j, (n + j.per - 1) / j.per);
}

/* logits[n][1968] of planes[n][41 * 64] in chunks of max_batch; caller holds the lock. */
static void forward_locked(py_policy_net *self, const float *planes, Py_ssize_t n, float *logits)
{
    for (Py_ssize_t s = 0; s < n; s += self->max_batch) {
        int k = (int)(n - s < self->max_batch ? n - s : self->max_batch);
        forward_chunk(self, planes + (size_t)s * MG_POLICY_INPUT_SIZE, k, logits + (size_t)s * MG_POLICY_MOVES);
    }
    self->calls++;
    self->positions += (unsigned long long)n;
}

/* A C-contiguous float32 array of the planes (n, 41, 8, 8), or NULL with ValueError naming the shape. */
static PyArrayObject *planes_arg(PyObject *o)
{
    PyArrayObject *a = (PyArrayObject *)mg_py_real_array(o, NPY_FLOAT32, 0, 0, "PolicyNet: planes");
    if (!a)
        return NULL;
    if (PyArray_NDIM(a) != 4 || PyArray_DIM(a, 1) != MG_POLICY_PLANES || PyArray_DIM(a, 2) != 8 ||
        PyArray_DIM(a, 3) != 8) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
        if (shape)
            PyErr_Format(PyExc_ValueError, "PolicyNet: planes must have shape (n, %d, 8, 8), got %R", MG_POLICY_PLANES,
                         shape);
        Py_XDECREF(shape);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* planes -> new logits array (n, 1968); NULL on error. */
static PyArrayObject *run_logits(py_policy_net *self, PyArrayObject *planes)
{
    npy_intp n = PyArray_DIM(planes, 0), dims[2] = {n, MG_POLICY_MOVES};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    if (!out)
        return NULL;
    const float *in = PyArray_DATA(planes);
    float *lg = PyArray_DATA(out);
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    forward_locked(self, in, n, lg);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    return out;
}

static PyObject *pnet_logits(py_policy_net *self, PyObject *arg)
{
    CHECK_NET(self);
    PyArrayObject *planes = planes_arg(arg);
    if (!planes)
        return NULL;
    PyArrayObject *out = run_logits(self, planes);
    Py_DECREF(planes);
    return (PyObject *)out;
}

static PyObject *pnet_policy(py_policy_net *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"planes", "mask", NULL};
    PyObject *po, *mo;
    CHECK_NET(self);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:policy", kwlist, &po, &mo))
        return NULL;
    PyArrayObject *planes = planes_arg(po);
    if (!planes)
        return NULL;
    PyArrayObject *mask = (PyArrayObject *)mg_py_int_array(mo, NPY_BOOL, 0, 0, "PolicyNet: mask");
    if (!mask) {
        Py_DECREF(planes);
        return NULL;
    }
    npy_intp n = PyArray_DIM(planes, 0);
    if (PyArray_NDIM(mask) != 2 || PyArray_DIM(mask, 0) != n || PyArray_DIM(mask, 1) != MG_POLICY_MOVES) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)mask, "shape");
        if (shape)
            PyErr_Format(PyExc_ValueError, "PolicyNet: mask must have shape (%zd, %d) for %zd positions, got %R",
                         (Py_ssize_t)n, MG_POLICY_MOVES, (Py_ssize_t)n, shape);
        Py_XDECREF(shape);
        Py_DECREF(planes);
        Py_DECREF(mask);
        return NULL;
    }
    PyArrayObject *out = run_logits(self, planes);
    if (out) {
        float *p = PyArray_DATA(out);
        const uint8_t *m = PyArray_DATA(mask);
        Py_BEGIN_ALLOW_THREADS
        for (npy_intp i = 0; i < n; i++)
            mg_policy_masked_softmax(p + (size_t)i * MG_POLICY_MOVES, m + (size_t)i * MG_POLICY_MOVES,
                                     p + (size_t)i * MG_POLICY_MOVES);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(planes);
    Py_DECREF(mask);
    return (PyObject *)out;
}

static PyObject *pnet_sample(py_policy_net *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"planes", "mask", "u", NULL};
    PyObject *po, *mo, *uo;
    CHECK_NET(self);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO:sample", kwlist, &po, &mo, &uo))
        return NULL;
    PyArrayObject *planes = planes_arg(po), *mask = NULL, *u = NULL, *out = NULL, *lg = NULL;
    if (!planes)
        return NULL;
    npy_intp n = PyArray_DIM(planes, 0);
    mask = (PyArrayObject *)mg_py_int_array(mo, NPY_BOOL, 0, 0, "PolicyNet.sample: mask");
    u = (PyArrayObject *)mg_py_real_array(uo, NPY_FLOAT64, 0, 0, "PolicyNet.sample: u");
    if (!mask || !u)
        goto done;
    if (PyArray_NDIM(mask) != 2 || PyArray_DIM(mask, 0) != n || PyArray_DIM(mask, 1) != MG_POLICY_MOVES ||
        PyArray_NDIM(u) != 1 || PyArray_DIM(u, 0) != n) {
        PyObject *ms = PyObject_GetAttrString((PyObject *)mask, "shape"), *us = PyObject_GetAttrString((PyObject *)u, "shape");
        if (ms && us)
            PyErr_Format(PyExc_ValueError, "PolicyNet.sample: for %zd positions mask must be (%zd, %d) and u (%zd,), "
                         "got %R and %R", (Py_ssize_t)n, (Py_ssize_t)n, MG_POLICY_MOVES, (Py_ssize_t)n, ms, us);
        Py_XDECREF(ms);
        Py_XDECREF(us);
        goto done;
    }
    lg = run_logits(self, planes);
    npy_intp dims[1] = {n};
    out = lg ? (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT64) : NULL;
    if (out) {
        const float *l = PyArray_DATA(lg);
        const uint8_t *m = PyArray_DATA(mask);
        const double *uu = PyArray_DATA(u);
        int64_t *o = PyArray_DATA(out);
        for (npy_intp i = 0; i < n; i++) {
            double x = uu[i];
            if (!(x >= 0.0 && x < 1.0)) {
                char msg[96];
                snprintf(msg, sizeof msg, "PolicyNet.sample: u[%zd] = %g is not in [0, 1)", (Py_ssize_t)i, x);
                PyErr_SetString(PyExc_ValueError, msg);
                Py_CLEAR(out);
                goto done;
            }
        }
        Py_BEGIN_ALLOW_THREADS
        for (npy_intp i = 0; i < n; i++)
            o[i] = mg_policy_sample(l + (size_t)i * MG_POLICY_MOVES, m + (size_t)i * MG_POLICY_MOVES, uu[i]);
        Py_END_ALLOW_THREADS
    }
done:
    Py_DECREF(planes);
    Py_XDECREF(mask);
    Py_XDECREF(u);
    Py_XDECREF(lg);
    return (PyObject *)out;
}

static PyObject *pnet_call(py_policy_net *self, PyObject *args, PyObject *kw)
{
    return pnet_policy(self, args, kw);
}

/* ---- the guided search's policy ----------------------------------------------------------- */

/* mg_ab_policy_fn over a PolicyNet: planes of the queries, the forward pass, a softmax over each
 * position's legal moves; runs without the GIL. */
static int ab_policy(void *ctx, const mg_ab_query *q, int n, float *out)
{
    py_policy_net *self = ctx;
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    for (int s = 0; s < n; s += self->max_batch) {
        int k = n - s < self->max_batch ? n - s : self->max_batch;
        for (int i = 0; i < k; i++) {
            const mg_chess_state *st = q[s + i].state;
            mg_policy_planes(st->board, q[s + i].prev1, q[s + i].prev2, st->stm, st->fullmove,
                             self->planes + (size_t)i * MG_POLICY_INPUT_SIZE);
        }
        forward_chunk(self, self->planes, k, self->logits);
        for (int i = 0; i < k; i++) {
            int32_t acts[MG_CHESS_MAX_MOVES];
            int16_t idx[MG_CHESS_MAX_MOVES];
            float pr[MG_CHESS_MAX_MOVES];
            int m = mg_policy_legal(q[s + i].state, acts, idx);
            float *row = out + (size_t)(s + i) * MG_POLICY_MOVES;
            memset(row, 0, MG_POLICY_MOVES * sizeof(float));
            mg_policy_softmax_at(self->logits + (size_t)i * MG_POLICY_MOVES, idx, m, pr);
            for (int j = 0; j < m; j++)
                row[idx[j]] = pr[j];
        }
    }
    self->calls++;
    self->positions += (unsigned long long)n;
    PyThread_release_lock(self->lock);
    return 0;
}

int mg_py_policy_net_ab(PyObject *o, mg_ab_policy_fn *fn, void **ctx)
{
    if (!PyObject_TypeCheck(o, &py_policy_net_type))
        return 0;
    py_policy_net *self = (py_policy_net *)o;
    if (!self->loaded || !self->lock) {
        PyErr_SetString(PyExc_ValueError, "PolicyNet is not initialised");
        return -1;
    }
    *fn = ab_policy;
    *ctx = self;
    return 1;
}

/* ---- attributes --------------------------------------------------------------------------- */

#define GETTER_CHECK(self)                                                         \
    do {                                                                           \
        if (!(self)->loaded) {                                                     \
            PyErr_SetString(PyExc_ValueError, "PolicyNet is not initialised");     \
            return NULL;                                                           \
        }                                                                          \
    } while (0)

static PyObject *get_channels(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(self->net.channels);
}

static PyObject *get_blocks(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(self->net.blocks);
}

static PyObject *get_head(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(self->net.head == MG_PNET_HEAD_POOL ? "pool" : "conv");
}

static PyObject *get_n_params(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromSize_t(self->net.n_params);
}

static PyObject *get_file_dtype(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(mg_st_dtype_name(self->net.file_dtype));
}

static PyObject *get_kernel(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(mg_matmul_name(self->net.matmul));
}

static PyObject *get_max_batch(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(self->max_batch);
}

static PyObject *get_threads(py_policy_net *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(self->threads);
}

static PyObject *get_calls(py_policy_net *self, void *Py_UNUSED(c))
{
    return PyLong_FromUnsignedLongLong(self->calls);
}

static PyObject *get_positions(py_policy_net *self, void *Py_UNUSED(c))
{
    return PyLong_FromUnsignedLongLong(self->positions);
}

static PyMethodDef pnet_methods[] = {
    {"logits", (PyCFunction)pnet_logits, METH_O,
     "logits(planes) -> float32 (n, 1968)\n\nThe network's logits over the move index for planes (n, 41, 8, 8)."},
    {"policy", (PyCFunction)(void (*)(void))pnet_policy, METH_VARARGS | METH_KEYWORDS,
     "policy(planes, mask) -> float32 (n, 1968)\n\nSoftmax over the legal moves (mask bool (n, 1968)), 0 elsewhere."},
    {"sample", (PyCFunction)(void (*)(void))pnet_sample, METH_VARARGS | METH_KEYWORDS,
     "sample(planes, mask, u) -> int64 (n,)\n\nOne move index a row drawn from the policy (softmax over the legal "
     "moves) with the uniform numbers u (n,) in [0, 1); -1 where no move is legal."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pnet_getset[] = {
    {"channels", (getter)get_channels, NULL, "Channels of the residual tower.", NULL},
    {"blocks", (getter)get_blocks, NULL, "Residual blocks.", NULL},
    {"head", (getter)get_head, NULL, "'pool' or 'conv'.", NULL},
    {"n_params", (getter)get_n_params, NULL, "Number of parameters.", NULL},
    {"file_dtype", (getter)get_file_dtype, NULL, "Weight dtype in the file (F32, F16, BF16).", NULL},
    {"kernel", (getter)get_kernel, NULL, "The matmul kernel in use ('avx512', 'avx2-fma' or 'portable').", NULL},
    {"max_batch", (getter)get_max_batch, NULL, "Positions a forward pass (larger batches run in chunks).", NULL},
    {"threads", (getter)get_threads, NULL, "Threads a forward pass (a batch is split over them).", NULL},
    {"calls", (getter)get_calls, NULL, "Calls so far (logits, policy, and the guided search's batches).", NULL},
    {"positions", (getter)get_positions, NULL, "Positions evaluated so far.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_policy_net_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.PolicyNet",
    .tp_basicsize = sizeof(py_policy_net),
    .tp_dealloc = (destructor)pnet_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PolicyNet(source, *, max_batch=64, simd=True, threads=1): the chess policy network of docs/policy.md in C, "
              "from an exported file (a path or its bytes); a file with a NaN or infinite weight is refused "
              "(ValueError naming the tensor and the file). Calling it is .policy(planes, mask).\n\n"
              "Threads: may be shared.  Each forward pass runs without the GIL under the object's lock: calls from "
              "several threads (and guided_alphabeta searches using it) wait for each other, one pass at a time.",
    .tp_methods = pnet_methods,
    .tp_getset = pnet_getset,
    .tp_init = (initproc)pnet_init,
    .tp_new = PyType_GenericNew,
    .tp_call = (ternaryfunc)pnet_call,
};

int mg_bind_policy_net(PyObject *m)
{
    return mg_py_add_type(m, "PolicyNet", &py_policy_net_type);
}
