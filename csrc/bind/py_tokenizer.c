/*
 * py_tokenizer.c - Python binding of the MAV tokenizer (csrc/format/tokenizer.h):
 * mavgame._core.MavTokenizer, and mav_prompt_tokens (prompts tokenised without Python strings).
 */
#include "py_mav_common.h"

#include <string.h>

static void tok_dealloc(mg_py_tok *self)
{
    PyMem_Free(self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int tok_init(mg_py_tok *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"version", NULL};
    int version = MG_TOK_VERSION;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&:MavTokenizer", kwlist, MG_PY_C_INT("version", &version)))
        return -1;
    mg_tokenizer *t = PyMem_Malloc(sizeof *t);
    if (!t) {
        PyErr_NoMemory();
        return -1;
    }
    char err[MG_ERRLEN] = "";
    if (mg_tok_init(t, version, err, sizeof err) != MG_OK) {
        PyMem_Free(t);
        mg_py_value_error(err);
        return -1;
    }
    PyMem_Free(self->t);
    self->t = t;
    return 0;
}


static PyObject *tok_encode(mg_py_tok *self, PyObject *arg)
{
    TOK_CHECK(self);
    Py_ssize_t n;
    const char *s = mg_py_data_arg(arg, &n, "text");
    if (!s)
        return NULL;
    npy_intp dim = n;
    PyObject *arr = PyArray_SimpleNew(1, &dim, NPY_INT32);
    if (!arr)
        return NULL;
    size_t k = mg_tok_encode(self->t, s, (size_t)n, PyArray_DATA((PyArrayObject *)arr), (size_t)n);
    PyArray_Dims nd = {&dim, 1};
    dim = (npy_intp)k;
    PyObject *r = PyArray_Resize((PyArrayObject *)arr, &nd, 0, NPY_CORDER);
    if (!r) {
        Py_DECREF(arr);
        return NULL;
    }
    Py_DECREF(r);
    return arr;
}

/* ids -> bytes (NULL with ValueError naming a bad id). */
static PyObject *decode_ids(const mg_tokenizer *t, const int32_t *ids, size_t n)
{
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * MG_TOK_MAX_LEN));
    if (!b)
        return NULL;
    long k = mg_tok_decode(t, ids, n, PyBytes_AS_STRING(b), n * MG_TOK_MAX_LEN);
    if (k < 0) {
        long i = -1 - k;
        Py_DECREF(b);
        PyErr_Format(PyExc_ValueError, "token id %d at position %ld is not in the vocabulary (0..%d)", (int)ids[i], i,
                     t->n - 1);
        return NULL;
    }
    if (_PyBytes_Resize(&b, k) < 0)
        return NULL;
    return b;
}

static PyArrayObject *ids_arg(PyObject *arg, int nd)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(arg, NPY_INT32, nd, nd, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a) {
        PyErr_Clear();
        a = (PyArrayObject *)PyArray_FROMANY(arg, NPY_INT64, nd, nd, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!a)
            return NULL;
        /* check the range before casting */
        npy_intp n = PyArray_SIZE(a);
        const int64_t *x = PyArray_DATA(a);
        for (npy_intp i = 0; i < n; i++)
            if (x[i] < INT32_MIN || x[i] > INT32_MAX) {
                PyErr_Format(PyExc_ValueError, "token id %lld at flat position %zd is not in the vocabulary",
                             (long long)x[i], (Py_ssize_t)i);
                Py_DECREF(a);
                return NULL;
            }
        PyArrayObject *c = (PyArrayObject *)PyArray_Cast(a, NPY_INT32);
        Py_DECREF(a);
        return c;
    }
    return a;
}

static PyObject *tok_decode_bytes(mg_py_tok *self, PyObject *arg)
{
    TOK_CHECK(self);
    PyArrayObject *a = ids_arg(arg, 1);
    if (!a)
        return NULL;
    PyObject *b = decode_ids(self->t, PyArray_DATA(a), (size_t)PyArray_DIM(a, 0));
    Py_DECREF(a);
    return b;
}

static PyObject *tok_decode(mg_py_tok *self, PyObject *arg)
{
    PyObject *b = tok_decode_bytes(self, arg);
    if (!b)
        return NULL;
    PyObject *s = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), "replace");
    Py_DECREF(b);
    return s;
}

/* encode_batch(texts, max_len=None) -> (ids[B, L] int32 padded with <pad>, lengths[B] int32) */
static PyObject *tok_encode_batch(mg_py_tok *self, PyObject *args, PyObject *kw)
{
    TOK_CHECK(self);
    static char *kwlist[] = {"texts", "max_len", NULL};
    PyObject *texts, *ml = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:encode_batch", kwlist, &texts, &ml))
        return NULL;
    Py_ssize_t max_len;
    if (mg_py_max_len_arg(ml, 0, &max_len) < 0)
        return NULL;
    mg_py_rows r;
    PyObject *res = NULL;
    if (mg_py_rows_init(&r, texts, "texts must be a sequence of str") < 0)
        goto done;
    for (Py_ssize_t i = 0; i < r.B; i++) {
        Py_ssize_t n;
        const char *s = mg_py_data_arg(PySequence_Fast_GET_ITEM(r.seq, i), &n, mg_py_item_name("texts", i, NULL).s);
        if (!s)
            goto done;
        int32_t *row = mg_py_rows_room(&r, (size_t)n);
        if (!row)
            goto done;
        size_t k = mg_tok_encode(self->t, s, (size_t)n, row, (size_t)n);
        if (max_len >= 0 && (Py_ssize_t)k > max_len) {
            PyErr_Format(PyExc_ValueError, "texts[%zd] has %zu tokens, more than max_len=%zd", i, k, max_len);
            goto done;
        }
        if (k > (size_t)INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "texts[%zd] is too long", i);
            goto done;
        }
        mg_py_rows_end(&r, i, k);
    }
    res = mg_py_rows_result(&r, max_len);
done:
    mg_py_rows_free(&r);
    return res;
}

/* decode_batch(ids[B, L], lengths=None) -> list[str] */
static PyObject *tok_decode_batch(mg_py_tok *self, PyObject *args, PyObject *kw)
{
    TOK_CHECK(self);
    static char *kwlist[] = {"ids", "lengths", NULL};
    PyObject *io, *lo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:decode_batch", kwlist, &io, &lo))
        return NULL;
    PyArrayObject *a = ids_arg(io, 2);
    if (!a)
        return NULL;
    npy_intp B = PyArray_DIM(a, 0), Lw = PyArray_DIM(a, 1);
    PyArrayObject *lens = NULL;
    if (lo != Py_None) {
        lens = (PyArrayObject *)mg_py_int_array(lo, NPY_INT64, 1, 1, "decode_batch: lengths");
        if (!lens || PyArray_DIM(lens, 0) != B) {
            if (lens)
                PyErr_Format(PyExc_ValueError, "lengths has %zd entries for %zd rows", (Py_ssize_t)PyArray_DIM(lens, 0),
                             (Py_ssize_t)B);
            Py_XDECREF(lens);
            Py_DECREF(a);
            return NULL;
        }
    }
    PyObject *out = PyList_New(B);
    const int32_t *D = PyArray_DATA(a);
    for (npy_intp i = 0; out && i < B; i++) {
        npy_intp n = Lw;
        if (lens) {
            n = ((const int64_t *)PyArray_DATA(lens))[i];
            if (n < 0 || n > Lw) {
                PyErr_Format(PyExc_ValueError, "lengths[%zd] = %zd is not in 0..%zd", (Py_ssize_t)i, (Py_ssize_t)n,
                             (Py_ssize_t)Lw);
                Py_CLEAR(out);
                break;
            }
        }
        PyObject *b = decode_ids(self->t, D + i * Lw, (size_t)n);
        PyObject *s = b ? PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), "replace") : NULL;
        Py_XDECREF(b);
        if (!s) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, s);
    }
    Py_XDECREF(lens);
    Py_DECREF(a);
    return out;
}

static PyObject *tok_vocab(mg_py_tok *self, PyObject *Py_UNUSED(ignored))
{
    TOK_CHECK(self);
    PyObject *list = PyList_New(self->t->n);
    for (int i = 0; list && i < self->t->n; i++) {
        size_t l;
        const char *s = mg_tok_text(self->t, i, &l);
        PyObject *u = PyUnicode_DecodeLatin1(s, (Py_ssize_t)l, NULL);
        if (!u) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, u);
    }
    return list;
}

static PyObject *tok_kinds(mg_py_tok *self, PyObject *Py_UNUSED(ignored))
{
    TOK_CHECK(self);
    PyObject *list = PyList_New(self->t->n);
    for (int i = 0; list && i < self->t->n; i++) {
        PyObject *u = PyUnicode_FromString(mg_tok_kind_name(self->t->kind[i]));
        if (!u) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, u);
    }
    return list;
}

static PyObject *tok_lookup(mg_py_tok *self, PyObject *arg)
{
    TOK_CHECK(self);
    Py_ssize_t n;
    const char *s = mg_py_data_arg(arg, &n, "token");
    if (!s)
        return NULL;
    return PyLong_FromLong(mg_tok_lookup(self->t, s, (size_t)n));
}

static PyObject *tok_get_size(mg_py_tok *self, void *Py_UNUSED(c))
{
    TOK_CHECK(self);
    return PyLong_FromLong(self->t->n);
}

static PyObject *tok_get_version(mg_py_tok *self, void *Py_UNUSED(c))
{
    TOK_CHECK(self);
    return PyLong_FromLong(self->t->version);
}

static PyMethodDef tok_methods[] = {
    {"encode", (PyCFunction)tok_encode, METH_O, "encode(text) -> numpy.ndarray[int32]"},
    {"decode", (PyCFunction)tok_decode, METH_O, "decode(ids) -> str (invalid UTF-8 replaced)"},
    {"decode_bytes", (PyCFunction)tok_decode_bytes, METH_O, "decode_bytes(ids) -> bytes (exact)"},
    {"encode_batch", (PyCFunction)(void (*)(void))tok_encode_batch, METH_VARARGS | METH_KEYWORDS,
     "encode_batch(texts, max_len=None) -> (ids[B, L] int32 padded with <pad> = 0, lengths[B] int32)"},
    {"decode_batch", (PyCFunction)(void (*)(void))tok_decode_batch, METH_VARARGS | METH_KEYWORDS,
     "decode_batch(ids[B, L], lengths=None) -> list[str]"},
    {"vocab", (PyCFunction)tok_vocab, METH_NOARGS, "vocab() -> list[str]: token texts by id (bytes as <0xNN>)"},
    {"kinds", (PyCFunction)tok_kinds, METH_NOARGS, "kinds() -> list[str]: token kinds by id"},
    {"lookup", (PyCFunction)tok_lookup, METH_O, "lookup(text) -> int: id of the token with this text, -1 if none"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tok_getset[] = {
    {"size", (getter)tok_get_size, NULL, "Vocabulary size.", NULL},
    {"version", (getter)tok_get_version, NULL, "Vocabulary version.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject mg_py_tok_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MavTokenizer",
    .tp_basicsize = sizeof(mg_py_tok),
    .tp_dealloc = (destructor)tok_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "MavTokenizer(version=1)\n\nThe fixed MAV vocabulary v1 or v2 (see csrc/format/tokenizer.h).",
    .tp_methods = tok_methods,
    .tp_getset = tok_getset,
    .tp_init = (initproc)tok_init,
    .tp_new = PyType_GenericNew,
};

/* mav_prompt_tokens(tokenizer, states, commands) -> (ids[B, L], lengths[B]): prompts tokenised
 * directly (with <bos>), without Python strings in between. */
static PyObject *py_mav_prompt_tokens(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *to, *states, *cmds;
    if (!PyArg_ParseTuple(args, "O!OO:mav_prompt_tokens", &mg_py_tok_type, &to, &states, &cmds))
        return NULL;
    mg_py_tok *tk = (mg_py_tok *)to;
    TOK_CHECK(tk);
    mg_py_rows r;
    PyObject *res = NULL;
    if (mg_py_rows_init(&r, states, "states must be a sequence of game states") < 0)
        goto done;
    const mg_game *g = NULL;
    mg_mav_spec spec;
    char text[8192];
    for (Py_ssize_t i = 0; i < r.B; i++) {
        long len = mg_py_state_prompt(r.seq, i, cmds, &g, &spec, text, sizeof text);
        if (len < 0)
            goto done;
        int32_t *row = mg_py_rows_room(&r, (size_t)len + 1);
        if (!row)
            goto done;
        row[0] = MG_TOK_BOS;
        mg_py_rows_end(&r, i, 1 + mg_tok_encode(tk->t, text, (size_t)len, row + 1, (size_t)len));
    }
    res = mg_py_rows_result(&r, -1);
done:
    mg_py_rows_free(&r);
    return res;
}

/* mav_vocab_check(vocab_version, vocab_size) -> int: the MAV vocabulary version a model file declares
 * (0: none), ValueError naming the value for an unknown version or a size that does not match it. */
static PyObject *py_mav_vocab_check(PyObject *Py_UNUSED(m), PyObject *args)
{
    const char *vv;
    Py_ssize_t vn;
    long size;
    if (!PyArg_ParseTuple(args, "s#O&:mav_vocab_check", &vv, &vn, MG_PY_INT("vocab_size", LONG_MIN, LONG_MAX, &size)))
        return NULL;
    /* the first 63 bytes, NULs shown as '?' (a longer text is no version either way) */
    char buf[64], err[MG_ERRLEN];
    size_t n = (size_t)vn < sizeof buf - 1 ? (size_t)vn : sizeof buf - 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = vv[i] ? vv[i] : '?';
    buf[n] = 0;
    int version;
    if (size < INT32_MIN || size > INT32_MAX ||
        mg_tok_check_model(buf, (int)size, &version, err, sizeof err) != MG_OK) {
        if (size < INT32_MIN || size > INT32_MAX)
            snprintf(err, sizeof err, "vocabulary size %ld is out of range", size);
        mg_py_value_error(err);
        return NULL;
    }
    return PyLong_FromLong(version);
}

static PyMethodDef tokenizer_functions[] = {
    {"mav_vocab_check", py_mav_vocab_check, METH_VARARGS,
     "mav_vocab_check(vocab_version: str, vocab_size: int) -> int: the MAV vocabulary a model file declares "
     "(0: none); ValueError for an unknown version or a size that does not match it"},
    {"mav_prompt_tokens", py_mav_prompt_tokens, METH_VARARGS,
     "mav_prompt_tokens(tokenizer, states, commands) -> (ids[B, L] int32, lengths[B] int32)"},
    {NULL, NULL, 0, NULL},
};

int mg_bind_tokenizer(PyObject *m)
{
    if (PyModule_AddFunctions(m, tokenizer_functions) < 0 || mg_py_add_type(m, "MavTokenizer", &mg_py_tok_type) < 0)
        return -1;
    if (PyModule_AddIntConstant(m, "MAV_VOCAB_MAX_VERSION", MG_TOK_MAX_VERSION) < 0)
        return -1;
    return PyModule_AddIntConstant(m, "MAV_VOCAB_VERSION", MG_TOK_VERSION);
}
