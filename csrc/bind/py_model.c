/*
 * py_model.c - Python binding of the native inference engine (csrc/model): mavgame._core.MavEngine.
 * mavgame/model/inference/backends.py (NativeBackend, MAVModel.load(backend="native")) builds on it.
 *
 *   MavEngine(path, threads=1, max_batch=64, simd=True, prefix_cache=0, device="cpu", weights="float32")
 *       load a model file (ValueError naming the bad field of a malformed file, OSError-like ValueError for an
 *       unreadable one); device="cuda" (or "cuda:0") runs the forward pass and token choice on the GPU
 *       (kernels/forward.cu), ValueError saying why where it cannot (a build without the kernels, no usable
 *       device); weights="bf16" (CUDA only, else ValueError) keeps its weight matrices in bfloat16 there
 *       (.weights, .weight_bytes say what it holds)
 *   .generate(prompts, max_new_tokens, stop_ids, group_ids=None, bucket_ids=None, prefix_sharing=True)
 *       prompts: a list of 1-D integer arrays/sequences.  Returns a list of
 *       (ids int32[n], value_steps int32[k], value_probs float32[k, n_buckets], finished bool).
 *       The GIL is released while it runs.
 *   .logits(prompt) -> float32[V]: logits at the prompt's last position
 *   .stats() -> dict, .reset_stats()
 *   .config_json, .vocab_version, .info (str), .n_params, .threads, .max_batch, .kernel, .file_dtype
 *
 *   mcts_mav_evaluator(engine, game, *, board_size=0, flags=0, threads=1, max_batch=16, spec=None,
 *       scoring="mean", group_ids=None, prefix_sharing=True, state_tracking=False, cache_size=0, prefix_cache=0) -> capsule "mavgame.mcts_evaluator": the native
 *       MAV evaluator of the MCTS (search/mcts_eval_model.h) over the engine's model, with its own engine
 *       buffers and threads, on the MavEngine's device; it keeps the MavEngine alive.  .mcts_mav_evaluator_stats(capsule) -> dict.
 *   mav_value_moves(ids, value_steps, tok_ids) -> int32[k]: for each generated value token, the index in
 *       ids of the move token of its %top entry or -1 (format/mav_tokens.h); tok_ids = (colon, space,
 *       open, close, newline, top_all, top_k, bucket0, n_buckets).
 */
#include "py_mav_common.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string.h>

#include "../format/mav_tokens.h"
#include "../model/engine.h"
#include "../search/mcts_eval_model.h"
#include "../format/values.h"
#include "../model/safetensors.h"

static PyTypeObject py_engine_type;

typedef struct py_engine {
    PyObject_HEAD
    mg_model model;
    mg_engine *e;
    int loaded;
    int busy;
} py_engine;

static void engine_dealloc(py_engine *self)
{
    mg_engine_free(self->e);
    if (self->loaded)
        mg_model_free(&self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int load_path(void *model, const char *path, char *err, size_t errlen)
{
    return mg_model_load_file(model, path, err, errlen);
}

static int engine_init(py_engine *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"path", "threads", "max_batch", "simd", "prefix_cache", "device", "weights", NULL};
    PyObject *path;
    int threads = 1, max_batch = 64, simd = 1, prefix_cache = 0;
    const char *device = "cpu", *weights = "float32";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O&O&pO&ss:MavEngine", kwlist, &path,
                                     MG_PY_C_INT("threads", &threads), MG_PY_C_INT("max_batch", &max_batch), &simd,
                                     MG_PY_C_INT("prefix_cache", &prefix_cache), &device, &weights))
        return -1;
    unsigned flags = simd ? 0 : MG_ENGINE_NO_SIMD;
    if (strcmp(device, "cuda") == 0 || strcmp(device, "cuda:0") == 0) {
        flags |= MG_ENGINE_CUDA;
    } else if (strcmp(device, "cpu") != 0) {
        PyErr_Format(PyExc_ValueError, "device must be 'cpu', 'cuda' or 'cuda:0' (the first GPU), not '%s'", device);
        return -1;
    }
    if (strcmp(weights, "bf16") == 0) {
        if (!(flags & MG_ENGINE_CUDA)) {
            PyErr_Format(PyExc_ValueError, "weights='bf16' is an option of the CUDA engine (device='cuda'); "
                                           "on device='%s' the weights are float32",
                         device);
            return -1;
        }
        flags |= MG_ENGINE_BF16;
    } else if (strcmp(weights, "float32") != 0) {
        PyErr_Format(PyExc_ValueError, "weights must be 'float32' or 'bf16' (device='cuda' only), not '%s'", weights);
        return -1;
    }
    if (self->e || self->loaded) {
        PyErr_SetString(PyExc_RuntimeError, "MavEngine is already initialised");
        return -1;
    }
    if (mg_py_load_weights(path, load_path, NULL, &self->model) < 0)
        return -1;
    self->loaded = 1;
    char err[MG_ERRLEN];
    int created;
    Py_BEGIN_ALLOW_THREADS /* the CUDA engine uploads the weights */
    created = mg_engine_create(&self->e, &self->model, max_batch, threads, flags, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (created != MG_OK ||
        mg_engine_set_prefix_cache(self->e, prefix_cache, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    return 0;
}

#define CHECK_ENGINE(self)                                                                  \
    do {                                                                                    \
        if (!(self)->e) {                                                                   \
            PyErr_SetString(PyExc_ValueError, "MavEngine is not initialised");              \
            return NULL;                                                                    \
        }                                                                                   \
        if ((self)->busy) {                                                                 \
            PyErr_SetString(PyExc_RuntimeError, "MavEngine is in use by another thread");   \
            return NULL;                                                                    \
        }                                                                                   \
    } while (0)

/* An int32 C-contiguous copy of an id sequence (None -> NULL with *n = 0): integers only, each
 * within int32 (the engine then checks the vocabulary).  NULL with an exception naming `what` on
 * error. */
static PyArrayObject *id_array(PyObject *o, const char *what, int *n)
{
    *n = 0;
    if (o == NULL || o == Py_None)
        return NULL;
    PyArrayObject *raw = (PyArrayObject *)PyArray_FROM_O(o);
    if (!raw || PyArray_NDIM(raw) != 1 || (PyArray_SIZE(raw) > 0 && !PyArray_ISINTEGER(raw))) {
        Py_XDECREF(raw);
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D sequence of integer token ids", what);
        return NULL;
    }
    PyArrayObject *w = (PyArrayObject *)PyArray_FROMANY((PyObject *)raw, NPY_INT64, 1, 1,
                                                        NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(raw);
    if (!w) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D sequence of integer token ids", what);
        return NULL;
    }
    if (PyArray_SIZE(w) > INT32_MAX / 4) {
        Py_DECREF(w);
        PyErr_Format(PyExc_ValueError, "%s is too long", what);
        return NULL;
    }
    const int64_t *src = PyArray_DATA(w);
    npy_intp len = PyArray_SIZE(w);
    for (npy_intp i = 0; i < len; i++)
        if (src[i] < INT32_MIN || src[i] > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s has a token id %lld out of range", what, (long long)src[i]);
            Py_DECREF(w);
            return NULL;
        }
    npy_intp dims[1] = {len};
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT32);
    if (a) {
        int32_t *dst = PyArray_DATA(a);
        for (npy_intp i = 0; i < len; i++)
            dst[i] = (int32_t)src[i];
    }
    Py_DECREF(w);
    *n = (int)len;
    return a;
}

static PyObject *engine_generate(py_engine *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"prompts", "max_new_tokens", "stop_ids", "group_ids", "bucket_ids", "prefix_sharing",
                             NULL};
    PyObject *prompts, *stop_o, *group_o = Py_None, *bucket_o = Py_None;
    int max_new, sharing = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO&O|OOp:generate", kwlist, &prompts,
                                     MG_PY_INT("max_new_tokens", 0, INT_MAX, &max_new), &stop_o, &group_o, &bucket_o,
                                     &sharing))
        return NULL;
    CHECK_ENGINE(self);
    PyObject *seq = PySequence_Fast(prompts, "prompts must be a sequence of token-id sequences");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = NULL;
    PyArrayObject **arrs = NULL, *stop = NULL, *group = NULL, *bucket = NULL;
    const int32_t **pp = NULL;
    int32_t *lens = NULL, *idbuf = NULL, *stepbuf = NULL;
    float *probbuf = NULL;
    mg_gen_result *res = NULL;
    int ns, ng, nb;
    if (n > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "too many prompts");
        goto done;
    }
    if (!(stop = id_array(stop_o, "stop_ids", &ns)) && PyErr_Occurred())
        goto done;
    if (!(group = id_array(group_o, "group_ids", &ng)) && PyErr_Occurred())
        goto done;
    if (!(bucket = id_array(bucket_o, "bucket_ids", &nb)) && PyErr_Occurred())
        goto done;
    arrs = PyMem_Calloc((size_t)n + 1, sizeof *arrs);
    pp = PyMem_Calloc((size_t)n + 1, sizeof *pp);
    lens = PyMem_Calloc((size_t)n + 1, sizeof *lens);
    res = PyMem_Calloc((size_t)n + 1, sizeof *res);
    if (!arrs || !pp || !lens || !res) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int len;
        char what[48];
        snprintf(what, sizeof what, "prompt %zd", i);
        arrs[i] = id_array(PySequence_Fast_GET_ITEM(seq, i), what, &len);
        if (!arrs[i]) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "prompt %zd is None", i);
            goto done;
        }
        pp[i] = PyArray_DATA(arrs[i]);
        lens[i] = len;
    }
    mg_gen_request q = {(int)n,      pp,   lens,     max_new, stop ? PyArray_DATA(stop) : NULL, ns,
                        group ? PyArray_DATA(group) : NULL, ng, bucket ? PyArray_DATA(bucket) : NULL, nb,
                        sharing};
    char err[MG_ERRLEN];
    int budget = n ? mg_engine_budget(self->e, &q, err, sizeof err) : 0;
    if (budget < 0) {
        mg_py_value_error(err);
        goto done;
    }
    size_t cap = (size_t)(budget > 0 ? budget : 1), nbk = (size_t)(nb > 0 ? nb : 1);
    idbuf = PyMem_Malloc((size_t)(n + 1) * cap * sizeof *idbuf);
    stepbuf = PyMem_Malloc((size_t)(n + 1) * cap * sizeof *stepbuf);
    probbuf = PyMem_Malloc((size_t)(n + 1) * cap * nbk * sizeof *probbuf);
    if (!idbuf || !stepbuf || !probbuf) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        res[i].ids = idbuf + (size_t)i * cap;
        res[i].value_steps = stepbuf + (size_t)i * cap;
        res[i].value_probs = probbuf + (size_t)i * cap * nbk;
    }
    int rc = MG_OK;
    if (n) {
        self->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        rc = mg_engine_generate(self->e, &q, res, err, sizeof err);
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    if (rc != MG_OK) {
        mg_py_value_error(err);
        goto done;
    }
    result = PyList_New(n);
    if (!result)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        npy_intp d1[1] = {res[i].n_ids}, d2[1] = {res[i].n_values}, d3[2] = {res[i].n_values, nb};
        PyObject *ids = PyArray_SimpleNew(1, d1, NPY_INT32), *steps = PyArray_SimpleNew(1, d2, NPY_INT32);
        PyObject *probs = PyArray_SimpleNew(2, d3, NPY_FLOAT32);
        PyObject *t = NULL;
        if (ids && steps && probs) {
            memcpy(PyArray_DATA((PyArrayObject *)ids), res[i].ids, (size_t)res[i].n_ids * sizeof(int32_t));
            memcpy(PyArray_DATA((PyArrayObject *)steps), res[i].value_steps, (size_t)res[i].n_values * sizeof(int32_t));
            memcpy(PyArray_DATA((PyArrayObject *)probs), res[i].value_probs,
                   (size_t)res[i].n_values * (size_t)nb * sizeof(float));
            t = Py_BuildValue("(NNNO)", ids, steps, probs, res[i].finished ? Py_True : Py_False);
        } else {
            Py_XDECREF(ids);
            Py_XDECREF(steps);
            Py_XDECREF(probs);
        }
        if (!t) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, t);
    }
done:
    if (arrs)
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(arrs[i]);
    PyMem_Free(arrs);
    PyMem_Free(pp);
    PyMem_Free(lens);
    PyMem_Free(res);
    PyMem_Free(idbuf);
    PyMem_Free(stepbuf);
    PyMem_Free(probbuf);
    Py_XDECREF(stop);
    Py_XDECREF(group);
    Py_XDECREF(bucket);
    Py_DECREF(seq);
    return result;
}

static PyObject *engine_logits(py_engine *self, PyObject *arg)
{
    CHECK_ENGINE(self);
    int n;
    PyArrayObject *a = id_array(arg, "prompt", &n);
    if (!a)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "prompt is None");
    npy_intp dims[1] = {self->model.cfg.vocab_size};
    PyObject *out = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    if (!out) {
        Py_DECREF(a);
        return NULL;
    }
    char err[MG_ERRLEN];
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = mg_engine_logits(self->e, PyArray_DATA(a), n, PyArray_DATA((PyArrayObject *)out), err, sizeof err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    Py_DECREF(a);
    if (rc != MG_OK) {
        Py_DECREF(out);
        return mg_py_value_error(err);
    }
    return out;
}

static PyObject *engine_stats(py_engine *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_ENGINE(self);
    mg_engine_stats s;
    mg_engine_get_stats(self->e, &s);
    return Py_BuildValue("{sLsLsLsLsLsLsLsd}", "prompt_tokens", (long long)s.prompt_tokens, "prefill_tokens",
                         (long long)s.prefill_tokens, "shared_saved", (long long)s.shared_saved, "cache_saved",
                         (long long)s.cache_saved, "decode_tokens",
                         (long long)s.decode_tokens, "generated", (long long)s.generated, "passes",
                         (long long)s.passes, "flops", s.flops);
}

static PyObject *engine_reset_stats(py_engine *self, PyObject *Py_UNUSED(ignored))
{
    CHECK_ENGINE(self);
    mg_engine_reset_stats(self->e);
    Py_RETURN_NONE;
}

static PyObject *engine_set_prefix_cache(py_engine *self, PyObject *arg)
{
    CHECK_ENGINE(self);
    int tokens;
    if (!MG_PY_INT_ARG(arg, "prefix_cache", 0, 1 << 24, &tokens))
        return NULL;
    char err[MG_ERRLEN];
    if (mg_engine_set_prefix_cache(self->e, tokens, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return NULL;
    }
    Py_RETURN_NONE;
}

#define GETTER_CHECK(self)                                                                  \
    if (!(self)->e)                                                                         \
        return PyErr_Format(PyExc_ValueError, "MavEngine is not initialised")

static PyObject *get_config_json(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_DecodeUTF8(self->model.config_json, (Py_ssize_t)strlen(self->model.config_json), "replace");
}

static PyObject *get_vocab_version(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_DecodeUTF8(self->model.vocab_version, (Py_ssize_t)strlen(self->model.vocab_version), "replace");
}

static PyObject *get_info(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_DecodeUTF8(self->model.info, (Py_ssize_t)strlen(self->model.info), "replace");
}

static PyObject *get_prefix_cache(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(mg_engine_prefix_cache(self->e));
}

static PyObject *get_n_params(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromSize_t(self->model.n_params);
}

static PyObject *get_threads(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(mg_engine_threads(self->e));
}

static PyObject *get_max_batch(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromLong(mg_engine_max_batch(self->e));
}

static PyObject *get_kernel(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(mg_engine_kernel(self->e));
}

static PyObject *get_device(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(mg_engine_device(self->e) == MG_ENGINE_DEVICE_CUDA ? "cuda" : "cpu");
}

static PyObject *get_weights(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(mg_engine_bf16(self->e) ? "bf16" : "float32");
}

static PyObject *get_weight_bytes(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyLong_FromSize_t(mg_engine_weight_bytes(self->e));
}

static PyObject *get_file_dtype(py_engine *self, void *Py_UNUSED(c))
{
    GETTER_CHECK(self);
    return PyUnicode_FromString(mg_st_dtype_name(self->model.file_dtype));
}

static PyMethodDef engine_methods[] = {
    {"generate", (PyCFunction)(void (*)(void))engine_generate, METH_VARARGS | METH_KEYWORDS,
     "generate(prompts, max_new_tokens, stop_ids, group_ids=None, bucket_ids=None, prefix_sharing=True)\n"
     "-> list of (ids, value_steps, value_probs, finished)"},
    {"logits", (PyCFunction)engine_logits, METH_O, "logits(prompt) -> float32[V] at the last position."},
    {"stats", (PyCFunction)engine_stats, METH_NOARGS, "Token and pass counters since creation or reset."},
    {"reset_stats", (PyCFunction)engine_reset_stats, METH_NOARGS, "Zero the counters."},
    {"set_prefix_cache", (PyCFunction)engine_set_prefix_cache, METH_O,
     "set_prefix_cache(tokens): resize (and empty) the cross-batch prefix cache; 0 turns it off."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef engine_getset[] = {
    {"config_json", (getter)get_config_json, NULL, "The model's MAVConfig as JSON.", NULL},
    {"vocab_version", (getter)get_vocab_version, NULL, "The MAV vocabulary version of the file.", NULL},
    {"info", (getter)get_info, NULL, "The file's info metadata (JSON).", NULL},
    {"n_params", (getter)get_n_params, NULL, "Number of parameters.", NULL},
    {"prefix_cache", (getter)get_prefix_cache, NULL, "The cross-batch prefix cache's capacity in tokens.", NULL},
    {"threads", (getter)get_threads, NULL, "Threads of the engine's pool.", NULL},
    {"max_batch", (getter)get_max_batch, NULL, "Sequences run at once.", NULL},
    {"kernel", (getter)get_kernel, NULL,
     "The matmul kernel in use ('avx512', 'avx2-fma', 'portable' or 'cuda'; the environment variable "
     "MAVGAME_SIMD=avx512|avx2|portable|auto read at creation picks one).",
     NULL},
    {"device", (getter)get_device, NULL, "Where the forward pass runs: 'cpu' or 'cuda'.", NULL},
    {"weights", (getter)get_weights, NULL, "The weight matrices' type on the device: 'float32' or 'bf16'.", NULL},
    {"weight_bytes", (getter)get_weight_bytes, NULL, "Device memory of the weights in bytes (0 on the CPU).", NULL},
    {"file_dtype", (getter)get_file_dtype, NULL, "Weight dtype in the file (F32, F16, BF16).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject py_engine_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MavEngine",
    .tp_basicsize = sizeof(py_engine),
    .tp_dealloc = (destructor)engine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MavEngine(path, threads=1, max_batch=64, simd=True, prefix_cache=0, device='cpu', weights='float32'): "
              "the native MAV inference engine (C; device='cuda': its CUDA forward pass, kernels/forward.cu; "
              "weights='bf16' with it: the weight matrices in bfloat16 on the GPU, float32 accumulation).  A file with a NaN "
              "or infinite weight is refused (ValueError naming the file and the tensor).\n\n"
              "Threads: one generate()/logits() at a time (the GIL is released while it runs); a call from another "
              "thread meanwhile raises RuntimeError 'MavEngine is in use by another thread'.  The MCTS evaluators "
              "made from it (mcts_mav_evaluator) have their own buffers: each serves one search at a time.",
    .tp_methods = engine_methods,
    .tp_getset = engine_getset,
    .tp_init = (initproc)engine_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *py_mav_value_moves(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *ids_o, *steps_o;
    mg_mav_tok_ids v;
    if (!PyArg_ParseTuple(args, "OO(O&O&O&O&O&O&O&O&O&):mav_value_moves", &ids_o, &steps_o,
                          MG_PY_C_INT("tok_ids colon", &v.colon), MG_PY_C_INT("tok_ids space", &v.space),
                          MG_PY_C_INT("tok_ids open", &v.open), MG_PY_C_INT("tok_ids close", &v.close),
                          MG_PY_C_INT("tok_ids newline", &v.newline), MG_PY_C_INT("tok_ids top_all", &v.top_all),
                          MG_PY_C_INT("tok_ids top_k", &v.top_k), MG_PY_C_INT("tok_ids bucket0", &v.bucket0),
                          MG_PY_C_INT("tok_ids n_buckets", &v.n_buckets)))
        return NULL;
    int n, k;
    PyArrayObject *ids = id_array(ids_o, "ids", &n);
    if (!ids && PyErr_Occurred())
        return NULL;
    PyArrayObject *steps = id_array(steps_o, "value_steps", &k);
    if (!steps && PyErr_Occurred()) {
        Py_XDECREF(ids);
        return NULL;
    }
    const int32_t *sp = steps ? PyArray_DATA(steps) : NULL;
    for (int i = 0; i < k; i++)
        if (sp[i] < 0 || sp[i] >= n || (i && sp[i] <= sp[i - 1])) {
            Py_XDECREF(ids);
            Py_XDECREF(steps);
            return PyErr_Format(PyExc_ValueError, "value_steps must be increasing indices into ids (%d at %d)",
                                (int)sp[i], i);
        }
    npy_intp dims[1] = {k};
    PyObject *out = PyArray_SimpleNew(1, dims, NPY_INT32);
    if (out && k)
        mg_mav_value_moves(&v, PyArray_DATA(ids), n, sp, k, PyArray_DATA((PyArrayObject *)out));
    Py_XDECREF(ids);
    Py_XDECREF(steps);
    return out;
}

/* ---- the native MCTS evaluator ------------------------------------------------------------- */

#define MG_EVAL_CAPSULE "mavgame.mcts_evaluator"

typedef struct eval_holder {
    mg_evaluator ev;   /* first: the capsule pointer is an mg_evaluator * (bind/py_mcts_eval.c reads it so) */
    PyObject *engine;  /* the MavEngine whose model the evaluator reads */
} eval_holder;

static void eval_capsule_destroy(PyObject *cap)
{
    eval_holder *h = PyCapsule_GetPointer(cap, MG_EVAL_CAPSULE);
    if (h) {
        mg_evaluator_free(&h->ev);
        Py_XDECREF(h->engine);
        PyMem_RawFree(h);
    }
}

static PyObject *py_mcts_mav_evaluator(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"engine", "game", "board_size", "flags", "threads", "max_batch", "spec", "scoring",
                             "group_ids", "prefix_sharing", "state_tracking", "cache_size", "prefix_cache", NULL};
    PyObject *eng_o, *group_o = Py_None;
    const char *game, *spec = NULL, *scoring = "mean";
    int board_size = 0, threads = 1, max_batch = 16, sharing = 1, st = 0, cache_size = 0, prefix_cache = 0;
    unsigned int flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!s|$O&O&O&O&zsOppO&O&:mcts_mav_evaluator", kwlist, &py_engine_type,
                                     &eng_o, &game, MG_PY_C_INT("board_size", &board_size),
                                     MG_PY_INT("flags", 0, UINT_MAX, &flags), MG_PY_C_INT("threads", &threads),
                                     MG_PY_C_INT("max_batch", &max_batch), &spec, &scoring, &group_o, &sharing, &st,
                                     MG_PY_C_INT("cache_size", &cache_size), MG_PY_C_INT("prefix_cache", &prefix_cache)))
        return NULL;
    py_engine *pe = (py_engine *)eng_o;
    if (!pe->e)
        return PyErr_Format(PyExc_ValueError, "MavEngine is not initialised");
    const mg_game *g = mg_game_by_name(game);
    if (!g)
        return PyErr_Format(PyExc_ValueError, "unknown game '%s'", game);
    int sc;
    if (strcmp(scoring, "mean") == 0)
        sc = MG_MAV_SCORE_MEAN;
    else if (strcmp(scoring, "max") == 0)
        sc = MG_MAV_SCORE_MAX;
    else
        return PyErr_Format(PyExc_ValueError, "scoring must be 'mean' or 'max', not '%s'", scoring);
    int ng;
    PyArrayObject *group = id_array(group_o, "group_ids", &ng);
    if (!group && PyErr_Occurred())
        return NULL;
    mg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.board_size = board_size;
    cfg.flags = flags;
    /* the evaluator's engine runs where the MavEngine runs (the GPU for device="cuda") */
    unsigned eflags = mg_engine_device(pe->e) == MG_ENGINE_DEVICE_CUDA ? MG_ENGINE_CUDA : 0;
    eflags |= mg_engine_bf16(pe->e) ? MG_ENGINE_BF16 : 0; /* and with its weights' type */
    mg_eval_model_params p = {threads, max_batch, spec, sc, group ? PyArray_DATA(group) : NULL, ng, sharing, st,
                              cache_size, prefix_cache, eflags};
    eval_holder *h = PyMem_RawCalloc(1, sizeof *h);
    if (!h) {
        Py_XDECREF(group);
        return PyErr_NoMemory();
    }
    char err[MG_ERRLEN];
    int rc = mg_eval_model_create(&h->ev, &pe->model, g, &cfg, &p, err, sizeof err);
    Py_XDECREF(group);
    if (rc != MG_OK) {
        PyMem_RawFree(h);
        return mg_py_value_error(err);
    }
    h->engine = eng_o;
    Py_INCREF(eng_o);
    PyObject *cap = PyCapsule_New(h, MG_EVAL_CAPSULE, eval_capsule_destroy);
    if (!cap) {
        mg_evaluator_free(&h->ev);
        Py_DECREF(eng_o);
        PyMem_RawFree(h);
    }
    return cap;
}

static PyObject *py_mcts_mav_evaluator_stats(PyObject *Py_UNUSED(mod), PyObject *cap)
{
    eval_holder *h = PyCapsule_GetPointer(cap, MG_EVAL_CAPSULE);
    if (!h)
        return NULL;
    mg_eval_model_stats s;
    if (mg_eval_model_stats_get(&h->ev, &s) != MG_OK)
        return PyErr_Format(PyExc_ValueError, "not a native MAV evaluator capsule");
    return Py_BuildValue("{sLsLsLsLsLsLsLsLsLsL}", "calls", (long long)s.calls, "requests", (long long)s.requests,
                         "cache_hits", (long long)s.cache_hits, "late", (long long)s.late,
                         "invalid", (long long)s.invalid, "text_fallbacks", (long long)s.text_fallbacks,
                         "prompt_tokens", (long long)s.prompt_tokens, "shared_saved", (long long)s.shared_saved,
                         "cache_saved", (long long)s.cache_saved, "generated", (long long)s.generated);
}

static PyMethodDef model_module_methods[] = {
    {"mcts_mav_evaluator", (PyCFunction)(void (*)(void))py_mcts_mav_evaluator, METH_VARARGS | METH_KEYWORDS,
     "mcts_mav_evaluator(engine, game, *, board_size=0, flags=0, threads=1, max_batch=16, spec=None, "
     "scoring='mean', group_ids=None, prefix_sharing=True, state_tracking=False, cache_size=0, prefix_cache=0): the native MAV evaluator capsule (C)."},
    {"mcts_mav_evaluator_stats", (PyCFunction)py_mcts_mav_evaluator_stats, METH_O,
     "mcts_mav_evaluator_stats(capsule) -> dict of counters."},
    {"mav_value_moves", (PyCFunction)py_mav_value_moves, METH_VARARGS,
     "mav_value_moves(ids, value_steps, tok_ids) -> int32 array: the move token index of each value token, -1 if "
     "it is not a well-formed %top entry."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_model(PyObject *m)
{
    if (PyModule_AddFunctions(m, model_module_methods) < 0)
        return -1;
    if (mg_py_add_type(m, "MavEngine", &py_engine_type) < 0)
        return -1;
    return 0;
}
